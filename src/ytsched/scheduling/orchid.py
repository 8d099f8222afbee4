"""Orchid attributes and ``explain_operation`` for the scheduling layer.

Names follow the YTsaurus orchid (``BuildElementYson`` / ``DoBuildOperationProgress`` in
``yt/yt/server/scheduler/strategy/pool_tree.cpp`` and
``strategy/policy/pool_tree_snapshot_state.cpp``): ``scheduling_status``,
``starvation_status``, ``starving_since``, ``satisfaction_ratio``, ``local_satisfaction_ratio``,
``lowest_starving_ancestor``, ``lowest_aggressively_starving_ancestor``,
``effective_aggressive_preemption_allowed``, ``preemptible_job_count``,
``aggressively_preemptible_job_count``, ``deactivation_reasons``, ``unschedulable_reason``,
``schedulable``, and on pools ``schedulable_operation_count``.  Ours, in the same style:
``below_fair_share_since`` (the start of the current below-fair-share period),
``non_preemptible_job_count``, ``preemption_priority``, and on pools the preemptible counts of
the whole subtree.

Satisfaction ratios here are live (current usage against the last fair share), where YTsaurus
shows the values computed at the update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ytsched.resources import RESOURCE_NAMES, Vector
from ytsched.scheduling.preemption import live_priority
from ytsched.scheduling.starvation import (
    SchedulableStatus,
    StarvationStatus,
    operation_tolerance,
    scaled_timeouts,
    status_bound,
)
from ytsched.scheduling.state import ElementState, ScheduledOperation, TreeState

if TYPE_CHECKING:
    from ytsched.scheduling.scheduler import Scheduler


def _vector(vector: Vector) -> dict[str, float]:
    return {name: float(value) for name, value in zip(RESOURCE_NAMES, vector, strict=True)}


def _satisfaction(state: TreeState, element: ElementState) -> float:
    node = element.node
    if node is not None and state.selector.is_active(node):
        return node.sat
    return element.local_sat


def element_attributes(state: TreeState, element: ElementState) -> dict[str, Any]:
    starvation = element.starvation
    attributes: dict[str, Any] = {
        "scheduling_status": element.status.value,
        "starvation_status": starvation.status.value,
        "starving_since": starvation.starving_since,
        "below_fair_share_since": starvation.below_fair_share_since,
        "satisfaction_ratio": _satisfaction(state, element),
        "local_satisfaction_ratio": element.local_sat,
        "lowest_starving_ancestor": (
            element.lowest_starving.name if element.lowest_starving is not None else None
        ),
        "lowest_aggressively_starving_ancestor": (
            element.lowest_aggressively_starving.name
            if element.lowest_aggressively_starving is not None
            else None
        ),
        "effective_aggressive_preemption_allowed": element.aggressive_preemption_allowed,
        "schedulable": element.schedulable,
    }
    return attributes


def _operation_attributes(state: TreeState, op: ScheduledOperation) -> dict[str, Any]:
    attributes = element_attributes(state, op.element)
    non, aggressive, preemptible = op.record.allocations.counts()
    operation_only = state.config.scheduling_preemption_priority_scope == "operation_only"
    attributes.update(
        {
            "preemptible_job_count": preemptible,
            "aggressively_preemptible_job_count": aggressive,
            "non_preemptible_job_count": non,
            "running_allocation_count": non + aggressive + preemptible,
            "deactivation_reasons": dict(op.record.deactivation_reasons),
            "unschedulable_reason": op.unschedulable_reason,
            "preemption_priority": live_priority(op, operation_only)[0].label,
        }
    )
    return attributes


def operation_scheduling_attributes(state: TreeState, op: ScheduledOperation) -> dict[str, Any]:
    """Scheduling attributes of one operation (the orchid serves single entries with it)."""
    return _operation_attributes(state, op)


def pool_job_counts(state: TreeState) -> dict[str, list[int]]:
    """Per pool, the preemptible and aggressively preemptible jobs of its whole subtree and its
    ``schedulable_operation_count``: the operations of the subtree that were schedulable at the
    update (``SchedulableOperationCount`` of ``BuildSchedulableChildrenLists`` in
    ``pool_tree_element.cpp``: a pool counts the operations of its schedulable children)."""
    counts: dict[str, list[int]] = {}
    for op in state.operations.values():
        _, aggressive, preemptible = op.record.allocations.counts()
        schedulable = 1 if op.element.schedulable else 0
        element: ElementState | None = op.element.parent
        while element is not None:
            entry = counts.get(element.name)
            if entry is None:
                entry = counts[element.name] = [0, 0, 0]
            entry[0] += preemptible
            entry[1] += aggressive
            entry[2] += schedulable
            element = element.parent
    return counts


def pool_scheduling_attributes(
    state: TreeState, element: ElementState, counts: dict[str, list[int]]
) -> dict[str, Any]:
    """Scheduling attributes of one pool, given :func:`pool_job_counts` of its tree."""
    attributes = element_attributes(state, element)
    preemptible, aggressive, schedulable = counts.get(element.name, (0, 0, 0))
    attributes["preemptible_job_count"] = preemptible
    attributes["aggressively_preemptible_job_count"] = aggressive
    attributes["schedulable_operation_count"] = schedulable
    return attributes


def tree_attributes(
    state: TreeState,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Scheduling attributes of every pool and operation of one tree."""
    operations = {op_id: _operation_attributes(state, op) for op_id, op in state.operations.items()}
    counts = pool_job_counts(state)
    pools = {
        name: pool_scheduling_attributes(state, element, counts)
        for name, element in state.elements.items()
        if not element.is_operation
    }
    return pools, operations


def scheduler_orchid(scheduler: Scheduler) -> dict[str, Any]:
    view = scheduler.trees.orchid()
    ledger = scheduler.ledger
    for name, tree_view in view["pool_trees"].items():
        state = ledger.tree_states.get(name)
        tree_view["scheduling"] = {
            "last_update_time": state.update_time if state is not None else None,
            "starving_operation_count": (
                sum(
                    1
                    for op in state.operations.values()
                    if op.element.starvation.status is not StarvationStatus.NON_STARVING
                )
                if state is not None
                else 0
            ),
        }
        if state is None:
            continue
        pools, operations = tree_attributes(state)
        for pool_name, attributes in pools.items():
            if pool_name in tree_view["pools"]:
                tree_view["pools"][pool_name].update(attributes)
        for op_id, attributes in operations.items():
            if op_id in tree_view["operations"]:
                tree_view["operations"][op_id].update(attributes)
    for address, node_view in view["nodes"].items():
        node = ledger.nodes.get(address)
        if node is None:
            continue
        node_view.update(
            {
                "resource_usage": _vector(node.usage),
                "allocation_count": len(node.allocations),
                "interrupted_allocation_count": len(node.interrupted),
                "last_heartbeat_time": node.last_heartbeat_time,
                "last_preemptive_scheduling_time": node.last_preemptive_scheduling_time,
                "started_allocation_count": node.started_allocation_count,
                "preempted_allocation_count": node.preempted_allocation_count,
            }
        )
    return view


def _reason(code: str, message: str, **attributes: Any) -> dict[str, Any]:
    return {"code": code, "message": message, **attributes}


def _operation_explanation(
    scheduler: Scheduler, state: TreeState, op: ScheduledOperation, now: float
) -> dict[str, Any]:
    element = op.element
    view = element.view
    config = state.config
    tolerance = operation_tolerance(view, element.tolerance)
    bound = status_bound(view, tolerance)
    usage_share = view.share(element.usage)
    live_status = element.live_status()
    starvation = element.starvation
    timeout, aggressive_timeout = scaled_timeouts(
        element.timeout,
        config.fair_share_aggressive_starvation_timeout / 1000.0,
        op.pending_allocation_count,
        config.allocation_count_preemption_timeout_coefficient,
    )
    operation_only = config.scheduling_preemption_priority_scope == "operation_only"
    priority, starving_element = live_priority(op, operation_only)
    reasons: list[dict[str, Any]] = []
    if op.unschedulable_reason is not None:
        reasons.append(
            _reason(
                op.unschedulable_reason,
                f"the operation was not schedulable at the update at {state.update_time:g}",
            )
        )
    if live_status is SchedulableStatus.BELOW_FAIR_SHARE:
        reasons.append(
            _reason(
                "below_fair_share",
                "usage is strictly below min(fair share x tolerance, demand) on every"
                " non-blocked resource",
                tolerance=tolerance,
            )
        )
    if starvation.below_fair_share_since is not None:
        waited = now - starvation.below_fair_share_since
        reasons.append(
            _reason(
                "waiting_for_starvation_timeout"
                if starvation.status is StarvationStatus.NON_STARVING
                else starvation.status.value,
                f"below fair share since {starvation.below_fair_share_since:g}"
                f" ({waited:g} s); starving after {timeout:g} s",
                waiting_seconds=waited,
                starvation_timeout=timeout,
            )
        )
    if op.graceful and live_status is not SchedulableStatus.BELOW_FAIR_SHARE:
        reasons.append(
            _reason(
                "fair_share_exceeded",
                "a graceful operation schedules only while below its fair share",
            )
        )
    non, aggressive, preemptible = op.record.allocations.counts()
    return {
        "schedulable": element.schedulable,
        "unschedulable_reason": op.unschedulable_reason,
        "eligible": op.eligible,
        "preemption_mode": "graceful" if op.graceful else "normal",
        "fair_share": _vector(view.fair_share),
        "demand_share": _vector(view.demand_share),
        "usage_share": _vector(usage_share),
        "usage_share_at_update": _vector(view.usage_share),
        "blocked_resources": [n for n, b in zip(RESOURCE_NAMES, view.blocked, strict=True) if b],
        "scheduling_status": element.status.value,
        "live_scheduling_status": live_status.value,
        "fair_share_starvation_tolerance": tolerance,
        "below_fair_share_bound": _vector(bound),
        "starvation": {
            "starvation_status": starvation.status.value,
            "below_fair_share_since": starvation.below_fair_share_since,
            "starving_since": starvation.starving_since,
            "waiting_seconds": (
                now - starvation.below_fair_share_since
                if starvation.below_fair_share_since is not None
                else None
            ),
            "fair_share_starvation_timeout": timeout,
            "fair_share_aggressive_starvation_timeout": aggressive_timeout,
            "aggressive_starvation_enabled": element.aggressive_starvation_enabled,
            "lowest_starving_ancestor": (
                element.lowest_starving.name if element.lowest_starving is not None else None
            ),
        },
        "preemption_priority": priority.label,
        "starving_element": starving_element.name if starving_element is not None else None,
        "satisfaction_ratio": _satisfaction(state, element),
        "local_satisfaction_ratio": element.local_sat,
        "deactivation_reasons": dict(op.record.deactivation_reasons),
        "allocations": {
            "non_preemptible": non,
            "aggressively_preemptible": aggressive,
            "preemptible": preemptible,
            "started": op.record.started_allocation_count,
            "preempted": op.record.preempted_allocation_count,
        },
        "preempted_allocations": list(op.record.preempted),
        "allocations_preempted_for_it": list(op.record.preempted_for),
        "reasons": reasons,
    }


def explain_operation(scheduler: Scheduler, operation_id: str) -> dict[str, Any]:
    result: dict[str, Any] = dict(scheduler.trees.explain(operation_id))
    operation = scheduler.trees.operation(operation_id)
    now = max(scheduler.clock, scheduler.trees.clock)
    per_tree: dict[str, Any] = {}
    for tree in operation.pool_trees:
        state = scheduler.ledger.tree_states.get(tree)
        if state is None:
            per_tree[tree] = {
                "reasons": [
                    _reason("no_fair_share_update", f"tree {tree!r} has not been updated yet")
                ]
            }
            continue
        op = state.operations.get(operation_id)
        if op is None:
            record = scheduler.ledger.records.get(tree, {}).get(operation_id)
            per_tree[tree] = {
                "reasons": [
                    _reason(
                        "not_in_last_update",
                        f"the operation is not in the fair-share update at"
                        f" {state.update_time:g}; it is scheduled after the next update",
                    )
                ],
                "preempted_allocations": list(record.preempted) if record else [],
            }
            continue
        per_tree[tree] = _operation_explanation(scheduler, state, op, now)
    result["scheduling"] = per_tree
    return result
