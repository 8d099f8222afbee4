"""Tentative pool trees: run some of an operation's jobs in extra trees on probation.

An operation's ``tentative_pool_trees`` (plus, with ``use_default_tentative_pool_trees``, the
scheduler's ``default_tentative_pool_trees``) are trees it also runs in, but tentatively: per
task, only a sample of jobs may run there until enough of them completed, and a tree whose jobs
turn out much slower than the jobs in the operation's regular trees is *banned* for it (the
operation leaves that tree; its jobs there are aborted).  Operation types in the scheduler's
``operations_without_tentative_pool_trees`` (sort, map_reduce, remote_copy) get no tentative
trees.

The rules are those of ``TTentativeTreeEligibility``
(``yt/yt/server/controller_agent/controllers/tentative_tree_eligibility.cpp``) with the
options of ``TTentativeTreeEligibilityConfig`` (``sample_job_count`` 10,
``max_tentative_job_duration_ratio`` 10, ``min_job_duration`` 30 s):

* a job may start in a tentative tree unless the tree is banned or, while fewer than
  ``sample_job_count`` jobs completed there, as many jobs as the remaining sample already run;
* after every completed job, each unbanned tentative tree is *slow* when at least
  ``sample_job_count`` jobs completed in the regular trees with a non-zero average duration,
  the tree's average job duration is at least ``min_job_duration``, and it is at least
  ``max_tentative_job_duration_ratio`` times the regular average; a slow tree is banned.  The
  tree's average counts a still-running last job as YTsaurus does (see :meth:`average`).

Durations are measured in the scheduler's clock (``now``), never a wall clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ytsched.config.operation import TentativeTreeEligibilityConfig


@dataclass(slots=True)
class _Durations:
    total: float = 0.0
    count: int = 0

    def add(self, duration: float) -> None:
        self.total += duration
        self.count += 1

    @property
    def average(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass(slots=True)
class TentativeTreeEligibility:
    """The eligibility state of one task of one operation across its tentative trees."""

    config: TentativeTreeEligibilityConfig
    regular: _Durations = field(default_factory=_Durations)
    durations: dict[str, _Durations] = field(default_factory=dict)
    started: dict[str, int] = field(default_factory=dict)
    finished: dict[str, int] = field(default_factory=dict)
    completed: dict[str, int] = field(default_factory=dict)
    last_start: dict[str, float] = field(default_factory=dict)
    banned: set[str] = field(default_factory=set)

    def can_start(self, tree: str, tentative: bool) -> bool:
        if not tentative:
            return True
        if tree in self.banned:
            return False
        running = self.started.get(tree, 0) - self.finished.get(tree, 0)
        remaining = self.config.sample_job_count - self.completed.get(tree, 0)
        return not (remaining > 0 and running >= remaining)

    def on_started(self, tree: str, tentative: bool, now: float) -> None:
        if tentative:
            self.started[tree] = self.started.get(tree, 0) + 1
            self.last_start[tree] = now

    def on_finished(
        self, tree: str, tentative: bool, completed: bool, duration: float, now: float
    ) -> list[str]:
        """Account a finished job; returns the trees banned because of it."""
        if tentative:
            self.finished[tree] = self.finished.get(tree, 0) + 1
            if completed:
                self.completed[tree] = self.completed.get(tree, 0) + 1
        if not completed:
            return []
        if tentative:
            self.durations.setdefault(tree, _Durations()).add(duration)
        else:
            self.regular.add(duration)
        newly: list[str] = []
        for name in self.started:
            if name not in self.banned and self.is_slow(name, now):
                self.banned.add(name)
                newly.append(name)
        return newly

    def average(self, tree: str, now: float) -> float:
        """The tree's average job duration, counting the last started job as YTsaurus does:
        while fewer than a sample completed, as one more job lasting since its start; after
        that, weighted as if only the sample ran, when a job is still running."""
        summary = self.durations.get(tree, _Durations())
        total, count = summary.total, summary.count
        sample = self.config.sample_job_count
        last = now - self.last_start.get(tree, now)
        if count < sample:
            return (total + last) / (count + 1)
        if self.completed.get(tree, 0) == count:
            return total / count
        return ((total / count) * sample + last) / (sample + 1)

    def is_slow(self, tree: str, now: float) -> bool:
        regular = self.regular.average
        if self.regular.count < self.config.sample_job_count or not regular:
            return False
        tentative = self.average(tree, now)
        if tentative < self.config.min_job_duration / 1000.0:
            return False
        return tentative / regular >= self.config.max_tentative_job_duration_ratio
