"""Inputs and outputs of one fair-share update.

The engine reads a *tree snapshot*: the pools and operations of one pool tree with their
configuration, usage and demand, the cluster totals, and the update options.  It writes one
:class:`ElementResult` per element.  Everything here is plain data so that the offline tools,
the simulator and the service can build snapshots however they like.

Option names follow YTsaurus (``TFairShareUpdateOptions`` in
``yt/yt/library/vector_hdrf/fair_share_update.h`` and the tree config).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ytsched.config.tree import TreeConfig, TreeIntegralGuaranteesConfig
from ytsched.resources import INFINITE_RESOURCES, ZERO, Vector


class SchedulingMode(str, Enum):
    FAIR_SHARE = "fair_share"
    FIFO = "fifo"


class IntegralGuaranteeType(str, Enum):
    NONE = "none"
    BURST = "burst"
    RELAXED = "relaxed"


class FifoSortParameter(str, Enum):
    WEIGHT = "weight"
    START_TIME = "start_time"
    PENDING_JOB_COUNT = "pending_job_count"


DEFAULT_FIFO_SORT_PARAMETERS: tuple[FifoSortParameter, ...] = (
    FifoSortParameter.WEIGHT,
    FifoSortParameter.START_TIME,
)


_MS_PER_SECOND = 1000.0


def _tree_option(name: str, *, integral: bool = False) -> Any:
    """An engine option whose default and description belong to the tree config.

    :class:`~ytsched.config.tree.TreeConfig` is the one source of truth for tree options; the
    engine only restates which of them it reads.  (Its durations are milliseconds, as YTsaurus
    reads them from YSON; the two period options below convert them to the engine's seconds.)
    """
    model = TreeIntegralGuaranteesConfig if integral else TreeConfig
    info = model.model_fields[name]
    return field(default=info.default, metadata={"doc": info.description or ""})


def _engine_option(default: Any, doc: str) -> Any:
    """An option that exists only for offline snapshots (not a YTsaurus tree option)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class UpdateOptions:
    """Tree-level switches of the vector-HDRF update.

    Names are those of the YTsaurus tree config and ``TFairShareUpdateOptions``
    (``yt/yt/library/vector_hdrf/fair_share_update.h``); defaults and descriptions come from
    :class:`~ytsched.config.tree.TreeConfig`.  The last two options exist only to load
    production dumps the way YTsaurus's own unit test does.
    """

    main_resource: str = _tree_option("main_resource")
    integral_pool_capacity_saturation_period: float = field(
        default=TreeIntegralGuaranteesConfig.model_fields["pool_capacity_saturation_period"].default
        / _MS_PER_SECOND,
        metadata={
            "doc": "Seconds of resource flow an integral pool can bank (the tree's"
            " `integral_guarantees/pool_capacity_saturation_period`)."
        },
    )
    integral_smooth_period: float = field(
        default=TreeIntegralGuaranteesConfig.model_fields["smooth_period"].default / _MS_PER_SECOND,
        metadata={
            "doc": "Seconds over which a volume is spread into an integral share (the tree's"
            " `integral_guarantees/smooth_period`)."
        },
    )
    relaxed_share_multiplier_limit: float = _tree_option(
        "relaxed_share_multiplier_limit", integral=True
    )
    should_distribute_free_volume_among_children: bool = _tree_option(
        "should_distribute_free_volume_among_children"
    )
    enable_step_function_for_gang_operations: bool = _tree_option(
        "enable_step_function_for_gang_operations"
    )
    enable_improved_fair_share_by_fit_factor_computation: bool = _tree_option(
        "enable_improved_fair_share_by_fit_factor_computation"
    )
    enable_improved_fair_share_by_fit_factor_computation_distribution_gap: bool = _tree_option(
        "enable_improved_fair_share_by_fit_factor_computation_distribution_gap"
    )
    enable_fast_fifo_fair_share_by_fit_factor_computation: bool = _tree_option(
        "enable_fast_fifo_fair_share_by_fit_factor_computation"
    )
    enable_fifo_children_reordering_for_guarantee_utilization: bool = _tree_option(
        "enable_fifo_children_reordering_for_guarantee_utilization"
    )
    infer_weight_from_guarantees_share_multiplier: float | None = _tree_option(
        "infer_weight_from_guarantees_share_multiplier"
    )
    consider_vanilla_operations_as_gang: bool = _engine_option(
        False,
        "Treat operations with operation_type = vanilla as gangs (how YTsaurus's unit test"
        " loads the production GPU dump).",
    )
    use_only_gpu_strong_guarantees: bool = _engine_option(
        False,
        "Read only the gpu part of pool guarantees (how YTsaurus's unit test loads the"
        " production GPU dump).",
    )


@dataclass(frozen=True, slots=True)
class IntegralGuarantees:
    """A pool's ``integral_guarantees`` block (absolute amounts; ``None`` = not specified)."""

    guarantee_type: IntegralGuaranteeType = IntegralGuaranteeType.NONE
    resource_flow: Vector = ZERO
    burst_guarantee_resources: Vector = ZERO
    relaxed_share_multiplier_limit: float | None = None
    can_accept_free_volume: bool = True
    should_distribute_free_volume_among_children: bool | None = None


@dataclass(slots=True)
class PoolSpec:
    """One pool (or the root) as configured.

    ``strong_guarantee_resources`` holds only the resources the config names explicitly; the
    others are inferred from the main resource
    (``DetermineImplicitInferredStrongGuaranteeResources``).
    """

    name: str
    parent: str | None
    mode: SchedulingMode = SchedulingMode.FAIR_SHARE
    weight: float | None = None
    strong_guarantee_resources: dict[int, float] = field(default_factory=dict)
    resource_limits: Vector = INFINITE_RESOURCES
    integral_guarantees: IntegralGuarantees = field(default_factory=IntegralGuarantees)
    accumulated_resource_volume: Vector = ZERO
    last_integral_share_ratio: float = 0.0
    fifo_sort_parameters: tuple[FifoSortParameter, ...] = DEFAULT_FIFO_SORT_PARAMETERS
    compute_promised_guarantee_fair_share: bool = False
    enable_fifo_children_reordering_for_guarantee_utilization: bool = False
    enable_step_function_for_gang_operations: bool = True


@dataclass(slots=True)
class OperationSpec:
    name: str
    parent: str
    resource_demand: Vector = ZERO
    resource_usage: Vector = ZERO
    resource_limits: Vector = INFINITE_RESOURCES
    weight: float = 1.0
    start_time: float | None = None
    pending_job_count: int = 0
    is_gang: bool = False
    operation_type: str | None = None


@dataclass(slots=True)
class TreeSnapshot:
    """Everything one update needs.  Pools are listed parents first; the root has no parent."""

    total_resource_limits: Vector
    pools: list[PoolSpec]
    operations: list[OperationSpec]
    options: UpdateOptions = field(default_factory=UpdateOptions)
    now: float | None = None
    previous_update_time: float | None = None


@dataclass(frozen=True, slots=True)
class UpdateError:
    """A configuration problem found by the update; ``code`` is the YTsaurus error name."""

    code: str
    message: str
    attributes: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class DetailedShare:
    strong_guarantee: Vector = ZERO
    integral_guarantee: Vector = ZERO
    weight_proportional: Vector = ZERO
    total: Vector = ZERO
