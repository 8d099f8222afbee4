"""Property tests: dumps/loads round trips and fast-path/slow-path equivalence."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.yson import WithAttributes, YsonError, YsonUint, dumps, loads, parser
from ytsched.yson import _lexer as lexer

_TRICKY = '\x00\x01\x1f\x7f\n\t\r"\\/*#%;=<>{}[]éÿ€😀 ab1'
texts = st.text() | st.text(alphabet=_TRICKY)
ints = st.integers() | st.integers(min_value=-(2**200), max_value=2**200)
scalars = (
    st.none()
    | st.booleans()
    | ints
    | st.integers(min_value=0, max_value=2**70).map(YsonUint)
    | st.floats(allow_nan=False)
    | texts
)


def _attributed(children: st.SearchStrategy[Any]) -> st.SearchStrategy[WithAttributes]:
    return st.builds(
        WithAttributes,
        children.filter(lambda value: not isinstance(value, WithAttributes)),
        st.dictionaries(texts, children, min_size=1, max_size=3),
    )


values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(texts, children, max_size=5)
        | _attributed(children)
    ),
    max_leaves=15,
)


def same(left: Any, right: Any) -> bool:
    """Equality that also compares exact types, key order and the sign of zero."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        if math.isnan(left):
            return math.isnan(right)
        return left == right and math.copysign(1.0, left) == math.copysign(1.0, right)
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, WithAttributes):
        return same(left.value, right.value) and same(left.attributes, right.attributes)
    return bool(left == right)


def _parse_both(text: str) -> tuple[object, object]:
    """Parse with and without the fused fast-path tokens: (result or error)."""
    outcomes: list[object] = []
    for match in (parser._FAST, parser._SLOW):
        try:
            outcomes.append(parser._parse(text, match, lexer.decode_text_literal))
        except YsonError as error:
            outcomes.append(("error", error.reason, error.offset))
    return outcomes[0], outcomes[1]


@settings(max_examples=100)
@given(values)
def test_compact_round_trip(value: Any) -> None:
    text = dumps(value)
    assert "\n" not in text
    assert same(loads(text), value)
    assert same(loads(text.encode("utf-8")), value)
    fast, slow = _parse_both(text)  # the fused fast-path tokens change nothing
    assert same(fast, slow)


@settings(max_examples=100)
@given(values, st.integers(min_value=0, max_value=8))
def test_pretty_round_trip(value: Any, indent: int) -> None:
    text = dumps(value, pretty=True, indent=indent)
    assert same(loads(text), value)
    fast, slow = _parse_both(text)
    assert same(fast, slow)


@given(st.floats())
def test_every_float_round_trips(number: float) -> None:
    assert same(loads(dumps(number)), number)


@settings(max_examples=100)
@given(values, st.data())
def test_fast_path_matches_slow_path_on_damaged_input(value: Any, data: st.DataObject) -> None:
    # Delete, duplicate or insert a character somewhere: both paths must agree
    # on the result or on the exact error.
    text = dumps(value, pretty=data.draw(st.booleans()))
    where = data.draw(st.integers(min_value=0, max_value=len(text)))
    edit = data.draw(st.sampled_from(["delete", "duplicate", "insert"]))
    if edit == "delete":
        text = text[:where] + text[where + 1 :]
    elif edit == "duplicate":
        text = text[:where] + text[where : where + 1] * 2 + text[where + 1 :]
    else:
        inserted = data.draw(st.sampled_from(list(';="{}[]<>#%\\ u.e-1a')))
        text = text[:where] + inserted + text[where:]
    fast, slow = _parse_both(text)
    if isinstance(fast, tuple) and fast[:1] == ("error",):
        assert fast == slow
    else:
        assert same(fast, slow)
