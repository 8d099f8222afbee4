"""Orchid-shaped output of a fair-share update (``docs/snapshot-format.md``, "Output").

Attribute names are the YTsaurus orchid names (``yt/yt/server/scheduler/strategy/pool_tree.cpp``,
``BuildElementYson``), so scripts written against a real scheduler can read ours.  Vectors are
maps ``resource -> share`` with all five resources.
"""

from __future__ import annotations

from typing import Any

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import DetailedShare, IntegralGuaranteeType, SchedulingMode
from ytsched.fairshare.update import UpdateResult
from ytsched.resources import (
    RESOURCE_NAMES,
    Vector,
    max_resource_ratio,
    min_resource_ratio,
    round_amount,
    scale_amounts,
    vmin,
    vscale,
)

ESTIMATED_BURST_DURATION_MARGIN = 1e-4
"""Burst duration is shown only when the burst ratio exceeds the flow ratio by this much."""


def vector_map(vector: Vector) -> dict[str, float]:
    return {name: float(value) for name, value in zip(RESOURCE_NAMES, vector, strict=True)}


def detailed_map(share: DetailedShare) -> dict[str, dict[str, float]]:
    return {
        "strong_guarantee": vector_map(share.strong_guarantee),
        "integral_guarantee": vector_map(share.integral_guarantee),
        "weight_proportional": vector_map(share.weight_proportional),
        "total": vector_map(share.total),
    }


def resources_of(total: Vector, share: Vector) -> dict[str, float]:
    """``total x share`` per resource on each type's grid: the absolute amounts YTsaurus shows
    next to a share (``fair_resources``, ``promised_fair_share_resources``, ...)."""
    return {
        name: round_amount(index, total[index] * share[index])
        for index, name in enumerate(RESOURCE_NAMES)
    }


def _function_sizes(element: Element) -> dict[str, int] | None:
    sizes = element.function_sizes
    if sizes is None:
        return None
    return {
        "fair_share_by_suggestion_size": sizes[0],
        "fair_share_by_fit_factor_size": sizes[1],
        "max_fit_factor_by_suggestion_size": sizes[2],
    }


def element_attributes(element: Element, result: UpdateResult) -> dict[str, Any]:
    """All orchid attributes of one element after an update.

    Names are YTsaurus's (``docs/conformance.md``, "Orchid attributes", lists them against
    ``yt/yt/server/scheduler/strategy/pool_tree.cpp``); ``promised_guarantee_fair_share`` and
    ``inferred_strong_guarantee_resources`` are kept as aliases of
    ``detailed_promised_guarantee_fair_share`` and ``effective_strong_guarantee_resources``.
    """
    total = result.total_resource_limits
    fair_total = element.fair_share.total
    promised = element.promised_guarantee_fair_share
    promised_detailed = detailed_map(promised)
    guarantee_resources = vector_map(
        tuple(element.inferred_strong_guarantee_resources)  # type: ignore[arg-type]
    )
    attributes: dict[str, Any] = {
        "detailed_fair_share": detailed_map(element.fair_share),
        "detailed_dominant_fair_share": {
            "strong_guarantee": max(element.fair_share.strong_guarantee),
            "integral_guarantee": max(element.fair_share.integral_guarantee),
            "weight_proportional": max(element.fair_share.weight_proportional),
            "total": max(fair_total),
        },
        "fair_share_ratio": max(fair_total),
        "dominant_fair_share": max(fair_total),
        "fair_resources": resources_of(total, fair_total),
        "usage_ratio": max(element.usage_share),
        "dominant_usage_share": max(element.usage_share),
        "demand_ratio": max(element.demand_share),
        "dominant_demand_share": max(element.demand_share),
        "dominant_resource": element.dominant_resource,
        "demand_share": vector_map(element.demand_share),
        "usage_share": vector_map(element.usage_share),
        "limits_share": vector_map(element.limits_share),
        "resource_limits": vector_map(vmin(element.resource_limits, total)),
        "strong_guarantee_share": vector_map(element.strong_guarantee_share),
        "min_share_ratio": max(element.strong_guarantee_share),
        "effective_strong_guarantee_resources": guarantee_resources,
        "inferred_strong_guarantee_resources": guarantee_resources,
        "proposed_integral_share": vector_map(element.proposed_integral_share),
        "estimated_guarantee_share": vector_map(element.estimated_guarantee_share),
        "dominant_estimated_guarantee_share": max(element.estimated_guarantee_share),
        "estimated_guarantee_resources": resources_of(total, element.estimated_guarantee_share),
        "detailed_promised_guarantee_fair_share": promised_detailed,
        "promised_guarantee_fair_share": promised_detailed,
        "promised_fair_share": vector_map(promised.total),
        "promised_dominant_fair_share": max(promised.total),
        "promised_fair_share_resources": resources_of(total, promised.total),
        "resource_usage": vector_map(element.resource_usage),
        "resource_demand": vector_map(element.resource_demand),
        "weight": element.weight,
        "fair_share_functions_statistics": _function_sizes(element),
    }
    limited = element.limited_demand_share
    if limited is not None:
        attributes["limited_demand_share"] = vector_map(limited)
        attributes["dominant_limited_demand_share"] = max(limited)
        attributes["limited_resource_demand"] = resources_of(total, limited)
    if element.is_operation:
        assert element.parent is not None
        attributes["pool"] = element.parent.name
        attributes["is_gang"] = element.is_gang_like
        if element.parent.mode is SchedulingMode.FIFO:
            attributes["fifo_index"] = element.fifo_index
            attributes["effective_fifo_index"] = element.effective_fifo_index
        return attributes

    assert element.pool is not None
    attributes["parent"] = element.parent.name if element.parent is not None else None
    attributes["mode"] = element.mode.value
    attributes["total_resource_flow_ratio"] = element.total_resource_flow_ratio
    attributes["total_burst_ratio"] = element.total_burst_ratio
    attributes["child_pool_count"] = sum(1 for child in element.children if not child.is_operation)
    kind = element.integral_type
    if kind is not IntegralGuaranteeType.NONE:
        options = result.options
        volume = element.integral.accumulated_volume
        capacity = vscale(
            scale_amounts(total, element.resource_flow_ratio),
            options.integral_pool_capacity_saturation_period,
        )
        ratio_volume = min_resource_ratio(volume, total)
        integral = element.pool.integral_guarantees
        specified_flow_ratio = max_resource_ratio(integral.resource_flow, total)
        specified_burst_ratio = max_resource_ratio(integral.burst_guarantee_resources, total)
        attributes["integral_guarantee_type"] = kind.value
        attributes["specified_resource_flow"] = vector_map(integral.resource_flow)
        attributes["specified_burst_guarantee_resources"] = vector_map(
            integral.burst_guarantee_resources
        )
        attributes["specified_resource_flow_ratio"] = specified_flow_ratio
        attributes["specified_burst_ratio"] = specified_burst_ratio
        attributes["integral_pool_capacity"] = vector_map(capacity)
        attributes["accumulated_resource_volume"] = vector_map(volume)
        attributes["accumulated_resource_ratio_volume"] = ratio_volume
        attributes["last_integral_share_ratio"] = element.integral.last_share_ratio
        if (
            kind is IntegralGuaranteeType.BURST
            and specified_burst_ratio > specified_flow_ratio + ESTIMATED_BURST_DURATION_MARGIN
        ):
            attributes["estimated_burst_usage_duration_seconds"] = ratio_volume / (
                specified_burst_ratio - specified_flow_ratio
            )
    return attributes


def to_orchid(result: UpdateResult) -> dict[str, Any]:
    """The whole update as ``{pools, operations, errors}``."""
    return {
        "pools": {name: element_attributes(e, result) for name, e in result.pools.items()},
        "operations": {
            name: element_attributes(e, result) for name, e in result.operations.items()
        },
        "errors": [
            {"code": error.code, "message": error.message, "attributes": error.attributes}
            for error in result.errors
        ],
    }
