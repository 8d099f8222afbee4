"""The native code of the changed operations' path (``src/native/preempt.cpp``).

The native template of an operation whose shares moved
(:func:`~ytsched.scheduling.native_template.template_from_shares`) equals what the Python
definitions give (``_template``'s own path: ``ShareView.create``, ``PreemptionBounds.create``,
``schedulable_status``), field by field and bit for bit (by ``repr``, which tells ``-0.0``
from ``0.0``), with and without the bounds handed in; the native restart of a republished
preemptible list finds what a publication from scratch does."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling.test_preemptible import allocation
from ytsched.resources import EPSILON, ZERO, Vector
from ytsched.scheduling import post_update, selector
from ytsched.scheduling.native_template import template_from_shares
from ytsched.scheduling.preemptible import PreemptibleList, PreemptionBounds, _restart
from ytsched.scheduling.satisfaction import _INDEXES, LARGE_EPSILON, ShareView
from ytsched.scheduling.state import OperationSettings, OperationTemplate

# The module the package loaded (the sanitizer job points YTSCHED_SELECTOR_LIBRARY at its
# build): importing ``_selector`` here would load the installed one beside it.
_selector = selector._NATIVE

_PACK = struct.Struct("25d").pack

# Shares near each other and near the thresholds (zero, 1e-9, 1e-4 apart) as well as
# arbitrary ones, so that blocked, zero, satisfied and tolerance cases all occur.
_COMPONENT = st.one_of(
    st.sampled_from([0.0, -0.0, -1e-12, 1e-9, 2e-9, 1e-4, 0.1, 0.5, 0.5 + 1e-10, 0.5 + 2e-4, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
_VECTOR = st.tuples(_COMPONENT, _COMPONENT, _COMPONENT, _COMPONENT, _COMPONENT)
_TOTAL = st.tuples(*[st.sampled_from([0.0, -0.0, 1.0, 32.0, 1000.0, 2.0**40]) for _ in range(5)])
_AMOUNTS = st.tuples(*[st.sampled_from([0.0, 1.0, 7.5, 1e6]) for _ in range(5)])
_THRESHOLD = st.one_of(st.none(), _AMOUNTS)
_FRACTION = st.sampled_from([0.0, 0.5, 0.8, 1.0, 1.0 + 1e-12, 2.0])


def _settings(
    tolerance: float, normal: float, aggressive: float, threshold: tuple[float, ...] | None
) -> OperationSettings:
    return OperationSettings(
        key=(),
        anchors=(),
        specified_limits=None,
        tolerance=tolerance,
        timeout=1.0,
        aggressive_preemption_allowed=True,
        tag_filter=None,
        graceful=False,
        preemption_timeout=1.0,
        graceful_preemption_timeout=1.0,
        threshold=threshold,  # type: ignore[arg-type]
        preemption_satisfaction_threshold=normal,
        aggressive_preemption_satisfaction_threshold=aggressive,
    )


def _python_template(
    monkeypatch: pytest.MonkeyPatch,
    chosen: OperationSettings,
    shares: bytes,
    total: tuple[float, ...],
    bounds: PreemptionBounds | None,
    fifo_index: int | None,
) -> OperationTemplate:
    """``_template``'s Python path (the native call made to decline)."""
    with monkeypatch.context() as patch:
        patch.setattr(post_update, "_template_from_shares", lambda *args: None)
        return post_update._template(
            chosen,
            shares,
            None,
            total,
            bounds,
            True,
            fifo_index,  # type: ignore[arg-type]
        )


@settings(max_examples=500, deadline=None)
@given(
    fair=_VECTOR,
    demand=_VECTOR,
    usage=_VECTOR,
    total=_TOTAL,
    absolute=_AMOUNTS,
    tolerance=_FRACTION,
    normal=_FRACTION,
    aggressive=_FRACTION,
    threshold=_THRESHOLD,
    fifo_index=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)),
    reuse=st.booleans(),
)
def test_native_template_is_the_python_template(
    fair: tuple[float, ...],
    demand: tuple[float, ...],
    usage: tuple[float, ...],
    total: tuple[float, ...],
    absolute: tuple[float, ...],
    tolerance: float,
    normal: float,
    aggressive: float,
    threshold: tuple[float, ...] | None,
    fifo_index: int | None,
    reuse: bool,
) -> None:
    monkeypatch = pytest.MonkeyPatch()
    chosen = _settings(tolerance, normal, aggressive, threshold)
    shares = _PACK(*fair, *demand, *usage, *total, *absolute)
    bounds = None
    if reuse:
        other = ShareView.create(demand, fair, usage, total)  # type: ignore[arg-type]
        bounds = PreemptionBounds.create(
            other,
            preemption_satisfaction_threshold=normal,
            aggressive_preemption_satisfaction_threshold=aggressive,
            threshold=None,
        )
    expected = _python_template(monkeypatch, chosen, shares, total, bounds, fifo_index)
    got = template_from_shares(chosen, shares, total, bounds, fifo_index)
    assert got is not None
    assert type(got) is OperationTemplate
    assert repr(got) == repr(expected)
    assert got == expected
    # The objects handed in are kept as they are (the view's total is compared by identity
    # by the satisfaction memos, the bounds by the preemptible lists).
    assert got.settings is chosen
    assert got.shares is shares
    assert got.view.total is total
    assert got.fifo_index is fifo_index
    if bounds is not None:
        assert got.bounds is bounds
    for value in (got.view, got.bounds, got.bounds.aggressive_bound):
        assert dataclasses.asdict(value)  # every slot is set
    # The native call is what _template uses by default.
    assert repr(post_update._template(chosen, shares, None, total, bounds, True, fifo_index)) == (
        repr(expected)
    )


def test_inputs_that_are_not_exact_floats_take_the_python_path() -> None:
    shares = _PACK(*([0.25] * 25))
    total = (1.0, 1.0, 1.0, 1.0, 1.0)
    assert template_from_shares(_settings(1, 1.0, 1.0, None), shares, total, None, 3) is None  # type: ignore[arg-type]
    assert (
        template_from_shares(_settings(1.0, 1.0, 1.0, None), shares, (1, 1, 1, 1, 1), None, 3)
        is None
    )  # type: ignore[arg-type]
    # _template then computes it in Python.
    chosen = _settings(1, 1.0, 1.0, None)  # type: ignore[arg-type]
    template = post_update._template(chosen, shares, None, total, None, True, 3)
    assert template.order_key == 3.0
    assert template.view.fair_share == (0.25,) * 5


def test_native_constants_are_the_python_ones() -> None:
    assert _selector.PREEMPT_EPSILON == EPSILON
    assert _selector.PREEMPT_LARGE_EPSILON == LARGE_EPSILON


def test_setup_rejects_a_class_without_those_slots() -> None:
    class Plain:
        pass

    with pytest.raises((TypeError, AttributeError)):
        _selector.template_setup(
            Plain, ShareView, PreemptionBounds, PreemptionBounds, _INDEXES, 0, 1
        )

    # A field added to the template class and not built natively is refused at setup.
    @dataclasses.dataclass(frozen=True, slots=True)
    class Wider:
        settings: object
        shares: object
        fifo_index: object
        view: object
        bounds: object
        order_key: object
        demand: object
        status: object
        extra: object

    with pytest.raises(TypeError, match="slots"):
        _selector.template_setup(
            Wider, ShareView, PreemptionBounds, PreemptionBounds, _INDEXES, 0, 1
        )
    with pytest.raises(TypeError):
        template_from_shares(_settings(1.0, 1.0, 1.0, None), b"short", (1.0,) * 5, None, None)  # type: ignore[arg-type]


_WHOLE = st.tuples(*[st.sampled_from([0.0, -0.0, 1.0, 2.0, 3.0, 16.0]) for _ in range(5)])


def _bounds(
    fair: tuple[float, ...],
    demand: tuple[float, ...],
    total: tuple[float, ...],
    normal: float,
    aggressive: float,
    threshold: tuple[float, ...] | None,
) -> PreemptionBounds:
    view = ShareView.create(fair, demand, ZERO, total)  # type: ignore[arg-type]
    return PreemptionBounds.create(
        view,
        preemption_satisfaction_threshold=normal,
        aggressive_preemption_satisfaction_threshold=aggressive,
        threshold=threshold,  # type: ignore[arg-type]
    )


_BOUNDS = st.builds(_bounds, _VECTOR, _VECTOR, _TOTAL, _FRACTION, _FRACTION, _THRESHOLD)


@st.composite
def _moved_bounds(draw: st.DrawFn) -> tuple[PreemptionBounds, PreemptionBounds]:
    """Bounds and the same bounds after the fair share moved a little (as between two
    updates: the non-preemptible boundary then mostly walks back a few allocations)."""
    fair = draw(st.tuples(*[st.sampled_from([0.1, 0.2, 0.25, 0.5]) for _ in range(5)]))
    demand = draw(_VECTOR)
    total = draw(st.tuples(*[st.sampled_from([0.0, 16.0, 32.0, 100.0]) for _ in range(5)]))
    normal, aggressive, threshold = draw(_FRACTION), draw(_FRACTION), draw(_THRESHOLD)
    scale = draw(st.sampled_from([0.5, 0.8, 0.9, 0.99, 1.01, 1.2]))
    moved = tuple(x * scale for x in fair)
    return (
        _bounds(fair, demand, total, normal, aggressive, threshold),
        _bounds(moved, demand, total, normal, aggressive, threshold),
    )


_BOUNDS_PAIR = st.one_of(st.tuples(_BOUNDS, _BOUNDS), _moved_bounds())


@settings(max_examples=1000, deadline=None)
@given(
    usages=st.lists(_WHOLE, max_size=16),
    removed=st.sets(st.integers(0, 15), max_size=4),
    pair=_BOUNDS_PAIR,
)
def test_native_restart_is_a_publication_from_scratch(
    usages: list[Vector], removed: set[int], pair: tuple[PreemptionBounds, PreemptionBounds]
) -> None:
    """On an exact list published with ``first`` (holes included), the native restart with
    ``second`` finds the boundaries and the very prefix sums (by ``repr``) of a publication of
    ``second`` from scratch."""
    first, second = pair
    lists = [PreemptibleList(), PreemptibleList()]
    for lst in lists:
        allocations = [allocation(index, usage) for index, usage in enumerate(usages)]
        for item in allocations:
            lst.append(item)
        lst.publish(first)
        for index in sorted(removed):
            if index < len(allocations):
                lst.remove(allocations[index])
    restarted, scratch = lists
    assert restarted._exact and not restarted._changed
    got = _restart(
        restarted._items, restarted._b1, restarted._cum1, restarted._b2, restarted._cum2, second
    )
    scratch._changed = True  # the next publication starts from the first allocation
    scratch.publish(second)
    expected = (scratch._b1, scratch._cum1, scratch._b2, scratch._cum2)
    assert repr(got) == repr(expected)


def test_every_native_function_comes_from_the_loaded_selector_module() -> None:
    """The restart and the template are the functions of the one module ``selector`` loaded
    (``YTSCHED_SELECTOR_LIBRARY`` may name another build than the installed one)."""
    from ytsched.scheduling import native_template, preemptible

    assert preemptible.native_restart is _selector.restart
    assert native_template.template_from_shares is _selector.template_from_shares
