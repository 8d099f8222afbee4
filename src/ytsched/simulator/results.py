"""What a run produces: the recorder interface, counters and the result object.

Data only.  The event log and orchid snapshots stream to a :class:`Recorder` while the run goes
(files in the CLI, a list in tests, nowhere in benchmarks); everything else is collected in the
:class:`SimulationResult` that :func:`~ytsched.simulator.engine.simulate` returns.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from ytsched.pooltree import PoolTrees
from ytsched.scheduling import Scheduler
from ytsched.simulator.scenario import Scenario
from ytsched.simulator.timeseries import Sampler
from ytsched.simulator.workload import OperationRecord


class Recorder(Protocol):
    """Where the event log and the orchid snapshots go (files, a list, nowhere)."""

    def event(self, record: dict[str, Any]) -> None: ...

    def orchid(self, record: dict[str, Any]) -> None: ...


class NullRecorder:
    """Keeps nothing (benchmarks)."""

    def event(self, record: dict[str, Any]) -> None:
        return None

    def orchid(self, record: dict[str, Any]) -> None:
        return None


@dataclass(slots=True)
class ListRecorder:
    """Keeps everything in memory (tests, small runs)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    orchids: list[dict[str, Any]] = field(default_factory=list)

    def event(self, record: dict[str, Any]) -> None:
        self.events.append(record)

    def orchid(self, record: dict[str, Any]) -> None:
        self.orchids.append(record)


@dataclass(slots=True)
class Counters:
    heartbeats: int = 0
    fair_share_updates: int = 0
    jobs_started: int = 0
    jobs_completed: int = 0
    jobs_completed_after_interruption: int = 0
    jobs_aborted: int = 0
    interruptions: Counter[str] = field(default_factory=Counter)
    aborts: Counter[str] = field(default_factory=Counter)
    aborted_after_interruption_in_time: int = 0
    """Jobs aborted although they had finished their interruption within the timeout: the
    simulated nodes make this impossible unless the scheduler aborts such a job itself."""
    actions_applied: int = 0
    actions_failed: int = 0
    used: list[float] = field(default_factory=lambda: [0.0] * 5)
    """Resource x seconds used by jobs."""
    capacity: list[float] = field(default_factory=lambda: [0.0] * 5)
    """Resource x seconds offered by online nodes."""


@dataclass(slots=True)
class SimulationResult:
    scenario: Scenario
    seed: int
    end_time: float
    operations: list[OperationRecord]
    sampler: Sampler
    counters: Counters
    trees: PoolTrees
    scheduler: Scheduler
