"""GBNF out (parsers and JSON schemas), the GBNF reader/matcher, and cross-checks
against the reference grammars and against llguidance."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peg import combinators as p
from peg.engine import parse
from peg.errors import GrammarError
from peg.gbnf_reader import read_gbnf
from peg.gbnf_writer import schema_to_gbnf, to_gbnf, until_pattern
from peg.status import Status
from tests.conftest import SHARED, examples, needs_shared, reference_constrained_part


def accepts(grammar: str, text: str) -> bool:
    return read_gbnf(grammar).match(text).accepted


# -- reader and matcher --------------------------------------------------------


def test_matcher_accept_prefix_reject() -> None:
    g = read_gbnf('root ::= "ab" [0-9]+ ("x" | "y")?\n')
    assert g.match("ab12x").status is Status.SUCCESS
    assert g.match("ab1").status is Status.SUCCESS
    assert g.match("ab").status is Status.NEED_MORE
    r = g.match("abz")
    assert r.status is Status.FAILURE and r.position == 2 and "'[0-9]'" in r.expected


def test_reader_features() -> None:
    g = read_gbnf(
        "# comment\nroot ::= item{2,3} tail\nitem ::= [^\\n\\x00]\n"
        "tail ::= \"\\u00e9\" | . # any\n  | \"\\\"q\\\"\"\n"
    )
    assert g.match("ab\u00e9").accepted
    assert g.match("abc\"q\"").accepted
    assert not g.match("a\u00e9").accepted


@pytest.mark.parametrize(
    "text, where",
    [
        ('root ::= "abc', "line 1, column 10"),
        ("root ::= [a-", "line 1, column 10"),
        ("root ::= foo", "line 1, column 10"),
        ("root = x", "line 1, column 6"),
        ('root ::= "a"\nroot ::= "b"', "line 2, column 1"),
        ("root ::= (\"a\"", "line 1, column 10"),
        ("x ::= \"a\"", "no 'root'"),
        ("root ::= \"\\q\"", "line 1, column 11"),
        ("root ::= [+\\-0-9]", "unknown escape \\\\-"),  # llama.cpp rejects \- too
    ],
)
def test_reader_errors_have_line_and_column(text: str, where: str) -> None:
    with pytest.raises(GrammarError, match=where):
        read_gbnf(text)


def test_left_recursion_is_reported() -> None:
    with pytest.raises(GrammarError, match="left recursion in rule 'root'"):
        read_gbnf('root ::= root "a" | "b"')


# -- parser to GBNF --------------------------------------------------------------


def test_until_pattern_matches_reference_shape() -> None:
    assert until_pattern(("</p>",)) == '([^<] | "<" [^/] | "</" [^p] | "</p" [^>])*'


QUOTED = p.literal("'") + p.until("'", escape="\\") + p.literal("'")


@pytest.mark.parametrize(
    "text, ok",
    [("'abc'", True), ("'a\\'b'", True), ("'a\\\\'", True), ("'a\\nb'", True), ("'a\nb'", True), ("'a\\\nb'", False), ("'a'b'", False)],
)
def test_an_escaped_until_reads_as_its_grammar_does(text: str, ok: bool) -> None:
    """until(quote, escape="\\"): the parser's one-pass scan and the grammar
    written for it accept the same strings (a backslash before a newline is none)."""
    assert accepts(to_gbnf(QUOTED), text) is ok
    assert parse(QUOTED + p.end(), text).success is ok


TOOLISH = (
    p.optional(p.literal("<think>") + p.until("</think>") + p.literal("</think>") + p.space())
    + p.until("<tool_call>")
    + p.repeat(
        p.literal("<tool_call>")
        + p.space()
        + p.schema(p.json_value(), "args", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
        + p.space()
        + p.literal("</tool_call>")
        + p.space(),
        0,
        2,
    )
)


@pytest.mark.parametrize(
    "text, ok",
    [
        ('<think>hm</think>\nSure.<tool_call>{"city": "Paris"}</tool_call>', True),
        ('<tool_call>{"city": "Paris"}</tool_call><tool_call>{"city": "Oslo"}</tool_call>', True),
        ("plain text", True),
        ('<tool_call>{"town": "Paris"}</tool_call>', False),
        ('<tool_call>{"city": 3}</tool_call>', False),
    ],
)
def test_parser_grammar_agrees_with_expectation(text: str, ok: bool) -> None:
    grammar = to_gbnf(TOOLISH)
    assert accepts(grammar, text) is ok
    if ok:
        assert parse(TOOLISH + p.end(), text).success


# -- JSON schema to GBNF -----------------------------------------------------------

SCHEMA_CASES = [
    ({"type": "integer"}, ["0", "-12"], ["1.5", '"1"', "01"]),
    ({"type": "number"}, ["1.5", "-2e10"], ["1.", "abc"]),
    ({"type": ["string", "null"]}, ['"x"', "null"], ["1"]),
    ({"enum": ["a", 1, None]}, ['"a"', "1", "null"], ['"b"']),
    ({"const": {"k": [1]}}, ['{"k": [1]}'], ['{"k": [2]}']),
    (
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}}, "required": ["a"]},
        ['{"a": "x"}', '{"a": "x", "b": 1}', '{"a": "x", "c": true}', '{"a": "x", "b": 1, "c": false}'],
        ['{"b": 1}', '{"a": "x", "d": 1}', '{"b": 1, "a": "x"}'],
    ),
    (  # any in-order subset of optional properties, a middle one skipped included (as llama.cpp)
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer"}}},
        ["{}", '{"a": 1, "c": 3}', '{"a": 1, "d": 4}', '{"b": 2, "d": 4}', '{"a": 1, "b": 2, "d": 4}', '{"a": 1, "b": 2, "c": 3, "d": 4}'],
        ['{"c": 3, "a": 1}', '{"a": 1, "a": 1}', '{"a": 1,}'],
    ),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "additionalProperties": True},
        ['{"a": 1, "x": true, "y": null}', '{"b": 2, "x": 1}', '{"x": 1}'],
        ['{"x": 1,}', '{1: 2}'],
    ),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, ['{}', '{"x": 1, "y": 2}'], ['{"x": "1"}']),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, ["[1]", "[1, 2]"], ["[]", "[1, 2, 3]"]),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}, ['["a", 1]'], ['[1, "a"]']),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, ["1", '"s"'], ["true"]),
    ({"oneOf": [{"type": "boolean"}, {"type": "null"}]}, ["true", "null"], ["1"]),
    (
        {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"$ref": "#/$defs/b"}], "$defs": {"b": {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}}},
        ['{"a": 1, "b": "x"}'],
        ['{"a": 1}'],
    ),
    (
        {"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}, "required": ["next"]}}},
        ['{"next": {"next": null}}'],
        ['{"next": 1}'],
    ),
    ({"type": "string", "nullable": True}, ['"a"', "null"], ["1"]),
    ({"type": "string", "minLength": 2, "maxLength": 3}, ['"ab"', '"abc"'], ['"a"', '"abcd"']),
    ({"type": "string", "pattern": "^[a-z]+-[0-9]{2}$"}, ['"ab-12"'], ['"ab-1"', '"AB-12"']),
    ({"type": "string", "format": "date"}, ['"2024-02-29"'], ['"2024-13-01"']),
    ({"type": "string", "format": "time"}, ['"12:30:00Z"'], ['"25:00:00Z"']),
    ({"type": "string", "format": "date-time"}, ['"2024-02-29T12:30:00+01:00"'], ['"2024-02-29 12:30"']),
    ({"type": "string", "format": "uuid"}, ['"123e4567-e89b-12d3-a456-426614174000"'], ['"123"']),
]


@pytest.mark.parametrize("schema, good, bad", SCHEMA_CASES, ids=[json.dumps(c[0])[:40] for c in SCHEMA_CASES])
def test_schema_grammar(schema: dict, good: list[str], bad: list[str]) -> None:
    grammar = schema_to_gbnf(schema)
    for text in good:
        assert accepts(grammar, text), (text, grammar)
    for text in bad:
        assert not accepts(grammar, text), (text, grammar)


@pytest.mark.parametrize(
    "schema, path",
    [
        ({"type": "object", "properties": {"a": {"not": {"type": "string"}}}}, "#/properties/a/not"),
        ({"type": "integer", "minimum": 3}, "#/minimum"),
        ({"type": "string", "format": "email"}, "#/format"),
        ({"type": "string", "pattern": "a+"}, "#/pattern"),
        ({"$ref": "https://example.com/s.json"}, "#/$ref"),
        ({"type": "tuple"}, "#/type"),
    ],
)
def test_unsupported_schema_names_the_path(schema: dict, path: str) -> None:
    with pytest.raises(GrammarError, match=path.replace("$", r"\$")):
        schema_to_gbnf(schema)


# -- property: partial parsing of any prefix never fails -------------------------


@settings(max_examples=examples(150), deadline=None)
@given(
    reasoning=st.text(alphabet="ab <>/\n{}", max_size=12),
    content=st.text(alphabet="ab <>/\n", max_size=12),
    city=st.text(max_size=6),
    calls=st.integers(0, 2),
)
def test_every_prefix_parses_partially(reasoning: str, content: str, city: str, calls: int) -> None:
    reasoning = reasoning.replace("</think>", "")
    content = content.replace("<tool_call>", "")
    call = "<tool_call>" + json.dumps({"city": city}) + "</tool_call>"
    text = f"<think>{reasoning}</think>{content}" + call * calls
    full = parse(TOOLISH + p.end(), text)
    assert full.success, full.message()
    for i in range(len(text) + 1):
        assert parse(TOOLISH + p.end(), text[:i], partial=True).status is not Status.FAILURE, text[:i]


# -- cross-checks with the reference's grammars -----------------------------------------


def _reference_grammars() -> list[tuple[str, str]]:
    out = []
    if not SHARED.is_dir():
        return out
    for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["reference"].get("grammar"):
            out.append((case["id"], case["reference"]["grammar"]))
    for line in (SHARED / "reference" / "apply.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("grammar"):
            out.append((f"{row['template']}:{row['scenario']}", row["grammar"]))
    return out


@needs_shared
def test_every_reference_grammar_loads() -> None:
    grammars = _reference_grammars()
    assert len(grammars) > 200
    for _name, grammar in grammars:
        read_gbnf(grammar)  # raises with the position on failure


def constrained_part(case: dict) -> str | None:
    """The text a case's reference grammar constrains (see
    :func:`tests.conftest.reference_constrained_part`)."""
    return reference_constrained_part(case, case["output"])


@needs_shared
def test_reference_outputs_are_accepted_by_reference_grammars() -> None:
    checked = accepted = 0
    failures = []
    for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["partial"] or not case["reference"].get("grammar"):
            continue
        text = constrained_part(case)
        if text is None:
            continue
        checked += 1
        result = read_gbnf(case["reference"]["grammar"]).match(text)
        if result.accepted:
            accepted += 1
        else:
            failures.append((case["id"], result.message()))
    assert checked >= 150
    assert accepted == checked, failures


@pytest.mark.slow
@needs_shared
def test_matcher_agrees_with_llguidance() -> None:
    llguidance = pytest.importorskip("llguidance")
    tokenizer = llguidance.LLTokenizer("byte")
    rng = random.Random(1234)
    compared = disagreements = unreadable = 0
    notes = []
    cases = [json.loads(line) for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines()]
    for case in cases:
        grammar = case["reference"].get("grammar")
        if not grammar or case["partial"]:
            continue
        text = constrained_part(case)
        if text is None:
            continue
        ours = read_gbnf(grammar)
        try:
            theirs = llguidance.grammar_from("gbnf", grammar)
        except ValueError:  # llguidance's GBNF reader lacks some llama.cpp syntax
            unreadable += 1
            continue
        variants = {text, text[: len(text) // 2], text + "x"}
        for _ in range(2):
            if text:
                i = rng.randrange(len(text))
                variants.add(text[:i] + text[i + 1 :])
                variants.add(text[:i] + rng.choice("{}\"<>a ") + text[i:])
        for variant in variants:
            matcher = llguidance.LLMatcher(tokenizer, theirs)
            if matcher.is_error():
                break
            consumed = matcher.try_consume_tokens(tokenizer.tokenize_str(variant))
            their_accept = consumed == len(tokenizer.tokenize_str(variant)) and matcher.is_accepting()
            our_accept = ours.match(variant).accepted
            compared += 1
            if their_accept != our_accept:
                disagreements += 1
                notes.append((case["id"], variant[:60], our_accept, their_accept))
    print(f"llguidance: compared {compared}, disagreements {disagreements}, grammars it could not read {unreadable}")
    assert compared >= 300, (compared, unreadable)
    # llguidance's lexer is greedy over terminals; a handful of strings near
    # lexeme boundaries may differ (README: "GBNF matcher").
    assert disagreements <= compared * 0.02, notes[:10]


def test_character_classes_use_only_escapes_llama_cpp_reads() -> None:
    """llama.cpp's GBNF reader knows \\\\ \\[ \\] \\n \\r \\t and hex escapes in a class,
    not \\- or \\^: a '-' goes last, a leading '^' is written in hex."""
    grammar = to_gbnf(p.chars("[-+0-9.eE]", 1, 3) + p.chars("[\\^a]") + p.until("-x", "^y"))
    assert "\\-" not in grammar and "\\^" not in grammar
    assert "[+0-9.eE-]{1,3}" in grammar and "[\\x5Ea]" in grammar
    matcher = read_gbnf(grammar)
    assert matcher.match("-1^-y^x").accepted and not matcher.match("-1^-x").accepted


@pytest.mark.slow
@needs_shared
def test_every_generated_grammar_is_readable_by_llguidance() -> None:
    """An independent GBNF reader loads the grammar generated for every case
    (it rejected 96 of them while classes escaped '-' as \\-)."""
    llguidance = pytest.importorskip("llguidance")
    from analysis.checks.conformance import CaseRunner
    from analysis.parsers.request import ChatRequest

    runner = CaseRunner(SHARED / "templates")
    cases = [json.loads(line) for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines()]
    unreadable, read = [], 0
    for case in cases:
        grammar = runner.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"])).grammar
        if not grammar:
            continue
        try:
            llguidance.grammar_from("gbnf", grammar)
            read += 1
        except ValueError as exc:
            unreadable.append((case["id"], str(exc)[:120]))
    assert unreadable == [] and read > 200, (read, unreadable[:3])
