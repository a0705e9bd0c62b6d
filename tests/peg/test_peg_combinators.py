"""Each combinator under full and partial input."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from peg import combinators as p
from peg.engine import parse
from peg.status import Status


def tags(result):
    return [(n.name, n.text, n.complete) for n in result.tree]


THINK = p.optional(p.literal("<think>") + p.tag("reasoning", p.until("</think>")) + p.literal("</think>") + p.space()) + p.tag(
    "content", p.rest()
) + p.end()


def test_literal_full_partial_failure() -> None:
    lit = p.literal("<tool_call>")
    assert parse(lit, "<tool_call>").status is Status.SUCCESS
    assert parse(lit, "<tool_c", partial=True).status is Status.NEED_MORE
    failed = parse(lit, "<tool_c")
    assert failed.status is Status.FAILURE
    assert "'<tool_call>'" in failed.message()


def test_sequence_and_choice() -> None:
    g = p.literal("a") + (p.literal("b") | p.literal("c")) + p.end()
    assert parse(g, "ab").success and parse(g, "ac").success
    r = parse(g, "ad")
    assert r.status is Status.FAILURE and r.furthest == 1
    assert r.expected == {"'b'", "'c'"}


def test_repetition_bounds() -> None:
    g = p.repeat(p.literal("x"), 2, 3) + p.end()
    assert not parse(g, "x").success
    assert parse(g, "xx").success and parse(g, "xxx").success
    assert not parse(g, "xxxx").success
    assert parse(p.zero_or_more(p.literal("x")) + p.end(), "").success
    assert not parse(p.one_or_more(p.literal("x")) + p.end(), "").success


def test_until_stops_at_first_delimiter() -> None:
    g = p.tag("t", p.until("</a>", "</b>"))
    assert tags(parse(g, "xx</b>yy</a>")) == [("t", "xx", True)]
    assert tags(parse(g, "no delimiter")) == [("t", "no delimiter", True)]


def test_until_holds_back_possible_delimiter_prefix() -> None:
    r = parse(THINK, "<think>hmm</thi", partial=True)
    assert r.status is Status.NEED_MORE
    assert tags(r) == [("reasoning", "hmm", False)]


def test_reasoning_full_and_plain() -> None:
    assert tags(parse(THINK, "<think>a</think>\nb")) == [("reasoning", "a", True), ("content", "b", True)]
    assert tags(parse(THINK, "just text")) == [("content", "just text", True)]


def test_space_eps_end() -> None:
    assert parse(p.space() + p.end(), " \n\t ").success
    assert parse(p.eps(), "").success
    assert not parse(p.end(), "x").success


def test_peek_and_negate() -> None:
    g = p.peek(p.literal("<")) + p.tag("x", p.rest())
    assert tags(parse(g, "<a")) == [("x", "<a", True)]
    assert not parse(g, "a").success
    n = p.negate(p.literal("<")) + p.tag("x", p.rest())
    assert parse(n, "a").success and not parse(n, "<a").success
    assert parse(n, "", partial=True).status is Status.NEED_MORE


def test_atomic_is_all_or_nothing_under_partial_input() -> None:
    g = p.atomic(p.tag("tool-name", p.literal("get_weather"))) + p.literal("(")
    partial = parse(g, "get_wea", partial=True)
    assert partial.status is Status.NEED_MORE and partial.tree == ()
    assert tags(parse(p.tag("tool-name", p.literal("get_weather")), "get_wea", partial=True)) == [
        ("tool-name", "get_wea", False)
    ]


def test_tags_nest() -> None:
    g = p.tag("tool", p.literal("<") + p.tag("tool-name", p.until(">")) + p.literal(">"))
    r = parse(g, "<fn>")
    assert r.tree[0].name == "tool" and r.tree[0].children[0].text == "fn"
    assert [n.text for n in r.find("tool-name")] == ["fn"]


@pytest.mark.parametrize(
    "text, status, closer",
    [
        ('{"a": [1, "x', Status.NEED_MORE, '"]}'),
        ('{"a": 1}', Status.SUCCESS, ""),
        ('{"a": tr', Status.NEED_MORE, "}"),
        ('{"a": "\\u00', Status.NEED_MORE, '"}'),
        ("12", Status.NEED_MORE, ""),
        ('{"a": }', Status.FAILURE, ""),
    ],
)
def test_json_partial(text: str, status: Status, closer: str) -> None:
    r = parse(p.tag("args", p.json_value()), text, partial=True)
    assert r.status is status
    if status is not Status.FAILURE:
        assert r.tree[0].closer == closer


@pytest.mark.parametrize(
    "text, shown",
    [
        ('{"a": "x', '{"a": "x'),
        ('{"a": "x}', '{"a": "x'),  # may begin a held text
        ('{"a": "x}}</t', '{"a": "x'),
        ('{"a": "x}}</tool_call> y', '{"a": "x'),  # a held text, whole: nothing from it on
        ('{"a": "x}} y', '{"a": "x}} y'),  # no held text
    ],
)
def test_a_json_value_in_progress_is_shown_short_of_its_held_texts(text: str, shown: str) -> None:
    r = parse(p.tag("args", p.json_value(held=["}}</tool_call>"])), text, partial=True)
    assert r.status is Status.NEED_MORE and r.tree[0].text == shown


def test_held_texts_change_nothing_once_the_value_is_complete_or_the_input_is() -> None:
    held = p.tag("args", p.json_value(held=["}}"]))
    assert parse(held, '{"a": "}}"}', partial=True).tree[0].text == '{"a": "}}"}'
    assert parse(held + p.end(), '{"a": "}}"}').success


@pytest.mark.parametrize(
    "text, shown",
    [
        ("abc,d", "abc"),  # may begin ",days:"
        ("abc,days:1", "abc"),  # a held text: nothing from it on, while the until runs on
        ("abc,days:1'", "abc"),  # the delimiter, with nothing after it yet: undecided
        ("abc,x", "abc,x"),
    ],
)
def test_an_until_in_progress_is_shown_short_of_its_held_texts(text: str, shown: str) -> None:
    r = parse(p.tag("s", p.until("'", held=[",days:"])) + p.literal("'") + p.literal(")"), text, partial=True)
    assert r.status is Status.NEED_MORE and r.tree[0].text == shown


def test_an_until_past_a_held_text_ends_at_its_delimiter_once_more_follows() -> None:
    g = p.tag("s", p.until("'", held=[",days:"])) + p.literal("'") + p.literal(")")
    assert parse(g, "abc,days:1')", partial=True).tree[0].text == "abc,days:1"
    assert parse(g + p.end(), "abc,days:1')").tree[0].text == "abc,days:1"


@pytest.mark.parametrize("delimiters", [("'",), ("'", ", b=")])  # one regex pass, or a scan of several
def test_an_escaped_until_skips_escaped_delimiters(delimiters: tuple[str, ...]) -> None:
    string = p.literal("'") + p.tag("s", p.until(*delimiters, escape="\\")) + p.literal("'")
    assert parse(string, "'it\\'s \\\\'").tree[0].text == "it\\'s \\\\"
    partial = parse(string, "'it\\", partial=True)  # an escape cut short waits for what it escapes
    assert partial.status is Status.NEED_MORE and partial.tree[0].text == "it"
    assert parse(string, "'it\\\\", partial=True).tree[0].text == "it\\\\"  # (an escaped backslash does not)
    assert not parse(string, "'a\\\nb'").success  # a backslash before a newline escapes nothing


@pytest.mark.parametrize("node", [p.rest(stops=("[e~[",)), p.until("<x>", stops=("[e~[",))])
def test_a_stop_that_ends_with_its_own_first_character_is_no_text(node: p.Parser) -> None:
    """MiniMax's "[e~[" ends with "[", which may begin another: a partial
    parse still shows the text before it, not "[e~"."""
    assert parse(p.tag("t", node), "Fine.[e~[", partial=True).tree[0].text == "Fine."
    assert parse(p.tag("t", node), "Fine.[e~", partial=True).tree[0].text == "Fine."
    assert parse(p.tag("t", node), "Fine.[e~[ more", partial=True).tree[0].text == "Fine.[e~[ more"


def test_a_look_ahead_waiting_for_input_shows_nothing() -> None:
    """A peek or a negation that needs more input consumes nothing: the text
    before it is all a partial parse shows."""
    for look in (p.peek(p.literal("}</end>")), p.negate(p.literal("}</end>"))):
        r = parse(p.tag("t", p.until("}") + look) + p.rest(), "abc}</e", partial=True)
        assert r.status is Status.NEED_MORE and r.tree[0].text == "abc"


def test_json_full_input_rejects_truncation() -> None:
    assert parse(p.json_value() + p.end(), '{"a": [1, 2]}').success
    assert not parse(p.json_value(), '{"a": [1').success
    assert not parse(p.json_value(), "NaN").success


def test_rules_recursion_and_memo() -> None:
    item = p.rule("item")
    item.body = p.literal("(") + p.zero_or_more(p.Ref(item)) + p.literal(")")
    g = item + p.end()
    assert parse(g, "(()(()))").success
    assert not parse(g, "(()").success
    assert parse(g, "(()", partial=True).status is Status.NEED_MORE


def test_failure_message_has_position_expected_and_rule_stack() -> None:
    call = p.rule("tool-call", p.literal("<tool_call>") + p.json_value() + p.literal("</tool_call>"))
    r = parse(call + p.end(), 'junk\n<tool_call>{"a": 1}</tool_cal!')
    r2 = parse(p.literal("junk\n") + call + p.end(), 'junk\n<tool_call>{"a": 1}</tool_cal!')
    assert not r.success
    msg = r2.message()
    assert "line 2, column 20" in msg and "'</tool_call>'" in msg and "tool-call" in msg
    assert "\n" not in msg
    assert r2.excerpt().splitlines()[1].index("^") == 19


def test_dump_reads_like_the_reference() -> None:
    assert THINK.dump() == (
        "Sequence(Repetition(Sequence(Literal(<think>), Tag(reasoning, Until(</think>)), Literal(</think>), Space), 0, 1), "
        "Tag(content, Rest), End)"
    )
    assert p.chars("[a-z_]", 1, -1).dump() == "CharRepeat([a-z_], 1, unbounded)"


@example(text="aWXYZb", delimiters=["X", "WXYZ"])  # "X" is found first, until "WXYZ" is complete
@given(
    text=st.text(alphabet="abWXYZ<>", max_size=40),
    delimiters=st.lists(st.text(alphabet="abWXYZ<>", min_size=1, max_size=4), min_size=1, max_size=3, unique=True),
)
def test_a_stream_s_found_delimiters_read_as_fresh_parses(text: str, delimiters: list[str]) -> None:
    """``found`` remembers where an until's delimiter was found while a text
    grows: every prefix parses as a fresh parse does (a longer delimiter
    starting earlier that the text had not finished must not be missed)."""
    parser = p.seq(p.tag("t", p.until(*delimiters)), p.choice(*(p.literal(d) for d in sorted(delimiters, key=len, reverse=True))), p.rest())
    found: dict[tuple[int, int], int] = {}
    for end in range(len(text) + 1):
        remembered = parse(parser, text[:end], partial=True, found=found)
        fresh = parse(parser, text[:end], partial=True)
        assert (remembered.status, remembered.end, [(n.start, n.end) for n in remembered.find("t")]) == (
            fresh.status,
            fresh.end,
            [(n.start, n.end) for n in fresh.find("t")],
        ), (text[:end], delimiters)


# --- until with a look-ahead: the first delimiter from which the rest reads ------------------

CALL = p.rule("call", p.literal("<c>") + p.chars("[a-z]", 1, p.UNBOUNDED) + p.literal("</c>"))


def _text_then_calls(tentative: bool) -> p.Parser:
    return (
        p.tag("content", p.until("<c>", then=CALL, tentative=tentative))
        + p.zero_or_more(p.tag("call", CALL) + p.space())
        + p.end()
    )


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        ("say `<c>` then <c>abc</c>", "say `<c>` then ", ["<c>abc</c>"]),  # a quoted marker is text
        ("a <c>1</c> <c>ab</c>", "a <c>1</c> ", ["<c>ab</c>"]),  # a block that does not read is text
        ("<c>x</c>", "", ["<c>x</c>"]),
        ("no call <c", "no call <c", []),
    ],
)
def test_until_ends_at_the_first_delimiter_from_which_then_reads(text: str, content: str, calls: list[str]) -> None:
    result = parse(_text_then_calls(False), text)
    assert result.status is Status.SUCCESS
    assert [n.text for n in result.tree if n.name == "content"] == [content]
    assert [n.text for n in result.tree if n.name == "call"] == calls


def test_until_then_on_partial_input_holds_or_reads_on() -> None:
    # held: the text stops short of a delimiter that may yet read, until more comes
    held = parse(_text_then_calls(False), "say <c>ab", partial=True)
    assert held.status is Status.NEED_MORE and tags(held) == [("content", "say ", False)]
    # tentatively: the text ends there for now, and what follows reads as a call being written
    read_on = parse(_text_then_calls(True), "say <c>ab", partial=True)
    assert [(n.name, n.text) for n in read_on.tree] == [("content", "say "), ("call", "<c>ab")]
    # a delimiter from which nothing can read is text, decided at once
    decided = parse(_text_then_calls(True), "say <c>`", partial=True)
    assert tags(decided) == [("content", "say <c>`", False)]


def test_a_memoised_rule_that_ran_out_of_input_still_names_what_asked_for_more() -> None:
    # the look-ahead parses the call first (memoised); the sequence reads it from the memo
    result = parse(_text_then_calls(True), "x <c>ab", partial=True)
    assert result.status is Status.NEED_MORE and result.frontier is not None
    assert result.frontier[0].dump() == "Literal(</c>)" and result.frontier[1] == 7


def test_a_failure_after_rejected_look_aheads_points_into_the_block_that_did_not_read() -> None:
    grammar = p.tag("content", p.until("<c>", then=CALL)) + CALL + p.end()  # a call is required
    failed = parse(grammar, "text <c>ab!</c>")
    assert failed.status is Status.FAILURE
    assert failed.furthest == 10 and "'</c>'" in failed.message()  # at '!', not at the end of the input
    assert "then: call" in grammar.dump()
