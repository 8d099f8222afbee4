"""Strong guarantees: inference, validation against the cluster, proportional shrinking.

Source: ``TCompositeElement::DetermineImplicitInferredStrongGuaranteeResources``,
``TRootElement::ValidateAndAdjustSpecifiedGuarantees``,
``TCompositeElement::AdjustStrongGuarantees`` and ``ComputeEstimatedGuaranteeShare`` in
``yt/yt/library/vector_hdrf/fair_share_update.cpp``.

Priority strong-guarantee tiers (``enable_priority_strong_guarantee_adjustment``) are not
supported yet: every guarantee is in the regular tier, which is the YTsaurus default.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import UpdateError, UpdateOptions
from ytsched.fairshare.plf import inverse_lower_bound
from ytsched.resources import (
    CPU_INDEX,
    EPSILON,
    ONES,
    RESOURCE_NAMES,
    ZERO,
    Vector,
    amounts_to_map,
    dominates,
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


def validate_pool_configs(root: Element, errors: list[UpdateError]) -> None:
    """Report promised-guarantee pools nested inside other such pools."""
    nested: list[str] = []

    def visit(element: Element, inside_promised: bool) -> None:
        if element.is_operation:
            return
        assert element.pool is not None
        flag = element.pool.compute_promised_guarantee_fair_share
        if flag and inside_promised:
            nested.append(element.name)
        for child in element.children:
            visit(child, inside_promised or flag)

    visit(root, False)
    if nested:
        errors.append(
            UpdateError(
                code="NestedPromisedGuaranteeFairSharePools",
                message="Found pools with enabled promised guarantee fair share computation"
                " which are nested inside other such pools",
                attributes={"nested_promised_guarantee_fair_share_pools": nested},
            )
        )


def determine_inferred_strong_guarantees(
    root: Element, total: Vector, options: UpdateOptions
) -> None:
    """Fill ``inferred_strong_guarantee_resources`` top-down.

    A child's unspecified non-main resource gets ``child_main / parent_main * parent_r``.  Below
    the first level, implicit values that together exceed what explicit siblings leave are scaled
    down proportionally; at the root no rescaling happens (overcommit is handled later).
    """
    root.inferred_strong_guarantee_resources = list(total)
    main = RESOURCE_NAMES.index(options.main_resource)
    stack = [root]
    while stack:
        element = stack.pop()
        _infer_children(element, main)
        stack.extend(child for child in element.children if not child.is_operation)


def _infer_children(element: Element, main: int) -> None:
    parent = element.inferred_strong_guarantee_resources
    total_explicit = [0.0] * 5
    for child in element.children:
        inferred = [0.0] * 5
        for index, value in child.explicit_strong_guarantee.items():
            inferred[index] = value
        child.inferred_strong_guarantee_resources = inferred
        for index in range(5):
            total_explicit[index] += inferred[index]
    parent_main = parent[main]
    for resource in range(5):
        if resource == main:
            continue
        residual = max(parent[resource] - total_explicit[resource], 0.0)
        implicit: list[tuple[Element, float]] = []
        total_implicit = 0.0
        for child in element.children:
            if resource in child.explicit_strong_guarantee:
                continue
            child_main = child.inferred_strong_guarantee_resources[main]
            ratio = child_main / parent_main if parent_main > 0 else 0.0
            value = ratio * parent[resource]
            implicit.append((child, value))
            total_implicit += value
        if not element.is_root and total_implicit > residual:
            factor = residual / total_implicit
            implicit = [(child, value * factor) for child, value in implicit]
        for child, value in implicit:
            child.inferred_strong_guarantee_resources[resource] = assign_job_resource(
                resource, value
            )


def assign_job_resource(resource: int, value: float) -> float:
    """A computed amount as YTsaurus stores it in a ``TJobResources`` field.

    ``SetResource`` (``yt/yt/library/vector_hdrf/job_resources.cpp``) assigns the double into the
    field's own type (``yt/yt/library/vector_hdrf/job_resources.h``): ``user_slots``,
    ``memory`` and ``network`` are ``i64`` and ``gpu`` is ``int``, so the value is truncated
    toward zero (1.667 slots become 1); cpu is ``TFixedPointNumber<i64, 2>``, whose constructor
    rounds ``value * 100`` half away from zero (``std::round``,
    ``yt/yt/library/numeric/fixed_point_number-inl.h``), so cpu keeps a 0.01 grid.  Used for
    the implicit (inferred) strong guarantees, the only computed amounts the engine assigns
    into such fields.
    """
    if not math.isfinite(value):
        return value
    if resource == CPU_INDEX:
        scaled = value * 100.0
        whole = math.floor(scaled)
        if scaled - whole >= 0.5:
            whole += 1
        return whole / 100.0
    return float(math.trunc(value))


def validate_and_adjust(root: Element, context: UpdateContext) -> None:
    """Report overcommitted guarantees, shrink them to fit, then estimate guarantee shares."""
    total = context.total
    total_flow = scale_amounts(total, root.total_resource_flow_ratio)
    total_burst = scale_amounts(total, root.total_burst_ratio)
    total_strong = ZERO
    for child in root.children:
        r = child.inferred_strong_guarantee_resources
        total_strong = vadd(total_strong, (r[0], r[1], r[2], r[3], r[4]))

    if not dominates(total, vadd(total_strong, total_flow)):
        context.errors.append(
            _overcommit("resource flows", "total_resource_flow", total_flow, total_strong, total)
        )
    if not dominates(total, vadd(total_strong, total_burst)):
        context.errors.append(
            _overcommit(
                "burst guarantees", "total_burst_resources", total_burst, total_strong, total
            )
        )
        burst_pools = context.burst_pools

        def fits(factor: float) -> bool:
            acc = vscale(root.strong_guarantee_share, factor)
            for pool in burst_pools:
                acc = vadd(acc, vscale(vconst(pool.burst_ratio), factor))
            return dominates(ONES, acc)

        factor = inverse_lower_bound(0.0, 1.0, fits)
        root.strong_guarantee_share = vscale(root.strong_guarantee_share, factor)
        for pool in burst_pools:
            pool.burst_ratio *= factor

    _adjust_strong_guarantees(root)
    _infer_weights(root, context.options)
    root.estimated_guarantee_share = root.strong_guarantee_share
    _compute_estimated_guarantee_share(root)


def _overcommit(
    what: str, key: str, amounts: Vector, total_strong: Vector, total: Vector
) -> UpdateError:
    return UpdateError(
        code="PoolTreeGuaranteesOvercommit",
        message=f"Strong guarantees and {what} exceed total cluster resources",
        attributes={
            "total_strong_guarantee_resources": amounts_to_map(total_strong),
            key: amounts_to_map(amounts),
            "total_cluster_resources": amounts_to_map(total),
        },
    )


def _adjust_strong_guarantees(element: Element) -> None:
    """Clip to limits, then shrink children proportionally if they exceed the parent."""
    element.strong_guarantee_share = vmin(element.strong_guarantee_share, element.limits_share)
    children = element.children
    available = vmax(element.strong_guarantee_share, ZERO)
    children_sum = ZERO
    for child in children:
        children_sum = vadd(children_sum, child.strong_guarantee_share)
    if not dominates(available, children_sum):
        shares = [child.strong_guarantee_share for child in children]

        def fits(factor: float) -> bool:
            acc = ZERO
            for share in shares:
                acc = vadd(acc, vscale(share, factor))
            return dominates(available, acc)

        factor = inverse_lower_bound(0.0, 1.0, fits) if fits(0.0) else 0.0
        for child, share in zip(children, shares, strict=True):
            child.strong_guarantee_share = vscale(share, factor)
    for child in children:
        if not child.is_operation:
            _adjust_strong_guarantees(child)


def _infer_weights(root: Element, options: UpdateOptions) -> None:
    """Weights of pools without an explicit weight.

    With ``infer_weight_from_guarantees_share_multiplier = m`` a pool's weight is
    ``m * own / parent`` where ``own`` is its dominant strong-guarantee share plus its total
    resource flow ratio, and ``parent`` the same for its parent (1 when either is ~0).
    """
    multiplier = options.infer_weight_from_guarantees_share_multiplier
    if multiplier is None:
        return
    stack = [root]
    while stack:
        element = stack.pop()
        for child in element.children:
            if child.is_operation:
                continue
            assert child.pool is not None
            if child.pool.weight is None:
                own = vmaxcomp(child.strong_guarantee_share) + child.total_resource_flow_ratio
                parent = (
                    vmaxcomp(element.strong_guarantee_share) + element.total_resource_flow_ratio
                )
                child.weight = (
                    1.0 if own < EPSILON or parent < EPSILON else own * multiplier / parent
                )
            stack.append(child)


def _compute_estimated_guarantee_share(element: Element) -> None:
    """Each child's strong guarantee (as far as the parent's estimate lasts), plus the parent's
    undistributed remainder split by weight.

    This is the version of ``ComputeEstimatedGuaranteeShare`` that the current YTsaurus unit
    tests exercise; an older version also added the child's resource flow (see
    ``docs/conformance.md``).
    """
    children = element.children
    if not children:
        return
    weight_sum = 0.0
    undistributed = element.estimated_guarantee_share
    for child in children:
        weight_sum += child.weight
        estimate = vmin(child.strong_guarantee_share, undistributed)
        child.estimated_guarantee_share = estimate
        undistributed = vsub(undistributed, estimate)
    for child in children:
        share = list(child.estimated_guarantee_share)
        for r in range(5):
            share[r] += undistributed[r] * child.weight / weight_sum
        child.estimated_guarantee_share = (share[0], share[1], share[2], share[3], share[4])
    for child in children:
        if not child.is_operation:
            _compute_estimated_guarantee_share(child)
