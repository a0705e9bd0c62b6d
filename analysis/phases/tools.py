"""Phase 3: tool calls (T1 format, T2 per-call markers, T3 function markers,
A1/A2 argument markers, T5 separator, T6 argument container, T7 call ids)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from analysis.errors import TemplateRenderError
from analysis.phases.phase_log import PhaseLog
from analysis.phases.result import (
    ArgumentsAnalysis,
    CallIdAnalysis,
    CallIdPosition,
    FunctionAnalysis,
    ReasoningAnalysis,
    ToolFormat,
    ToolFormatAnalysis,
    ToolsAnalysis,
)
from analysis.probing.markers import (
    MARKER_RE,
    first_marker,
    from_last_marker,
    last_marker,
    lstrip_ws,
    strip_ws,
    through_first_marker,
    up_to_first_marker,
)
from analysis.probing.probes import (
    ARG_A,
    ARG_B,
    ASSISTANT_TEXT,
    FUN_A,
    FUN_B,
    ID_A,
    ID_B,
    USER_TEXT,
    VALUE_A,
    VALUE_B,
    Comparison,
    ComparisonFailed,
    Prober,
    assistant,
    conversation,
    tool_call,
)
from analysis.template.rendering import RenderRequest
from peg.text import WS as _WS


def _calls(*calls: dict[str, Any]) -> RenderRequest:
    return conversation(assistant(content="", calls=calls))


def in_json_context(haystack: str, needle: str) -> bool:
    """Whether ``needle`` appears quoted right after ``{`` or ``:`` (a JSON key or value)."""
    return re.search(r"[{:,]\s*([\"'])" + re.escape(needle) + r"\1", haystack) is not None


def _remove_once(text: str, marker: str) -> str:
    marker = marker if marker in text else strip_ws(marker)
    if not marker:
        return text
    pos = text.find(marker)
    return text if pos < 0 else text[:pos] + text[pos + len(marker) :]


def _leading_markers(text: str, limit: int) -> tuple[list[str], str]:
    """Up to ``limit`` markers (each with the whitespace after it) at the start of
    ``text``, and the rest."""
    found: list[str] = []
    pos = 0
    while len(found) < limit:
        i = pos
        while i < len(text) and text[i] in _WS:
            i += 1
        match = MARKER_RE.match(text, i)
        if not match:
            break
        end = match.end()
        while end < len(text) and text[end] in _WS:
            end += 1
        found.append(text[i:end])
        pos = end
    return found, text[pos:]


def _trailing_markers(text: str) -> list[str]:
    """The markers that end ``text`` (only whitespace between them), in order."""
    found: list[str] = []
    end = len(text)
    while True:
        j = end
        while j > 0 and text[j - 1] in _WS:
            j -= 1
        match = last_marker(text, j)
        if not match or match.end() != j:
            break
        found.insert(0, match.group())
        end = match.start()
    return found


def _parse_json_like(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)  # Python-style dicts: {'name': ...}


@dataclass
class _State:
    fmt: ToolFormatAnalysis
    function: FunctionAnalysis
    arguments: ArgumentsAnalysis
    call_id: CallIdAnalysis
    first_call: Comparison | None = None  #: T1's comparison (no call vs one call)


def analyze_tools(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis) -> ToolsAnalysis:
    """Run T1–T7 (T1 only decides the format; the rest runs for tag formats)."""
    state = _State(ToolFormatAnalysis(), FunctionAnalysis(), ArgumentsAnalysis(), CallIdAnalysis())
    steps = [_t1_format, _t2_per_call]
    for step in steps:
        try:
            step(prober, log, reasoning, state)
        except ComparisonFailed as exc:
            log.degrade("tools", exc)
            if step is _t1_format:
                return ToolsAnalysis(state.fmt, state.function, state.arguments, state.call_id)
    if state.fmt.mode not in (ToolFormat.NONE, ToolFormat.JSON_NATIVE):
        tag_steps = [_t3_function_markers]
        if state.fmt.mode is ToolFormat.TAG_WITH_TAGGED:
            tag_steps += [_a1_argument_names, _a2_argument_values, _t5_separator, _t6_container]
        tag_steps.append(_t7_call_id)
        for step in tag_steps:
            try:
                step(prober, log, reasoning, state)
            except ComparisonFailed as exc:
                log.degrade("tools", exc)
    closer = _turn_closer(prober)
    fmt = replace(
        state.fmt,
        section_end=_without_closer(state.fmt.section_end, closer),
        per_call_end=_without_closer(state.fmt.per_call_end, closer),
        content_after_calls=state.fmt.mode is not ToolFormat.NONE and _content_after_calls(prober, log, closer),
    )
    return ToolsAnalysis(fmt, state.function, state.arguments, state.call_id)


def _content_after_calls(prober: Prober, log: PhaseLog, closer: str) -> bool:
    """Whether a turn with content and a call renders the content after the call,
    in the same turn (llama-cpp-lfm2 writes ``<|tool_call_start|>[…]<|tool_call_end|>TEXT``;
    DeepSeek R1 distills close the turn and write the text as a new one)."""
    out = prober.render_shaped(conversation(assistant(calls=[tool_call()])))
    if not out or ASSISTANT_TEXT not in out or FUN_A not in out:
        return False
    call_at, text_at = out.rfind(FUN_A), out.rfind(ASSISTANT_TEXT)
    after = text_at > call_at and not (strip_ws(closer) and strip_ws(closer) in out[call_at:text_at])
    if after:
        log.cite_source("tools.format.content_after_calls", "a turn with content and a call renders the content after the call")
    return after


def _turn_closer(prober: Prober) -> str:
    """The marker that ends an assistant turn (read after the text of a content turn)."""
    try:
        out = prober.render(conversation(assistant(), {"role": "user", "content": USER_TEXT}))
    except TemplateRenderError:
        return ""
    match = MARKER_RE.match(lstrip_ws(out.split(ASSISTANT_TEXT, 1)[-1]))
    return match.group() if match else ""


def _without_closer(end: str, closer: str) -> str:
    """``end`` trimmed, without a trailing turn closer (``</TOOLCALL><SPECIAL_12>``)."""
    end = strip_ws(end)
    if closer and end.endswith(closer) and strip_ws(end[: -len(closer)]):
        end = strip_ws(end[: -len(closer)])
    return end


# --- T1 ----------------------------------------------------------------------------


def _t1_format(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """No call vs one call: the call's text, its format and its outer markers."""
    cmp = prober.compare("T1 no call vs one call", conversation(assistant()), _calls(tool_call()), shows=lambda c: FUN_A in c.diff.right)
    state.first_call = cmp
    section = cmp.diff.right
    if FUN_A not in section:
        return
    section = _remove_once(_remove_once(section, reasoning.start), reasoning.end) if reasoning.end else section
    if in_json_context(section, FUN_A):
        mode = ToolFormat.JSON_NATIVE
    elif in_json_context(section, ARG_A):
        mode = ToolFormat.TAG_WITH_JSON
    else:
        mode = ToolFormat.TAG_WITH_TAGGED
    state.fmt = replace(state.fmt, mode=mode)
    if mode is ToolFormat.JSON_NATIVE:
        _json_native_fields(section, log, cmp, state)
    else:
        _tag_outer_markers(section, log, cmp, state)


def _json_native_fields(section: str, log: PhaseLog, cmp: Comparison, state: _State) -> None:
    start, end = section.find("{"), section.rfind("}")
    body = section[start : end + 1]
    try:
        call = _parse_json_like(body)
    except (ValueError, SyntaxError):
        log.degrade("tools", f"the call is not one JSON object: {body[:80]!r}", cmp.name)
        return
    if not isinstance(call, dict):
        log.degrade("tools", "the call is not a JSON object", cmp.name)
        return
    fields: dict[str, Any] = {}  # ToolFormatAnalysis field -> value (all str here)

    def register(prefix: str, key: str, value: Any) -> None:
        path = f"{prefix}.{key}" if prefix else key
        dumped = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        if isinstance(value, str) and ID_A in value:
            fields["id_field"] = path
        elif value == FUN_A:
            fields["name_field"] = path
        elif ARG_A in dumped:
            fields["args_field"] = path
        elif "id" in key:
            fields["gen_id_field"] = path

    fmt = state.fmt
    for key, value in call.items():
        if key == FUN_A:
            fmt = replace(fmt, fun_name_is_key=True, name_field="", args_field="")
            continue
        if isinstance(value, dict) and (FUN_A in value.values() or ARG_A not in json.dumps(value)):
            fmt = replace(fmt, function_field=key)
            for sub_key, sub_value in value.items():
                register(key, sub_key, sub_value)
            continue
        register("", key, value)
    if not fmt.fun_name_is_key:
        fmt = replace(fmt, **fields)
    else:
        fmt = replace(fmt, **{k: v for k, v in fields.items() if k in ("id_field", "gen_id_field")})

    wrapped = re.search(r"\[\s*" + re.escape(body) + r"\s*\]", section)
    if wrapped and any(m.start() < wrapped.start() < m.end() for m in MARKER_RE.finditer(section)):
        wrapped = None  # (the [ ends a marker, ]<]call[>[: no list)
    if wrapped:
        start, stop = wrapped.start(), wrapped.end()
    else:
        stop = end + 1
    order = sorted(
        (section.find(name.split(".")[-1]), name)
        for name in (fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field)
        if name
    )
    section_end = strip_ws(section[stop:])
    state.fmt = replace(
        fmt,
        tools_array_wrapped=bool(wrapped),
        parameter_order=tuple(name for _, name in order),
        section_start=lstrip_ws(section[:start]),
        section_end="" if wrapped and section_end == "]" else section_end,
    )
    log.cite("tools.format.section_start", cmp)
    log.cite("tools.format.section_end", cmp)


def _function_tag(section: str) -> tuple[int, int] | None:
    """Span of the ``<...>`` / ``[...]`` tag that holds the function name, if any."""
    pos = section.find(FUN_A)
    for open_c, close_c in (("<", ">"), ("[", "]"), ("◁", "▷")):
        i = section.rfind(open_c, 0, pos)
        if i < 0 or section.rfind(close_c, i, pos) >= 0 or "\n" in section[i:pos]:
            continue
        j = section.find(close_c, pos + len(FUN_A))
        if j >= 0 and "\n" not in section[pos:j]:
            return i, j + 1
    return None


def _mirror(opener: str, closers: list[str]) -> str:
    """Of ``closers``, the closing tag of ``opener`` (``</tool_call:x>`` for
    ``<tool_call:x>``) as written, or ""."""
    core = strip_ws(opener)
    if not core.startswith("<") or core.startswith("</"):
        return ""
    want = "</" + core[1:]
    return next((c for c in closers if strip_ws(c) == want), "")


def _tag_outer_markers(section: str, log: PhaseLog, cmp: Comparison, state: _State) -> None:
    tag = _function_tag(section)
    head_end = tag[0] if tag else section.find(FUN_A)
    openers, _ = _leading_markers(section[:head_end], 3)
    # a closing tag (</think> a template writes before its calls) closes what came before: it opens nothing
    while len(openers) > 1 and strip_ws(openers[0]).startswith("</"):
        openers = openers[1:]
    openers = openers[:2]
    closers = _trailing_markers(section)
    fmt = state.fmt
    mirrors = [_mirror(opener, closers) for opener in openers]
    if len(openers) >= 2:
        fmt = replace(fmt, section_start=openers[0], per_call_start=openers[1])
        if mirrors[0] and mirrors[1]:  # (each opener's own closing tag: what a turn end after them is not)
            fmt = replace(fmt, per_call_end=mirrors[1], section_end=mirrors[0])
        elif len(closers) >= 2:
            fmt = replace(fmt, per_call_end=closers[-2], section_end=closers[-1])
        elif closers:
            fmt = replace(fmt, section_end=closers[-1])
    elif openers:
        fmt = replace(fmt, section_start=openers[0], section_end=mirrors[0] or (closers[-1] if closers else ""))
    state.fmt = fmt
    for name in ("section_start", "section_end", "per_call_start", "per_call_end"):
        log.cite(f"tools.format.{name}", cmp)


# --- T2 ----------------------------------------------------------------------------


def _t2_per_call(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """One call vs two: if the second call repeats the opening marker, it is per
    call; when T1 took a second marker for the per-call opener and the second
    call does not repeat it, both markers open the section (``<]minimax[>[tool_call]``)."""
    opener = strip_ws(state.fmt.section_start)
    if not prober.caps.supports_parallel_tool_calls or not opener:
        return
    cmp = prober.compare(
        "T2 one call vs two calls",
        _calls(tool_call()),
        _calls(tool_call(), tool_call(FUN_B, call_id=ID_B)),
    )
    if state.fmt.per_call_start:
        _one_section_opener(cmp, log, state)
    elif cmp.output_b.count(opener) > cmp.output_a.count(opener):
        state.fmt = replace(
            state.fmt,
            per_call_start=state.fmt.section_start,
            per_call_end=state.fmt.section_end,
            section_start="",
            section_end="",
        )
        log.cite("tools.format.per_call_start", cmp)
        log.cite("tools.format.per_call_end", cmp)


def _one_section_opener(cmp: Comparison, log: PhaseLog, state: _State) -> None:
    """Both leading markers open the section when a second call repeats neither."""
    fmt, inner = state.fmt, strip_ws(state.fmt.per_call_start)
    section = state.first_call.diff.right if state.first_call is not None else ""
    closer = strip_ws(fmt.per_call_end)
    if cmp.output_b.count(inner) != cmp.output_a.count(inner) or not closer or closer not in section:
        return
    state.fmt = replace(
        fmt,
        section_start=fmt.section_start + fmt.per_call_start,
        section_end=strip_ws(section[section.rfind(closer) :]),
        per_call_start="",
        per_call_end="",
    )
    log.cite("tools.format.section_start", cmp)
    log.cite("tools.format.section_end", cmp)


# --- T3 ----------------------------------------------------------------------------


def _opener(fmt: ToolFormatAnalysis) -> str:
    return fmt.per_call_start or fmt.section_start


def _closer(fmt: ToolFormatAnalysis) -> str:
    return strip_ws(fmt.per_call_end or fmt.section_end)


def _name_separator(after_name: str) -> str:
    """A marker that ends a call's name before the markers of its first
    argument (Hy3's ``NAME<tool_sep:x>\n<arg_key:x>city``), with the
    whitespace after it; "" where the first marker after the name is the
    argument's own (GLM's ``NAME\n<arg_key>city``)."""
    text = lstrip_ws(after_name)
    lead = after_name[: len(after_name) - len(text)]
    first, at = MARKER_RE.match(text), text.find(ARG_A)
    if first is None or at < 0:
        return ""
    gap = text[first.end() : len(text) - len(lstrip_ws(text[first.end() :]))]
    following = MARKER_RE.match(text, first.end() + len(gap))
    if following is None or following.end() > at:
        return ""  # (no other marker before the argument's name: the first one is the argument's)
    return lead + first.group() + gap


def _t3_function_markers(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """Function A vs function B: the text around the name, and the call closer."""
    cmp = prober.compare("T3 function A vs B", _calls(tool_call()), _calls(tool_call(FUN_B)))
    d = cmp.diff
    if FUN_A not in d.left or FUN_B not in d.right:
        return
    mode = state.fmt.mode
    opener = strip_ws(_opener(state.fmt))
    prefix = ""
    if opener and opener in d.prefix:
        prefix = lstrip_ws(d.prefix[d.prefix.rfind(opener) + len(opener) :])
    name_at = d.left.find(FUN_A)
    prefix += d.left[:name_at]
    suffix = up_to_first_marker(d.left[name_at + len(FUN_A) :])
    if suffix == d.left[name_at + len(FUN_A) :]:  # the name part ends inside the diff: extend into the suffix
        if mode is ToolFormat.TAG_WITH_JSON:
            ext = re.match(r"(?:" + MARKER_RE.pattern + r"|[^{\[])*", d.suffix)
            suffix += ext.group() if ext else ""
        else:
            suffix += up_to_first_marker(d.suffix)
    if not strip_ws(suffix) and mode is ToolFormat.TAG_WITH_TAGGED:
        suffix += _name_separator(d.left[name_at + len(FUN_A) :] + d.suffix)
    # the closer: what follows the last argument value, up to the call/section end
    end_marker = _closer(state.fmt)
    if end_marker and end_marker in d.suffix:
        region = d.suffix[: d.suffix.find(end_marker)]
    elif state.first_call is not None:
        region = state.first_call.diff.right
    else:
        region = ""
    close = ""
    if VALUE_B in region:
        after = region[region.rfind(VALUE_B) + len(VALUE_B) :]
        if mode is ToolFormat.TAG_WITH_TAGGED:
            match = re.match(r"\s*(?:" + MARKER_RE.pattern + r")\s*", after)
            close = after[match.end() :] if match else ""
        else:
            pos = max(after.rfind("}"), after.rfind("]"))
            close = after[pos + 1 :] if 0 <= pos < len(after) - 1 else ""
    state.function = FunctionAnalysis(prefix, suffix, lstrip_ws(close))
    for name in ("name_prefix", "name_suffix", "close"):
        log.cite(f"tools.function.{name}", cmp)


# --- A1 / A2 -------------------------------------------------------------------------


def _one_arg(name: str, value: str) -> dict[str, Any]:
    return tool_call(arguments={name: value})


def _a1_argument_names(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """Argument A vs argument B: the markers around an argument name."""
    cmp = prober.compare(
        "A1 argument name A vs B", _calls(_one_arg(ARG_A, VALUE_A)), _calls(_one_arg(ARG_B, VALUE_B))
    )
    d = cmp.diff
    if ARG_A not in d.left or ARG_B not in d.right:
        return
    pre_a, post_a = d.left.split(ARG_A, 1)
    pre_b, post_b = d.right.split(ARG_B, 1)
    stop_a = re.search(r"[\"" + VALUE_A[0] + "]", post_a)
    stop_b = re.search(r"[\"" + VALUE_B[0] + "]", post_b)
    suf_a = post_a[: stop_a.start()] if stop_a else post_a
    suf_b = post_b[: stop_b.start()] if stop_b else post_b
    if pre_a and pre_a == pre_b and suf_a == suf_b:
        name_prefix, name_suffix = strip_ws(pre_a), lstrip_ws(suf_a)
    elif not pre_a and not pre_b:
        name_prefix = from_last_marker(d.prefix)
        name_suffix = through_first_marker(post_a + d.suffix)
    else:
        return
    state.arguments = replace(state.arguments, name_prefix=name_prefix, name_suffix=name_suffix)
    log.cite("tools.arguments.name_prefix", cmp)
    log.cite("tools.arguments.name_suffix", cmp)


def _a2_argument_values(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """Value A vs value B of one argument: the markers around a value."""
    cmp = prober.compare(
        "A2 argument value A vs B", _calls(_one_arg(ARG_A, VALUE_A)), _calls(_one_arg(ARG_A, VALUE_B))
    )
    d = cmp.diff
    if d.left != VALUE_A or d.right != VALUE_B:
        return
    prefix = d.prefix
    name_end = ARG_A + state.arguments.name_suffix
    if name_end in prefix:
        prefix = prefix[prefix.rfind(name_end) + len(name_end) :]
    value_prefix = (from_last_marker(prefix) or prefix) if prefix else ""
    value_suffix = d.suffix
    stop = state.function.close or _closer(state.fmt)
    if stop and stop in value_suffix:
        value_suffix = value_suffix[: value_suffix.find(stop)]
    state.arguments = replace(state.arguments, value_prefix=value_prefix, value_suffix=lstrip_ws(value_suffix))
    log.cite("tools.arguments.value_prefix", cmp)
    log.cite("tools.arguments.value_suffix", cmp)


# --- T5 / T6 -------------------------------------------------------------------------


def _t5_separator(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """One argument vs two: what separates consecutive tagged arguments."""
    name_prefix = state.arguments.name_prefix
    if not name_prefix:
        return
    cmp = prober.compare("T5 one argument vs two", _calls(_one_arg(ARG_A, VALUE_A)), _calls(tool_call()))
    added = cmp.diff.right
    pos = added.find(name_prefix)
    if pos > 0 and ARG_B in added[pos:]:
        state.arguments = replace(state.arguments, separator=added[:pos])
        log.cite("tools.arguments.separator", cmp)


def _t6_container(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """No argument vs one: markers that wrap the whole argument list."""
    args = state.arguments
    if not args.name_prefix or not args.value_suffix:
        return
    cmp = prober.compare("T6 no argument vs one", _calls(tool_call(arguments={})), _calls(_one_arg(ARG_A, VALUE_A)))
    added = cmp.diff.right
    pos = added.find(args.name_prefix)
    end = added.rfind(args.value_suffix)
    start_text = added[:pos] if pos > 0 else ""
    end_text = added[end + len(args.value_suffix) :] if end >= 0 else ""
    start_marker = start_text if MARKER_RE.fullmatch(strip_ws(start_text)) else ""
    end_marker = end_text if MARKER_RE.fullmatch(strip_ws(end_text)) else ""
    if start_marker and end_marker:
        state.arguments = replace(args, start=start_marker, end=end_marker)
        log.cite("tools.arguments.start", cmp)
        log.cite("tools.arguments.end", cmp)


# --- T7 ----------------------------------------------------------------------------


def _t7_call_id(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, state: _State) -> None:
    """Call id A vs call id B: where the id goes and the markers around it."""
    cmp = prober.compare("T7 call id A vs B", _calls(tool_call()), _calls(tool_call(call_id=ID_B)))
    d = cmp.diff
    if ID_A not in d.left:
        return
    turn = d.prefix[max(d.prefix.rfind(USER_TEXT), 0) :]  # the assistant turn (tool lists name FUN_A too)
    fn_before = turn.rfind(FUN_A)
    fn_after = d.suffix.find(FUN_A)
    call_id = state.call_id
    function = state.function
    if fn_before >= 0 and fn_after < 0:
        between = turn[fn_before + len(FUN_A) :]
        if VALUE_B in between or VALUE_A in between:
            pos = CallIdPosition.POST_ARGS
            closing = max(between.rfind("}"), between.rfind("]"))
            prefix_match = MARKER_RE.findall(between[closing + 1 :] if closing >= 0 else between)
        else:
            pos = CallIdPosition.BETWEEN_FUNC_AND_ARGS
            prefix_match = MARKER_RE.findall(between)
        suffix_match = first_marker(d.suffix)
        call_id = CallIdAnalysis(pos, prefix_match[-1] if prefix_match else "", suffix_match.group() if suffix_match else "")
        if pos is CallIdPosition.BETWEEN_FUNC_AND_ARGS and ID_A in function.name_suffix:
            # the name suffix ran over the id: keep what follows it
            rest = function.name_suffix.split(ID_A, 1)[1]
            function = replace(function, name_suffix=rest)
    elif fn_after >= 0 and fn_before < 0:
        prefix_markers = MARKER_RE.findall(turn)
        suffix_match = first_marker(d.suffix[:fn_after])
        call_id = CallIdAnalysis(
            CallIdPosition.PRE_FUNC_NAME,
            prefix_markers[-1] if prefix_markers else "",
            suffix_match.group() if suffix_match else "",
        )
        if ID_A in function.name_prefix:
            rest = function.name_prefix.split(ID_A, 1)[1]
            if call_id.suffix and rest.startswith(call_id.suffix):
                rest = rest[len(call_id.suffix) :]
            function = replace(function, name_prefix=lstrip_ws(rest))
    else:
        return
    fmt = state.fmt
    if call_id.suffix and strip_ws(fmt.per_call_end).startswith(call_id.suffix):
        fmt = replace(fmt, per_call_end="")
    state.call_id, state.function, state.fmt = call_id, function, fmt
    for name in ("prefix", "suffix"):
        log.cite(f"tools.call_id.{name}", cmp)
