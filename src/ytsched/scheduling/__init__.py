"""Node heartbeats: placing allocations, starvation, preemption and graceful preemption.

:class:`Scheduler` is the entry point: it wraps :class:`~ytsched.pooltree.trees.PoolTrees`,
runs fair-share updates (:meth:`Scheduler.update`) and answers node heartbeats
(:meth:`Scheduler.process_heartbeat`) with the types of :mod:`ytsched.scheduling.api`.
``docs/scheduling.md`` explains the rules.
"""

from ytsched.scheduling.api import (
    AbortJob,
    FinishedJob,
    HeartbeatResponse,
    InterruptionReason,
    InterruptJob,
    JobOutcome,
    NodeHeartbeat,
    StartJob,
)
from ytsched.scheduling.preemptible import PreemptionStatus
from ytsched.scheduling.scheduler import Scheduler
from ytsched.scheduling.starvation import SchedulableStatus, StarvationStatus

__all__ = [
    "AbortJob",
    "FinishedJob",
    "HeartbeatResponse",
    "InterruptJob",
    "InterruptionReason",
    "JobOutcome",
    "NodeHeartbeat",
    "PreemptionStatus",
    "SchedulableStatus",
    "Scheduler",
    "StartJob",
    "StarvationStatus",
]
