"""The workload side of a simulation: how much work each job has, and per-operation accounting.

Job durations are drawn when an operation starts, per task and in job-index order, from a
random stream named after the seed, the operation and the task.  The draws therefore do not
depend on how the scheduler places or preempts jobs: the same scenario under two pool
configurations (a what-if study) runs exactly the same work.

A job index keeps its *remaining work*.  An attempt runs for the remaining work; an aborted
attempt loses what it did (the next attempt starts over, as a restarted YTsaurus job does); an
attempt that finishes early after an interruption signal keeps what it did (the scheduler
returns the rest to pending, like the leftover input of an interrupted job); an attempt that
completes resets the index to its full work (only tasks with ``restart_completed_jobs`` run it
again).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ytsched.simulator.scenario import OperationPlan, ScenarioTaskSpec

WORK_EPSILON = 1e-9


@dataclass(slots=True)
class TaskWork:
    spec: ScenarioTaskSpec
    base: list[float]
    remaining: list[float]
    signal_seed: str
    """Names the stream of the task's responses to interruption signals."""
    _signal_rng: random.Random | None = None

    @property
    def signal_rng(self) -> random.Random:
        """The stream of the task's responses to interruption signals, created on first use:
        most tasks are never interrupted, and seeding a generator from a string (a SHA-512
        and a 624-word state) was a visible part of every operation start.  A stream seeded
        by name draws the same values whenever it is created."""
        rng = self._signal_rng
        if rng is None:
            rng = self._signal_rng = random.Random(self.signal_seed)
        return rng


@dataclass(slots=True)
class OperationRecord:
    """What happened to one operation (a row of ``operations.csv``)."""

    id: str
    user: str
    start_time: float
    job_count: int
    tree: str | None = None
    pool: str | None = None
    state: str = "not_started"
    error: str | None = None
    first_job_time: float | None = None
    running_since: float | None = None
    finish_time: float | None = None
    started_job_count: int = 0
    completed_job_count: int = 0
    interrupted_job_count: int = 0
    """Attempts that finished early, as completed, after an interruption signal."""
    preempted_job_count: int = 0
    """Attempts interrupted or aborted by preemption (any preemption reason)."""
    aborted_job_count: int = 0
    job_seconds: float = 0.0
    lost_job_seconds: float = 0.0
    """Time of aborted attempts whose work must be done again."""
    lost_cpu_seconds: float = 0.0

    @property
    def waiting_time(self) -> float | None:
        """From the start request to the first job start."""
        if self.first_job_time is None:
            return None
        return self.first_job_time - self.start_time


@dataclass(slots=True)
class OperationWork:
    plan: OperationPlan
    tasks: dict[str, TaskWork] = field(default_factory=dict)

    def attempt_duration(self, task: str, index: int) -> float:
        return self.tasks[task].remaining[index]

    def finish_after_interruption(self, task: str) -> float | None:
        work = self.tasks[task]
        response = work.spec.finish_after_interruption
        if response is None:
            return None
        return response.sample(work.signal_rng)

    def attempt_ended(self, task: str, index: int, elapsed: float, how: str) -> None:
        """``how``: ``completed``, ``interrupted`` (finished early) or ``aborted``."""
        work = self.tasks[task]
        if how == "completed":
            work.remaining[index] = work.base[index]
        elif how == "interrupted":
            left = work.remaining[index] - elapsed
            work.remaining[index] = left if left > WORK_EPSILON else work.base[index]


def prepare(plan: OperationPlan, seed: int) -> OperationWork:
    """Draw the work of every job of the operation."""
    work = OperationWork(plan)
    for name, task in plan.spec.tasks.items():
        rng = random.Random(f"{seed}/durations/{plan.id}/{name}")
        base = task.base_durations(rng)
        work.tasks[name] = TaskWork(
            spec=task,
            base=base,
            remaining=list(base),
            signal_seed=f"{seed}/interruptions/{plan.id}/{name}",
        )
    return work
