"""The event queue of the simulation: a heap ordered by virtual time.

Events at the same instant run in a fixed order of kinds, then in the order they were pushed,
so a run never depends on anything but its inputs:

1. job ends (a job whose work is done by a heartbeat is reported by that heartbeat);
2. scenario actions, then operation starts (a start at t is visible to the update at t);
3. the fair-share update, then the periodic re-check of pending operations;
4. node heartbeats (they see the update of the same instant);
5. orchid snapshots (they show the state after everything else at that instant);
6. controller-agent checks (they see the heartbeats of the same instant).
"""

from __future__ import annotations

import heapq
from typing import Any

JOB_END = 0
ACTION = 1
OPERATION_START = 2
FAIR_SHARE_UPDATE = 3
PENDING_SCAN = 4
HEARTBEAT = 5
ORCHID = 6
CONTROLLER_CHECK = 7


class EventQueue:
    """A min-heap of ``(time, kind, sequence, payload)``; no wall clock anywhere."""

    __slots__ = ("_sequence", "heap")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int, Any]] = []
        """The heap itself: the simulation's loop pops it with ``heapq.heappop`` directly
        (one call per event instead of two, and no repacked tuple)."""
        self._sequence = 0

    def push(self, time: float, kind: int, payload: Any = None) -> None:
        heapq.heappush(self.heap, (time, kind, self._sequence, payload))
        self._sequence += 1

    def pop(self) -> tuple[float, int, Any]:
        time, kind, _, payload = heapq.heappop(self.heap)
        return time, kind, payload

    def peek_time(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def __len__(self) -> int:
        return len(self.heap)
