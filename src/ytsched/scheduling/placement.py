"""Placing allocations: one attempt for an operation, the scheduling loop, the regular stage.

Follows ``TScheduleAllocationsContext::ScheduleAllocation`` and ``TryStartScheduleAllocation``
and ``TSchedulingPolicy::RunRegularSchedulingStage`` in
``yt/yt/server/scheduler/strategy/policy/scheduling_policy_detail.cpp``.  An attempt for the
operation the descent picked checks, in YTsaurus's order:

0. the operation is not saturated in the tree, which is tentative for it: the controller
   declined one of its jobs there less than ``tentative_tree_saturation_deactivation_period``
   ago — else ``saturated_in_tentative_tree`` (``TScheduleAllocationsContext::
   CheckForDeactivation``);
1. some waiting job fits the node's free resources (with the discount) — else
   ``min_needed_resources_unsatisfied``;
2. the smallest waiting job fits what the operation and every ancestor with specified
   ``resource_limits`` still have (limits minus live usage) — else ``resource_limits_exceeded``;
3. it fits the operation's demand at the last update minus its live usage — else
   ``no_available_demand``;
4. the "controller" (here: the operation's tasks in spec order) starts the first waiting job
   that fits both — else ``schedule_allocation_failed``; also when the operation was aborted or
   completed since the last update (the tree state still lists it until the next one; its
   controller refuses, as YTsaurus's does for an operation that is no longer running).
   When it started nothing and declined a fitting job only because the tree is tentative for
   the operation and its sample is running (``TentativeTreeDeclined``), the operation becomes
   saturated in the tree (step 0).

A failed attempt deactivates the operation for the rest of the stage; the loop goes on while
the node keeps ``min_spare_allocation_resources_on_node`` free.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from ytsched.pooltree.operations import OperationState
from ytsched.resources import INFINITE_RESOURCES, Vector
from ytsched.scheduling.context import HeartbeatContext
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.satisfaction import fits
from ytsched.scheduling.selector import Selector, SelectorNode, vadd, vsub
from ytsched.scheduling.state import ScheduledOperation


class DeactivationReason(str, Enum):
    """``EDeactivationReason`` values this scheduler produces (orchid ``deactivation_reasons``)."""

    MIN_NEEDED_RESOURCES_UNSATISFIED = "min_needed_resources_unsatisfied"
    RESOURCE_LIMITS_EXCEEDED = "resource_limits_exceeded"
    NO_AVAILABLE_DEMAND = "no_available_demand"
    SCHEDULE_ALLOCATION_FAILED = "schedule_allocation_failed"
    UNMATCHED_SCHEDULING_TAG = "unmatched_scheduling_tag"
    NOT_ELIGIBLE_FOR_PREEMPTIVE_SCHEDULING = "is_not_eligible_for_preemptive_scheduling"
    NOT_ELIGIBLE_FOR_AGGRESSIVELY_PREEMPTIVE_SCHEDULING = (
        "is_not_eligible_for_aggressively_preemptive_scheduling"
    )
    SATURATED_IN_TENTATIVE_TREE = "saturated_in_tentative_tree"


_RUNNING = OperationState.RUNNING
"""A module constant: an Enum class attribute costs ``EnumType.__getattr__``'s slot."""
# The reasons an attempt returns, likewise (about one failed attempt per start).
_SATURATED = DeactivationReason.SATURATED_IN_TENTATIVE_TREE
_MIN_NEEDED = DeactivationReason.MIN_NEEDED_RESOURCES_UNSATISFIED
_LIMITS_EXCEEDED = DeactivationReason.RESOURCE_LIMITS_EXCEEDED
_NO_DEMAND = DeactivationReason.NO_AVAILABLE_DEMAND
_FAILED = DeactivationReason.SCHEDULE_ALLOCATION_FAILED


def _saturated(ctx: HeartbeatContext, op: ScheduledOperation) -> bool:
    """Step 0: the operation is tentative in this tree and saturated there."""
    operation = op.operation
    tree = ctx.tree.name
    return tree in operation.tentative_trees and operation.is_saturated_in_tentative_tree(
        tree, ctx.now, ctx.tree.config.tentative_tree_saturation_deactivation_period / 1000.0
    )


def hierarchical_available(op: ScheduledOperation) -> Vector:
    """``GetHierarchicalAvailableResources``: the least room left under any specified limit."""
    available = INFINITE_RESOURCES
    for element in op.limited:
        limits = element.specified_limits
        assert limits is not None
        usage = element.usage
        available = (
            min(available[0], limits[0] - usage[0]),
            min(available[1], limits[1] - usage[1]),
            min(available[2], limits[2] - usage[2]),
            min(available[3], limits[3] - usage[3]),
            min(available[4], limits[4] - usage[4]),
        )
    return available


def attempt(
    ctx: HeartbeatContext, op: ScheduledOperation, free: Vector
) -> Allocation | DeactivationReason:
    """Try to start one allocation of ``op`` on the context's node (``free``: the node's free
    resources with the discount)."""
    if op.operation.tentative_trees and _saturated(ctx, op):
        return _SATURATED
    if len(op.tasks) == 1:
        return _attempt_single(ctx, op, free)
    waiting = [task for task in op.tasks if task.waiting]
    smallest: Vector | None = None
    fitting_node = False
    for task in waiting:
        r = task.resources
        if fits(r, free):
            fitting_node = True
        smallest = (
            r
            if smallest is None
            else (
                min(smallest[0], r[0]),
                min(smallest[1], r[1]),
                min(smallest[2], r[2]),
                min(smallest[3], r[3]),
                min(smallest[4], r[4]),
            )
        )
    if not fitting_node or smallest is None:
        return _MIN_NEEDED
    available = INFINITE_RESOURCES
    if op.limited:
        available = hierarchical_available(op)
        if not fits(smallest, available):
            return _LIMITS_EXCEEDED
    if not fits(smallest, vsub(op.demand, op.element.usage)):
        return _NO_DEMAND
    if op.operation.state is not _RUNNING:
        return _FAILED
    tentative = bool(op.operation.tentative_trees)
    declined = False
    for task in waiting:
        fitting = fits(task.resources, free) and (not op.limited or fits(task.resources, available))
        if tentative and not op.operation.can_start_in(task.name, ctx.tree.name):
            declined = declined or fitting
            continue
        if fitting:
            return ctx.start(op, task)
    if declined:
        op.operation.on_tentative_tree_declined(ctx.tree.name, ctx.now)
    return _FAILED


def _attempt_single(
    ctx: HeartbeatContext, op: ScheduledOperation, free: Vector
) -> Allocation | DeactivationReason:
    """:func:`attempt` for the common one-task operation, with the same checks in order."""
    task = op.tasks[0]
    if not task.waiting:
        return _FAILED
    need = task.resources
    if not fits(need, free):
        return _MIN_NEEDED
    if op.limited and not fits(need, hierarchical_available(op)):
        return _LIMITS_EXCEEDED
    # ``demand - usage + eps``: the difference first, as the fit test then adds the slack.
    if not fits(need, vsub(op.demand, op.element.usage)):
        return _NO_DEMAND
    if op.operation.state is not _RUNNING:
        return _FAILED
    if op.operation.tentative_trees and not op.operation.can_start_in(task.name, ctx.tree.name):
        # the tentative tree's sample is running (or the tree is banned): saturated
        op.operation.on_tentative_tree_declined(ctx.tree.name, ctx.now)
        return _FAILED
    return ctx.start(op, task)


def schedule(
    ctx: HeartbeatContext,
    selector: Selector,
    deactivated: list[SelectorNode],
    one_allocation: bool,
    check: Callable[[ScheduledOperation], DeactivationReason | None] | None = None,
) -> Allocation | None:
    """The scheduling loop of a stage; returns the last allocation started.

    Operations that fail (or that ``check`` refuses) are deactivated in ``selector`` and
    listed in ``deactivated`` so the caller can undo that after the stage.
    ``one_allocation`` may be passed by position: the regular stage does, on every heartbeat
    that schedules (a call with keywords takes Python 3.11's slower generic call path).
    """
    started: Allocation | None = None
    node = ctx.node
    # Constant during the loop (the node's limits are set at registration, the discount
    # before a preemptive stage's loop): ``ctx.free_resources()`` and ``ctx.has_spare`` are
    # evaluated below with these, without the method calls (the same native sums and test).
    limits = node.resource_limits
    discount = ctx.discount
    min_spare = ctx.min_spare
    max_started = ctx.max_started
    core = selector.core
    nodes = selector.nodes
    while True:
        # Free resources and the spare test: only a start changes the node's usage or the
        # start count, so a failed attempt goes straight back to the descent below.
        if max_started is not None and ctx.started >= max_started:
            break
        free = vadd(vsub(limits, node.usage), discount)
        if not fits(min_spare, free):
            break
        while True:
            # The descent, one native call; the leaf reached is the element's node in this
            # selector (what ``selector.node_for(element)`` returns).
            leaf = core.best_leaf()
            if leaf < 0:
                return started
            place = nodes[leaf]
            op = place.element.operation
            assert op is not None
            refusal = check(op) if check is not None else None
            if refusal is None:
                if len(op.tasks) == 1 and not op.operation.tentative_trees:
                    result = _attempt_single(ctx, op, free)
                else:
                    result = attempt(ctx, op, free)
            else:
                result = refusal
            if result.__class__ is not DeactivationReason:
                break
            if refusal is None:
                reasons = op.record.deactivation_reasons
                # ``_value_`` is what the ``value`` property returns, read without the
                # property.
                value = result._value_  # type: ignore[union-attr]
                reasons[value] = reasons.get(value, 0) + 1
            core.deactivate(leaf)
            deactivated.append(place)
        started = result  # type: ignore[assignment]
        if one_allocation:
            break
    return started


def restore(selector: Selector, deactivated: list[SelectorNode]) -> None:
    """Undo stage-local deactivations (operations only if still eligible)."""
    activate = selector.core.activate
    for node in reversed(deactivated):
        op = node.element.operation
        if op is None or op.eligible:
            activate(node.id)
    deactivated.clear()


def run_regular_stage(ctx: HeartbeatContext) -> None:
    """``RegularMediumPriority``: fill the node with the persistent selector.

    Pools and operations whose scheduling tag filter does not match the node are deactivated
    for the stage first, as the preschedule does.
    """
    selector = ctx.tree.selector
    deactivated: list[SelectorNode] = []
    try:
        for element in ctx.tree.tag_filtered:
            if ctx.matches(element):
                continue
            node = element.node
            if node is not None and node.self_active:
                selector.deactivate(node)
                deactivated.append(node)
        schedule(ctx, selector, deactivated, False)  # (``one_allocation`` by position)
    finally:
        restore(selector, deactivated)
