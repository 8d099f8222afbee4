"""Read a pool-tree snapshot document (``docs/snapshot-format.md``) into a :class:`TreeSnapshot`.

Both top-level forms are accepted: a bare list of elements (the shape of YTsaurus's production
dump, cluster totals taken from the root's ``resource_limits``) and a map with ``options``,
``total_resource_limits``, ``now``, ``previous_update_time`` and ``elements``.

Every problem raises :class:`~ytsched.errors.SnapshotError` whose message names the element and
field (``element 'pool7' (#12): weight: expected a positive number, got -1``).
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from dataclasses import fields
from enum import Enum
from typing import Any, TypeVar

from ytsched.errors import SnapshotError
from ytsched.fairshare.model import (
    DEFAULT_FIFO_SORT_PARAMETERS,
    FifoSortParameter,
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    SchedulingMode,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.resources import (
    INFINITE_AMOUNT,
    INFINITE_RESOURCES,
    RESOURCE_NAMES,
    ZERO,
    ResourceError,
    Vector,
    canonical_resource_name,
    parse_amounts,
)

_POOL_FIELDS = {
    "type",
    "name",
    "parent",
    "mode",
    "weight",
    "strong_guarantee_resources",
    "resource_limits",
    "integral_guarantees",
    "accumulated_resource_volume",
    "last_integral_share_ratio",
    "fifo_sort_parameters",
    "compute_promised_guarantee_fair_share",
    "enable_fifo_children_reordering_for_guarantee_utilization",
    "total_fair_share",
}
_OPERATION_FIELDS = {
    "type",
    "name",
    "parent",
    "resource_demand",
    "resource_usage",
    "resource_limits",
    "weight",
    "start_time",
    "pending_job_count",
    "is_gang",
    "operation_type",
    "total_fair_share",
}
_INTEGRAL_FIELDS = {
    "guarantee_type",
    "resource_flow",
    "burst_guarantee_resources",
    "relaxed_share_multiplier_limit",
    "can_accept_free_volume",
    "should_distribute_free_volume_among_children",
}
_OPTION_TYPES: dict[str, type] = {
    option.name: {"str": str, "bool": bool}.get(str(option.type), float)
    for option in fields(UpdateOptions)
}
"""Accepted ``options`` and their value types, derived from :class:`UpdateOptions`."""
_TOP_LEVEL_FIELDS = {"options", "total_resource_limits", "now", "previous_update_time", "elements"}
MIN_WEIGHT = 1.4901161193847656e-08
"""sqrt(DBL_EPSILON): the smallest weight YTsaurus accepts (``TPoolConfig`` validation)."""
MAX_WEIGHT = 1.0 / MIN_WEIGHT


def parse_snapshot(document: Any) -> TreeSnapshot:
    """Validate and convert a parsed snapshot document."""
    if isinstance(document, list):
        return _parse_elements(document, options=UpdateOptions(), totals=None, now=None, prev=None)
    if not isinstance(document, Mapping):
        raise SnapshotError(
            "InvalidSnapshot",
            f"snapshot: expected a list of elements or a map, got {type(document).__name__}",
        )
    unknown = sorted(set(document) - _TOP_LEVEL_FIELDS)
    if unknown:
        raise SnapshotError(
            "UnknownField",
            f"snapshot: unknown top-level field {unknown[0]!r}"
            f" (expected {', '.join(sorted(_TOP_LEVEL_FIELDS))})",
        )
    if "elements" not in document:
        raise SnapshotError("InvalidSnapshot", "snapshot: missing 'elements'")
    options = _parse_options(document.get("options"))
    totals = None
    if document.get("total_resource_limits") is not None:
        totals = _finite_totals(
            _amounts(document["total_resource_limits"], "total_resource_limits", ZERO[0]),
            "total_resource_limits",
        )
    now = _optional_number(document.get("now"), "snapshot: now")
    prev = _optional_number(document.get("previous_update_time"), "snapshot: previous_update_time")
    if now is not None and prev is not None and prev > now:
        raise SnapshotError(
            "InvalidSnapshot", f"snapshot: previous_update_time {prev} is after now {now}"
        )
    elements = document["elements"]
    if not isinstance(elements, list):
        raise SnapshotError("InvalidSnapshot", "snapshot: 'elements' must be a list")
    return _parse_elements(
        elements, options=options, totals=totals, now=now, prev=prev, map_form=True
    )


def _parse_options(raw: Any) -> UpdateOptions:
    if raw is None:
        return UpdateOptions()
    if not isinstance(raw, Mapping):
        raise SnapshotError("InvalidOption", "options: expected a map")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        expected = _OPTION_TYPES.get(key)
        if expected is None:
            raise SnapshotError(
                "UnknownField",
                f"options: unknown option {key!r} (known: {', '.join(sorted(_OPTION_TYPES))})",
            )
        if value is None:
            continue
        if expected is bool:
            if not isinstance(value, bool):
                raise SnapshotError("InvalidOption", f"options.{key}: expected a boolean")
        elif expected is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SnapshotError("InvalidOption", f"options.{key}: expected a number")
            value = float(value)
            if not math.isfinite(value) or value <= 0:
                raise SnapshotError("InvalidOption", f"options.{key}: must be a positive number")
        elif not isinstance(value, str):
            raise SnapshotError("InvalidOption", f"options.{key}: expected a string")
        values[key] = value
    if "main_resource" in values:
        try:
            values["main_resource"] = canonical_resource_name(values["main_resource"])
        except ResourceError as error:
            raise SnapshotError("InvalidOption", f"options.main_resource: {error}") from None
    multiplier = values.get("infer_weight_from_guarantees_share_multiplier")
    if multiplier is not None and multiplier < 1:
        raise SnapshotError(
            "InvalidOption", "options.infer_weight_from_guarantees_share_multiplier: must be >= 1"
        )
    limit = values.get("relaxed_share_multiplier_limit")
    if limit is not None and not 1 <= limit <= 10:
        raise SnapshotError(
            "InvalidOption", "options.relaxed_share_multiplier_limit: must be within [1, 10]"
        )
    return UpdateOptions(**values)


def _optional_number(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SnapshotError("InvalidSnapshot", f"{what}: expected a finite number")
    return float(value)


def _amounts(raw: Any, what: str, missing: float) -> Vector:
    try:
        return parse_amounts(raw, missing=missing, what=what)
    except ResourceError as error:
        raise SnapshotError("InvalidResources", str(error)) from None


def _parse_elements(
    elements: list[Any],
    *,
    options: UpdateOptions,
    totals: Vector | None,
    now: float | None,
    prev: float | None,
    map_form: bool = False,
) -> TreeSnapshot:
    pools: list[PoolSpec] = []
    operations: list[OperationSpec] = []
    root_limits: Vector | None = None
    for position, raw in enumerate(elements):
        if not isinstance(raw, Mapping):
            raise SnapshotError(
                "InvalidElement", f"element #{position}: expected a map, got {type(raw).__name__}"
            )
        name = raw.get("name")
        if name is not None and not isinstance(name, str):
            raise SnapshotError(
                "InvalidElement",
                f"element #{position}: name: expected a string, got {type(name).__name__}"
                f" {_shown(name)}",
            )
        if not name:
            raise SnapshotError("InvalidElement", f"element #{position}: missing or empty 'name'")
        where = f"element {name!r} (#{position})"
        kind = raw.get("type")
        if kind == "pool":
            pool = _parse_pool(raw, where)
            _validate_integral(pool, raw.get("integral_guarantees"), options, where)
            if pool.parent is None and raw.get("resource_limits") is not None:
                root_limits = _finite_totals(
                    _amounts(raw["resource_limits"], f"{where}: resource_limits", 0.0),
                    f"{where}: resource_limits",
                )
            pools.append(pool)
        elif kind == "operation":
            operations.append(_parse_operation(raw, where))
        else:
            raise SnapshotError(
                "InvalidElement",
                f"{where}: 'type' must be 'pool' or 'operation', got {_shown(kind)}",
            )
    _validate_integral_nesting(pools)
    _validate_parents(pools, operations)
    if totals is None and root_limits is None and map_form:
        # Cluster totals used to become silently zero here (every share 0).
        raise SnapshotError(
            "InvalidSnapshot",
            "snapshot: missing 'total_resource_limits' (the cluster's totals, e.g."
            " {user_slots = 100; cpu = 100; gpu = 0; memory = 1073741824; network = 0}; or"
            " resource_limits on the root pool)",
        )
    if totals is None:
        if root_limits is None:
            raise SnapshotError(
                "InvalidSnapshot",
                "snapshot: no total_resource_limits and no root pool with resource_limits",
            )
        totals = root_limits
    return TreeSnapshot(
        total_resource_limits=totals,
        pools=pools,
        operations=operations,
        options=options,
        now=now,
        previous_update_time=prev,
    )


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3
_SHOWN.maxstring = 40
_SHOWN.maxother = 40


def _shown(value: Any) -> str:
    """A bounded ``repr`` of an input value for an error message: ``reprlib`` stops at a
    depth of 3, so a hostile, deeply nested value cannot make the message itself fail
    (``repr`` of a list nested 1,000 deep raises RecursionError)."""
    text = _SHOWN.repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_E = TypeVar("_E", bound=Enum)


def _choice(kind: type[_E], raw: Any, what: str, expected: str) -> _E:
    """``kind(raw)`` for a string-valued enum, or an ``InvalidElement`` error naming ``what``
    and the ``expected`` values (an enum's own ValueError would ``repr`` any value, however
    deep)."""
    if isinstance(raw, str):
        try:
            return kind(raw)
        except ValueError:
            pass
    raise SnapshotError("InvalidElement", f"{what}: expected {expected}, got {_shown(raw)}")


def _finite_totals(totals: Vector, what: str) -> Vector:
    """Cluster totals must be finite: shares are fractions of them."""
    for name, value in zip(RESOURCE_NAMES, totals, strict=True):
        if not math.isfinite(value) or value >= INFINITE_AMOUNT:
            raise SnapshotError(
                "InvalidResources", f"{what}.{name}: the cluster total must be a finite amount"
            )
    return totals


def _validate_parents(pools: list[PoolSpec], operations: list[OperationSpec]) -> None:
    """A pool's parent must be a pool: say so when it names an operation."""
    operation_names = {op.name for op in operations}
    for pool in pools:
        if pool.parent is not None and pool.parent in operation_names:
            raise SnapshotError(
                "InvalidParent",
                f"pool {pool.name!r}: parent {pool.parent!r} is an operation; only pools have"
                " children",
            )
    for op in operations:
        if op.parent in operation_names:
            raise SnapshotError(
                "InvalidParent",
                f"operation {op.name!r}: parent {op.parent!r} is an operation; only pools have"
                " children",
            )


def validate_guarantee_sums(snapshot: TreeSnapshot) -> None:
    """No pool (below the root) guarantees its children more than it has itself.

    The same rule, and the same check, as for live pool trees and simulator scenarios
    (:func:`ytsched.pooltree.validation.check_children_sum`); ``ytsched fair-share`` applies
    it to its input.  The engine itself accepts such trees and shrinks the children
    proportionally, as YTsaurus's update does (its unit tests and our generated trees rely on
    that), so library callers of :func:`parse_snapshot` are not refused.
    """
    from ytsched.pooltree.validation import check_children_sum

    pools = snapshot.pools
    by_name = {pool.name: pool for pool in pools}
    children: dict[str, list[PoolSpec]] = {}
    for pool in pools:
        if pool.parent is not None:
            children.setdefault(pool.parent, []).append(pool)
    for parent_name, kids in children.items():
        parent = by_name.get(parent_name)
        if parent is None or parent.parent is None:
            continue
        for index, resource in enumerate(RESOURCE_NAMES):
            setters = [k for k in kids if index in k.strong_guarantee_resources]
            if not setters:
                continue
            total = sum(k.strong_guarantee_resources[index] for k in setters)
            check_children_sum(
                f"pool {parent_name!r}",
                parent_name,
                f"strong_guarantee_resources.{resource}",
                parent.strong_guarantee_resources.get(index, 0.0),
                total,
                [k.name for k in setters],
            )


def _named_resources(raw: Any) -> set[str]:
    if not isinstance(raw, Mapping):
        return set()
    return {canonical_resource_name(str(k)) for k, v in raw.items() if v is not None}


def _validate_integral(pool: PoolSpec, raw: Any, options: UpdateOptions, where: str) -> None:
    """Integral-guarantee rules of ``TPoolConfig::Validate`` and the master-side checks.

    A burst pool needs both a resource flow and a burst guarantee, a relaxed pool only a flow
    (a burst guarantee is an error there), and both must name the tree's main resource.
    """
    kind = pool.integral_guarantees.guarantee_type
    if kind is IntegralGuaranteeType.NONE or not isinstance(raw, Mapping):
        return
    what = f"{where}: integral_guarantees"
    flow = _named_resources(raw.get("resource_flow"))
    burst = _named_resources(raw.get("burst_guarantee_resources"))
    main = options.main_resource
    if not flow:
        raise SnapshotError(
            "InvalidIntegralGuarantees", f"{what}: a {kind.value} pool needs resource_flow"
        )
    if main not in flow:
        raise SnapshotError(
            "InvalidIntegralGuarantees",
            f"{what}: resource_flow must name the main resource {main!r}",
        )
    if kind is IntegralGuaranteeType.BURST:
        if not burst:
            raise SnapshotError(
                "InvalidIntegralGuarantees",
                f"{what}: a burst pool needs burst_guarantee_resources",
            )
        if main not in burst:
            raise SnapshotError(
                "InvalidIntegralGuarantees",
                f"{what}: burst_guarantee_resources must name the main resource {main!r}",
            )
    elif burst:
        raise SnapshotError(
            "InvalidIntegralGuarantees",
            f"{what}: a relaxed pool cannot have burst_guarantee_resources",
        )


def _validate_integral_nesting(pools: list[PoolSpec]) -> None:
    """An integral pool may not contain another integral pool (master-side rule)."""
    by_name = {pool.name: pool for pool in pools}
    for pool in pools:
        if pool.integral_guarantees.guarantee_type is IntegralGuaranteeType.NONE:
            continue
        ancestor = by_name.get(pool.parent) if pool.parent is not None else None
        seen: set[str] = set()
        while ancestor is not None and ancestor.name not in seen:
            seen.add(ancestor.name)
            if ancestor.integral_guarantees.guarantee_type is not IntegralGuaranteeType.NONE:
                raise SnapshotError(
                    "InvalidIntegralGuarantees",
                    f"pool {pool.name!r}: integral pools cannot be nested, but its ancestor"
                    f" {ancestor.name!r} is a {ancestor.integral_guarantees.guarantee_type.value}"
                    " pool",
                )
            ancestor = by_name.get(ancestor.parent) if ancestor.parent is not None else None


def _check_fields(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in raw:
        if key not in allowed:
            raise SnapshotError("UnknownField", f"{where}: unknown field {key!r}")


def _weight(raw: Any, where: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise SnapshotError(
            "InvalidElement", f"{where}: weight: expected a number, got {_shown(raw)}"
        )
    if not MIN_WEIGHT <= raw <= MAX_WEIGHT:
        raise SnapshotError(
            "InvalidElement",
            f"{where}: weight: {raw} is outside [{MIN_WEIGHT:.3g}, {MAX_WEIGHT:.3g}]",
        )
    return float(raw)


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SnapshotError("InvalidElement", f"{where}: {key}: expected a boolean")
    return value


def _parse_pool(raw: Mapping[str, Any], where: str) -> PoolSpec:
    _check_fields(raw, _POOL_FIELDS, where)
    parent = raw.get("parent")
    if parent is not None and not isinstance(parent, str):
        raise SnapshotError("InvalidElement", f"{where}: parent: expected a pool name")
    mode = _choice(
        SchedulingMode, raw.get("mode", "fair_share"), f"{where}: mode", "'fair_share' or 'fifo'"
    )
    weight = None if raw.get("weight") is None else _weight(raw["weight"], where)
    strong: dict[int, float] = {}
    guarantees_raw = raw.get("strong_guarantee_resources")
    if guarantees_raw is not None:
        if not isinstance(guarantees_raw, Mapping):
            raise SnapshotError(
                "InvalidResources", f"{where}: strong_guarantee_resources: expected a map"
            )
        amounts = _amounts(guarantees_raw, f"{where}: strong_guarantee_resources", 0.0)
        for key, value in guarantees_raw.items():
            if value is not None:
                index = RESOURCE_NAMES.index(canonical_resource_name(str(key)))
                strong[index] = amounts[index]
    limits = INFINITE_RESOURCES
    if raw.get("resource_limits") is not None:
        limits = _amounts(
            raw["resource_limits"], f"{where}: resource_limits", INFINITE_RESOURCES[0]
        )
    volume = ZERO
    if raw.get("accumulated_resource_volume") is not None:
        volume = _amounts(
            raw["accumulated_resource_volume"], f"{where}: accumulated_resource_volume", 0.0
        )
    last_ratio = _optional_number(
        raw.get("last_integral_share_ratio"), f"{where}: last_integral_share_ratio"
    )
    sort_parameters = DEFAULT_FIFO_SORT_PARAMETERS
    if raw.get("fifo_sort_parameters") is not None:
        sort_parameters = _fifo_sort_parameters(raw["fifo_sort_parameters"], where)
    return PoolSpec(
        name=str(raw["name"]),
        parent=parent,
        mode=mode,
        weight=weight,
        strong_guarantee_resources=strong,
        resource_limits=limits,
        integral_guarantees=_integral(raw.get("integral_guarantees"), where),
        accumulated_resource_volume=volume,
        last_integral_share_ratio=last_ratio or 0.0,
        fifo_sort_parameters=sort_parameters,
        compute_promised_guarantee_fair_share=_flag(
            raw, "compute_promised_guarantee_fair_share", where
        ),
        enable_fifo_children_reordering_for_guarantee_utilization=_flag(
            raw, "enable_fifo_children_reordering_for_guarantee_utilization", where
        ),
    )


def _fifo_sort_parameters(raw: Any, where: str) -> tuple[FifoSortParameter, ...]:
    if not isinstance(raw, list) or not raw:
        raise SnapshotError(
            "InvalidElement", f"{where}: fifo_sort_parameters: expected a non-empty list"
        )
    result: list[FifoSortParameter] = []
    for item in raw:
        name = "pending_job_count" if item == "pending_allocation_count" else item
        result.append(
            _choice(
                FifoSortParameter,
                name,
                f"{where}: fifo_sort_parameters: parameter",
                "weight, start_time or pending_job_count",
            )
        )
    return tuple(result)


def _integral(raw: Any, where: str) -> IntegralGuarantees:
    if raw is None:
        return IntegralGuarantees()
    if not isinstance(raw, Mapping):
        raise SnapshotError("InvalidElement", f"{where}: integral_guarantees: expected a map")
    what = f"{where}: integral_guarantees"
    _check_fields(raw, _INTEGRAL_FIELDS, what)
    kind = _choice(
        IntegralGuaranteeType,
        raw.get("guarantee_type", "none"),
        f"{what}: guarantee_type",
        "none, burst or relaxed",
    )
    flow = _amounts(raw.get("resource_flow"), f"{what}: resource_flow", 0.0)
    burst = _amounts(
        raw.get("burst_guarantee_resources"), f"{what}: burst_guarantee_resources", 0.0
    )
    multiplier = _optional_number(
        raw.get("relaxed_share_multiplier_limit"), f"{what}: relaxed_share_multiplier_limit"
    )
    if multiplier is not None and not 1 <= multiplier <= 10:
        raise SnapshotError(
            "InvalidElement", f"{what}: relaxed_share_multiplier_limit must be within [1, 10]"
        )
    accept = raw.get("can_accept_free_volume", True)
    distribute = raw.get("should_distribute_free_volume_among_children")
    if not isinstance(accept, bool) or (
        distribute is not None and not isinstance(distribute, bool)
    ):
        raise SnapshotError("InvalidElement", f"{what}: volume flags must be booleans")
    return IntegralGuarantees(
        guarantee_type=kind,
        resource_flow=flow,
        burst_guarantee_resources=burst,
        relaxed_share_multiplier_limit=multiplier,
        can_accept_free_volume=accept,
        should_distribute_free_volume_among_children=distribute,
    )


def _parse_operation(raw: Mapping[str, Any], where: str) -> OperationSpec:
    _check_fields(raw, _OPERATION_FIELDS, where)
    parent = raw.get("parent")
    if not isinstance(parent, str):
        raise SnapshotError("InvalidElement", f"{where}: an operation needs a parent pool")
    limits = INFINITE_RESOURCES
    if raw.get("resource_limits") is not None:
        limits = _amounts(
            raw["resource_limits"], f"{where}: resource_limits", INFINITE_RESOURCES[0]
        )
    weight = 1.0 if raw.get("weight") is None else _weight(raw["weight"], where)
    pending = raw.get("pending_job_count", 0)
    if isinstance(pending, bool) or not isinstance(pending, int) or pending < 0:
        raise SnapshotError("InvalidElement", f"{where}: pending_job_count: expected a count >= 0")
    operation_type = raw.get("operation_type")
    if operation_type is not None and not isinstance(operation_type, str):
        raise SnapshotError("InvalidElement", f"{where}: operation_type: expected a string")
    return OperationSpec(
        name=str(raw["name"]),
        parent=parent,
        resource_demand=_amounts(raw.get("resource_demand"), f"{where}: resource_demand", 0.0),
        resource_usage=_amounts(raw.get("resource_usage"), f"{where}: resource_usage", 0.0),
        resource_limits=limits,
        weight=weight,
        start_time=_optional_number(raw.get("start_time"), f"{where}: start_time"),
        pending_job_count=pending,
        is_gang=_flag(raw, "is_gang", where),
        operation_type=operation_type,
    )
