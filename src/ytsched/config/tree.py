"""Pool tree configuration: the ``config`` attribute of a ``scheduler_pool_tree``.

Mirrors ``TFairShareStrategyTreeConfig`` / ``TStrategyTreeConfig`` in
``yt/yt/server/lib/scheduler/config.cpp``.  Defaults are those of the Gen B code (see
``docs/pool-trees.md`` for where the YTsaurus docs disagree, e.g. the per-pool running limit).
This model owns the defaults of the engine's tree switches too: ``ytsched.pooltree`` builds the
engine's ``UpdateOptions`` from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from ytsched.config.base import ConfigModel, Duration, option
from ytsched.config.pool import FifoPoolSchedulingOrder, PoolPresetConfig
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import validate_tag_filter
from ytsched.resources import canonical_resource_name

ROOT_POOL_NAME = "<Root>"
"""Name of every tree's root pool."""

ResourceName = Literal["user_slots", "cpu", "gpu", "memory", "network"]


class TreeIntegralGuaranteesConfig(ConfigModel):
    """``integral_guarantees`` of a tree (``TTreeIntegralGuaranteesConfig``)."""

    smooth_period: Duration = option(
        60_000,
        "Divides an accumulated volume into an integral share: a volume of smooth_period x"
        " share gives that share (ms).",
        gt=0,
    )
    pool_capacity_saturation_period: Duration = option(
        86_400_000, "An integral pool banks at most flow x this period (ms).", gt=0
    )
    relaxed_share_multiplier_limit: float = option(
        3.0, "A relaxed pool's integral share is capped at flow ratio x this.", ge=1, le=10
    )


class TreeConfig(ConfigModel):
    """All options of a pool tree."""

    # --- nodes, resources, limits ---------------------------------------------------------
    node_tag_filter: str = option(
        "",
        "Tag expression selecting the tree's nodes (`&`, `|`, `!`, parentheses); empty = all.",
        "nodes_filter",
    )
    main_resource: ResourceName = option(
        "cpu",
        "Resource every strong guarantee must name; the other resources of a guarantee are"
        " inferred in proportion to it.",
    )
    max_operation_count: int = option(
        50_000, "Root limit on started (running + pending) operations.", gt=0
    )
    max_running_operation_count: int = option(2_000, "Root limit on running operations.", gt=0)
    max_operation_count_per_pool: int = option(
        50, "max_operation_count of pools that do not set it.", gt=0
    )
    max_running_operation_count_per_pool: int = option(
        50,
        "max_running_operation_count of pools that do not set it (the YTsaurus docs say 8; the"
        " code says 50).",
        gt=0,
    )
    default_parent_pool: str = option(
        ROOT_POOL_NAME,
        "Parent of ephemeral per-user pools; if the pool does not exist, the root is used and"
        " an alert is raised.",
    )
    use_user_default_parent_pool_map: bool = option(
        False, "Use the scheduler's user -> default parent pool map."
    )
    forbid_immediate_operations_in_root: bool = option(
        True, "Operations may not be placed directly in the root."
    )
    max_ephemeral_pools_per_user: int = option(
        1, "How many ephemeral pools a user may own under default parents.", ge=1
    )
    infer_weight_from_guarantees_share_multiplier: float | None = option(
        None,
        "Pools without a weight get multiplier x (guarantee share + flow ratio) / (the same for"
        " the parent).",
        "infer_weight_from_strong_guarantee_share_multiplier",
        "infer_weight_from_min_share_ratio_multiplier",
        ge=1,
    )
    integral_guarantees: TreeIntegralGuaranteesConfig = option(
        TreeIntegralGuaranteesConfig(), "Integral-guarantee periods and limits."
    )
    should_distribute_free_volume_among_children: bool = option(
        False, "Hand integral volume that overflows a pool's capacity to its siblings."
    )
    pool_config_presets: dict[str, PoolPresetConfig] = option(
        {}, "Named pool option bundles that pools reference with config_presets."
    )

    # --- starvation and preemption ----------------------------------------------------------
    fair_share_starvation_timeout: Duration = option(
        30_000,
        "Time below fair share x tolerance before an element is starving (ms).",
        "fair_share_preemption_timeout",
        ge=0,
    )
    fair_share_aggressive_starvation_timeout: Duration = option(
        120_000,
        "Time below fair share before an element is aggressively starving (ms); at least the"
        " starvation timeout.",
        ge=0,
    )
    fair_share_starvation_tolerance: float = option(
        0.8, "An element starves when usage < fair share x tolerance.", ge=0, le=1
    )
    enable_aggressive_starvation: bool = option(
        False, "Default for pools: may become aggressively starving."
    )
    enable_pool_starvation: bool = option(True, "Pools, not only operations, can starve.")
    allocation_count_preemption_timeout_coefficient: float = option(
        1.0,
        "Shortens starvation timeouts of operations with few pending allocations.",
        "job_count_preemption_timeout_coefficient",
        ge=1,
    )
    preemption_satisfaction_threshold: float = option(
        1.0, "Allocations above fair share x this are preemptible.", gt=0
    )
    aggressive_preemption_satisfaction_threshold: float = option(
        0.2,
        "Allocations below fair share x this are not preemptible even aggressively; at most"
        " preemption_satisfaction_threshold.",
        ge=0,
    )
    non_preemptible_resource_usage_threshold: ResourceAmounts = option(
        ResourceAmounts(),
        "An operation using strictly less than this in every named resource keeps its"
        " allocations non-preemptible; empty = never.",
    )
    max_unpreemptible_running_allocation_count: int | None = option(
        None,
        "Legacy: fills user_slots of non_preemptible_resource_usage_threshold.",
        "max_unpreemptable_running_job_count",
        "max_unpreemptible_running_job_count",
        ge=0,
    )
    preemptive_scheduling_backoff: Duration = option(
        5_000, "Minimum interval between preemptive scheduling passes on one node (ms).", ge=0
    )
    allocation_preemption_timeout: Duration = option(
        10_000,
        "Time a preempted interruptible allocation gets to finish (ms).",
        "job_interrupt_timeout",
        ge=0,
    )
    allocation_graceful_preemption_timeout: Duration = option(
        60_000,
        "Time a gracefully preempted allocation gets to finish (ms).",
        "job_graceful_interrupt_timeout",
        ge=0,
    )
    waiting_for_resources_on_node_timeout: Duration | None = option(
        None,
        "How long a started allocation may wait on its node for resources still held by"
        " finishing jobs before the node aborts it (`waiting_timeout`, ms); unset: it waits."
        " With the operation's `waiting_job_timeout` the larger applies.",
        "waiting_job_timeout",
        ge=0,
    )
    tentative_tree_saturation_deactivation_period: Duration = option(
        10_000,
        "After the controller declined to start a job of an operation in this tree because the"
        " tree is tentative for it and its sample is running, the operation is not scheduled"
        " here for this long (`saturated_in_tentative_tree`, ms).",
        ge=0,
    )
    preemption_check_starvation: bool = option(True, "Do not preempt from starving subtrees.")
    preemption_check_satisfaction: bool = option(
        True, "Do not preempt from subtrees below their satisfaction threshold."
    )
    enable_conditional_preemption: bool = option(
        True, "Allocations blocked at an ancestor may be preempted for operations inside it."
    )
    allow_preemption_from_starving_operations: bool = option(
        True,
        "Allocations of starving operations may be preempted (false: they never are). The"
        " YTsaurus default of this newer option could not be verified.",
    )
    scheduling_preemption_priority_scope: Literal["operation_and_ancestors", "operation_only"] = (
        option(
            "operation_and_ancestors",
            "Whether an operation's preemption priority also follows starving ancestors.",
        )
    )
    allow_gang_operations_only_in_fifo_pools: bool = option(
        False,
        "Refuse gang operations in pools that are not fifo (GangOperationsAllowedOnlyInFifoPools)"
        " unless the pool sets always_allow_gang_operations. The YTsaurus default of this newer"
        " option could not be verified; false changes nothing.",
    )
    allow_aggressive_preemption_for_gang_operations: bool = option(
        True, "Gang operations' allocations may be preempted aggressively."
    )
    allowed_resource_usage_staleness: Duration = option(
        100, "Re-read an operation's usage when older than this (ms).", ge=0
    )

    # --- scheduling ----------------------------------------------------------------------
    node_reconnection_timeout: Duration = option(
        300_000,
        "After the scheduler connects, filtered elements see unlimited resources this long (ms).",
        "total_resource_limits_consider_delay",
        ge=0,
    )
    best_allocation_share_update_period: Duration = option(
        60_000, "Refresh period of operations' best allocation share (ms).", gt=0
    )
    min_child_heap_size: int = option(
        16, "Pools with this many schedulable children pick the best child with a heap.", ge=0
    )
    max_schedulable_element_count_in_fifo_pool: int | None = option(
        None, "Past this many schedulable children, near-zero children of fifo pools wait.", ge=1
    )
    fifo_pool_scheduling_order: FifoPoolSchedulingOrder = option(
        "satisfaction", "How fifo pools pick a child on a heartbeat: `satisfaction` or `fifo`."
    )
    use_pool_satisfaction_for_scheduling: bool = option(
        False, "Pool satisfaction = min(best child, own local satisfaction)."
    )
    enable_guarantee_priority_scheduling: bool = option(
        False, "Schedule operations below their promised guarantee in a first stage."
    )
    enable_limiting_ancestor_check: bool = option(
        True, "Detect operations stuck because an ancestor's limits are too small."
    )
    enable_scheduling_tags: bool = option(
        True, "Evaluate pool and operation scheduling tag filters."
    )
    enable_fair_share_truncation_in_fifo_pool: bool = option(
        False,
        "Zero the fair share of gang operations in fifo pools that are not fully satisfied.",
        "truncate_fifo_pool_unsatisfied_child_fair_share",
    )

    # --- switches of the fair-share update -----------------------------------------------
    enable_step_function_for_gang_operations: bool = option(
        False, "Gang operations get all of their demand or nothing."
    )
    enable_improved_fair_share_by_fit_factor_computation: bool = option(
        False, "Split simultaneous jumps of several children fairly."
    )
    enable_improved_fair_share_by_fit_factor_computation_distribution_gap: bool = option(
        False, "With the improved computation, also hand out the gap below a joint jump."
    )
    enable_fast_fifo_fair_share_by_fit_factor_computation: bool = option(
        False, "Build fifo pool functions by concatenation (same results, linear time)."
    )
    enable_fifo_children_reordering_for_guarantee_utilization: bool = option(
        False,
        "In fifo pools with a guarantee (and the pool switch on), let gangs that do not fit"
        " wait behind those that do.",
    )

    @field_validator("node_tag_filter")
    @classmethod
    def _tag_filter(cls, value: str) -> str:
        return validate_tag_filter(value)

    @field_validator("main_resource", mode="before")
    @classmethod
    def _main_resource(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return canonical_resource_name(value)
            except ValueError as error:
                raise ValueError(str(error)) from None
        return value

    @model_validator(mode="after")
    def _validate(self) -> TreeConfig:
        if self.fair_share_aggressive_starvation_timeout < self.fair_share_starvation_timeout:
            raise ValueError(
                "fair_share_aggressive_starvation_timeout"
                f" ({self.fair_share_aggressive_starvation_timeout} ms) must be at least"
                f" fair_share_starvation_timeout ({self.fair_share_starvation_timeout} ms)"
            )
        if self.aggressive_preemption_satisfaction_threshold > (
            self.preemption_satisfaction_threshold
        ):
            raise ValueError(
                "aggressive_preemption_satisfaction_threshold"
                f" ({self.aggressive_preemption_satisfaction_threshold}) must not exceed"
                f" preemption_satisfaction_threshold ({self.preemption_satisfaction_threshold})"
            )
        return self

    @property
    def effective_non_preemptible_resource_usage_threshold(self) -> ResourceAmounts:
        """The threshold with the legacy allocation count folded into ``user_slots``.

        As the tree config's postprocessor does (``test_config_postprocessor`` in
        ``yt/yt/tests/integration/scheduler/test_scheduler_preemption.py``): the legacy count
        fills ``user_slots`` only when the threshold does not name it.
        """
        legacy = self.max_unpreemptible_running_allocation_count
        threshold = self.non_preemptible_resource_usage_threshold
        if legacy is None or threshold.user_slots is not None:
            return threshold
        return self.non_preemptible_resource_usage_threshold.model_copy(
            update={"user_slots": legacy}
        )
