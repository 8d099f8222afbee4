"""The preemptible list's incremental state equals a publication from scratch, bit for bit.

:meth:`PreemptibleList.publish` of new bounds restarts from the boundaries the list has
when its prefix sums are exact (whole usages, see ``PreemptibleList._exact``), and a usage
decrease then keeps them without a later rescan.  After every step, the list's statuses,
boundaries (as compacted indices) and prefix sums must be those of a new list given the
same allocations and the same bounds, whatever the history: appends, removals, releases,
publications of other bounds (with and without a non-preemptible threshold) and of the
same ones, with whole and fractional usages.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling.test_preemptible import allocation, live_state
from ytsched.resources import Vector
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.preemptible import PreemptibleList, PreemptionBounds
from ytsched.scheduling.satisfaction import ShareView

TOTAL: Vector = (16.0, 64.0, 0.0, 1024.0, 4.0)


def _bounds(fair: Vector, demand: Vector, aggressive: float, threshold: bool) -> PreemptionBounds:
    view = ShareView.create(fair, demand, (0.0, 0.0, 0.0, 0.0, 0.0), TOTAL)
    return PreemptionBounds.create(
        view,
        preemption_satisfaction_threshold=1.0,
        aggressive_preemption_satisfaction_threshold=aggressive,
        threshold=(3.0, 20.0, float("inf"), 200.0, float("inf")) if threshold else None,
    )


share = st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.4, 0.5, 0.75, 1.0])
shares = st.tuples(share, share, st.just(0.0), share, share)
bounds_strategy = st.builds(
    _bounds, shares, shares, st.sampled_from([0.2, 0.5, 1.0]), st.booleans()
)
whole = st.tuples(
    st.integers(0, 3).map(float),
    st.integers(0, 8).map(float),
    st.just(0.0),
    st.integers(0, 64).map(float),
    st.integers(0, 1).map(float),
)
fractional = st.tuples(
    st.sampled_from([0.1, 0.5, 1.0, 1.3]),
    st.sampled_from([0.7, 2.0, 3.3]),
    st.just(0.0),
    st.sampled_from([1.0, 10.1, 33.3]),
    st.just(0.0),
)
step = st.one_of(
    st.tuples(st.just("append"), whole),
    st.tuples(st.just("append"), whole),
    st.tuples(st.just("append"), fractional),
    st.tuples(st.just("remove"), st.integers(0, 60)),
    st.tuples(st.just("release"), st.integers(0, 60)),
    st.tuples(st.just("publish"), bounds_strategy),
    st.tuples(st.just("republish"), st.just(0)),
)


def _from_scratch(alive: list[Allocation], bounds: PreemptionBounds | None) -> tuple[object, ...]:
    """``live_state`` of a new list of ``alive`` with ``bounds`` published (the
    allocations' indexes into the list under test are restored afterwards)."""
    indexes = [a.list_index for a in alive]
    fresh = PreemptibleList()
    for a in alive:
        fresh.append(a)
    fresh.publish(bounds)
    state = live_state(fresh)
    for a, index in zip(alive, indexes, strict=True):
        a.list_index = index
    return state


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=80), st.booleans())
def test_published_lists_equal_a_publication_from_scratch(
    steps: list[tuple[str, object]], whole_only: bool
) -> None:
    items = PreemptibleList()
    published: PreemptionBounds | None = None
    alive: list[Allocation] = []
    counter = 0
    for action, value in steps:
        if action == "append":
            usage: Vector = value  # type: ignore[assignment]
            if whole_only and any(x % 1.0 for x in usage):
                continue
            counter += 1
            a = allocation(counter, usage)
            items.append(a)
            alive.append(a)
        elif action == "remove" and alive:
            items.remove(alive.pop(int(value) % len(alive)))  # type: ignore[call-overload]
        elif action == "release" and alive:
            a = alive[int(value) % len(alive)]  # type: ignore[call-overload]
            u = a.usage
            a.usage = (0.0, 0.0, 0.0, 0.0, 0.0)
            items.usage_decreased(a, (-u[0], -u[1], -u[2], -u[3], -u[4]))
        elif action == "publish":
            published = value  # type: ignore[assignment]
            items.publish(published)
        elif action == "republish":
            items.publish(published)
        else:
            continue
        assert list(items) == alive
        if published is not None and not items._changed:
            # Not ``_changed``: the state is exactly that of a publication from scratch.
            assert live_state(items) == _from_scratch(alive, published)
    items.publish(published)
    if published is not None:
        assert live_state(items) == _from_scratch(alive, published)


def test_fractional_usage_turns_exact_sums_off() -> None:
    items = PreemptibleList()
    items.append(allocation(1, (1.0, 2.0, 0.0, 3.0, 0.0)))
    assert items._exact
    items.append(allocation(2, (0.5, 2.0, 0.0, 3.0, 0.0)))
    assert not items._exact
    items.remove(list(items)[1])
    assert not items._exact


def test_totals_reaching_two_to_the_53_turn_exact_sums_off() -> None:
    items = PreemptibleList()
    items.append(allocation(1, (1.0, 2.0**52, 0.0, 3.0, 0.0)))
    assert items._exact
    items.append(allocation(2, (1.0, 2.0**52, 0.0, 3.0, 0.0)))
    assert not items._exact


value = st.sampled_from([0.0, -0.0, 1e-10, 1e-9, 2e-9, 0.1, 0.3, 0.5, 1.0, 2.5])
vector = st.tuples(value, value, value, value, value)
amounts = st.tuples(*[st.sampled_from([0.0, 1.0, 16.0, 1e12]) for _ in range(5)])


@settings(max_examples=400, deadline=None)
@given(
    vector,
    vector,
    amounts,
    st.sampled_from([0.0, 0.2, 0.5, 1.0]),
    st.sampled_from([0.5, 1.0, 1.5]),
    st.booleans(),
)
def test_bounds_written_out_equal_their_definition(
    fair: Vector,
    demand: Vector,
    total: Vector,
    aggressive: float,
    normal: float,
    with_threshold: bool,
) -> None:
    """``PreemptionBounds.create`` (one pass) builds bit for bit what two
    ``CompiledBound.create`` calls build (``PreemptionBounds.compiled``)."""
    view = ShareView.create(fair, demand, (0.0, 0.0, 0.0, 0.0, 0.0), total)
    threshold: Vector | None = (1.0, 2.0, 3.0, 4.0, 5.0) if with_threshold else None
    arguments = {
        "preemption_satisfaction_threshold": normal,
        "aggressive_preemption_satisfaction_threshold": aggressive,
        "threshold": threshold,
    }
    assert repr(PreemptionBounds.create(view, **arguments)) == repr(  # type: ignore[arg-type]
        PreemptionBounds.compiled(view, **arguments)  # type: ignore[arg-type]
    )
