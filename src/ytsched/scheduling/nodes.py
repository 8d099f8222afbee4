"""Exec nodes and their allocations as the scheduler accounts for them.

An *allocation* is a resource reservation on a node running one job (YTsaurus's
``TAllocation``, ``yt/yt/server/scheduler/common/allocation.h``).  Its ``usage`` is what the
scheduler counts: the job's resources while it runs normally, zero from the moment a
starvation-driven preemption picks it (``TScheduleAllocationsContext::PreemptAllocation`` in
``strategy/policy/scheduling_policy_detail.cpp`` zeroes it on the node and in the operation's
accounting at once, so the preemptor's new allocation fits).  A gracefully preempted allocation
keeps its usage until its job ends, as in YTsaurus, where the graceful pass only marks it.

A node's usage is the sum of its allocations' usage; its free resources are limits minus usage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ytsched.pooltree.operations import EndWatch, Job, JobState
from ytsched.resources import ZERO, Vector
from ytsched.scheduling.api import InterruptionReason


@dataclass(slots=True)
class Preemption:
    """Why and how an allocation was preempted (kept for ``explain_operation``)."""

    reason: InterruptionReason
    time: float
    timeout: float
    deadline: float
    """When the scheduler aborts the job if it has not ended."""
    stage: str
    """Scheduling stage that decided: ``graceful``, ``preemptive_normal``, ..."""
    status: str
    """Preemption status of the allocation when it was picked."""
    preempted_for_operation: str | None = None
    preempted_for_job: str | None = None
    starving_element: str | None = None
    """The pool or operation whose starvation gave the preemptor its priority: the tree level
    where the deficit was found."""
    explanation: str = ""
    usage_released: bool = True

    def to_dict(self) -> dict[str, object]:
        return {
            "reason": self.reason.value,
            "time": self.time,
            "timeout": self.timeout,
            "deadline": self.deadline,
            "stage": self.stage,
            "preemption_status": self.status,
            "preempted_for_operation": self.preempted_for_operation,
            "preempted_for_job": self.preempted_for_job,
            "starving_element": self.starving_element,
            "usage_released": self.usage_released,
            "explanation": self.explanation,
        }


@dataclass(eq=False, slots=True)
class Allocation:
    """One allocation (one job) on a node."""

    id: str
    """The job id (one job per allocation)."""
    operation_id: str
    tree: str
    node: str
    task: str
    resources: Vector
    usage: Vector
    start_time: float
    sequence: int
    """Global start order (tie-breaks)."""
    job: Job
    preemptible_progress_start_time: float | None = None
    list_index: int = -1
    """Position in the operation's preemptible list."""
    preemption: Preemption | None = None

    @property
    def preempted(self) -> bool:
        return self.preemption is not None


@dataclass(eq=False, slots=True)
class NodeState:
    """A node: what it offers, what runs there, and its scheduling bookkeeping."""

    address: str
    resource_limits: Vector
    tags: frozenset[str]
    usage: Vector = ZERO
    allocations: dict[str, Allocation] = field(default_factory=dict)
    interrupted: dict[str, Allocation] = field(default_factory=dict)
    """Preempted allocations whose jobs still run, waiting for their deadline."""
    last_heartbeat_time: float | None = None
    last_preemptive_scheduling_time: float | None = None
    resources_overcommit_since: float | None = None
    pending_aborts: list[tuple[str, str, InterruptionReason, str]] = field(default_factory=list)
    """Jobs to abort on the next heartbeat: (operation, job, reason, explanation)."""
    started_allocation_count: int = 0
    preempted_allocation_count: int = 0
    ended_watch: EndWatch = field(default_factory=EndWatch)
    """The jobs of :attr:`allocations` carry it (:meth:`watch`): ``ended_watch.ended`` is how
    many of them ended (elsewhere: a heartbeat drops the allocations of the jobs it ends).
    The ledger's nodes share a parent watch (``Ledger.ended_watch``): the sum over nodes."""

    def watch(self, allocation: Allocation) -> None:
        """``allocation`` joined :attr:`allocations`: count its job's end from now on (and
        now, if it already ended)."""
        job = allocation.job
        job.watch = self.ended_watch
        if job.state is not JobState.RUNNING:
            self.ended_watch.add(1)

    def unwatch(self, allocation: Allocation) -> None:
        """``allocation`` left :attr:`allocations`: its job no longer counts here."""
        job = allocation.job
        if job.watch is self.ended_watch:
            job.watch = None
            if job.state is not JobState.RUNNING:
                self.ended_watch.add(-1)

    @property
    def any_job_ended(self) -> bool:
        """Does some allocation here belong to a job that is no longer running?"""
        return self.ended_watch.ended != 0

    @property
    def free_resources(self) -> Vector:
        limits = self.resource_limits
        usage = self.usage
        return (
            limits[0] - usage[0],
            limits[1] - usage[1],
            limits[2] - usage[2],
            limits[3] - usage[3],
            limits[4] - usage[4],
        )
