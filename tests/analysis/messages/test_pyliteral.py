"""Python string escapes, decoded as Python reads them, a piece at a time."""

from __future__ import annotations

import ast
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.messages.pyliteral import decode_escapes, py_to_json
from tests.conftest import examples


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=20), st.sampled_from(["'", '"']))
def test_a_repr_decodes_to_its_string_and_every_prefix_is_a_prefix(value: str, quote: str) -> None:
    literal = repr(value) if quote == "'" else '"' + repr(value)[1:-1].replace('"', '\\"') + '"'
    raw = literal[1:-1]
    assert ast.literal_eval(literal) == value
    assert decode_escapes(raw, final=True) == (value, len(raw))
    for cut in range(len(raw) + 1):
        decoded, used = decode_escapes(raw[:cut], final=False)
        assert value.startswith(decoded) and used <= cut
        assert decode_escapes(raw[used:], final=True)[0] == value[len(decoded) :]  # the rest continues it


def test_escapes_cut_short_wait_and_unknown_ones_stay() -> None:
    assert decode_escapes("ab\\", final=False) == ("ab", 2)
    assert decode_escapes("ab\\x4", final=False) == ("ab", 2)
    assert decode_escapes("ab\\12", final=False) == ("ab", 2)
    assert decode_escapes("ab\\123", final=False) == ("abS", 6)
    assert decode_escapes("\\q\\", final=True) == ("\\q\\", 3)


def test_py_to_json_decodes_string_escapes() -> None:
    assert json.loads(py_to_json("['a\\nb', \"c\\\"d\", '\\u00e9', (1, None)]", True)) == ["a\nb", 'c"d', "é", [1, None]]
    assert py_to_json("'a\\", False) == '"a'  # the backslash waits
