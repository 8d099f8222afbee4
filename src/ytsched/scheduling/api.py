"""What a node heartbeat carries in and what the scheduler answers.

These types are the contract between the scheduling layer (which decides) and whoever drives it:
the simulator in virtual time, and the service, which receives heartbeats from exec-node agents
over HTTP.  They follow the shape of a YTsaurus node heartbeat (``TNodeHeartbeat`` and its
response in ``yt/yt/server/scheduler/node_shard.cpp``): the node reports its resources and what
happened to its allocations; the scheduler answers which allocations to start, which to
interrupt (with a grace timeout), and which to abort.

All times are seconds on the caller's clock (virtual or wall), passed in explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ytsched.resources import Vector


class JobOutcome(str, Enum):
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


class InterruptionReason(str, Enum):
    """Why an allocation is interrupted or aborted (YTsaurus preemption reasons)."""

    PREEMPTION = "preemption"
    """A starving operation needs the resources (regular, starvation-driven preemption)."""
    AGGRESSIVE_PREEMPTION = "aggressive_preemption"
    GRACEFUL_PREEMPTION = "graceful_preemption"
    """The operation runs in ``preemption_mode = graceful`` and is above its fair share."""
    RESOURCE_LIMITS_VIOLATED = "resource_limits_violated"
    RESOURCE_OVERCOMMIT = "resource_overcommit"
    """The node's usage exceeds its limits."""
    INTERRUPTION_TIMEOUT = "interruption_timeout"
    """An interrupted allocation did not finish within its timeout."""
    NODE_CHANGED_TREE = "node_changed_tree"
    OPERATION_FINISHED = "operation_finished"


@dataclass(frozen=True, slots=True)
class FinishedJob:
    """A job that ended on the node since its previous heartbeat."""

    operation_id: str
    job_id: str
    outcome: JobOutcome
    error: str | None = None
    interrupted: bool = False
    """The job ended because it was asked to interrupt (it finished its work early)."""


_set_finished_operation_id = FinishedJob.__dict__["operation_id"].__set__
_set_finished_job_id = FinishedJob.__dict__["job_id"].__set__
_set_outcome = FinishedJob.__dict__["outcome"].__set__
_set_error = FinishedJob.__dict__["error"].__set__
_set_interrupted = FinishedJob.__dict__["interrupted"].__set__


def finished_job(
    operation_id: str, job_id: str, outcome: JobOutcome, error: str | None, interrupted: bool
) -> FinishedJob:
    """``FinishedJob(operation_id, job_id, outcome, error, interrupted)`` through the slots'
    descriptors, for the simulator, which builds one per job that ends (see
    :func:`start_job`: the same object, without ``object.__setattr__`` per field)."""
    report: FinishedJob = _new_object(FinishedJob)
    _set_finished_operation_id(report, operation_id)
    _set_finished_job_id(report, job_id)
    _set_outcome(report, outcome)
    _set_error(report, error)
    _set_interrupted(report, interrupted)
    return report


@dataclass(frozen=True, slots=True)
class NodeHeartbeat:
    """One heartbeat of an exec node."""

    address: str
    now: float
    resource_limits: Vector
    """What the node offers (user_slots, cpu, gpu, memory, network)."""
    tags: frozenset[str] = frozenset()
    running_job_ids: tuple[str, ...] = ()
    """Jobs still running on the node (anything the scheduler thinks runs there but is not
    listed is treated as lost and aborted)."""
    finished_jobs: tuple[FinishedJob, ...] = ()


@dataclass(frozen=True, slots=True)
class StartJob:
    """Start one job of an operation on the node."""

    operation_id: str
    job_id: str
    task: str
    resources: Vector
    command: str | None = None
    interruption_signal: str | None = None
    environment: dict[str, str] = field(default_factory=dict)


_new_object = object.__new__
_set_operation_id = StartJob.__dict__["operation_id"].__set__
_set_job_id = StartJob.__dict__["job_id"].__set__
_set_task = StartJob.__dict__["task"].__set__
_set_resources = StartJob.__dict__["resources"].__set__
_set_command = StartJob.__dict__["command"].__set__
_set_interruption_signal = StartJob.__dict__["interruption_signal"].__set__
_set_environment = StartJob.__dict__["environment"].__set__


def start_job(
    operation_id: str,
    job_id: str,
    task: str,
    resources: Vector,
    command: str | None,
    interruption_signal: str | None,
) -> StartJob:
    """``StartJob(operation_id, job_id, task, resources, command, interruption_signal)``
    for the heartbeat path, which builds one per started job: the frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__`` (a slot wrapper call with its
    argument tuple); this sets the same slots through their descriptors, about half the cost.
    The result is an equal object of the same class (a fresh empty ``environment``)."""
    message: StartJob = _new_object(StartJob)
    _set_operation_id(message, operation_id)
    _set_job_id(message, job_id)
    _set_task(message, task)
    _set_resources(message, resources)
    _set_command(message, command)
    _set_interruption_signal(message, interruption_signal)
    _set_environment(message, {})
    return message


@dataclass(frozen=True, slots=True)
class InterruptJob:
    """Ask a job to finish early: deliver its interruption signal, abort after the timeout."""

    operation_id: str
    job_id: str
    reason: InterruptionReason
    timeout: float
    """Seconds the job has to finish before the scheduler aborts it."""
    signal: str | None = None
    preempted_for_operation: str | None = None
    explanation: str = ""
    """Human-readable: who was starving, at which tree level the deficit was found."""
    preempted_for_job: str | None = None
    """The job started with the resources this preemption frees (``preempted_for``)."""
    starving_element: str | None = None
    """The pool or operation whose starvation made the preemptor eligible: the tree level
    where the deficit was found."""


@dataclass(frozen=True, slots=True)
class AbortJob:
    """Kill a job now."""

    operation_id: str
    job_id: str
    reason: InterruptionReason
    explanation: str = ""
    preempted_for_operation: str | None = None
    """For a preempted job that could not be interrupted: the operation it made room for."""


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    start: tuple[StartJob, ...] = ()
    interrupt: tuple[InterruptJob, ...] = ()
    abort: tuple[AbortJob, ...] = ()


_set_start = HeartbeatResponse.__dict__["start"].__set__
_set_interrupt = HeartbeatResponse.__dict__["interrupt"].__set__
_set_abort = HeartbeatResponse.__dict__["abort"].__set__


def heartbeat_response(
    start: tuple[StartJob, ...], interrupt: tuple[InterruptJob, ...], abort: tuple[AbortJob, ...]
) -> HeartbeatResponse:
    """``HeartbeatResponse(start, interrupt, abort)`` through the slots' descriptors, for the
    heartbeat path (see :func:`start_job`: the same object, about half the cost)."""
    response: HeartbeatResponse = _new_object(HeartbeatResponse)
    _set_start(response, start)
    _set_interrupt(response, interrupt)
    _set_abort(response, abort)
    return response
