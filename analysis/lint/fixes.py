"""Mechanical fixes for lint findings, each applied only when re-rendering
proves it: the finding is gone, and every render lint made is byte-identical
but for what the fix is meant to change.

Two kinds today:

- ``double-bos``: the statement that writes ``bos_token`` while the tokenizer
  adds one writes ``''`` instead; proven when every render is the fixed
  render with the BOS in front (what the model saw before, less the second BOS).
- ``arguments-double-encoded``: ``ARGS | tojson`` on the line that wrote the
  escaped JSON becomes ``(ARGS if ARGS is string else ARGS | tojson)``;
  proven when every render of object arguments is unchanged (only renders
  with string arguments may change).

A finding the fix cannot find its statement for, or that re-rendering does
not prove, is left as it is, with the reason."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from analysis.errors import TemplateError
from analysis.lint import engines
from analysis.lint.conversations import Renderer
from analysis.lint.findings import Finding, LintReport
from analysis.lint.linting import lint_renders
from analysis.lint.switches import DOUBLE_BOS
from analysis.lint.tool_calls import ARGUMENTS_DOUBLE_ENCODED
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate, RenderMemo, RenderRequest

#: the rules with a mechanical fix
FIXABLE = (DOUBLE_BOS, ARGUMENTS_DOUBLE_ENCODED)


@dataclass(frozen=True)
class Fix:
    """One fix: the finding's rule and line, the line before and after, and
    whether it was applied (``why`` says why not)."""

    rule: str
    line: int | None
    before: str
    after: str
    applied: bool
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        """``{"rule", "line", "before", "after", "applied", "why"}``."""
        return {"rule": self.rule, "line": self.line, "before": self.before, "after": self.after, "applied": self.applied, "why": self.why}


@dataclass(frozen=True)
class FixResult:
    """The template's source before and after the fixes that were applied,
    each fix tried, and the report of the fixed source."""

    template_name: str
    before: str
    after: str
    fixes: tuple[Fix, ...]

    @property
    def changed(self) -> bool:
        return self.after != self.before

    def diff(self, path: str) -> str:
        """The fixed source as a unified diff against the original (``a/PATH``, ``b/PATH``)."""
        return unified_diff(self.before, self.after, path)


def unified_diff(before: str, after: str, path: str) -> str:
    """``after`` as a unified diff against ``before`` (``a/PATH``, ``b/PATH``), as ``git apply`` reads it."""
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


_BOS = re.compile(r"\bbos_token\b")
#: the arguments expression a ``tojson`` encodes (``tool_call.arguments``, ``call['function']['arguments']``…)
_ARGUMENTS_TOJSON = re.compile(r"(?P<args>[A-Za-z_][\w.]*(?:\[[^\[\]]+\])*(?:\.arguments|\[['\"]arguments['\"]\]))\s*\|\s*tojson\b(?!\()")


def _edit_bos(line: str) -> str | None:
    if len(_BOS.findall(line)) != 1:
        return None
    return _BOS.sub("''", line)


def _edit_arguments(line: str) -> str | None:
    found = list(_ARGUMENTS_TOJSON.finditer(line))
    if len(found) != 1:
        return None
    match = found[0]
    args = match["args"]
    return line[: match.start()] + f"({args} if {args} is string else {args} | tojson)" + line[match.end() :]


def _has_string_arguments(request: RenderRequest) -> bool:
    return any(
        isinstance(call.get("function", {}).get("arguments"), str)
        for message in request.messages
        for call in message.get("tool_calls") or ()
    )


#: rule -> (the edit of its line, what the fixed render of a request must be given the original's)
_KINDS: dict[str, tuple[Callable[[str], str | None], Callable[[ChatTemplate], Callable[[RenderRequest, str, str], bool]]]] = {
    DOUBLE_BOS: (_edit_bos, lambda t: lambda _r, old, new: old == t.loaded.bos_token + new),
    ARGUMENTS_DOUBLE_ENCODED: (_edit_arguments, lambda _t: lambda r, old, new: old == new or _has_string_arguments(r)),
}


def _with_source(template: ChatTemplate, source: str) -> ChatTemplate:
    return ChatTemplate(replace(template.loaded, source=source), template.limits, template.clock or FROZEN_CLOCK)


def _renders(template: ChatTemplate, requests: Iterable[RenderRequest]) -> list[str | None]:
    memo = RenderMemo(template)
    return [memo.attempt(r).text for r in requests]


def _proven(
    rule: str,
    original: ChatTemplate,
    renderer: Renderer,
    fixed: ChatTemplate,
    ignore: Sequence[str],
    engine_names: Sequence[str],
) -> tuple[str, LintReport | None, Renderer | None]:
    """Why the fixed template is not proven ("" when it is), and its lint."""
    try:
        report, fixed_renderer = lint_renders(fixed, ignore, None, engine_names)
    except TemplateError as exc:
        return f"the fixed template does not render ({exc})", None, None
    if any(f.rule == rule for f in report.findings):
        return "re-rendering still shows the finding", None, None
    requests = list({**renderer.requests, **fixed_renderer.requests}.values())
    expected = _KINDS[rule][1](original)
    for request, old, new in zip(requests, _renders(original, requests), _renders(fixed, requests), strict=True):
        if (old is None) != (new is None) or (old is not None and new is not None and not expected(request, old, new)):
            return "a render the fix should not change changed", None, None
    return "", report, fixed_renderer


def fix_template(
    template: ChatTemplate,
    ignore: Sequence[str] = (),
    engine_names: Sequence[str] = engines.DEFAULT_ENGINES,
) -> FixResult:
    """Try the mechanical fix of each fixable finding of ``template``, one
    after the other, each kept only when re-rendering proves it (see the
    module docstring)."""
    current = template
    report, renderer = lint_renders(template, ignore, None, engine_names)
    fixes: list[Fix] = []
    for rule in FIXABLE:
        finding = next((f for f in report.findings if f.rule == rule), None)
        if finding is None:
            continue
        fix, fixed = _try(rule, finding, current, renderer, ignore, engine_names)
        fixes.append(fix)
        if fixed is not None:
            current, (report, renderer) = fixed
    return FixResult(template.name, template.source, current.source, tuple(fixes))


def _try(
    rule: str,
    finding: Finding,
    template: ChatTemplate,
    renderer: Renderer,
    ignore: Sequence[str],
    engine_names: Sequence[str],
) -> tuple[Fix, tuple[ChatTemplate, tuple[LintReport, Renderer]] | None]:
    line = finding.where
    lines = template.source.split("\n")
    if line is None or not 1 <= line <= len(lines):
        return Fix(rule, line, "", "", False, "the finding names no template line"), None
    before = lines[line - 1]
    after = _KINDS[rule][0](before)
    if after is None:
        what = "one bos_token" if rule == DOUBLE_BOS else "one 'ARGUMENTS | tojson'"
        return Fix(rule, line, before, before, False, f"line {line} does not hold {what} to rewrite"), None
    fixed = _with_source(template, "\n".join([*lines[: line - 1], after, *lines[line:]]))
    why, report, fixed_renderer = _proven(rule, template, renderer, fixed, ignore, engine_names)
    if why:
        return Fix(rule, line, before, after, False, why), None
    assert report is not None and fixed_renderer is not None
    return Fix(rule, line, before, after, True), (fixed, (report, fixed_renderer))
