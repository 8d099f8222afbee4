"""Orchid views of a tree: per pool and per operation, with YTsaurus attribute names.

The fair-share attributes come from the last update (:func:`ytsched.snapshot.orchid.
element_attributes`); on top of them go the live counters and configuration attributes that
``BuildPoolInfo`` / ``BuildCompositeElementInfo`` / ``DoBuildOperationProgress`` in
``yt/yt/server/scheduler/strategy/pool_tree.cpp`` add (``running_operation_count``,
``operation_count``, ``lightweight_running_operation_count``, effective limits, ...).  Two
attributes are ours, named in the same style: ``pending_operation_count`` and
``pending_operations`` (the operations waiting at a pool's running limit).  Everything is plain
dicts, lists, strings and numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ytsched.pooltree import effective
from ytsched.pooltree.operations import Operation
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.resources import ZERO, scale_amounts, vadd, vsub
from ytsched.snapshot.orchid import element_attributes, vector_map

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree


def _fair_share_part(tree: PoolTree, name: str, is_operation: bool) -> dict[str, Any]:
    result = tree.last_result
    if result is None:
        return {}
    element = (result.operations if is_operation else result.pools).get(name)
    if element is None:
        return {}
    return element_attributes(element, result)


NO_OVERCOMMIT_TOLERANCE = vector_map(ZERO)
"""``specified_resource_limits_overcommit_tolerance``: no element specifies one here."""


def tag_filter_limits(tree: PoolTree, text: str | None) -> dict[str, float] | None:
    """``scheduling_tag_filter_resource_limits``: without a filter the tree's total at the last
    update (None before one), with one the summed limits of the tree's online nodes matching
    it (live), as ``ComputeSchedulingTagFilterResourceLimits`` in ``pool_tree_element.cpp``."""
    if text:
        source = tree.tag_filter_resource_limits
        if source is not None:
            return vector_map(source(text))
    result = tree.last_result
    return vector_map(result.total_resource_limits) if result is not None else None


def pool_attributes(tree: PoolTree, pool: Pool) -> dict[str, Any]:
    config = tree.config
    own = pool.effective
    attributes = _fair_share_part(tree, pool.name, is_operation=False)
    attributes.setdefault("weight", own.weight if own.weight is not None else 1.0)
    attributes.update(
        {
            "parent": pool.parent_name,
            "mode": own.mode,
            "is_ephemeral": pool.is_ephemeral,
            "full_path": pool.full_path,
            "child_pool_count": len(pool.children),
            "operation_count": pool.operation_count,
            "running_operation_count": pool.running_operation_count,
            "lightweight_running_operation_count": pool.lightweight_running_operation_count,
            "pool_operation_count": len(pool.operations),
            "max_operation_count": tree.max_operation_count(pool),
            "max_running_operation_count": tree.max_running_operation_count(pool),
            "pending_operation_count": len(pool.pending),
            "pending_operations": list(pool.pending),
            "forbid_immediate_operations": (
                config.forbid_immediate_operations_in_root
                if pool.is_root
                else own.forbid_immediate_operations
            ),
            "lightweight_operations_enabled": own.enable_lightweight_operations,
            "effective_lightweight_operations_enabled": tree.lightweight_enabled(own),
            "strong_guarantee_resources": own.strong_guarantee_resources.as_map(),
            "specified_resource_limits": own.resource_limits.as_map() or None,
            "fair_share_starvation_tolerance": own.fair_share_starvation_tolerance,
            "fair_share_starvation_timeout": own.fair_share_starvation_timeout,
            "aggressive_starvation_enabled": own.enable_aggressive_starvation,
            "effective_fair_share_starvation_tolerance": effective.starvation_tolerance(
                config, pool
            ),
            "effective_fair_share_starvation_timeout": effective.starvation_timeout(config, pool),
            "effective_aggressive_starvation_enabled": effective.aggressive_starvation_enabled(
                config, pool
            ),
            "effective_aggressive_preemption_allowed": effective.aggressive_preemption_allowed(
                pool
            ),
            "effective_non_preemptible_resource_usage_threshold": (
                effective.non_preemptible_threshold(config, pool).as_map()
            ),
            "config_presets": list(own.preset_names),
            "effective_waiting_for_resources_on_node_timeout": (
                effective.waiting_for_resources_on_node_timeout(config, pool)
            ),
            "gang_operations_allowed": effective.gang_operations_allowed(
                config, None if pool.is_root else own
            ),
            "specified_resource_limits_overcommit_tolerance": dict(NO_OVERCOMMIT_TOLERANCE),
            "scheduling_tag_filter_resource_limits": tag_filter_limits(
                tree, None if pool.is_root else own.scheduling_tag_filter
            ),
        }
    )
    attributes.setdefault("integral_guarantee_type", own.integral_guarantees.guarantee_type)
    if own.mode == "fifo":
        attributes["fifo_sort_parameters"] = list(own.fifo_sort_parameters)
        attributes["effective_fifo_pool_scheduling_order"] = (
            own.fifo_pool_scheduling_order
            if own.fifo_pool_scheduling_order is not None
            else config.fifo_pool_scheduling_order
        )
    if pool.is_ephemeral and pool.ephemeral_user is not None:
        attributes["user"] = pool.ephemeral_user
    return attributes


def operation_attributes(tree: PoolTree, entry: TreeOperation) -> dict[str, Any]:
    config = tree.config
    operation = entry.operation
    attributes = _fair_share_part(tree, operation.id, is_operation=True)
    attributes.update(
        {
            "pool": entry.pool.name,
            "weight": entry.weight if entry.weight is not None else 1.0,
            "slot_index": entry.slot_index,
            "start_time": operation.start_time,
            "user": operation.user,
            "type": operation.type,
            "title": operation.spec.title,
            "state": operation.state.value,
            "lightweight": entry.lightweight,
            "tentative": tree.name in operation.tentative_trees,
            "pending_in_pool": entry.pending_pool.name if entry.pending_pool else None,
            "specified_resource_limits": (
                entry.resource_limits.as_map() if entry.resource_limits is not None else None
            ),
            "pending_job_count": operation.pending_job_count,
            "running_job_count": operation.running_job_count,
            "preemption_mode": operation.spec.preemption_mode,
            "is_gang": operation.spec.is_gang,
            "effective_fair_share_starvation_tolerance": (
                effective.operation_starvation_tolerance(config, entry)
            ),
            "effective_fair_share_starvation_timeout": effective.operation_starvation_timeout(
                config, entry
            ),
            "effective_non_preemptible_resource_usage_threshold": (
                effective.operation_non_preemptible_threshold(config, entry)
            ),
            "allocation_preemption_timeout": effective.allocation_preemption_timeout(config, entry),
            "allocation_graceful_preemption_timeout": (
                effective.allocation_graceful_preemption_timeout(config, entry)
            ),
            "effective_waiting_for_resources_on_node_timeout": (
                effective.waiting_for_resources_on_node_timeout(config, entry.pool)
            ),
            "specified_resource_limits_overcommit_tolerance": dict(NO_OVERCOMMIT_TOLERANCE),
            "scheduling_tag_filter_resource_limits": tag_filter_limits(
                tree,
                operation.spec.tree_options(tree.name).scheduling_tag_filter
                or operation.spec.scheduling_tag_filter,
            ),
            "probing": False,
            "offloading": False,
            "disk_request_media": [],
        }
    )
    _needed_resources(operation, attributes)
    return attributes


def _needed_resources(operation: Operation, attributes: dict[str, Any]) -> None:
    """``grouped_needed_resources`` (per task with waiting jobs: the resources of one job and
    how many wait, ``TAllocationGroupResources``) and its list form
    ``detailed_min_needed_job_resources``, as ``DoBuildOperationProgress`` shows them."""
    grouped: dict[str, Any] = {}
    detailed: list[dict[str, float]] = []
    for task in operation.tasks.values():
        if task.waiting:
            needed = vector_map(task.resources)
            grouped[task.name] = {
                "min_needed_resources": needed,
                "allocation_count": len(task.waiting),
            }
            detailed.append(dict(needed))
    attributes["grouped_needed_resources"] = grouped
    attributes["detailed_min_needed_job_resources"] = detailed


def postprocessed_config(tree: PoolTree) -> dict[str, Any]:
    """The tree config as YTsaurus shows it in the orchid: after its postprocessor.

    ``non_preemptible_resource_usage_threshold`` carries the legacy
    ``max_unpreemptible_running_allocation_count`` in ``user_slots`` when it does not name
    ``user_slots`` itself, and lists only the resources it sets (``{}`` when empty), as
    ``test_config_postprocessor`` in
    ``yt/yt/tests/integration/scheduler/test_scheduler_preemption.py`` reads it.
    """
    config = tree.config
    dumped = config.model_dump(mode="json")
    dumped["non_preemptible_resource_usage_threshold"] = (
        config.effective_non_preemptible_resource_usage_threshold.as_map()
    )
    return dumped


def resource_distribution_info(tree: PoolTree) -> dict[str, Any] | None:
    """``pool_trees/<tree>/resource_distribution_info`` after an update (None before one).

    As ``TPoolTreeRootElement::GetResourceDistributionInfo``
    (``yt/yt/server/scheduler/strategy/pool_tree_element.cpp``): the specified strong
    guarantees of the root's children; the total times the root's total resource flow and
    burst ratios; the distributed resources (guarantees plus the total times the larger of the
    two ratios) and what is left of the total.
    """
    result = tree.last_result
    if result is None:
        return None
    total = result.total_resource_limits
    flow = result.root.total_resource_flow_ratio
    burst = result.root.total_burst_ratio
    strong = ZERO
    for child in tree.root.children.values():
        strong = vadd(strong, child.effective.strong_guarantee_resources.to_vector(0.0))
    distributed = vadd(strong, scale_amounts(total, max(burst, flow)))
    return {
        "distributed_strong_guarantee_resources": vector_map(strong),
        "distributed_resource_flow": vector_map(scale_amounts(total, flow)),
        "distributed_burst_guarantee_resources": vector_map(scale_amounts(total, burst)),
        "distributed_resources": vector_map(distributed),
        "undistributed_resources": vector_map(vsub(total, distributed)),
        "undistributed_resource_flow": vector_map(scale_amounts(total, max(burst - flow, 0.0))),
        "undistributed_burst_guarantee_resources": vector_map(
            scale_amounts(total, max(flow - burst, 0.0))
        ),
    }


def tree_orchid(tree: PoolTree) -> dict[str, Any]:
    """``pool_trees/<tree>``: pools, operations, indexes by pool, config and alerts.

    ``operations_by_pool/<pool>`` and ``child_pools_by_pool/<pool>`` are maps keyed by name
    whose entries are the very attribute maps of ``operations/<op>`` and ``pools/<pool>``
    (shared, not copied), as YTsaurus returns them (``test_child_pools_by_pool`` and
    ``test_operations`` in ``yt/yt/tests/integration/scheduler/test_scheduler_orchid.py``);
    every pool has an entry, empty when it has no operations or no child pools.
    """
    descendants = list(tree.root.descendants())
    pools = {pool.name: pool_attributes(tree, pool) for pool in descendants}
    operations = {entry.id: operation_attributes(tree, entry) for entry in tree.operations.values()}
    return {
        "pools": pools,
        "pool_count": len(pools) - 1,
        "operations": operations,
        "operations_by_pool": {
            pool.name: {
                op_id: operations[op_id] for op_id in pool.operations if op_id in operations
            }
            for pool in descendants
        },
        "child_pools_by_pool": {
            pool.name: {child: pools[child] for child in pool.children if child in pools}
            for pool in descendants
        },
        "user_to_ephemeral_pools": {
            user: list(names) for user, names in sorted(tree.user_ephemeral_pools.items())
        },
        "config": postprocessed_config(tree),
        "resource_distribution_info": resource_distribution_info(tree),
        "last_update_time": tree.last_update_time,
        "alerts": tree.alerts(),
    }
