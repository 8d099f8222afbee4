"""Compare computed fair shares with the ones a production dump recorded.

YTsaurus orchid dumps (like ``gpu_tree_elements.yson``) carry each element's ``total_fair_share``.
:func:`compare_with_recorded` reports, for every element, the largest absolute difference over
resources, a distribution of those errors, and - with the improved computation, which lets a
pool split an arbitrary vector among its children - a *local split* check: given the share the
dump recorded for a pool, do we split it among the children the way production did?  A pool
whose local split differs is where a difference originates; elements below it only inherit it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ytsched.fairshare import functions
from ytsched.fairshare.elements import Element
from ytsched.fairshare.update import UpdateResult
from ytsched.resources import RESOURCE_NAMES, Vector, canonical_resource_name

THRESHOLDS = (1e-12, 1e-9, 1e-6, 1e-4, 1e-2)


@dataclass(slots=True)
class ElementDifference:
    name: str
    kind: str
    parent: str | None
    error: float
    computed: Vector
    recorded: Vector


@dataclass(slots=True)
class ComparisonReport:
    elements: list[ElementDifference]
    split_differs: list[str] = field(default_factory=list)
    """Pools whose recorded share we would split among the children differently (> 1e-4)."""

    def count_within(self, threshold: float) -> int:
        return sum(1 for e in self.elements if e.error <= threshold)

    def distribution(self) -> list[tuple[str, int]]:
        """Counts of elements per error bucket: ``<= 1e-12``, ``(1e-12, 1e-9]``, ... ."""
        rows = [(f"<= {THRESHOLDS[0]:g}", self.count_within(THRESHOLDS[0]))]
        for lower, upper in pairwise(THRESHOLDS):
            count = sum(1 for e in self.elements if lower < e.error <= upper)
            rows.append((f"({lower:g}, {upper:g}]", count))
        rows.append(
            (f"> {THRESHOLDS[-1]:g}", len(self.elements) - self.count_within(THRESHOLDS[-1]))
        )
        return rows

    def worst(self, count: int = 10) -> list[ElementDifference]:
        return sorted(self.elements, key=lambda e: e.error, reverse=True)[:count]


def recorded_shares(elements: Sequence[Mapping[str, Any]]) -> dict[str, Vector]:
    """``total_fair_share`` of every element of a dump that records it."""
    result: dict[str, Vector] = {}
    for element in elements:
        raw = element.get("total_fair_share")
        if not isinstance(raw, Mapping):
            continue
        values = [0.0] * 5
        for key, value in raw.items():
            values[RESOURCE_NAMES.index(canonical_resource_name(str(key)))] = float(value)
        result[str(element["name"])] = (values[0], values[1], values[2], values[3], values[4])
    return result


def _error(a: Vector, b: Vector) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def compare_with_recorded(
    result: UpdateResult,
    recorded: Mapping[str, Vector],
    reference: UpdateResult | None = None,
) -> ComparisonReport:
    """Per-element differences between ``result`` and the recorded shares.

    With the improved computation on, the report also locates the pools whose recorded share
    the top-down pass splits differently.  That pass needs each element's functions, which only
    the Python reference engine keeps: pass its result of the same snapshot as ``reference``
    when ``result`` came from the native core.
    """
    rows = []
    for kind, elements in (("pool", result.pools), ("operation", result.operations)):
        for name, element in elements.items():
            if name not in recorded:
                continue
            rows.append(
                ElementDifference(
                    name=name,
                    kind=kind,
                    parent=element.parent.name if element.parent else None,
                    error=_error(element.fair_share.total, recorded[name]),
                    computed=element.fair_share.total,
                    recorded=recorded[name],
                )
            )
    report = ComparisonReport(elements=rows)
    if result.options.enable_improved_fair_share_by_fit_factor_computation:
        source = reference if reference is not None else result
        if any(pool.fsbff is None for pool in source.pools.values() if pool.children):
            raise ValueError(
                "the split analysis needs the reference engine's functions: pass the result of"
                " run_update(snapshot, engine='python') as reference"
            )
        report.split_differs = _local_split_differences(source, recorded)
    return report


def _local_split_differences(result: UpdateResult, recorded: Mapping[str, Vector]) -> list[str]:
    """Pools whose recorded share we split differently among their children.

    Runs the vector top-down pass from each pool with the recorded share as input.  It
    overwrites the fair shares of the pool's subtree, so the totals are saved and restored.
    """
    saved = {
        id(e): (e.fair_share, e.promised_guarantee_fair_share)
        for e in [*result.pools.values(), *result.operations.values()]
    }
    differs: list[str] = []
    try:
        for name, pool in result.pools.items():
            if name not in recorded or not pool.children:
                continue
            functions.distribute_vector(pool, recorded[name], False, result.options)
            if any(
                child.name in recorded
                and _error(child.fair_share.total, recorded[child.name]) > 1e-4
                for child in pool.children
            ):
                differs.append(name)
    finally:
        for element in [*result.pools.values(), *result.operations.values()]:
            element.fair_share, element.promised_guarantee_fair_share = saved[id(element)]
    return differs


def subtree_of(result: UpdateResult, names: list[str]) -> set[str]:
    """Names of the given pools and everything below them."""
    seen: set[str] = set()
    stack: list[Element] = [result.pools[name] for name in names if name in result.pools]
    while stack:
        element = stack.pop()
        seen.add(element.name)
        stack.extend(element.children)
    return seen
