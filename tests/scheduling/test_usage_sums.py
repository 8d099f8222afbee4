"""The native usage sums (``src/native/usage_sums.cpp``) against the Python loops they replaced.

``add_usage`` walks an element and its ancestors adding a delta to each usage; ``scan`` is the
preemptible lists' classification loop (``tests/scheduling/test_update_reuse.py`` compares it
with the bounds' own ``below`` on float lists).  Here: any numbers, including ints (which the
interpreter keeps as ints), NaN, infinities and signed zeros, must give the same objects'
values and types, bit for bit; errors must propagate.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling import satisfaction_reference
from tests.scheduling.test_preemptible import allocation
from ytsched.resources import ZERO, Vector, vadd, vsub
from ytsched.scheduling import selector
from ytsched.scheduling.preemptible import CompiledBound, PreemptibleList
from ytsched.scheduling.satisfaction import (
    INFINITE_SATISFACTION_RATIO,
    RESOURCE_EPSILON,
    ShareView,
    fits,
)

add_usage: Any = selector.add_usage  # any element-like object and any numbers, here
sum_usages: Any = selector.sum_usages
selector_module: Any = selector._NATIVE
scan: Any = selector.scan

_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 0.2, 1e-9, 2.0**53]),
    st.integers(min_value=-(2**60), max_value=2**60),
)
_VECTORS = st.tuples(_NUMBERS, _NUMBERS, _NUMBERS, _NUMBERS, _NUMBERS)


@dataclass(eq=False, slots=True)
class _Element:
    usage: tuple[Any, ...]
    parent: _Element | None


@dataclass(eq=False, slots=True)
class _Item:
    usage: tuple[Any, ...]


def _key(value: object) -> tuple[str, object]:
    """Type and exact value (a float's bit pattern, so -0.0 and 0.0 compare exactly), with
    every NaN alike: which operand's payload a sum of two NaNs keeps is the compiler's choice
    (it may swap the operands of ``+``), in CPython's own ``float.__add__`` as much as in the
    native sums; no comparison can tell them apart (hypothesis found such a pair)."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "nan")
        return ("float", struct.pack("<d", value))
    return (type(value).__name__, value)


def _keys(vector: tuple[Any, ...]) -> list[tuple[str, object]]:
    return [_key(value) for value in vector]


def _python_add_usage(element: _Element | None, delta: tuple[Any, ...]) -> None:
    d0, d1, d2, d3, d4 = delta
    while element is not None:
        u = element.usage
        element.usage = (u[0] + d0, u[1] + d1, u[2] + d2, u[3] + d3, u[4] + d4)
        element = element.parent


def _chain(usages: list[tuple[Any, ...]]) -> _Element:
    parent: _Element | None = None
    for usage in usages:
        parent = _Element(usage, parent)
    assert parent is not None
    return parent


@settings(max_examples=300, deadline=None)
@given(st.lists(_VECTORS, min_size=1, max_size=6), _VECTORS)
def test_add_usage_is_the_python_walk(
    usages: list[tuple[Any, ...]], delta: tuple[Any, ...]
) -> None:
    native, python = _chain(usages), _chain(usages)
    add_usage(native, delta)
    _python_add_usage(python, delta)
    a: _Element | None = native
    b: _Element | None = python
    while a is not None and b is not None:
        assert _keys(a.usage) == _keys(b.usage)
        a, b = a.parent, b.parent
    assert a is None and b is None


def test_add_usage_propagates_errors() -> None:
    element = _Element((1.0, 2.0, 3.0, 4.0, 5.0), None)
    with pytest.raises(TypeError):
        add_usage(element, (1.0, "x", 0.0, 0.0, 0.0))
    with pytest.raises(IndexError):
        add_usage(element, (1.0, 2.0))
    with pytest.raises(AttributeError):
        add_usage(object(), (0.0, 0.0, 0.0, 0.0, 0.0))


_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 0.2, 1e-9, 2.0**53]),
)
_FLOAT_VECTORS = st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS, _FLOATS)


@st.composite
def _forest_and_pairs(
    draw: st.DrawFn,
) -> tuple[list[int | None], list[tuple[Any, ...]], list[tuple[int, tuple[Any, ...]]]]:
    """A forest (each node's parent an earlier node or ``None``), its nodes' usages and
    ``(node, delta)`` pairs: mostly exact floats (the native fast path), sometimes any
    number (its fallback)."""
    vectors = draw(st.sampled_from([_FLOAT_VECTORS, _VECTORS]))
    size = draw(st.integers(min_value=1, max_value=8))
    parents = [
        draw(st.one_of(st.none(), st.integers(0, index - 1))) if index else None
        for index in range(size)
    ]
    usages = [draw(st.sampled_from([ZERO, draw(_FLOAT_VECTORS)])) for _ in range(size)]
    if draw(st.booleans()):
        usages[draw(st.integers(0, size - 1))] = draw(vectors)
    pairs = draw(st.lists(st.tuples(st.integers(0, size - 1), vectors), max_size=12))
    return parents, usages, pairs


def _forest(parents: list[int | None], usages: list[tuple[Any, ...]]) -> list[_Element]:
    nodes: list[_Element] = []
    for parent, usage in zip(parents, usages, strict=True):
        nodes.append(_Element(usage, nodes[parent] if parent is not None else None))
    return nodes


@settings(max_examples=500, deadline=None)
@given(_forest_and_pairs())
def test_sum_usages_is_the_python_walks(
    case: tuple[list[int | None], list[tuple[Any, ...]], list[tuple[int, tuple[Any, ...]]]],
) -> None:
    """One ``sum_usages`` call gives every element the usage that one Python walk per pair,
    in order, gives it; an element no pair reaches keeps its very tuple."""
    parents, usages, pairs = case
    native, python = _forest(parents, usages), _forest(parents, usages)
    sum_usages([(native[index], delta) for index, delta in pairs])
    for index, delta in pairs:
        _python_add_usage(python[index], delta)
    for a, b, usage in zip(native, python, usages, strict=True):
        assert _keys(a.usage) == _keys(b.usage)
        if b.usage is usage:
            assert a.usage is usage


def test_sum_usages_propagates_errors() -> None:
    element = _Element((1.0, 2.0, 3.0, 4.0, 5.0), None)
    with pytest.raises(TypeError):
        sum_usages([(element, (1.0, "x", 0.0, 0.0, 0.0))])
    with pytest.raises(IndexError):
        sum_usages([(element, (1.0, 2.0))])
    with pytest.raises(AttributeError):
        sum_usages([(object(), (0.0, 0.0, 0.0, 0.0, 0.0))])
    with pytest.raises(TypeError):
        sum_usages(((element, ZERO),))
    with pytest.raises(TypeError):
        sum_usages([(element,)])
    assert element.usage == (1.0, 2.0, 3.0, 4.0, 5.0)


def _python_scan(
    items: list[_Item | None],
    index: int,
    cum: tuple[Any, ...],
    threshold: tuple[Any, ...] | None,
    bound: CompiledBound | None,
) -> tuple[int, tuple[Any, ...]]:
    """The loop ``preemptible._scan`` was in Python (the bound's ``holds``, the threshold's
    strict test, holes adding nothing)."""
    while index < len(items):
        below_threshold = threshold is not None and all(cum[i] < threshold[i] for i in range(5))
        if not below_threshold and bound is not None and not bound.holds(cum):
            break
        item = items[index]
        if item is not None:
            u = item.usage
            cum = (cum[0] + u[0], cum[1] + u[1], cum[2] + u[2], cum[3] + u[3], cum[4] + u[4])
        index += 1
    return index, cum


_BOUNDS = st.one_of(
    st.none(),
    st.builds(
        CompiledBound,
        st.lists(st.tuples(st.integers(0, 4), _NUMBERS), max_size=5).map(tuple),
        st.booleans(),
        st.booleans(),
    ),
)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(st.none(), _VECTORS.map(_Item)), max_size=12),
    st.integers(0, 14),
    _VECTORS,
    st.one_of(st.none(), _VECTORS),
    _BOUNDS,
)
def test_scan_is_the_python_loop(
    items: list[_Item | None],
    index: int,
    cum: tuple[Any, ...],
    threshold: tuple[Any, ...] | None,
    bound: CompiledBound | None,
) -> None:
    got_index, got_cum = scan(items, index, cum, threshold, bound)
    want_index, want_cum = _python_scan(items, index, cum, threshold, bound)
    assert got_index == want_index
    assert _keys(got_cum) == _keys(want_cum)
    if want_cum is cum:
        assert got_cum is cum  # nothing added: the very same object back


def test_scan_nan_stops_like_python() -> None:
    nan_item = _Item((math.nan, 0.0, 0.0, 0.0, 0.0))
    bound = CompiledBound(((0, 1.0),), True, False)
    items: list[_Item | None] = [nan_item, _Item((1.0, 0.0, 0.0, 0.0, 0.0))]
    start = (0.0, 0.0, 0.0, 0.0, 0.0)
    assert scan(items, 0, start, None, bound)[0] == _python_scan(items, 0, start, None, bound)[0]


def test_scan_rejects_a_negative_index() -> None:
    with pytest.raises(ValueError):
        scan([], -1, (0.0, 0.0, 0.0, 0.0, 0.0), None, None)


_SHARES = st.one_of(
    st.sampled_from([0.0, -0.0, 1e-10, 1e-9, 0.1, 0.3, 0.5, 1.0, 2.0]),
    st.floats(min_value=0.0, max_value=2.0),
)
_TOTALS = st.sampled_from([0.0, 1.0, 10.0, 96.0, 1e12])
_USAGES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 3.0, 1e12, math.inf, math.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**40), max_value=2**40),
)


@settings(max_examples=1000, deadline=None)
@given(
    st.tuples(*[_SHARES] * 5),
    st.tuples(*[_SHARES] * 5),
    st.tuples(*[_TOTALS] * 5),
    st.tuples(*[_USAGES] * 5),
)
def test_local_satisfaction_is_the_python_body(
    fair: Vector, demand: Vector, total: Vector, usage: Vector
) -> None:
    view = ShareView.create(fair, demand, ZERO, total)
    got = view.local_satisfaction(usage)
    want = satisfaction_reference.local_satisfaction(view, usage)
    assert _key(got) == _key(want)
    assert _key(selector.local_satisfaction(view, usage)) == _key(want)


@dataclass(eq=False, slots=True)
class _Place:
    id: int


@dataclass(eq=False, slots=True)
class _Operation:
    """An operation element as ``apply_usage`` reads it."""

    usage: tuple[Any, ...]
    parent: _Element | None
    view: ShareView
    node: _Place | None
    local_sat: float = -1.0


class _Core:
    """Records the ``refresh`` calls a selector's native heaps would get."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float]] = []

    def refresh(self, node: int, sat: float) -> None:
        self.calls.append((node, sat))


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(*[_SHARES] * 5),
    st.tuples(*[_TOTALS] * 5),
    st.lists(_VECTORS, min_size=1, max_size=4),
    st.tuples(*[_USAGES] * 5),
    st.booleans(),
)
def test_apply_usage_is_the_python_statements(
    fair: Vector,
    total: Vector,
    usages: list[tuple[Any, ...]],
    delta: tuple[Any, ...],
    placed: bool,
) -> None:
    """``apply_usage(element, delta, core)`` is ``add_usage``, the element's new local
    satisfaction kept in ``local_sat`` and the refresh of its selector node, if any."""
    view = ShareView.create(fair, (1.0,) * 5, ZERO, total)
    ancestors = [_chain(usages[1:]) if len(usages) > 1 else None for _ in range(2)]
    node = _Place(7) if placed else None
    native = _Operation(usages[0], ancestors[0], view, node)
    python = _Operation(usages[0], ancestors[1], view, node)
    native_core, python_core = _Core(), _Core()
    try:
        _python_add_usage(python, delta)  # type: ignore[arg-type]
        sat = satisfaction_reference.local_satisfaction(view, python.usage)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as error:
        with pytest.raises(type(error)):
            selector_module.apply_usage(native, delta, native_core)
        return
    python.local_sat = sat
    if node is not None:
        python_core.refresh(node.id, sat)
    selector_module.apply_usage(native, delta, native_core)
    assert _keys(native.usage) == _keys(python.usage)
    assert _key(native.local_sat) == _key(python.local_sat)
    assert [(n, _key(s)) for n, s in native_core.calls] == [
        (n, _key(s)) for n, s in python_core.calls
    ]
    a, b = native.parent, python.parent
    while a is not None and b is not None:
        assert _keys(a.usage) == _keys(b.usage)
        a, b = a.parent, b.parent
    assert a is None and b is None


def test_apply_usage_propagates_errors() -> None:
    view = ShareView.create((0.5,) * 5, (1.0,) * 5, ZERO, (10.0,) * 5)
    element = _Operation((1.0,) * 5, None, view, _Place(1))

    class _Broken:
        def refresh(self, node: int, sat: float) -> None:
            raise RuntimeError("refresh failed")

    with pytest.raises(RuntimeError):
        selector_module.apply_usage(element, (1.0,) * 5, _Broken())
    with pytest.raises(AttributeError):
        selector_module.apply_usage(element, (1.0,) * 5, object())
    with pytest.raises(TypeError):
        selector_module.apply_usage(element, (1.0, "x", 0.0, 0.0, 0.0), _Core())


def test_local_satisfaction_propagates_errors() -> None:
    view = ShareView.create((0.5,) * 5, (1.0,) * 5, ZERO, (10.0,) * 5)
    with pytest.raises(TypeError):
        view.local_satisfaction((1.0, "x", 0.0, 0.0, 0.0))  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        view.local_satisfaction((1.0,))  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(_VECTORS, _VECTORS)
def test_vadd_vsub_and_vneg_are_the_python_sums(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert _keys(selector.vadd(a, b)) == _keys(vadd(a, b))
    assert _keys(selector.vsub(a, b)) == _keys(vsub(a, b))
    assert _keys(selector.vneg(a)) == _keys((-a[0], -a[1], -a[2], -a[3], -a[4]))


def test_whole_usage_is_remembered_only_when_whole() -> None:
    whole: Vector = (1.0, 2.0, 0.0, 4.0, 0.0)
    half: Vector = (0.5, 2.0, 0.0, 4.0, 0.0)
    items = PreemptibleList()
    items.append(allocation(0, whole))
    items.append(allocation(1, whole))
    assert items._exact and items._whole_usage is whole
    items.append(allocation(2, half))
    assert not items._exact and items._whole_usage is whole


@settings(max_examples=500, deadline=None)
@given(st.tuples(*[_USAGES] * 5), st.tuples(*[_USAGES] * 5))
def test_fits_is_the_python_comparison(need: Vector, available: Vector) -> None:
    assert fits(need, available) is satisfaction_reference.fits(need, available)
    edge = tuple(a + RESOURCE_EPSILON if isinstance(a, float) else a for a in available)
    assert fits(edge, available) is satisfaction_reference.fits(edge, available)  # type: ignore[arg-type]


def test_native_constants_are_the_python_ones() -> None:
    """The native functions hard-code ``RESOURCE_EPSILON`` and the infinite ratio."""
    assert RESOURCE_EPSILON == 1e-6
    assert fits((1.0 + 1e-6, 0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0, 0.0))
    assert not fits((1.0 + 2e-6, 0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0, 0.0))
    zero = ShareView.create(ZERO, ZERO, ZERO, (1.0,) * 5)
    assert zero.local_satisfaction(ZERO) == INFINITE_SATISFACTION_RATIO
