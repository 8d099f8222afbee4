"""Compare two update results attribute by attribute, every double with ``==``.

Shared by the differential tests of the native core (``test_native_differential.py``) and the
fuzz tests.  ``==`` on floats treats ``0.0`` and ``-0.0`` as equal and nothing else: any
difference in the last bit of any value fails.
"""

from __future__ import annotations

from typing import Any

from ytsched.fairshare.elements import Element
from ytsched.fairshare.update import UpdateResult

VECTOR_FIELDS = (
    "resource_demand",
    "resource_usage",
    "limits_share",
    "strong_guarantee_share",
    "proposed_integral_share",
    "usage_share",
    "demand_share",
    "estimated_guarantee_share",
    "limited_demand_share",
)
SCALAR_FIELDS = (
    "weight",
    "burst_ratio",
    "total_burst_ratio",
    "resource_flow_ratio",
    "total_resource_flow_ratio",
    "dominant_resource",
    "fifo_index",
    "effective_fifo_index",
    "function_sizes",
    "is_gang_like",
)
DETAILED = ("strong_guarantee", "integral_guarantee", "weight_proportional", "total")
INTEGRAL = (
    "accumulated_volume",
    "last_share_ratio",
    "volume_overflow",
    "acceptable_volume",
    "children_volume_overflow",
    "accepted_free_volume",
)


def element_values(element: Element) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in VECTOR_FIELDS + SCALAR_FIELDS:
        values[name] = getattr(element, name)
    values["inferred_strong_guarantee_resources"] = tuple(
        element.inferred_strong_guarantee_resources
    )
    for part in DETAILED:
        values[f"fair_share.{part}"] = getattr(element.fair_share, part)
        values[f"promised.{part}"] = getattr(element.promised_guarantee_fair_share, part)
    for name in INTEGRAL:
        values[f"integral.{name}"] = getattr(element.integral, name)
    values["parent"] = element.parent.name if element.parent is not None else None
    values["children"] = [child.name for child in element.children]
    values["sorted_children"] = [child.name for child in element.sorted_children]
    return values


def differences(expected: UpdateResult, actual: UpdateResult, limit: int = 20) -> list[str]:
    """Human-readable differences (empty when the results agree bit for bit up to ``±0``)."""
    out: list[str] = []
    if expected.root.name != actual.root.name:
        out.append(f"root: {expected.root.name} != {actual.root.name}")
    for kind, left, right in (
        ("pool", expected.pools, actual.pools),
        ("operation", expected.operations, actual.operations),
    ):
        if list(left) != list(right):
            out.append(f"{kind} names differ")
            continue
        for name, element in left.items():
            a = element_values(element)
            b = element_values(right[name])
            for key, value in a.items():
                if value != b[key]:
                    out.append(f"{kind} {name!r} {key}: expected {value!r}, got {b[key]!r}")
                    if len(out) >= limit:
                        return out
    if [(e.code, e.message, e.attributes) for e in expected.errors] != [
        (e.code, e.message, e.attributes) for e in actual.errors
    ]:
        out.append(f"errors: expected {expected.errors!r}, got {actual.errors!r}")
    return out
