"""One heartbeat in progress: the node, its free resources, and the answer being built.

The counterpart of YTsaurus's ``TSchedulingHeartbeatContextBase``
(``yt/yt/server/scheduler/strategy/scheduling_heartbeat_context_detail.cpp``): node usage and
limits, the preemption *discount* (resources of preemption candidates that count as free
during a preemptive stage), the "can start more allocations" test with
``min_spare_allocation_resources_on_node``, and the lists of started and preempted allocations.
Preempting and aborting are here too, because they write to the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ytsched.pooltree.operations import JobState, Task
from ytsched.pooltree.trees import Node
from ytsched.resources import ZERO, Vector
from ytsched.scheduling.api import (
    AbortJob,
    InterruptionReason,
    InterruptJob,
    StartJob,
    start_job,
)
from ytsched.scheduling.ledger import Ledger
from ytsched.scheduling.nodes import Allocation, NodeState, Preemption
from ytsched.scheduling.satisfaction import fits
from ytsched.scheduling.selector import vadd, vsub
from ytsched.scheduling.state import ElementState, ScheduledOperation, TreeState


class Outbox:
    """The answer being built.

    A plain slotted class rather than a dataclass: one is built per heartbeat, and the
    dataclass ``__init__`` calls a ``default_factory`` per list (and tests each argument
    against its sentinel) where list literals build the same empty lists directly."""

    __slots__ = ("abort", "interrupt", "start")

    def __init__(self) -> None:
        self.start: list[StartJob] = []
        self.interrupt: list[InterruptJob] = []
        self.abort: list[AbortJob] = []

    def __repr__(self) -> str:
        return f"Outbox(start={self.start!r}, interrupt={self.interrupt!r}, abort={self.abort!r})"


@dataclass(eq=False, slots=True)
class HeartbeatContext:
    """A heartbeat of one node of one tree."""

    ledger: Ledger
    tree: TreeState
    node: NodeState
    now: float
    outbox: Outbox
    min_spare: Vector
    max_started: int | None
    pool_node: Node
    """The node in the pool trees (its tags: :meth:`matches`)."""
    discount: Vector = ZERO
    started: int = 0
    started_by_preemption: Allocation | None = None
    _tag_matches: dict[str, bool] | None = None
    """Per element with a tag filter, whether it accepts the node (built on first use: most
    heartbeats meet no tag filter, and the node's tag set is a new frozenset each time)."""
    _node_tags: frozenset[str] | None = None

    # --- node resources --------------------------------------------------------------------

    def free_resources(self) -> Vector:
        """Node limits minus usage plus the discount (``GetNodeFreeResourcesWithDiscount``)."""
        node = self.node
        return vadd(vsub(node.resource_limits, node.usage), self.discount)

    def can_continue(self) -> bool:
        """``CanStartMoreAllocations``: the node still has ``min_spare`` free (with the
        discount) and the per-heartbeat start limit is not reached."""
        return self.has_spare(self.free_resources())

    def has_spare(self, free: Vector) -> bool:
        if self.max_started is not None and self.started >= self.max_started:
            return False
        return fits(self.min_spare, free)

    def node_fits(self) -> bool:
        """Usage within limits (``Dominates(ResourceLimits, ResourceUsage)``)."""
        node = self.node
        return fits(node.usage, node.resource_limits)

    def matches(self, element: ElementState) -> bool:
        """Does the element's scheduling tag filter accept this node?"""
        tag_filter = element.tag_filter
        if tag_filter is None:
            return True
        cache = self._tag_matches
        if cache is None:
            cache = self._tag_matches = {}
            self._node_tags = self.pool_node.all_tags
        found = cache.get(element.name)
        if found is None:
            assert self._node_tags is not None
            found = tag_filter.matches(self._node_tags)
            cache[element.name] = found
        return found

    # --- actions ---------------------------------------------------------------------------

    def start(self, op: ScheduledOperation, task: Task) -> Allocation:
        allocation = self.ledger.start(self.tree, op, self.node, task, self.now)
        self.started += 1
        spec = task.spec
        # Positional: (operation_id, job_id, task, resources, command, interruption_signal).
        self.outbox.start.append(
            start_job(
                allocation.operation_id,
                allocation.id,
                task.name,
                allocation.resources,
                spec.command or None,
                spec.interruption_signal,
            )
        )
        return allocation

    def preempt(
        self,
        allocation: Allocation,
        op: ScheduledOperation,
        reason: InterruptionReason,
        *,
        stage: str,
        status: str,
        timeout: float,
        explanation: str,
        release_usage: bool = True,
        preemptor: Allocation | None = None,
        starving_element: ElementState | None = None,
    ) -> None:
        """Ask the allocation's job to interrupt; abort it at once when the timeout is zero or
        when the job cannot be interrupted (no ``interruption_signal``) and the preemption is
        not graceful."""
        if release_usage:
            self.ledger.release_usage(allocation)
        preemption = Preemption(
            reason=reason,
            time=self.now,
            timeout=timeout,
            deadline=self.now + timeout,
            stage=stage,
            status=status,
            preempted_for_operation=preemptor.operation_id if preemptor is not None else None,
            preempted_for_job=preemptor.id if preemptor is not None else None,
            starving_element=starving_element.name if starving_element is not None else None,
            explanation=explanation,
            usage_released=release_usage,
        )
        allocation.preemption = preemption
        self.node.preempted_allocation_count += 1
        entry = {"job_id": allocation.id, "node": allocation.node, **preemption.to_dict()}
        op.record.preempted.append(entry)
        op.record.preempted_allocation_count += 1
        if preemptor is not None:
            preemptor_record = self.ledger.record(allocation.tree, preemptor.operation_id)
            preemptor_record.preempted_for.append(
                {"victim_operation": allocation.operation_id, **entry}
            )
        if timeout <= 0:
            self.abort(allocation, reason, explanation)
            return
        signal = op.operation.tasks[allocation.task].spec.interruption_signal
        if (
            signal is None
            and op.operation.type == "vanilla"
            and reason is not InterruptionReason.GRACEFUL_PREEMPTION
        ):
            # A vanilla job without an interruption signal cannot be interrupted (the jobs of
            # other operation types can: their controller interrupts them at a row boundary).
            # It is aborted at once, with the preemption as its
            # abort reason (``preemption`` for regular preemption): YTsaurus aborts allocations
            # whose jobs do not support interruption instead of waiting for
            # ``allocation_preemption_timeout`` and reporting ``interruption_timeout`` (see
            # ``docs/scheduling.md``).  Graceful preemption still gives the graceful timeout.
            self.abort(
                allocation, reason, explanation, preempted_for=preemption.preempted_for_operation
            )
            return
        self.node.interrupted[allocation.id] = allocation
        self.outbox.interrupt.append(
            InterruptJob(
                operation_id=allocation.operation_id,
                job_id=allocation.id,
                reason=reason,
                timeout=timeout,
                signal=signal,
                preempted_for_operation=preemption.preempted_for_operation,
                explanation=explanation,
                preempted_for_job=preemption.preempted_for_job,
                starving_element=preemption.starving_element,
            )
        )

    def abort(
        self,
        allocation: Allocation,
        reason: InterruptionReason,
        explanation: str,
        *,
        preempted_for: str | None = None,
    ) -> None:
        """Abort the allocation's job now; it returns to pending."""
        abort_job(self.ledger, allocation, f"{reason.value}: {explanation}", self.now)
        self.outbox.abort.append(
            AbortJob(
                operation_id=allocation.operation_id,
                job_id=allocation.id,
                reason=reason,
                explanation=explanation,
                preempted_for_operation=preempted_for,
            )
        )


def abort_job(ledger: Ledger, allocation: Allocation, reason: str, now: float) -> None:
    """End the allocation as aborted in the pool tree (the job waits to run again) and drop it."""
    job = allocation.job
    if job.state is JobState.RUNNING:
        operation = ledger.trees.operations.get(allocation.operation_id)
        if operation is not None and not operation.state.is_final:
            ledger.trees.abort_job(allocation.operation_id, allocation.id, now=now, reason=reason)
    ledger.remove(allocation)
