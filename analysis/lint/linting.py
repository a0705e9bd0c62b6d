"""Linting one template: every rule run over shared renders, into a
:class:`~analysis.lint.findings.LintReport`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from analysis.errors import InputError
from analysis.generation.analysis_cache import cached_analysis
from analysis.lint import engines, history, shapes, switches, tool_calls
from analysis.lint.conversations import COMMON_REASONING_MARKERS, Renderer
from analysis.lint.findings import Finding, LintReport, Severity
from analysis.phases.result import TemplateAnalysis
from analysis.probing.caps import Capabilities
from analysis.template.rendering import ChatTemplate


@dataclass(frozen=True)
class LintContext:
    """What the rules look at: the renders (shared) and the template's capabilities."""

    renderer: Renderer
    caps: Capabilities
    bos_token: str
    add_bos_token: bool | None
    #: the reasoning markers the analysis found, else the common ones (a
    #: difference made of them is reasoning, not a header)
    reasoning_markers: tuple[str, str] = COMMON_REASONING_MARKERS


@dataclass(frozen=True)
class Rule:
    """A lint rule: its id, the most severe finding it gives, what it checks,
    and why it cannot run on a template ("" when it can)."""

    id: str
    severity: Severity
    summary: str
    run: Callable[[LintContext], Iterable[Finding]]
    needs: Callable[[LintContext], str] = lambda context: ""


def _needs_calls(context: LintContext) -> str:
    return "" if context.caps.supports_tool_calls else "the template writes no tool calls"


def _needs_bos_setting(context: LintContext) -> str:
    if context.add_bos_token is None:
        return "the source does not say whether the tokenizer adds BOS (give a tokenizer_config.json or a model folder)"
    return "" if context.bos_token else "the source names no BOS token"


RULES: tuple[Rule, ...] = (
    Rule(history.HISTORY_PREFIX, Severity.ERROR, "the next prompt starts with this prompt and the reply as written",
         lambda c: history.history_prefix(c.renderer, c.reasoning_markers, c.caps.supports_tool_calls)),
    Rule(history.GENERATION_PROMPT, Severity.ERROR, "the generation prompt is how history writes the reply's start",
         lambda c: history.generation_prompt(c.renderer, c.reasoning_markers)),
    Rule(history.GENERATION_PROMPT_FLAG, Severity.WARNING, "add_generation_prompt=false writes no generation prompt",
         lambda c: history.generation_prompt_flag(c.renderer)),
    Rule(shapes.RAISES, Severity.ERROR, "common conversations render (null content, parts, tool messages…)",
         lambda c: shapes.raises(c.renderer, c.caps)),
    Rule(tool_calls.CALL_IDS, Severity.WARNING, "call ids and tool_call_id reach the prompt",
         lambda c: tool_calls.call_ids(c.renderer, c.caps), _needs_calls),
    Rule(tool_calls.ARGUMENTS_PYTHON, Severity.ERROR, "object arguments render as JSON, not Python",
         lambda c: tool_calls.arguments_python(c.renderer, c.caps), _needs_calls),
    Rule(tool_calls.ARGUMENTS_DOUBLE_ENCODED, Severity.ERROR, "string arguments are not encoded twice",
         lambda c: tool_calls.arguments_double_encoded(c.renderer, c.caps), _needs_calls),
    Rule(tool_calls.CALL_WHITESPACE, Severity.WARNING, "every call in a turn, and every argument in a call, is written alike",
         lambda c: tool_calls.call_whitespace(c.renderer, c.caps), _needs_calls),
    Rule(switches.DOUBLE_BOS, Severity.ERROR, "the template and the tokenizer do not both add BOS",
         lambda c: switches.double_bos(c.renderer, c.bos_token, c.add_bos_token), _needs_bos_setting),
    Rule(switches.THINKING_SWITCHES, Severity.WARNING, "the reasoning switches read, and whether they take effect",
         lambda c: switches.switches_finding(c.renderer, c.reasoning_markers)),
    Rule(switches.GENERATION_BLOCK, Severity.INFO, "a {% generation %} block marks the assistant's text",
         lambda c: switches.generation_block(c.renderer)),
    Rule(switches.DATE_IN_PROMPT, Severity.INFO, "the prompt does not change with the date",
         lambda c: switches.date_in_prompt(c.renderer)),
)

RULE_IDS = tuple(rule.id for rule in RULES)


def check_rule_ids(ids: Iterable[str]) -> tuple[str, ...]:
    """``ids`` as given, or an :class:`InputError` naming an unknown one."""
    ids = tuple(ids)
    unknown = [i for i in ids if i not in RULE_IDS]
    if unknown:
        raise InputError(f"no lint rule {', '.join(map(repr, unknown))} (rules: {', '.join(RULE_IDS)})")
    return ids


def for_engines(finding: Finding, linted: Sequence[str]) -> Finding:
    """``finding`` with the engines it breaks filled in (every engine that
    renders the template, unless the rule named some), and kept an error (or
    a warning) only when one of the ``linted`` engines is among them:
    otherwise info, saying which engines it would break.  An error or warning
    that breaks some of the linted engines only names them."""
    broken = engines.rendering() if finding.engines is None else finding.engines
    finding = replace(finding, engines=broken)
    if finding.severity is Severity.INFO:
        return finding
    hit = [name for name in linted if name in broken]
    if not hit:
        who = ", ".join(broken) if broken else "no engine in the table (one that passed them on as sent)"
        return replace(
            finding,
            severity=Severity.INFO,
            message=f"{finding.message} (not an error for {', '.join(linted)}: it breaks {who})",
        )
    spared = [name for name in linted if name not in broken]
    if spared:
        return replace(finding, message=f"{finding.message} (breaks {', '.join(hit)}; not {', '.join(spared)})")
    return finding


#: the lengths of the text at a finding's place looked for on its line (longest first)
_SNIPPETS = (16, 12, 8, 5)


def with_column(finding: Finding, source: str) -> Finding:
    """``finding`` with the column of its line where the text it points at
    stands once, as written, on that line (a literal the statement writes);
    without one where it does not (an expression's value, or text written
    several times on the line)."""
    line = finding.where
    evidence = next((e for e in finding.evidence if e.at is not None and e.line == line), None)
    lines = source.split("\n")
    if line is None or evidence is None or evidence.at is None or not 1 <= line <= len(lines):
        return finding
    written = lines[line - 1]
    for length in _SNIPPETS:
        snippet = evidence.text[evidence.at : evidence.at + length]
        if len(snippet) == length and snippet.strip() and written.count(snippet) == 1:
            return replace(finding, column=written.index(snippet) + 1)
    return finding


def lint_template(
    template: ChatTemplate,
    ignore: Iterable[str] = (),
    analysis: TemplateAnalysis | None = None,
    engine_names: Iterable[str] = engines.DEFAULT_ENGINES,
) -> LintReport:
    """Run every rule not in ``ignore`` on ``template``: findings most severe
    first, then in rule order.  A finding is an error only when it breaks one
    of the engines named (:mod:`analysis.lint.engines`; by default every
    engine that renders the template).  ``analysis`` (the template's, computed
    when not given) supplies the capabilities and reasoning markers.  A
    sandbox limit raises (the template cannot be linted)."""
    return lint_renders(template, ignore, analysis, engine_names)[0]


def lint_renders(
    template: ChatTemplate,
    ignore: Iterable[str] = (),
    analysis: TemplateAnalysis | None = None,
    engine_names: Iterable[str] = engines.DEFAULT_ENGINES,
) -> tuple[LintReport, Renderer]:
    """:func:`lint_template`, and the renderer whose renders the rules read
    (every conversation rendered: what a fix is proven on)."""
    linted = tuple(e.name for e in engines.check_engines(engine_names))
    ignored = check_rule_ids(ignore)
    if analysis is None:
        analysis = cached_analysis(template)
    loaded = template.loaded
    found = (analysis.reasoning.start, analysis.reasoning.end)
    markers = found if all(m.strip() for m in found) else COMMON_REASONING_MARKERS
    renderer = Renderer.starting(template)
    context = LintContext(renderer, analysis.caps, loaded.bos_token, loaded.add_bos_token, markers)
    findings: list[Finding] = []
    skipped: dict[str, str] = {}
    for rule in RULES:
        if rule.id in ignored:
            continue
        why = rule.needs(context)
        if why:
            skipped[rule.id] = why
            continue
        findings.extend(with_column(for_engines(finding, linted), template.source) for finding in rule.run(context))
    order = {rule_id: i for i, rule_id in enumerate(RULE_IDS)}
    findings.sort(key=lambda f: (f.severity.rank, order[f.rule]))
    return LintReport(template.name, tuple(findings), ignored, skipped, linted), renderer
