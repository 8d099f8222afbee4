"""Heartbeat times of the simulated nodes, and the ring that orders them within a period.

Every node heartbeats at ``phase + k * period`` for whole ``k`` (its ``phase`` is drawn
uniformly from ``[0, period)``), so within one period the nodes beat in the order of their
phases, the same order every period.  The engine uses that order to skip heartbeats that
cannot do anything (see :mod:`ytsched.simulator.engine`): a *parked* node has no event in the
queue, and when the scheduling state changes so that parked nodes may have work, a single
sweep walks the ring from "now" and wakes them one by one at their own heartbeat times.

Times are computed from ``k`` (one multiplication and one addition), never accumulated, so a
heartbeat skipped and one that ran have the very same time, and any tick can be reached at
once.  Floating-point rounding is monotonic, so two nodes' ticks of the same ``k`` are in the
order of their phases.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator

from ytsched.simulator.cluster import SimNode


def tick_time(node: SimNode, k: int, period: float) -> float:
    """The node's ``k``-th heartbeat time."""
    return node.phase + k * period


def first_tick(node: SimNode, at: float, period: float, *, inclusive: bool = True) -> int:
    """The smallest ``k`` not before the node's ``next_tick`` whose time is at or after
    ``at`` (strictly after when not ``inclusive``)."""
    phase = node.phase
    low = node.next_tick
    k = max(low, math.ceil((at - phase) / period))
    if inclusive:
        while k > low and phase + (k - 1) * period >= at:
            k -= 1
        while phase + k * period < at:
            k += 1
    else:
        while k > low and phase + (k - 1) * period > at:
            k -= 1
        while phase + k * period <= at:
            k += 1
    return k


def tick_times(node: SimNode, stop: int, period: float) -> Iterator[float]:
    """The node's heartbeat times from its ``next_tick`` up to (not including) ``stop``."""
    phase = node.phase
    for k in range(node.next_tick, stop):
        yield phase + k * period


class NodeRing:
    """The nodes in the order of their phases (ties: the order they were added)."""

    __slots__ = ("_keys", "nodes", "period")

    def __init__(self, period: float) -> None:
        self.period = period
        self.nodes: list[SimNode] = []
        self._keys: list[tuple[float, int]] = []

    def add(self, node: SimNode, sequence: int) -> None:
        key = (node.phase, sequence)
        index = bisect.bisect_right(self._keys, key)
        self._keys.insert(index, key)
        self.nodes.insert(index, node)

    def __len__(self) -> int:
        return len(self.nodes)

    def start(self, at: float) -> tuple[int, int]:
        """The first ``(k, index)``, in time order, whose tick is at or after ``at``."""
        nodes = self.nodes
        period = self.period
        k = max(0, math.floor(at / period) - 1)
        while True:
            # Ticks of one ``k`` ascend with the index: binary search the first one >= at.
            low, high = 0, len(nodes)
            while low < high:
                middle = (low + high) // 2
                if nodes[middle].phase + k * period >= at:
                    high = middle
                else:
                    low = middle + 1
            if low < len(nodes):
                return k, low
            k += 1

    def next_position(self, k: int, index: int) -> tuple[int, int]:
        """The position after ``(k, index)``: the next node, wrapping to the next period."""
        index += 1
        if index == len(self.nodes):
            return k + 1, 0
        return k, index
