"""Inherited ("effective") settings of pools and operations.

``UpdateRecursiveAttributes`` and the operation overrides in
``yt/yt/server/scheduler/strategy/pool_tree_element.cpp``: a pool takes its own starvation
tolerance, timeout and aggressive-starvation flag, else its parent's (the root's come from the
tree config); its own ``non_preemptible_resource_usage_threshold`` replaces the inherited one.
An operation can only be more conservative than its pool: tolerance = min(pool, spec), timeout
= max(pool, spec), threshold = per-resource min.
"""

from __future__ import annotations

from ytsched.config.pool import PoolConfig
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tree import TreeConfig
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.resources import INFINITE_AMOUNT, RESOURCE_NAMES


def starvation_tolerance(config: TreeConfig, pool: Pool) -> float:
    for level in pool.ancestors():
        if not level.is_root and level.effective.fair_share_starvation_tolerance is not None:
            return level.effective.fair_share_starvation_tolerance
    return config.fair_share_starvation_tolerance


def starvation_timeout(config: TreeConfig, pool: Pool) -> int:
    for level in pool.ancestors():
        if not level.is_root and level.effective.fair_share_starvation_timeout is not None:
            return level.effective.fair_share_starvation_timeout
    return config.fair_share_starvation_timeout


def aggressive_starvation_enabled(config: TreeConfig, pool: Pool) -> bool:
    for level in pool.ancestors():
        if not level.is_root and level.effective.enable_aggressive_starvation is not None:
            return level.effective.enable_aggressive_starvation
    return config.enable_aggressive_starvation


def aggressive_preemption_allowed(pool: Pool) -> bool:
    for level in pool.ancestors():
        if not level.is_root and level.effective.allow_aggressive_preemption is not None:
            return level.effective.allow_aggressive_preemption
    return True


def non_preemptible_threshold(config: TreeConfig, pool: Pool) -> ResourceAmounts:
    for level in pool.ancestors():
        own = level.effective.non_preemptible_resource_usage_threshold
        if not level.is_root and own is not None:
            return own
    return config.effective_non_preemptible_resource_usage_threshold


def operation_starvation_tolerance(config: TreeConfig, entry: TreeOperation) -> float:
    inherited = starvation_tolerance(config, entry.pool)
    own = entry.operation.spec.fair_share_starvation_tolerance
    return inherited if own is None else min(inherited, own)


def operation_starvation_timeout(config: TreeConfig, entry: TreeOperation) -> int:
    inherited = starvation_timeout(config, entry.pool)
    own = entry.operation.spec.fair_share_starvation_timeout
    return inherited if own is None else max(inherited, own)


def operation_non_preemptible_threshold(
    config: TreeConfig, entry: TreeOperation
) -> dict[str, float]:
    """Per resource, the min of the inherited and the spec threshold (unnamed = infinite)."""
    inherited = non_preemptible_threshold(config, entry.pool).limits_vector()
    spec = entry.operation.spec
    own = spec.non_preemptible_resource_usage_threshold
    own_vector = own.limits_vector() if own is not None else None
    result: dict[str, float] = {}
    for index, name in enumerate(RESOURCE_NAMES):
        value = inherited[index]
        if own_vector is not None:
            value = min(value, own_vector[index])
        if spec.max_unpreemptible_job_count is not None and name == "user_slots":
            value = min(value, float(spec.max_unpreemptible_job_count))
        if value < INFINITE_AMOUNT:
            result[name] = value
    return result


def waiting_for_resources_on_node_timeout(config: TreeConfig, pool: Pool) -> int | None:
    """The pool's own ``waiting_for_resources_on_node_timeout``, else its parent's, else the
    tree's (``EffectiveWaitingForResourcesOnNodeTimeout_`` in ``UpdateRecursiveAttributes``);
    operations take their pool's."""
    for level in pool.ancestors():
        own = level.effective.waiting_for_resources_on_node_timeout
        if not level.is_root and own is not None:
            return own
    return config.waiting_for_resources_on_node_timeout


def gang_operations_allowed(config: TreeConfig, own: PoolConfig | None) -> bool:
    """``AreGangOperationsAllowed`` of a pool with config ``own`` (None: the root).

    The root allows gangs unless the tree keeps them to fifo pools; a pool allows them when
    it is fifo (an ephemeral hub: when the pools it creates are), when the tree does not keep
    them to fifo pools, or when it sets ``always_allow_gang_operations``
    (``TPoolTreePoolElement::AreGangOperationsAllowed`` in ``pool_tree_element.cpp``).
    """
    if not config.allow_gang_operations_only_in_fifo_pools:
        return True
    if own is None:
        return False
    mode = own.mode
    if own.create_ephemeral_subpools:
        settings = own.ephemeral_subpool_config
        mode = settings.mode if settings is not None else "fair_share"
    return mode == "fifo" or own.always_allow_gang_operations


def allocation_preemption_timeout(config: TreeConfig, entry: TreeOperation) -> int:
    own = entry.operation.spec.allocation_preemption_timeout
    return own if own is not None else config.allocation_preemption_timeout


def allocation_graceful_preemption_timeout(config: TreeConfig, entry: TreeOperation) -> int:
    own = entry.operation.spec.allocation_graceful_preemption_timeout
    return own if own is not None else config.allocation_graceful_preemption_timeout
