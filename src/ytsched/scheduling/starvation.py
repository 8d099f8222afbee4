"""Scheduling status, starvation status and preemption priority.

Follows ``yt/yt/server/scheduler/strategy/pool_tree_element.cpp`` (``GetStatusImpl``,
``TPoolTreeOperationElement::GetStatus``, ``CheckForStarvationImpl``,
``TPoolTreeOperationElement::CheckForStarvation``, ``UpdateStarvationStatuses``) and
``GetOperationPreemptionPriority`` in
``yt/yt/server/scheduler/strategy/policy/scheduling_policy_detail.cpp``.

* The *scheduling status* (``normal`` / ``below_fair_share``) says whether the element's usage is
  strictly below ``min(fair_share x tolerance, demand)`` on its non-blocked resources.  An
  operation whose fair share covers its demand (within 1e-4) uses tolerance 1: it is owed
  exactly its demand, so any shortfall counts.  An unschedulable operation is always normal.
* The *starvation status* is a small state machine run at every fair-share update: an element
  below its fair share records since when; once that lasts longer than
  ``fair_share_starvation_timeout`` it is ``starving`` (``aggressively_starving`` after
  ``fair_share_aggressive_starvation_timeout`` if aggressive starvation is enabled for it).  It
  stays starving until its status is normal again.  Operations with few pending allocations
  starve sooner: both timeouts are scaled by ``pending / allocation_count_preemption_timeout_
  coefficient`` when that ratio is below 1.
* The *preemption priority* of an operation is what makes it take part in a preemptive stage:
  ``aggressive`` if it (or, with scope ``operation_and_ancestors``, an ancestor) is aggressively
  starving, else ``normal`` if one of them is starving.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

from ytsched.resources import Vector
from ytsched.scheduling.satisfaction import LARGE_EPSILON, ShareView


class SchedulableStatus(str, Enum):
    """``ESchedulableStatus`` (orchid ``scheduling_status``)."""

    NORMAL = "normal"
    BELOW_FAIR_SHARE = "below_fair_share"


class StarvationStatus(str, Enum):
    """``EStarvationStatus`` (orchid ``starvation_status``)."""

    NON_STARVING = "non_starving"
    STARVING = "starving"
    AGGRESSIVELY_STARVING = "aggressively_starving"


class PreemptionPriority(IntEnum):
    """``EOperationPreemptionPriority`` without the SSD and GPU variants."""

    NONE = 0
    NORMAL = 1
    AGGRESSIVE = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(slots=True)
class StarvationState:
    """The persistent part of an element's starvation bookkeeping (kept across updates)."""

    status: StarvationStatus = StarvationStatus.NON_STARVING
    below_fair_share_since: float | None = None
    starving_since: float | None = None
    """When the element last became (aggressively) starving; cleared when it stops."""

    def set_status(self, status: StarvationStatus, now: float) -> None:
        if status is self.status:
            return
        self.status = status
        self.starving_since = None if status is StarvationStatus.NON_STARVING else now


def status_bound(view: ShareView, tolerance: float) -> Vector:
    """``min(fair_share x tolerance, demand_share)``: usage below this is below fair share."""
    fair = view.fair_share
    demand = view.demand_share
    return (
        min(fair[0] * tolerance, demand[0]),
        min(fair[1] * tolerance, demand[1]),
        min(fair[2] * tolerance, demand[2]),
        min(fair[3] * tolerance, demand[3]),
        min(fair[4] * tolerance, demand[4]),
    )


def operation_tolerance(view: ShareView, tolerance: float) -> float:
    """An operation whose fair share covers its demand (within 1e-4) uses tolerance 1."""
    f0, f1, f2, f3, f4 = view.fair_share
    d0, d1, d2, d3, d4 = view.demand_share
    eps = LARGE_EPSILON
    if f0 + eps < d0 or f1 + eps < d1 or f2 + eps < d2 or f3 + eps < d3 or f4 + eps < d4:
        return tolerance
    return 1.0


_NORMAL = SchedulableStatus.NORMAL
_BELOW_FAIR_SHARE = SchedulableStatus.BELOW_FAIR_SHARE
_NON_STARVING = StarvationStatus.NON_STARVING
_STARVING = StarvationStatus.STARVING
_AGGRESSIVELY_STARVING = StarvationStatus.AGGRESSIVELY_STARVING
"""Enum members as module constants (the same objects; an Enum class attribute costs ~10x
a global load in Python 3.11, and these run per operation and update)."""


def schedulable_status(view: ShareView, tolerance: float, usage_share: Vector) -> SchedulableStatus:
    """``GetStatusImpl``: below fair share iff the bound strictly dominates usage (non-blocked)."""
    if view.strictly_dominates_non_blocked(status_bound(view, tolerance), usage_share):
        return _BELOW_FAIR_SHARE
    return _NORMAL


def scaled_timeouts(
    timeout: float, aggressive_timeout: float, pending_allocation_count: int, coefficient: float
) -> tuple[float, float]:
    """Operations with few pending allocations starve sooner (``CheckForStarvation``)."""
    ratio = pending_allocation_count / coefficient
    if ratio < 1.0:
        return timeout * ratio, aggressive_timeout * ratio
    return timeout, aggressive_timeout


def check_for_starvation(
    state: StarvationState,
    status: SchedulableStatus,
    now: float,
    timeout: float,
    aggressive_timeout: float,
    aggressive_enabled: bool,
) -> None:
    """``CheckForStarvationImpl``: advance the state machine at an update at ``now``.

    The first update that sees the element below its fair share only records the time; the
    status changes at a later update strictly after the timeout.
    """
    if status is _NORMAL:
        state.below_fair_share_since = None
        state.set_status(_NON_STARVING, now)
        return
    since = state.below_fair_share_since
    if since is None:
        state.below_fair_share_since = now
    elif aggressive_enabled and now > since + aggressive_timeout:
        state.set_status(_AGGRESSIVELY_STARVING, now)
    elif now > since + timeout:
        state.set_status(_STARVING, now)
