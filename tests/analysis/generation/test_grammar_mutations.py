"""Grammars constrain what the reference's grammars constrain.

Every conformance case with tool calls is mutated the ways a model can break a
call: a required argument dropped, an argument duplicated, the tool renamed, an
enum value outside its enum, the JSON broken.  Each mutation that the
reference's grammar for the case rejects must be rejected by ours too (ours may
reject more: it also requires the schema's required arguments of tagged
formats, which the reference does too, and enums).  The counts are printed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from analysis.checks.conformance import CaseRunner
from analysis.generation.grammar_check import check_output
from analysis.parsers.request import ChatRequest
from peg.gbnf_reader import read_gbnf
from tests.conftest import SHARED, ZOO, needs_shared, reference_constrained_part

CASES_FILE = SHARED / "conformance" / "cases.jsonl"


def _reference_accepts(case: dict[str, Any], output: str) -> bool:
    text = reference_constrained_part(case, output)
    return text is None or read_gbnf(case["reference"]["grammar"]).match(text).accepted


def _dump(pairs: list[tuple[str, Any]]) -> str:
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in pairs) + "}"


def _function(request: ChatRequest, name: str) -> dict[str, Any]:
    for tool in request.tools or ():
        if tool["function"]["name"] == name:
            return dict(tool["function"])
    return {}


def _mutations(case: dict[str, Any], generated: Any) -> Iterator[tuple[str, str]]:
    """(kind, mutated output) pairs, found through our parse of the output."""
    output = case["output"]
    result = generated.parse_text(output)
    offset = len(generated.generation_prompt)

    def edit(start: int, end: int, text: str) -> str:
        return output[: start - offset] + text + output[end - offset :]

    names = result.find("tool-name") or result.find("h-to")
    if not names:
        return
    name_node = names[0]
    name = name_node.text.split("functions.", 1)[-1]
    yield "rename the tool", edit(name_node.start, name_node.end, name_node.text + "_renamed")
    schema = _function(generated.request, name).get("parameters") or {}
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    properties = schema.get("properties") or {}
    enums = {k: v["enum"] for k, v in properties.items() if isinstance(v, dict) and isinstance(v.get("enum"), list) and v["enum"]}
    args = (result.find("tool-args") or result.find("h-body"))[:1]
    if args:  # JSON arguments
        node = args[0]
        try:
            pairs = json.loads(node.text, object_pairs_hook=list)
        except ValueError:
            return
        if not isinstance(pairs, list):
            return
        keys = [k for k, _ in pairs]
        present = [r for r in required if r in keys]
        if present:
            yield "drop a required argument", edit(node.start, node.end, _dump([kv for kv in pairs if kv[0] != present[0]]))
        if pairs:
            yield "duplicate an argument", edit(node.start, node.end, _dump(pairs[:1] + pairs))
        for key, _value in pairs:
            if key in enums:
                bad = "not-in-enum" if isinstance(enums[key][0], str) else 987654321
                yield "out-of-enum value", edit(node.start, node.end, _dump([(k, bad if k == key else v) for k, v in pairs]))
                break
        yield "break the JSON", edit(node.start, node.end, node.text.rstrip()[:-1] + "]")
        return
    tagged = [n for n in result.find("tool-arg") if n.find("tool-arg-name")]
    by_name = {n.find("tool-arg-name")[0].text: n for n in tagged}
    present = [r for r in required if r in by_name]
    if present:
        node = by_name[present[0]]
        yield "drop a required argument", edit(node.start, node.end, "")
    if tagged:
        node = tagged[0]
        yield "duplicate an argument", edit(node.end, node.end, node.text)
    for key, node in by_name.items():
        values = node.find("tool-arg-string")
        if key in enums and values and isinstance(enums[key][0], str):
            value = values[0]
            inner = value.text.strip()
            yield "out-of-enum value", edit(value.start, value.end, value.text.replace(inner, "not-in-enum", 1))
            break
    for node in tagged:
        values = node.find("tool-arg-json")
        if values:
            yield "break the JSON", edit(values[0].start, values[0].end, values[0].text + "}")
            break


@pytest.mark.slow
@needs_shared
def test_our_grammars_reject_what_the_reference_rejects() -> None:
    runner = CaseRunner(ZOO)
    counts: dict[str, list[int]] = {}
    missed: list[tuple[str, str]] = []
    for line in CASES_FILE.read_text().splitlines():
        case = json.loads(line)
        if case["partial"] or not case["expected"].get("tool_calls") or not case["reference"].get("grammar"):
            continue
        generated = runner.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"]))
        if not generated.grammar:
            continue
        for kind, mutated in _mutations(case, generated):
            ref_rejects = not _reference_accepts(case, mutated)
            ours_rejects = not check_output(generated, mutated).fits
            total = counts.setdefault(kind, [0, 0, 0])
            total[0] += 1
            total[1] += ref_rejects
            total[2] += ours_rejects
            if ref_rejects and not ours_rejects:
                missed.append((case["id"], kind))
    print("\nmutation: mutations, rejected by the reference, rejected by ours")
    for kind, (n, ref, ours) in sorted(counts.items()):
        print(f"  {kind}: {n}, {ref}, {ours}")
    assert sum(n for n, _, _ in counts.values()) >= 300
    from collections import Counter
    print(Counter((c.split("#")[0], k) for c, k in missed))
    assert missed == [], missed


#: template -> why our grammar is not lazy where the reference's is
LAZINESS_DIFFERENCES = {
    "meetkai-functionary-medium-v3.2.jinja": (
        "the generation prompt ends with '>>>', so a first segment that is a call has no trigger in the output: "
        "the reference's lazy grammar (trigger '>>>(?!all)') leaves it unconstrained; ours covers the whole turn"
    ),
}


@pytest.mark.slow  # (zoo-wide)
@needs_shared
def test_grammars_are_lazy_where_the_reference_is() -> None:
    rows = [json.loads(line) for line in (SHARED / "reference" / "apply.jsonl").read_text().splitlines()]
    runner = CaseRunner(ZOO)
    compared, differ = 0, {}
    for row in rows:
        if row["scenario"] != "tools" or not row.get("grammar"):
            continue
        generated = runner.parser_for(row["template"]).generate(ChatRequest.from_json(row["request"]))
        assert generated.grammar, row["template"]
        compared += 1
        if generated.grammar_lazy != row["grammar_lazy"]:
            differ[row["template"]] = (generated.grammar_lazy, row["grammar_lazy"])
        elif generated.grammar_lazy:
            assert generated.triggers, row["template"]
    assert compared >= 45
    assert set(differ) == set(LAZINESS_DIFFERENCES), differ
