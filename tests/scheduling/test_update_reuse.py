"""Second round of reuse in the update: each shortcut against its from-scratch definition.

* ``preemptible._scan`` is the classification loop of ``PreemptibleList`` with
  ``PreemptionBounds.below`` and ``vadd`` written out;
* a list published with some bounds and then only appended to (or shortened after its second
  boundary) is what a publication from scratch gives, so publishing the same bounds object
  again skips the reclassification;
* the preemption bounds do not depend on the usage share, so an update may keep them while
  only usage moved.

Floats are compared by ``repr`` (``-0.0`` differs from ``0.0``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling.test_preemptible import TOTAL, allocation, bounds, live_state
from ytsched.pooltree.operations import JobState
from ytsched.resources import ZERO, Vector, vadd
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.preemptible import (
    CompiledBound,
    PreemptibleList,
    PreemptionBounds,
    _scan,
)
from ytsched.scheduling.satisfaction import ShareView

_SIZES = st.sampled_from([0.0, -0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 0.3])


def _reference_scan(
    items: list[Allocation | None],
    index: int,
    cum: Vector,
    published: PreemptionBounds,
    bound: CompiledBound | None,
) -> tuple[int, Vector]:
    """The loop as ``PreemptibleList._advance`` wrote it before ``_scan``."""
    while index < len(items) and published.below(cum, bound):
        item = items[index]
        if item is not None:
            cum = vadd(cum, item.usage)
        index += 1
    return index, cum


@st.composite
def _lists(draw: Any) -> list[Allocation | None]:
    sizes = draw(st.lists(st.tuples(_SIZES, _SIZES, st.booleans()), max_size=30))
    return [
        None if hole else allocation(i, (a, b, 0.0, 10.0 * a, b))
        for i, (a, b, hole) in enumerate(sizes)
    ]


@settings(max_examples=300, deadline=None)
@given(
    _lists(),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.9, 1.0]),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([None, (2.0, 2.0, 1.0, 20.0, 1.0), (1e9, 0.5, 1e9, 1e9, 1e9)]),
    st.sampled_from([0.2, 0.5, 1.0]),
    st.integers(min_value=0, max_value=5),
)
def test_scan_is_the_below_loop(
    items: list[Allocation | None],
    fair: float,
    demand: float,
    threshold: Vector | None,
    aggressive: float,
    start: int,
) -> None:
    published = bounds(fair, demand=demand, threshold=threshold, aggressive=aggressive)
    start = min(start, len(items))
    cum: Vector = ZERO
    for item in items[:start]:
        if item is not None:
            cum = vadd(cum, item.usage)
    for bound in (published.aggressive_bound, published.bound, None):
        got = _scan(items, start, cum, published.threshold, bound)
        expected = _reference_scan(items, start, cum, published, bound)
        assert (got[0], repr(got[1])) == (expected[0], repr(expected[1]))


def test_scan_with_all_resources_blocked_and_zero_totals() -> None:
    """``any_of`` bounds (every resource blocked) and constant checks of zero totals."""
    for total in (TOTAL, (10.0, 0.0, 10.0, 0.0, 10.0), (0.0,) * 5):
        for fair, demand in ((0.5, 0.5), (0.5, 0.2), (0.0, 0.0), (0.3, 0.9)):
            view = ShareView.create((fair,) * 5, (demand,) * 5, ZERO, total)
            published = PreemptionBounds.create(
                view,
                preemption_satisfaction_threshold=1.0,
                aggressive_preemption_satisfaction_threshold=0.5,
                threshold=None,
            )
            items: list[Allocation | None] = [
                allocation(i, (1.0, 0.5, 1.0, 2.0, 0.0)) for i in range(12)
            ]
            for bound in (published.aggressive_bound, published.bound):
                got = _scan(items, 0, ZERO, None, bound)
                expected = _reference_scan(items, 0, ZERO, published, bound)
                assert (got[0], repr(got[1])) == (expected[0], repr(expected[1]))


def _from_scratch(items: PreemptibleList, published: PreemptionBounds) -> Any:
    fresh = PreemptibleList()
    alive = list(items)
    indices = [a.list_index for a in alive]
    for a in alive:
        fresh.append(a)
    fresh.bounds = None  # force the reclassification
    fresh._changed = True
    fresh.publish(published)
    state = live_state(fresh)
    for a, index in zip(alive, indices, strict=True):
        a.list_index = index
    return state


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_SIZES, st.sampled_from(["append", "end_late", "end_any"])), max_size=50),
    st.sampled_from([0.05, 0.1, 0.3, 0.5]),
)
def test_appends_and_late_removals_keep_the_publishedlive_state(
    steps: list[tuple[float, str]], fair: float
) -> None:
    """After appends and removals at or after the second boundary the list holds what a
    publication from scratch computes: publishing the same bounds again skips the work (the
    list stays not ``_changed``) and gives that state; a removal before the boundary marks
    the list changed."""
    published = bounds(fair, demand=1.0)
    items = PreemptibleList()
    items.publish(published)
    live: list[Allocation] = []
    for counter, (size, action) in enumerate(steps):
        if action == "append" or not live:
            a = allocation(counter, (size, size, 0.0, 10.0 * size, 0.0))
            items.append(a)
            live.append(a)
        else:
            late = [a for a in live if a.list_index >= items._b2]
            pool = late if action == "end_late" and late else live
            a = pool[-1]
            before_boundary = a.list_index < items._b2 and a.usage != ZERO
            live.remove(a)
            a.job.state = JobState.COMPLETED
            items.remove(a)
            if before_boundary and not items._exact:
                # An exact list's subtraction is the fold itself (PreemptibleList._exact).
                assert items._changed
        if not items._changed:
            expected = _from_scratch(items, published)
            items.publish(published)
            assert not items._changed
            assert live_state(items) == expected
    items.publish(published)
    assert live_state(items) == _from_scratch(items, published)


def test_bounds_do_not_depend_on_the_usage_share() -> None:
    """``PreemptionBounds`` holds no view: the same fair and demand shares and total give the
    same bounds whatever the usage share."""
    made = [
        PreemptionBounds.create(
            ShareView.create((0.3, 0.2, 0.0, 0.1, 0.0), (0.5, 0.5, 0.0, 0.5, 0.0), usage, TOTAL),
            preemption_satisfaction_threshold=1.0,
            aggressive_preemption_satisfaction_threshold=0.5,
            threshold=None,
        )
        for usage in (ZERO, (0.3, 0.1, 0.0, 0.2, 0.0), (1.0, 1.0, 0.0, 1.0, 0.0))
    ]
    assert len({repr(b) for b in made}) == 1
    assert not hasattr(made[0], "view")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0]), st.booleans()), max_size=12),
    st.sampled_from([((0, 2.0),), ((0, 3.0), (1, 1.0)), ((1, 2.0), (3, 4.0)), ()]),
    st.booleans(),
    st.booleans(),
)
def test_scan_at_exact_limits(
    sizes: list[tuple[float, bool]],
    checks: tuple[tuple[int, float], ...],
    any_of: bool,
    constant: bool,
) -> None:
    """Compiled bounds built by hand, with limits the prefix sums reach exactly (``<`` is
    strict), in every mode."""
    items: list[Allocation | None] = [
        None if hole else allocation(i, (size, size, 0.0, size, 0.0))
        for i, (size, hole) in enumerate(sizes)
    ]
    bound = CompiledBound(checks, any_of, constant)
    published = PreemptionBounds(aggressive_bound=bound, bound=bound, threshold=None)
    got = _scan(items, 0, ZERO, None, bound)
    expected = _reference_scan(items, 0, ZERO, published, bound)
    assert (got[0], repr(got[1])) == (expected[0], repr(expected[1]))


def test_own_usage_follows_the_list_total_under_the_same_view() -> None:
    """Between the computation and the application of an update (the service lets heartbeats
    run in between) allocations change while the operation's view stays: the kept usage and
    satisfaction follow the list's total, not the view alone."""
    from types import SimpleNamespace

    from ytsched.scheduling.post_update import _fill_usage
    from ytsched.scheduling.state import ElementState, OperationRecord

    view = ShareView.create((0.3, 0.3, 0.0, 0.3, 0.0), (0.5, 0.5, 0.0, 0.5, 0.0), ZERO, TOTAL)
    record = OperationRecord()
    root = ElementState(name="<Root>", is_operation=False, parent=None, view=view, usage=ZERO)
    element = ElementState(name="op", is_operation=True, parent=root, view=view, usage=ZERO)
    op = SimpleNamespace(record=record, element=element)
    seen = []
    for size in (1.0, 2.0):
        record.allocations.append(allocation(int(size), (size, size, 0.0, size, 0.0)))
        root.usage = element.usage = ZERO
        _fill_usage({"<Root>": root, "op": element}, {"op": op})  # type: ignore[dict-item]
        total = record.allocations.total
        assert repr(element.usage) == repr(total) and repr(root.usage) == repr(total)
        assert element.local_sat == view.local_satisfaction(total)
        seen.append(element.local_sat)
    assert seen[0] != seen[1]
