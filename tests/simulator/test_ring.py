"""Heartbeat tick arithmetic: the engine relies on it to skip and resume heartbeats exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.simulator.cluster import SimNode
from ytsched.simulator.ring import NodeRing, first_tick, tick_time, tick_times

periods = st.sampled_from([0.1, 1.0, 2.0, 5.0, 7.3, 30.0])


def _node(phase: float, next_tick: int = 0) -> SimNode:
    node = SimNode("n", "g", 0, (1.0, 1.0, 0.0, 1.0, 0.0), frozenset(), phase)
    node.next_tick = next_tick
    return node


@settings(max_examples=300, deadline=None)
@given(
    periods,
    st.floats(0.0, 0.999999),
    st.floats(0.0, 1e6),
    st.integers(0, 50),
    st.booleans(),
)
def test_first_tick_is_the_earliest_allowed(
    period: float, fraction: float, at: float, next_tick: int, inclusive: bool
) -> None:
    node = _node(fraction * period, next_tick)
    k = first_tick(node, at, period, inclusive=inclusive)
    time = tick_time(node, k, period)
    assert k >= next_tick
    assert time >= at if inclusive else time > at
    if k > next_tick:
        before = tick_time(node, k - 1, period)
        assert before < at if inclusive else before <= at


@settings(max_examples=100, deadline=None)
@given(periods, st.floats(0.0, 0.999999), st.integers(0, 20), st.integers(0, 40))
def test_tick_times_are_the_skipped_ticks(
    period: float, fraction: float, start: int, count: int
) -> None:
    node = _node(fraction * period, start)
    times = list(tick_times(node, start + count, period))
    assert times == [tick_time(node, k, period) for k in range(start, start + count)]


@settings(max_examples=200, deadline=None)
@given(
    periods,
    st.lists(st.floats(0.0, 0.999999), min_size=1, max_size=30),
    st.floats(0.0, 1e5),
)
def test_ring_start_is_the_first_tick_at_or_after(
    period: float, fractions: list[float], at: float
) -> None:
    ring = NodeRing(period)
    for sequence, fraction in enumerate(fractions):
        ring.add(_node(fraction * period), sequence)
    phases = [node.phase for node in ring.nodes]
    assert phases == sorted(phases)
    k, index = ring.start(at)
    chosen = tick_time(ring.nodes[index], k, period)
    assert chosen >= at
    # Every (k', i') before it in time order has its tick before ``at``.
    previous_k, previous_index = (k, index - 1) if index > 0 else (k - 1, len(ring) - 1)
    if previous_k >= 0:
        assert tick_time(ring.nodes[previous_index], previous_k, period) < at
    # Walking the ring visits ticks in non-decreasing time order.
    position = (k, index)
    last = chosen
    for _ in range(2 * len(ring)):
        position = ring.next_position(*position)
        time = tick_time(ring.nodes[position[1]], position[0], period)
        assert time >= last
        last = time
