"""Pool configuration: the attributes of a ``scheduler_pool`` object.

Mirrors ``TPoolConfig`` (schedulable, preset and preemption parts) of
``yt/yt/ytlib/scheduler/config.cpp`` and the rules of ``TPoolConfig::Validate``.  Rules that need
the tree (the main resource, parents' guarantees, presets, FIFO parents) are checked by
:mod:`ytsched.pooltree.validation`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from ytsched.config.base import ConfigModel, Duration, Weight, option
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import validate_tag_filter

SchedulingModeName = Literal["fair_share", "fifo"]
FifoSortParameterName = Literal["weight", "start_time", "pending_job_count"]
GuaranteeTypeName = Literal["none", "burst", "relaxed"]
FifoPoolSchedulingOrder = Literal["satisfaction", "fifo"]

DEFAULT_FIFO_SORT_PARAMETERS: tuple[FifoSortParameterName, ...] = ("weight", "start_time")


def _check_operation_counts(max_operation: int | None, max_running: int | None) -> None:
    if max_operation is not None and max_running is not None and max_running > max_operation:
        raise ValueError(
            f"max_running_operation_count ({max_running}) must not exceed"
            f" max_operation_count ({max_operation})"
        )


class IntegralGuaranteesConfig(ConfigModel):
    """``integral_guarantees`` of a pool (``TPoolIntegralGuaranteesConfig``)."""

    guarantee_type: GuaranteeTypeName = option(
        "none",
        "`none`, `burst` (guaranteed burst_guarantee_resources while volume lasts) or `relaxed`"
        " (volume shared out of what strong and burst guarantees leave).",
    )
    resource_flow: ResourceAmounts = option(
        ResourceAmounts(),
        "Resources accumulated into the pool's volume per second; must name the main resource.",
    )
    burst_guarantee_resources: ResourceAmounts = option(
        ResourceAmounts(),
        "Guarantee of a burst pool while it has volume; forbidden for relaxed pools.",
    )
    relaxed_share_multiplier_limit: float | None = option(
        None, "Overrides the tree's cap (flow ratio x this) of a relaxed pool's share.", ge=1, le=10
    )
    can_accept_free_volume: bool = option(
        True, "May receive volume that overflows other integral pools."
    )
    should_distribute_free_volume_among_children: bool | None = option(
        None, "Overrides the tree option of the same name for this pool's children."
    )

    @model_validator(mode="after")
    def _relaxed_has_no_burst(self) -> IntegralGuaranteesConfig:
        if self.guarantee_type == "relaxed" and not self.burst_guarantee_resources.is_empty():
            raise ValueError("a relaxed pool cannot have burst_guarantee_resources")
        return self


class EphemeralSubpoolConfig(ConfigModel):
    """Settings copied into ephemeral pools created under this pool."""

    mode: SchedulingModeName = option("fair_share", "Scheduling mode of the ephemeral pools.")
    max_running_operation_count: int | None = option(
        None, "Running-operation limit of each ephemeral pool.", ge=0
    )
    max_operation_count: int | None = option(
        None, "Total-operation limit of each ephemeral pool.", ge=0
    )
    resource_limits: ResourceAmounts = option(
        ResourceAmounts(), "Resource limits of each ephemeral pool."
    )

    @model_validator(mode="after")
    def _counts(self) -> EphemeralSubpoolConfig:
        _check_operation_counts(self.max_operation_count, self.max_running_operation_count)
        return self


class OffloadingPoolSettings(ConfigModel):
    """Where a pool's operations are also run in another tree (``offloading_settings``)."""

    pool: str | None = option(None, "Pool in the offloading tree.")
    weight: Weight | None = option(None, "Weight of the operations there.")
    resource_limits: ResourceAmounts = option(ResourceAmounts(), "Resource limits there.")
    tentative: bool = option(False, "Run there tentatively.")


class PoolPresetConfig(ConfigModel):
    """A named bundle of pool options (``pool_config_presets``; ``TPoolPresetConfig``).

    Only the preemption options, ``allow_regular_allocations_on_ssd_nodes`` and
    ``enable_lightweight_operations`` may appear in a preset.
    """

    fair_share_starvation_timeout: Duration | None = option(
        None, "Time below fair share before the subtree starves (ms).", ge=0
    )
    fair_share_starvation_tolerance: float | None = option(
        None, "Usage below fair share x tolerance counts as starving.", ge=0, le=1
    )
    non_preemptible_resource_usage_threshold: ResourceAmounts | None = option(
        None, "Operations using less than this keep their allocations non-preemptible."
    )
    enable_aggressive_starvation: bool | None = option(
        None, "Whether the subtree may become aggressively starving."
    )
    allow_aggressive_preemption: bool | None = option(
        None,
        "Whether allocations in the subtree may be preempted aggressively.",
        "allow_aggressive_starvation_preemption",
    )
    allow_normal_preemption: bool = option(
        True, "Testing only: forbid normal preemption in the subtree."
    )
    allow_regular_allocations_on_ssd_nodes: bool = option(
        True,
        "SSD-priority preemption: regular allocations may use SSD nodes.",
        "allow_regular_jobs_on_ssd_nodes",
    )
    enable_lightweight_operations: bool = option(
        False,
        "Vanilla operations in this fifo pool are lightweight: they do not count toward"
        " running-operation limits and are never pending.",
    )


class PoolConfig(PoolPresetConfig):
    """All attributes of a pool (``TPoolConfig``)."""

    weight: Weight | None = option(
        None,
        "Share of the parent's weight-proportional distribution. Unset: inferred from the"
        " guarantee when the tree sets infer_weight_from_guarantees_share_multiplier, else 1.",
    )
    strong_guarantee_resources: ResourceAmounts = option(
        ResourceAmounts(),
        "Absolute guarantee per resource; must name the tree's main resource if it names any.",
        "min_share_resources",
    )
    resource_limits: ResourceAmounts = option(
        ResourceAmounts(), "Absolute cap per resource (unnamed resources are unlimited)."
    )
    max_share_ratio: float | None = option(
        None, "Shown in orchid only; not enforced by the vector scheduler.", ge=0, le=1
    )
    scheduling_tag_filter: str | None = option(
        None, "Tag expression restricting the nodes this subtree may use.", "scheduling_tag"
    )
    mode: SchedulingModeName = option(
        "fair_share", "`fair_share` (children share by weight) or `fifo` (operations in order)."
    )
    waiting_for_resources_on_node_timeout: Duration | None = option(
        None,
        "Overrides the tree's waiting_for_resources_on_node_timeout for this subtree (ms);"
        " unset: the parent's.",
        ge=0,
    )
    always_allow_gang_operations: bool = option(
        False,
        "Gang operations may start here even where the tree's"
        " allow_gang_operations_only_in_fifo_pools keeps them to fifo pools.",
    )
    max_operation_count: int | None = option(
        None,
        "Limit on started (running + pending) operations in the subtree. Unset: the tree's"
        " max_operation_count_per_pool.",
        ge=0,
    )
    max_running_operation_count: int | None = option(
        None,
        "Limit on running operations in the subtree. Unset: the tree's"
        " max_running_operation_count_per_pool.",
        ge=0,
    )
    fifo_sort_parameters: tuple[FifoSortParameterName, ...] = option(
        DEFAULT_FIFO_SORT_PARAMETERS,
        "Order of operations in a fifo pool: `weight` (higher first), `start_time` (earlier"
        " first), `pending_job_count` (alias `pending_allocation_count`, fewer first).",
        min_length=1,
    )
    fifo_pool_scheduling_order: FifoPoolSchedulingOrder | None = option(
        None, "Overrides the tree's fifo_pool_scheduling_order."
    )
    forbid_immediate_operations: bool = option(
        False, "No operations directly in this pool (subpools are allowed)."
    )
    create_ephemeral_subpools: bool = option(
        False, "Every user gets an ephemeral subpool `<pool>$<user>`; not with mode fifo."
    )
    ephemeral_subpool_config: EphemeralSubpoolConfig | None = option(
        None,
        "Mode, operation limits and resource limits of ephemeral pools created under this one.",
    )
    integral_guarantees: IntegralGuaranteesConfig = option(
        IntegralGuaranteesConfig(), "Burst or relaxed integral guarantee of the pool."
    )
    offloading_settings: dict[str, OffloadingPoolSettings] = option(
        {}, "Trees where this pool's operations also run: tree -> {pool, weight, ...}."
    )
    config_presets: tuple[str, ...] = option(
        (), "Presets from the tree's pool_config_presets; earlier presets win."
    )
    config_preset: str | None = option(None, "Legacy single preset; exclusive with config_presets.")
    compute_promised_guarantee_fair_share: bool = option(
        False, "Compute the guarantee-only (promised) fair share of this subtree."
    )
    allow_children_guarantees: bool = option(
        True,
        "Child pools may have explicit strong guarantees, resource flows and burst guarantees"
        " (the master refuses them under a pool that sets this to false).",
    )
    enable_fifo_children_reordering_for_guarantee_utilization: bool = option(
        False, "Let waiting gangs that do not fit the guarantee wait behind those that do."
    )
    enable_step_function_for_gang_operations: bool = option(
        True, "Pool-level switch of the tree's gang step function."
    )
    use_pool_satisfaction_for_scheduling: bool | None = option(
        None, "Overrides the tree option of the same name."
    )

    @field_validator("fifo_sort_parameters", mode="before")
    @classmethod
    def _fifo_aliases(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            return tuple(
                "pending_job_count" if v == "pending_allocation_count" else v for v in value
            )
        return value

    @field_validator("scheduling_tag_filter")
    @classmethod
    def _tag_filter(cls, value: str | None) -> str | None:
        return None if value is None else validate_tag_filter(value)

    @model_validator(mode="after")
    def _validate(self) -> PoolConfig:
        _check_operation_counts(self.max_operation_count, self.max_running_operation_count)
        if self.mode == "fifo" and self.create_ephemeral_subpools:
            raise ValueError("a fifo pool cannot have create_ephemeral_subpools")
        if self.config_preset is not None and self.config_presets:
            raise ValueError("config_preset and config_presets cannot both be set")
        return self

    @property
    def preset_names(self) -> tuple[str, ...]:
        """Presets in priority order (the legacy single preset first if set)."""
        if self.config_preset is not None:
            return (self.config_preset,)
        return self.config_presets


PRESET_FIELDS = frozenset(PoolPresetConfig.model_fields)
"""Options a preset may carry."""


def apply_presets(config: PoolConfig, presets: dict[str, PoolPresetConfig]) -> PoolConfig:
    """The effective config: explicit options win, then presets in list order.

    Each preset is applied *under* what is already set, so earlier presets have priority
    (``pools_config_parser.cpp``).  Unknown preset names are the caller's to report.
    """
    names = config.preset_names
    if not names:
        return config
    data = config.model_dump(exclude_unset=True)
    for name in names:
        preset = presets.get(name)
        if preset is None:
            continue
        for key, value in preset.model_dump(exclude_unset=True).items():
            data.setdefault(key, value)
    return PoolConfig.model_validate(data)


__all__ = [
    "DEFAULT_FIFO_SORT_PARAMETERS",
    "PRESET_FIELDS",
    "EphemeralSubpoolConfig",
    "IntegralGuaranteesConfig",
    "OffloadingPoolSettings",
    "PoolConfig",
    "PoolPresetConfig",
    "apply_presets",
]
