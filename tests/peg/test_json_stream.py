"""The incremental JSON checker that keeps streamed arguments linear."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peg.json_stream import IncrementalJson
from peg.status import Status
from tests.conftest import examples

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def feed_all(text: str, size: int) -> tuple[Status, int]:
    tracker = IncrementalJson()
    status = Status.NEED_MORE
    for i in range(0, len(text), size):
        status = tracker.feed(text[i : i + size])
        if status is not Status.NEED_MORE:
            break
    return status, tracker.end


@settings(max_examples=examples(150), deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), JSON, max_size=4) | st.lists(JSON, max_size=4), size=st.integers(1, 9), trailing=st.sampled_from(["", " ", "<|end|>", "}"]))
def test_values_end_where_they_end_in_any_chunking(value: object, size: int, trailing: str) -> None:
    text = json.dumps(value)
    assert feed_all(text + trailing, size) == (Status.SUCCESS, len(text))
    # every proper prefix is still open: the checker after each chunk but the
    # last (every prefix when the chunks are single characters)
    tracker = IncrementalJson()
    for i in range(0, len(text) - size, size):
        assert tracker.feed(text[i : i + size]) is Status.NEED_MORE, text[: i + size]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 100])
@pytest.mark.parametrize("bad", ['{"a" 1}', '{"a": tru}', "[1,]", '{"a": 1,}', "{'a': 1}", '"tab\there"', '["ab", "cd\nef"]', "[1 2]", "}"])
def test_invalid_text_is_an_error(bad: str, size: int) -> None:
    assert feed_all(bad, size)[0] is Status.FAILURE


def test_escapes_across_chunks() -> None:
    text = '{"s": "a\\\\\\"b\\u00e9"}'
    for size in range(1, len(text) + 1):
        assert feed_all(text, size) == (Status.SUCCESS, len(text))


# -- one JSON grammar: the stream judges every text as the whole-text scanner does --------

from peg.json_scan import scan_json  # noqa: E402

# Texts near JSON: valid values, cut anywhere, with one character changed,
# inserted or removed, or made of JSON's own characters at random.
_NEAR_CHARS = st.sampled_from(list('{}[]",: 0123456789-+.eEtruefalsn\\/ux\n'))


@st.composite
def _near_json(draw: st.DrawFn) -> str:
    text = json.dumps(draw(JSON))
    kind = draw(st.sampled_from(["cut", "change", "insert", "delete", "random"]))
    if kind == "random":
        return "".join(draw(st.lists(_NEAR_CHARS, min_size=1, max_size=12)))
    at = draw(st.integers(0, len(text)))
    if kind == "cut":
        return text[:at]
    if kind == "insert":
        return text[:at] + draw(_NEAR_CHARS) + text[at:]
    if kind == "delete":
        return text[:at] + text[at + 1 :]
    return text[:at] + draw(_NEAR_CHARS) + text[at + 1 :]


def _agree(text: str, size: int) -> None:
    if not text or text[0] in " \t\r\n":
        return  # the scanner starts at a value; the stream also skips leading whitespace
    scanned = scan_json(text, 0, partial=True)
    streamed, end = feed_all(text, size)
    assert streamed is scanned.status, (text, scanned, streamed)  # (one Status for both)
    if streamed is Status.SUCCESS:
        assert end == scanned.end, (text, scanned, end)


@pytest.mark.slow
@settings(max_examples=examples(600), deadline=None)
@given(text=_near_json(), size=st.integers(1, 5))
def test_stream_and_scanner_agree_on_near_json(text: str, size: int) -> None:
    _agree(text, size)


@pytest.mark.parametrize(
    "text",
    ["[00", "[--", "[0-", "[01", "-0.", "1e", "1e+", "1.5e-3", "[1.]", "[.5]", "[-]", "[1e5x", "[+1]",
     "-.0", "[-.5]", "[1.e5]", "[tru", "[trux", "[truee", "[nul", "[nulll]", "[f", "0", "00", "-", "[1,2", '{"a":-', '{"a":1.2e', "[1E+2]"],
)
@pytest.mark.parametrize("size", [1, 2, 100])
def test_stream_and_scanner_agree_on_numbers_and_literals(text: str, size: int) -> None:
    _agree(text, size)


def test_malformed_numbers_are_errors_as_soon_as_they_are_written() -> None:
    for text in ("[00", "[--", "[0-", "[1.e", "[truex"):
        assert feed_all(text, 1)[0] is Status.FAILURE, text
