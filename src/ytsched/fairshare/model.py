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


def _option(default: Any, doc: str) -> Any:
    """A documented option: ``docs/configuration.md`` is generated from these docs."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class UpdateOptions:
    """Tree-level switches of the vector-HDRF update (defaults as in YTsaurus).

    Names are those of the YTsaurus tree config and ``TFairShareUpdateOptions``
    (``yt/yt/library/vector_hdrf/fair_share_update.h``); the last two exist only to load
    production dumps the way YTsaurus's own unit test does.
    """

    main_resource: str = _option(
        "cpu",
        "Resource every strong guarantee must name; other resources of a guarantee are inferred"
        " in proportion to it.",
    )
    integral_pool_capacity_saturation_period: float = _option(
        86400.0,
        "Seconds of resource flow an integral pool can bank: its capacity is flow x this period.",
    )
    integral_smooth_period: float = _option(
        60.0,
        "Seconds over which an accumulated volume is spread when it is turned into an integral"
        " share (a volume of 60 share-seconds gives share 1.0).",
    )
    relaxed_share_multiplier_limit: float = _option(
        3.0,
        "A relaxed pool's integral share is capped at flow ratio x this; pools may override it."
        " Within [1, 10].",
    )
    should_distribute_free_volume_among_children: bool = _option(
        False,
        "Hand volume that overflows an integral pool's capacity to sibling integral pools"
        " (weighted by their flow) instead of dropping it; pools may override it.",
    )
    enable_step_function_for_gang_operations: bool = _option(
        False,
        "Gang operations get all of their demand or nothing: their fair share jumps from 0 to"
        " demand.",
    )
    enable_improved_fair_share_by_fit_factor_computation: bool = _option(
        False,
        "Split simultaneous jumps of several children fairly: each child's jump gets its own step"
        " of the pool's fit factor, so one child can take a jump the others cannot.",
    )
    enable_improved_fair_share_by_fit_factor_computation_distribution_gap: bool = _option(
        False,
        "With the improved computation, also hand out the remaining gap below a joint jump"
        " (tolerating 1e-9 of overshoot).",
    )
    enable_fast_fifo_fair_share_by_fit_factor_computation: bool = _option(
        False,
        "Build FIFO pool functions by concatenation (linear time). Results are identical.",
    )
    enable_fifo_children_reordering_for_guarantee_utilization: bool = _option(
        False,
        "In FIFO pools with a strong guarantee (and the pool-level switch on), let pending gangs"
        " that do not fit the guarantee wait behind those that do. Needs the gang step function.",
    )
    infer_weight_from_guarantees_share_multiplier: float | None = _option(
        None,
        "Pools without an explicit weight get weight = multiplier x (their dominant guarantee"
        " share + flow ratio) / (the same for their parent). At least 1.",
    )
    consider_vanilla_operations_as_gang: bool = _option(
        False,
        "Treat operations with operation_type = vanilla as gangs (how YTsaurus's unit test"
        " loads the production GPU dump).",
    )
    use_only_gpu_strong_guarantees: bool = _option(
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
