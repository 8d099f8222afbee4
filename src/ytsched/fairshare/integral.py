"""Integral guarantees: volume accounting and the integral shares of burst and relaxed pools.

Source: ``TPool::UpdateAccumulatedResourceVolume``,
``UpdateOverflowAndAcceptableVolumesRecursively``, ``DistributeFreeVolume``,
``UpdateBurstPoolIntegralShares``, ``UpdateRelaxedPoolIntegralShares``,
``GetHierarchicalAvailableLimitsShare``, ``IncreaseHierarchicalIntegralShare`` and
``AdjustProposedIntegralShare`` in ``yt/yt/library/vector_hdrf/fair_share_update.cpp``.

Volumes are resource x seconds.  A pool's volume grows at its resource flow and shrinks by the
integral share it was *granted* at the previous update (not by its usage), is capped at
``max(previous volume, flow x saturation period)``, and what overflows the cap is either dropped
or, where a parent enables it, handed to hungry siblings.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ytsched.fairshare import functions
from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import IntegralGuaranteeType
from ytsched.fairshare.plf import inverse_lower_bound
from ytsched.resources import (
    EPSILON,
    ONES,
    ZERO,
    Vector,
    dominates,
    min_resource_ratio,
    scale_amounts,
    vadd,
    vconst,
    vmax,
    vmaxcomp,
    vmin,
    vscale,
    vsub,
)

if TYPE_CHECKING:
    from ytsched.fairshare.update import UpdateContext


def _volume(amounts: Vector, seconds: float) -> Vector:
    return vscale(amounts, seconds)


def consume_and_refill(root: Element, context: UpdateContext) -> None:
    for pool in context.burst_pools:
        _update_accumulated_volume(pool, context)
    for pool in context.relaxed_pools:
        _update_accumulated_volume(pool, context)
    _update_overflow_and_acceptable(root)
    _distribute_free_volume(root, context)


def _update_accumulated_volume(pool: Element, context: UpdateContext) -> None:
    total = context.total
    if total == ZERO or context.previous_update_time is None or context.now is None:
        return
    state = pool.integral
    assert pool.pool is not None
    period = context.now - context.previous_update_time
    old = state.accumulated_volume
    capacity = _volume(
        scale_amounts(total, pool.resource_flow_ratio),
        context.options.integral_pool_capacity_saturation_period,
    )
    volume = vadd(old, vscale(_volume(total, period), pool.resource_flow_ratio))
    volume = vsub(volume, vscale(_volume(total, period), state.last_share_ratio))
    volume = vmax(volume, ZERO)
    upper = vmax(old, capacity)
    state.volume_overflow = vmax(vsub(volume, upper), ZERO)
    if pool.pool.integral_guarantees.can_accept_free_volume:
        state.acceptable_volume = vmax(vsub(capacity, volume), ZERO)
    state.accumulated_volume = vmin(volume, upper)


def _update_overflow_and_acceptable(element: Element) -> None:
    """Bottom-up over non-integral pools: what children overflow and what they could take."""
    if element.is_operation or element.integral_type is not IntegralGuaranteeType.NONE:
        return
    state = element.integral
    overflow = ZERO
    acceptable = ZERO
    for child in element.children:
        if child.is_operation:
            continue
        _update_overflow_and_acceptable(child)
        overflow = vadd(overflow, child.integral.volume_overflow)
        acceptable = vadd(acceptable, child.integral.acceptable_volume)
    state.children_volume_overflow = overflow
    assert element.pool is not None
    can_accept = element.pool.integral_guarantees.can_accept_free_volume
    own_overflow = [0.0] * 5
    own_acceptable = [0.0] * 5
    for r in range(5):
        diff = overflow[r] - acceptable[r]
        if diff > 0:
            own_overflow[r] = diff
        elif can_accept:
            own_acceptable[r] = -diff
    state.volume_overflow = _tuple(own_overflow)
    state.acceptable_volume = _tuple(own_acceptable)


def _should_distribute(element: Element, context: UpdateContext) -> bool:
    assert element.pool is not None
    own = element.pool.integral_guarantees.should_distribute_free_volume_among_children
    if own is not None:
        return own
    return context.options.should_distribute_free_volume_among_children


def _distribute_free_volume(element: Element, context: UpdateContext) -> None:
    if element.is_operation:
        return
    state = element.integral
    free = state.accepted_free_volume
    if element.integral_type is not IntegralGuaranteeType.NONE:
        if free != ZERO:
            state.accumulated_volume = vadd(state.accumulated_volume, free)
        return
    if _should_distribute(element, context) and not (
        free == ZERO and state.children_volume_overflow == ZERO
    ):
        free_list = list(vadd(free, state.children_volume_overflow))
        accepted = {id(child): [0.0] * 5 for child in element.children}
        for r in range(5):
            if free_list[r] == 0:
                continue
            hungry: list[tuple[float, float, Element]] = []
            weight_sum = 0.0
            for child in element.children:
                if child.is_operation:
                    continue
                acceptable = child.integral.acceptable_volume[r]
                weight = child.total_resource_flow_ratio
                if acceptable > EPSILON and weight > EPSILON:
                    hungry.append((acceptable / weight, weight, child))
                    weight_sum += weight
            hungry.sort(key=lambda item: item[0])
            index = 0
            while index < len(hungry):
                _, weight, child = hungry[index]
                suggested = free_list[r] * (weight / weight_sum)
                acceptable = child.integral.acceptable_volume[r]
                if suggested < acceptable:
                    break
                accepted[id(child)][r] = acceptable
                free_list[r] -= acceptable
                weight_sum -= weight
                index += 1
            for _, weight, child in hungry[index:]:
                accepted[id(child)][r] = free_list[r] * (weight / weight_sum)
        for child in element.children:
            if not child.is_operation:
                child.integral.accepted_free_volume = _tuple(accepted[id(child)])
    for child in element.children:
        _distribute_free_volume(child, context)


def _tuple(values: list[float]) -> Vector:
    return (values[0], values[1], values[2], values[3], values[4])


# --- integral shares -----------------------------------------------------------------------


def share_ratio_by_volume(pool: Element, context: UpdateContext) -> float:
    """Accumulated volume as a share of the cluster, spread over the smooth period."""
    return (
        min_resource_ratio(pool.integral.accumulated_volume, context.total)
        / context.options.integral_smooth_period
    )


def adjust_proposed_integral_share(limits: Vector, strong: Vector, proposed: Vector) -> Vector:
    """Keep ``strong + proposed`` within ``limits``, nudging by ulps where rounding overshoots."""
    if dominates(limits, vadd(strong, proposed)):
        return proposed
    adjusted = list(vsub(limits, strong))
    for r in range(5):
        for _ in range(32):
            if limits[r] < strong[r] + adjusted[r]:
                adjusted[r] = math.nextafter(adjusted[r], 0.0)
            else:
                break
    return _tuple(adjusted)


def hierarchical_available_limits_share(element: Element) -> Vector:
    result = ONES
    current: Element | None = element
    while current is not None and not current.is_root:
        result = vmin(result, vsub(current.limits_share, current.guarantee_share))
        current = current.parent
    return result


def increase_hierarchical_integral_share(element: Element, delta: Vector) -> None:
    current: Element | None = element
    while current is not None:
        increased = vadd(current.proposed_integral_share, delta)
        if not current.is_root:
            increased = adjust_proposed_integral_share(
                current.limits_share, current.strong_guarantee_share, increased
            )
        current.proposed_integral_share = increased
        current = current.parent


def update_burst_pool_integral_shares(context: UpdateContext) -> None:
    for pool in context.burst_pools:
        ratio = min(pool.burst_ratio, share_ratio_by_volume(pool, context))
        proposed = vmin(vconst(ratio), hierarchical_available_limits_share(pool))
        proposed = adjust_proposed_integral_share(
            pool.limits_share, pool.strong_guarantee_share, proposed
        )
        pool.proposed_integral_share = proposed
        functions.prepare_recursively(pool, context.options)
        pool.proposed_integral_share = ZERO
        assert pool.fsbs is not None
        within_guarantees = pool.fsbs.value_at(0.0)
        integral_share = vmax(vsub(within_guarantees, pool.strong_guarantee_share), ZERO)
        increase_hierarchical_integral_share(pool, integral_share)
        pool.reset_functions()
        pool.integral.last_share_ratio = vmaxcomp(integral_share)


def update_relaxed_pool_integral_shares(root: Element, context: UpdateContext) -> None:
    if not context.relaxed_pools:
        return
    available = ONES
    for child in root.children:
        available = vsub(available, vmin(child.guarantee_share, child.demand_share))
    available = vmax(available, ZERO)

    pools: list[Element] = []
    weights: list[float] = []
    original_limits: list[Vector] = []
    for pool in context.relaxed_pools:
        ratio = share_ratio_by_volume(pool, context)
        if ratio == 0:
            continue
        pools.append(pool)
        weights.append(ratio)
        original_limits.append(pool.limits_share)
        assert pool.pool is not None
        multiplier = pool.pool.integral_guarantees.relaxed_share_multiplier_limit
        if multiplier is None:
            multiplier = context.options.relaxed_share_multiplier_limit
        cap = vmin(vconst(ratio), vscale(vconst(pool.resource_flow_ratio), multiplier))
        pool.limits_share = vmin(pool.limits_share, vadd(cap, pool.strong_guarantee_share))
        functions.prepare_recursively(pool, context.options)
    if not pools:
        return
    min_weight = min(weights)
    weights = [w / min_weight for w in weights]

    def fits(fit_factor: float) -> bool:
        acc = ZERO
        for pool, weight in zip(pools, weights, strict=True):
            assert pool.fsbs is not None
            share = pool.fsbs.value_at(min(1.0, fit_factor * weight))
            acc = vadd(acc, vmax(vsub(share, pool.strong_guarantee_share), ZERO))
        return dominates(available, acc)

    fit_factor = inverse_lower_bound(0.0, 1.0, fits)
    for pool, weight, limits in zip(pools, weights, original_limits, strict=True):
        assert pool.fsbs is not None
        share = pool.fsbs.value_at(min(1.0, fit_factor * weight))
        integral_share = vmax(vsub(share, pool.strong_guarantee_share), ZERO)
        pool.limits_share = limits
        limited = vmin(integral_share, hierarchical_available_limits_share(pool))
        increase_hierarchical_integral_share(pool, limited)
        pool.reset_functions()
        pool.integral.last_share_ratio = vmaxcomp(limited)
