"""Probe conversations and the differential comparison of two renders.

Every analysis phase asks one question by rendering the template twice with a
single controlled change (reasoning or not, one call or two, function A or B...)
and diffing the renders.  :class:`Prober` runs those comparisons for one
template: it caches renders, and when a template rejects a conversation shape
(a missing system turn, ``content: null``, object arguments...) it retries both
variants with equivalent shapes before reporting the comparison as failed.

The probe strings are chosen so that no two differ only in the middle (the
diff then isolates them cleanly) and so that none can be mistaken for a marker.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from analysis.errors import TemplateRenderError
from analysis.probing.adapting import adapt_messages
from analysis.probing.caps import Capabilities
from analysis.probing.diff import DiffSplit, diff_split
from analysis.template.rendering import ChatTemplate, RenderMemo, RenderRequest
from peg.errors import AutoparserError

FUN_A = "aaa_probe_first_fn_a"
FUN_B = "bbb_probe_second_fn_b"
ARG_A = "xx_probe_arg_one_xx"
ARG_B = "yy_probe_arg_two_yy"
VALUE_A = "PPPP"
VALUE_B = "QQQQ"
ID_A = "Ab3Cd5Ef7"
ID_B = "Zy9Xw8Vu6"
USER_TEXT = "Uprobe user says hello U"
ASSISTANT_TEXT = "Aprobe assistant replies A"
REASONING_TEXT = "Rprobe reasoning goes here R"
SYSTEM_TEXT = "Sprobe system prompt S"
USER_TEXT_2 = "Vprobe second user turn V"

#: Every probe string: a marker that contains one of these leaked from the probes.
PROBE_STRINGS = (FUN_A, FUN_B, ARG_A, ARG_B, VALUE_A, VALUE_B, ID_A, ID_B, USER_TEXT, ASSISTANT_TEXT, REASONING_TEXT)


def _params_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            ARG_A: {"type": "string", "description": "First argument"},
            ARG_B: {"type": "string", "description": "Second argument"},
        },
        "required": [],
    }


PROBE_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": FUN_A, "description": "Probe function one", "parameters": _params_schema()}},
    {"type": "function", "function": {"name": FUN_B, "description": "Probe function two", "parameters": _params_schema()}},
]

USER = {"role": "user", "content": USER_TEXT}


def tool_call(name: str = FUN_A, arguments: Mapping[str, Any] | None = None, call_id: str = ID_A) -> dict[str, Any]:
    """One OpenAI-style call; default arguments are both probe arguments."""
    args = {ARG_A: VALUE_A, ARG_B: VALUE_B} if arguments is None else dict(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def assistant(content: str | None = ASSISTANT_TEXT, reasoning: str | None = None, calls: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """An assistant turn with optional reasoning and calls."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    calls = list(calls)
    if calls:
        message["tool_calls"] = calls
    return message


def conversation(*turns: dict[str, Any], tools: bool = True, generation_prompt: bool = False, thinking: bool = True) -> RenderRequest:
    """``[user, *turns]`` as a render request (probe tools on by default)."""
    return RenderRequest(
        [USER, *turns], PROBE_TOOLS if tools else None, add_generation_prompt=generation_prompt, enable_thinking=thinking
    )


@dataclass(frozen=True)
class Comparison:
    """Two renders that differ by one change, and their diff."""

    name: str
    output_a: str
    output_b: str
    diff: DiffSplit
    shape: str  #: the message shape both renders used ("as given", "string arguments", ...)


class ComparisonFailed(AutoparserError):
    """Both variants of a comparison could not be rendered in any equivalent shape."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"comparison {name!r} failed: {reason}")
        self.name = name
        self.reason = reason


# --- equivalent message shapes ---------------------------------------------------


def _map_messages(request: RenderRequest, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> RenderRequest:
    return replace(request, messages=[fn(copy.deepcopy(dict(m))) for m in request.messages])


def _null_content(m: dict[str, Any]) -> dict[str, Any]:
    if m.get("role") == "assistant" and m.get("tool_calls") and m.get("content") == "":
        m["content"] = None
    return m


def _empty_content(m: dict[str, Any]) -> dict[str, Any]:
    if "content" in m and m["content"] is None:
        m["content"] = ""
    return m


def _string_arguments(m: dict[str, Any]) -> dict[str, Any]:
    for call in m.get("tool_calls") or ():
        function = call.get("function", {})
        if not isinstance(function.get("arguments"), str):
            function["arguments"] = json.dumps(function.get("arguments"), ensure_ascii=False)
    return m


def call_turn_shapes(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An assistant turn with calls in the shapes clients send it, most faithful
    first: as given, content null for empty, arguments as JSON strings, and both
    (a template may write calls for one shape only)."""
    given = copy.deepcopy(dict(message))
    shapes = [given, _null_content(copy.deepcopy(given)), _string_arguments(copy.deepcopy(given))]
    shapes.append(_null_content(copy.deepcopy(shapes[-1])))
    distinct: list[dict[str, Any]] = []
    for shape in shapes:
        if shape not in distinct:
            distinct.append(shape)
    return distinct


def _with_system(request: RenderRequest) -> RenderRequest:
    if request.messages and request.messages[0].get("role") == "system":
        return request
    return replace(request, messages=[{"role": "system", "content": SYSTEM_TEXT}, *request.messages])


def _shapes(caps: Capabilities) -> list[tuple[str, Callable[[RenderRequest], RenderRequest]]]:
    """Equivalent reshapings of a request, most faithful first."""
    as_given: Callable[[RenderRequest], RenderRequest] = lambda r: r  # noqa: E731
    strings: Callable[[RenderRequest], RenderRequest] = lambda r: _map_messages(r, _string_arguments)  # noqa: E731
    first, second = (("as given", as_given), ("string arguments", strings))
    if not caps.supports_object_arguments and caps.supports_tool_calls:
        first, second = second, first
    return [
        first,
        ("content null", lambda r: _map_messages(first[1](r), _null_content)),
        ("content empty", lambda r: _map_messages(first[1](r), _empty_content)),
        second,
        ("with system turn", lambda r: _with_system(first[1](r))),
        ("with system turn, " + second[0], lambda r: _with_system(second[1](r))),
        ("polyfilled", lambda r: replace(first[1](r), messages=adapt_messages([dict(m) for m in r.messages], caps))),
    ]


class Prober:
    """Runs (and remembers) the comparisons of one template's analysis."""

    def __init__(self, template: ChatTemplate, caps: Capabilities):
        self.template = template
        self.caps = caps
        self.shapes = _shapes(caps)
        self.comparisons: list[Comparison] = []
        self.failures: list[ComparisonFailed] = []
        self._renders = RenderMemo(template)

    def render(self, request: RenderRequest) -> str:
        """Render once per distinct request; the template's error raises (and
        so does a runaway template's limit error)."""
        attempt = self._renders.attempt(request)
        if attempt.error is not None:
            raise attempt.error
        assert attempt.text is not None
        return attempt.text

    def render_shaped(self, request: RenderRequest) -> str | None:
        """Render ``request`` in the first shape the template accepts, or None."""
        for _, shape in self.shapes:
            try:
                return self.render(shape(request))
            except TemplateRenderError:
                continue
        return None

    def compare(self, name: str, a: RenderRequest, b: RenderRequest, shows: Callable[[Comparison], bool] | None = None) -> Comparison:
        """Render ``a`` and ``b`` in the first shape both accept and diff them.

        ``shows``: what the comparison must show (the probe's call in the diff).
        A shape the template accepts but renders without it is passed over; the
        first shape that shows it is tried first by every later comparison (the
        shape the template writes such turns in), and when none does, the first
        accepted shape stands.  Raises :class:`ComparisonFailed` with the
        template's distinct error messages."""
        errors: list[str] = []
        accepted: Comparison | None = None
        for index, (shape_name, shape) in enumerate(self.shapes):
            try:
                out_a = self.render(shape(a))
                out_b = self.render(shape(b))
            except TemplateRenderError as exc:
                message = f"line {exc.line}: {exc.detail}" if exc.line else exc.detail
                if message not in errors:
                    errors.append(message)
                continue
            comparison = Comparison(name, out_a, out_b, diff_split(out_a, out_b), shape_name)
            if shows is not None and not shows(comparison):
                accepted = accepted or comparison
                continue
            if accepted is not None:  # a later shape shows what the earlier ones did not
                self.shapes.insert(0, self.shapes.pop(index))
            self.comparisons.append(comparison)
            return comparison
        if accepted is not None:
            self.comparisons.append(accepted)
            return accepted
        failure = ComparisonFailed(name, "; ".join(errors) or "no render")
        self.failures.append(failure)
        raise failure
