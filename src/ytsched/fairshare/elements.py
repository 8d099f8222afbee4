"""The element tree the update works on: root, pools and operations with their attributes.

An :class:`Element` is built fresh for every update from a
:class:`~ytsched.fairshare.model.TreeSnapshot` and carries both the inputs (config, usage,
demand) and everything the update computes (the YTsaurus ``TSchedulableAttributes``).  Keeping
inputs and outputs on one mutable object mirrors the structure of
``yt/yt/library/vector_hdrf/fair_share_update.h``, which makes the port easy to check step by
step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ytsched.fairshare.model import (
    DetailedShare,
    FifoSortParameter,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    SchedulingMode,
)
from ytsched.fairshare.plf import PLF
from ytsched.resources import ONES, ZERO, Vector, vadd, vmin, vsub


@dataclass(slots=True)
class IntegralState:
    """Volume bookkeeping of an integral pool (``TIntegralResourcesState`` plus transfer terms)."""

    accumulated_volume: Vector = ZERO
    last_share_ratio: float = 0.0
    volume_overflow: Vector = ZERO
    acceptable_volume: Vector = ZERO
    children_volume_overflow: Vector = ZERO
    accepted_free_volume: Vector = ZERO


@dataclass(eq=False, slots=True)
class Element:
    name: str
    is_operation: bool
    is_root: bool
    pool: PoolSpec | None = None
    operation: OperationSpec | None = None
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)

    # Inputs resolved for this update.
    weight: float = 1.0
    resource_demand: Vector = ZERO
    resource_usage: Vector = ZERO
    resource_limits: Vector = ZERO
    is_gang_like: bool = False
    explicit_strong_guarantee: dict[int, float] = field(default_factory=dict)

    # Attributes computed by the update.
    inferred_strong_guarantee_resources: list[float] = field(default_factory=lambda: [0.0] * 5)
    limits_share: Vector = ONES
    strong_guarantee_share: Vector = ZERO
    proposed_integral_share: Vector = ZERO
    usage_share: Vector = ZERO
    demand_share: Vector = ZERO
    dominant_resource: str = "cpu"
    estimated_guarantee_share: Vector = ZERO
    burst_ratio: float = 0.0
    total_burst_ratio: float = 0.0
    resource_flow_ratio: float = 0.0
    total_resource_flow_ratio: float = 0.0
    fair_share: DetailedShare = field(default_factory=DetailedShare)
    promised_guarantee_fair_share: DetailedShare = field(default_factory=DetailedShare)
    fifo_index: int | None = None
    effective_fifo_index: int | None = None
    integral: IntegralState = field(default_factory=IntegralState)

    # Working state of the function-building passes.
    sorted_children: list[Element] = field(default_factory=list)
    fsbff: PLF | None = None
    mffbs: PLF | None = None
    fsbs: PLF | None = None
    child_fsbff: list[PLF] | None = None
    prepared: bool = False

    # What callers read of the functions (the native core keeps the functions themselves):
    # segment counts of (FSBS, FSBFF, MFFBS) and the FSBS right value (limited demand share).
    function_sizes: tuple[int, int, int] | None = None
    limited_demand_share: Vector | None = None

    # -- configuration views --

    @property
    def mode(self) -> SchedulingMode:
        return self.pool.mode if self.pool is not None else SchedulingMode.FAIR_SHARE

    @property
    def integral_type(self) -> IntegralGuaranteeType:
        if self.pool is None:
            return IntegralGuaranteeType.NONE
        return self.pool.integral_guarantees.guarantee_type

    @property
    def guarantee_share(self) -> Vector:
        """Strong guarantee plus the integral share proposed in this update."""
        return vadd(self.strong_guarantee_share, self.proposed_integral_share)

    @property
    def step_function_enabled_here(self) -> bool:
        """Pool-level switch for gang step functions of child operations."""
        return self.pool.enable_step_function_for_gang_operations if self.pool else True

    def fifo_sort_key(self, parameters: tuple[FifoSortParameter, ...]) -> tuple[float, ...]:
        """Ascending key for FIFO order (``HasHigherPriorityInFifoMode``).

        Weight sorts descending, start time and pending job count ascending; a missing start
        time sorts last.  Ties keep input order (the sort is stable).
        """
        op = self.operation
        key: list[float] = []
        for parameter in parameters:
            if parameter is FifoSortParameter.WEIGHT:
                key.append(-self.weight)
            elif parameter is FifoSortParameter.START_TIME:
                start = op.start_time if op is not None else None
                key.append(float("inf") if start is None else start)
            else:
                key.append(float(op.pending_job_count) if op is not None else 0.0)
        return tuple(key)

    def set_detailed_fair_share(self, total: Vector, promised: bool = False) -> None:
        """Split a total fair share into guarantee and weight-proportional parts.

        ``SetDetailedFairShare``: the strong part is capped by the strong guarantee share, the
        integral part by the proposed integral share, and the rest is weight-proportional.
        """
        strong = vmin(total, self.strong_guarantee_share)
        rest = vsub(total, strong)
        integral = vmin(rest, self.proposed_integral_share)
        detailed = DetailedShare(
            strong_guarantee=strong,
            integral_guarantee=integral,
            weight_proportional=vsub(rest, integral),
            total=total,
        )
        if promised:
            self.promised_guarantee_fair_share = detailed
        else:
            self.fair_share = detailed

    def reset_functions(self) -> None:
        self.prepared = False
