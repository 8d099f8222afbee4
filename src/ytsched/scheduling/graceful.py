"""Graceful preemption: operations in ``preemption_mode = graceful`` shrink by themselves.

Follows ``TSchedulingPolicy::PreemptAllocationsGracefully`` in
``yt/yt/server/scheduler/strategy/policy/scheduling_policy_detail.cpp``.  At the start of every
heartbeat, each allocation on the node of a graceful operation that is not being preempted
already and whose status is *preemptible* (it lies above ``fair_share x
preemption_satisfaction_threshold`` in its operation's start order) is asked to interrupt with
the operation's ``allocation_graceful_preemption_timeout`` — whether or not anyone is waiting
for the resources.  The operation therefore converges to its fair share on its own.

Unlike starvation-driven preemption, the allocation keeps its usage until its job ends (the
YTsaurus graceful pass only marks the allocation), so the operation does not immediately look
below its fair share and grow again.  Graceful operations are never victims of the preemptive
stages (:func:`~ytsched.scheduling.preemption.blocking_reason`) and only schedule while below
their fair share (:func:`~ytsched.scheduling.state.is_eligible`).
"""

from __future__ import annotations

from ytsched.scheduling.api import InterruptionReason
from ytsched.scheduling.context import HeartbeatContext
from ytsched.scheduling.preemptible import PreemptionStatus


def preempt_gracefully(ctx: HeartbeatContext) -> None:
    if not ctx.tree.has_graceful_operations:
        return
    operations = ctx.tree.operations
    for allocation in list(ctx.node.allocations.values()):
        if allocation.preemption is not None or allocation.tree != ctx.tree.name:
            continue
        op = operations.get(allocation.operation_id)
        if op is None or not op.graceful:
            continue
        status = op.record.allocations.status(allocation)
        if status is not PreemptionStatus.PREEMPTIBLE:
            continue
        ctx.preempt(
            allocation,
            op,
            InterruptionReason.GRACEFUL_PREEMPTION,
            stage="graceful",
            status=status.label,
            timeout=op.graceful_preemption_timeout,
            explanation=(
                f"operation {op.operation.id} runs in preemption_mode graceful and this"
                " allocation lies above its fair share"
            ),
            release_usage=False,
        )
