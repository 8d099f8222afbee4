"""The prefix rule of preemptible lists (reference §7.4), by hand and against a reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.pooltree.operations import Job
from ytsched.resources import Vector
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.preemptible import (
    PreemptibleList,
    PreemptionBounds,
    PreemptionLevel,
    PreemptionStatus,
    preemption_level,
    preemption_sort_key,
)
from ytsched.scheduling.satisfaction import ShareView

NON = PreemptionStatus.NON_PREEMPTIBLE
AGGRESSIVE = PreemptionStatus.AGGRESSIVELY_PREEMPTIBLE
PREEMPTIBLE = PreemptionStatus.PREEMPTIBLE
TOTAL: Vector = (10.0, 10.0, 0.0, 100.0, 0.0)


def units(n: float) -> Vector:
    """``n`` slots, ``n`` cpu, ``10 n`` bytes: the same share of each."""
    return (n, n, 0.0, 10.0 * n, 0.0)


def allocation(index: int, usage: Vector, start: float | None = None) -> Allocation:
    job = Job(id=f"j{index}", task="main", index=index, attempt=0, resources=usage, start_time=0.0)
    return Allocation(
        id=job.id,
        operation_id="op",
        tree="t",
        node="n",
        task="main",
        resources=usage,
        usage=usage,
        start_time=float(index),
        sequence=index,
        job=job,
        preemptible_progress_start_time=float(index) if start is None else start,
    )


def bounds(
    fair: float, demand: float = 1.0, threshold: Vector | None = None, aggressive: float = 0.2
) -> PreemptionBounds:
    view = ShareView.create(
        (fair, fair, 0.0, fair, 0.0), (demand, demand, 0.0, demand, 0.0), units(0.0), TOTAL
    )
    return PreemptionBounds.create(
        view,
        preemption_satisfaction_threshold=1.0,
        aggressive_preemption_satisfaction_threshold=aggressive,
        threshold=threshold,
    )


def build(
    sizes: list[float], published: PreemptionBounds
) -> tuple[PreemptibleList, list[Allocation]]:
    items = PreemptibleList()
    items.publish(published)
    allocations = [allocation(i, units(size)) for i, size in enumerate(sizes)]
    for a in allocations:
        items.append(a)
    return items, allocations


def statuses(items: PreemptibleList, allocations: list[Allocation]) -> list[PreemptionStatus]:
    return [items.status(a) for a in allocations]


def live_state(items: PreemptibleList) -> tuple[object, ...]:
    """A preemptible list as its classification sees it: the live allocations in order with
    their statuses, each boundary as the number of live allocations before it, the prefix
    sums by ``repr``.  Holes (removed allocations not yet compacted away) do not show: they
    add nothing to a sum and move no status.  Also checks that the boundaries stand where a
    scan from scratch stops: never just after a hole, except at the end of the list (see
    ``PreemptibleList.publish``)."""
    raw = items._items
    for boundary in (items._b1, items._b2):
        assert boundary in (0, len(raw)) or raw[boundary - 1] is not None
    alive = list(items)
    return (
        [(a.id, items.status(a)) for a in alive],
        sum(1 for a in alive if a.list_index < items._b1),
        sum(1 for a in alive if a.list_index < items._b2),
        repr(items._cum1),
        repr(items._cum2),
    )


def test_prefix_rule_with_unit_allocations() -> None:
    # fair share 5 of 10: cumulative usage before allocation i is i.  Non-preemptible while
    # i/10 < 0.2 * 0.5, aggressively preemptible while i/10 < 0.5, then preemptible.
    items, allocations = build([1.0] * 10, bounds(0.5))
    assert statuses(items, allocations) == [NON] + [AGGRESSIVE] * 4 + [PREEMPTIBLE] * 5
    assert items.counts() == (1, 4, 5)


def test_the_allocation_crossing_the_boundary_stays_in_the_lower_class() -> None:
    # allocations of 2: cumulative before = 0, 2, 4, 6, 8; the one at 4 ends at 6 > 5 = fair
    # share, but only the usage before it counts.
    items, allocations = build([2.0] * 5, bounds(0.5))
    assert statuses(items, allocations) == [NON, AGGRESSIVE, AGGRESSIVE, PREEMPTIBLE, PREEMPTIBLE]


def test_fully_satisfied_operation_has_no_preemptible_allocations() -> None:
    items, allocations = build([1.0] * 10, bounds(0.5, demand=0.5))
    assert PREEMPTIBLE not in statuses(items, allocations)
    assert statuses(items, allocations) == [NON] + [AGGRESSIVE] * 9


def test_non_preemptible_usage_threshold_protects_the_first_allocations() -> None:
    # max_unpreemptible_running_allocation_count = 3 is user_slots 3 (other resources unlimited).
    inf = float("inf")
    items, allocations = build([1.0] * 10, bounds(0.5, threshold=(3.0, inf, inf, inf, inf)))
    assert statuses(items, allocations) == [NON] * 3 + [AGGRESSIVE] * 2 + [PREEMPTIBLE] * 5


def test_releasing_usage_moves_later_allocations_down() -> None:
    items, allocations = build([1.0] * 10, bounds(0.5))
    delta = tuple(-x for x in allocations[2].usage)
    allocations[2].usage = units(0.0)
    items.usage_decreased(allocations[2], (delta[0], delta[1], delta[2], delta[3], delta[4]))
    # cumulative before allocation 5 is now 4 < 5: it becomes aggressively preemptible.
    assert statuses(items, allocations) == [NON] + [AGGRESSIVE] * 5 + [PREEMPTIBLE] * 4


def test_removal_and_republication() -> None:
    items, allocations = build([1.0] * 10, bounds(0.5))
    for a in allocations[:3]:
        items.remove(a)
    rest = allocations[3:]
    assert statuses(items, rest) == [NON] + [AGGRESSIVE] * 4 + [PREEMPTIBLE] * 2
    items.publish(bounds(0.2))
    assert statuses(items, rest) == [NON, AGGRESSIVE] + [PREEMPTIBLE] * 5
    items.publish(None)  # disabled: everything reads as non-preemptible
    assert statuses(items, rest) == [NON] * 7


def test_preemption_level_needs_aggressive_preemption_allowed() -> None:
    assert preemption_level(AGGRESSIVE, True) is PreemptionLevel.AGGRESSIVELY_PREEMPTIBLE
    assert preemption_level(AGGRESSIVE, False) is PreemptionLevel.NON_PREEMPTIBLE
    assert preemption_level(PREEMPTIBLE, False) is PreemptionLevel.PREEMPTIBLE


def test_preemption_order_takes_preemptible_and_newest_first() -> None:
    old = allocation(1, units(1.0), start=1.0)
    new = allocation(2, units(1.0), start=2.0)
    gap = allocation(3, units(1.0), start=3.0)
    gap.usage = units(0.0)  # preempted: a cpu gap
    unknown = allocation(4, units(1.0))
    unknown.preemptible_progress_start_time = None
    keyed = [
        (old, PREEMPTIBLE),
        (new, PREEMPTIBLE),
        (gap, AGGRESSIVE),
        (unknown, AGGRESSIVE),
        (allocation(5, units(1.0), start=0.0), NON),
    ]
    order = sorted(keyed, key=lambda item: preemption_sort_key(*item), reverse=True)
    # preemptible newest first; then aggressive: with a cpu gap first, among the rest the
    # unknown start time (sorted last ascending) first; non-preemptible last.
    assert [a.id for a, _ in order] == ["j2", "j1", "j3", "j4", "j5"]


def reference(items: list[Allocation], published: PreemptionBounds) -> list[PreemptionStatus]:
    result = []
    cum: Vector = units(0.0)
    for a in items:
        if published.below(cum, published.aggressive_bound):
            result.append(NON)
        elif published.below(cum, published.bound):
            result.append(AGGRESSIVE)
        else:
            result.append(PREEMPTIBLE)
        u = a.usage
        cum = (cum[0] + u[0], cum[1] + u[1], cum[2] + u[2], cum[3] + u[3], cum[4] + u[4])
    return result


actions = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("remove"), st.integers(0, 50)),
        st.tuples(st.just("remove_negated"), st.integers(0, 50)),
        st.tuples(st.just("release"), st.integers(0, 50)),
        st.tuples(st.just("publish"), st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.8, 1.0])),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(actions, st.sampled_from([0.0, 0.2, 0.5]))
def test_incremental_lists_match_the_prefix_rule(
    steps: list[tuple[str, float]], aggressive: float
) -> None:
    items = PreemptibleList()
    published = bounds(0.5, aggressive=aggressive)
    items.publish(published)
    alive: list[Allocation] = []
    counter = 0
    for action, value in steps:
        if action == "append":
            counter += 1
            a = allocation(counter, units(float(value)))
            items.append(a)
            alive.append(a)
        elif action == "remove" and alive:
            a = alive.pop(int(value) % len(alive))
            items.remove(a)
        elif action == "remove_negated" and alive:
            # The ledger's form: the negated usage passed in (``None`` for a zero usage).
            a = alive.pop(int(value) % len(alive))
            u = a.usage
            items.remove(a, (-u[0], -u[1], -u[2], -u[3], -u[4]) if u != units(0.0) else None)
        elif action == "release" and alive:
            a = alive[int(value) % len(alive)]
            u = a.usage
            a.usage = units(0.0)
            items.usage_decreased(a, (-u[0], -u[1], -u[2], -u[3], -u[4]))
        elif action == "publish":
            published = bounds(float(value), aggressive=aggressive)
            items.publish(published)
        assert statuses(items, alive) == reference(alive, published)
        assert list(items) == alive
