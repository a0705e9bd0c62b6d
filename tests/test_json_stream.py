"""The incremental JSON checker that keeps streamed arguments linear."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peg.json_stream import IncrementalJson, JsonProgress

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def feed_all(text: str, size: int) -> tuple[JsonProgress, int]:
    tracker = IncrementalJson()
    status = JsonProgress.MORE
    for i in range(0, len(text), size):
        status = tracker.feed(text[i : i + size])
        if status is not JsonProgress.MORE:
            break
    return status, tracker.end


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), JSON, max_size=4) | st.lists(JSON, max_size=4), size=st.integers(1, 9), trailing=st.sampled_from(["", " ", "<|end|>", "}"]))
def test_values_end_where_they_end_in_any_chunking(value: object, size: int, trailing: str) -> None:
    text = json.dumps(value)
    assert feed_all(text + trailing, size) == (JsonProgress.DONE, len(text))
    for cut in range(len(text)):  # every proper prefix is still open
        assert feed_all(text[:cut], size)[0] is JsonProgress.MORE


@pytest.mark.parametrize("size", [1, 2, 3, 4, 100])
@pytest.mark.parametrize("bad", ['{"a" 1}', '{"a": tru}', "[1,]", '{"a": 1,}', "{'a': 1}", '"tab\there"', '["ab", "cd\nef"]', "[1 2]", "}"])
def test_invalid_text_is_an_error(bad: str, size: int) -> None:
    assert feed_all(bad, size)[0] is JsonProgress.ERROR


def test_escapes_across_chunks() -> None:
    text = '{"s": "a\\\\\\"b\\u00e9"}'
    for size in range(1, len(text) + 1):
        assert feed_all(text, size) == (JsonProgress.DONE, len(text))
