"""The flat description of one update that the native core reads, and its checks.

The native core (``src/native/``, module :mod:`ytsched.fairshare._native`) works on arrays, not
on Python objects: one row per element (pools in snapshot order, then operations in snapshot
order), a parent index per row, and fixed columns for config, usage, demand, limits and integral
state.  Children of an element are the rows naming it as parent, in row order, which is exactly
the child order :func:`ytsched.fairshare.tree.build_tree` gives the reference engine (pools
first, in snapshot order, then operations).

Everything is checked here, before native code sees it: the structural errors of ``build_tree``
(same codes and messages), and the numbers (no NaN anywhere, no infinity or negative value where
the engine's arithmetic needs a finite amount).  Native code can therefore rely on a well-formed
tree and finite inputs.  The column layout is defined once, in ``src/native/update.hpp``; the
constants below restate it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ytsched.errors import SnapshotError
from ytsched.fairshare import hugepages
from ytsched.fairshare.model import (
    FifoSortParameter,
    IntegralGuaranteeType,
    SchedulingMode,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.fairshare.tree import check_operation
from ytsched.resources import GPU_INDEX, RESOURCE_NAMES

# Float input columns (``InF`` in update.hpp).
IN_WEIGHT = 0
IN_DEMAND = 1
IN_USAGE = 6
IN_LIMITS = 11
IN_EXPLICIT_SG = 16
IN_FLOW = 21
IN_BURST = 26
IN_RELAXED_MULT = 31
IN_VOLUME = 32
IN_LAST_RATIO = 37
IN_START_TIME = 38
IN_PENDING = 39
IN_F = 40

# Int input columns (``InI``).
II_PARENT = 0
II_IS_OP = 1
II_FIFO = 2
II_WEIGHT_EXPLICIT = 3
II_SG_MASK = 4
II_INTEGRAL_TYPE = 5
II_RELAXED_MULT_SET = 6
II_CAN_ACCEPT = 7
II_SHOULD_DISTRIBUTE = 8
II_FIFO_PARAMS = 9
II_PROMISED = 12
II_FIFO_REORDER = 13
II_STEP_ENABLED = 14
II_GANG = 15
IN_I = 16

_INTEGRAL_CODES = {
    IntegralGuaranteeType.NONE: 0,
    IntegralGuaranteeType.BURST: 1,
    IntegralGuaranteeType.RELAXED: 2,
}
_FIFO_CODES = {
    FifoSortParameter.WEIGHT: 0,
    FifoSortParameter.START_TIME: 1,
    FifoSortParameter.PENDING_JOB_COUNT: 2,
}


@dataclass(slots=True)
class FlatTree:
    """The arrays of one update plus the names that map rows back to elements."""

    in_f: npt.NDArray[np.float64]
    in_i: npt.NDArray[np.int32]
    opts_f: npt.NDArray[np.float64]
    opts_i: npt.NDArray[np.int32]
    pool_names: list[str]
    operation_names: list[str]
    root_index: int


def _bad(message: str) -> SnapshotError:
    return SnapshotError("InvalidValue", message)


def _check_matrix(
    values: npt.NDArray[np.float64],
    names: list[str],
    what: str,
    *,
    allow_infinite: bool = False,
) -> None:
    """Reject NaN, negative and (unless allowed) infinite amounts, naming the first offender."""
    if values.size == 0:
        return
    bad = np.isnan(values) | (values < 0)
    if not allow_infinite:
        bad |= np.isinf(values)
    if bad.any():
        row, column = (int(v) for v in np.argwhere(bad)[0])
        raise _bad(
            f"element {names[row]!r}: {what}.{RESOURCE_NAMES[column]} = {values[row, column]!r}"
            " (expected a finite, non-negative amount)"
        )


def _check_number(value: float, what: str, *, positive: bool = False) -> None:
    if not math.isfinite(value) or value < 0 or (positive and value <= 0):
        kind = "positive" if positive else "non-negative"
        raise _bad(f"{what} = {value!r} (expected a finite, {kind} number)")


def _check_options(options: UpdateOptions) -> None:
    if options.main_resource not in RESOURCE_NAMES:
        raise SnapshotError(
            "InvalidOption", f"main_resource: unknown resource {options.main_resource!r}"
        )
    _check_number(
        options.integral_pool_capacity_saturation_period, "integral_pool_capacity_saturation_period"
    )
    _check_number(options.integral_smooth_period, "integral_smooth_period", positive=True)
    _check_number(options.relaxed_share_multiplier_limit, "relaxed_share_multiplier_limit")
    multiplier = options.infer_weight_from_guarantees_share_multiplier
    if multiplier is not None:
        _check_number(multiplier, "infer_weight_from_guarantees_share_multiplier", positive=True)


def build_flat(snapshot: TreeSnapshot) -> FlatTree:
    """Check a snapshot and lay it out as the native core's arrays.

    Raises :class:`~ytsched.errors.SnapshotError`: the structural errors of
    :func:`~ytsched.fairshare.tree.build_tree` with the same codes, and ``InvalidValue`` for NaN,
    infinite or negative numbers.
    """
    options = snapshot.options
    _check_options(options)
    total = snapshot.total_resource_limits
    if any(math.isnan(v) or math.isinf(v) or v < 0 for v in total):
        raise _bad(f"total_resource_limits = {total!r} (expected finite, non-negative amounts)")
    for name, moment in (
        ("now", snapshot.now),
        ("previous_update_time", snapshot.previous_update_time),
    ):
        if moment is not None and not math.isfinite(moment):
            raise _bad(f"{name} = {moment!r} (expected a finite time)")

    pools = snapshot.pools
    operations = snapshot.operations
    pool_count = len(pools)
    n = pool_count + len(operations)
    index: dict[str, int] = {}
    root: int | None = None
    for position, spec in enumerate(pools):
        if spec.name in index:
            raise SnapshotError("DuplicateElementName", f"pool {spec.name!r} is defined twice")
        index[spec.name] = position
        if spec.parent is None:
            if root is not None:
                raise SnapshotError(
                    "MultipleRoots",
                    f"pools {pools[root].name!r} and {spec.name!r} both have no parent;"
                    " exactly one root is allowed",
                )
            root = position
    if root is None:
        raise SnapshotError("MissingRoot", "no pool without a parent: the tree has no root")

    in_f = hugepages.zeros((n, IN_F), np.float64)
    in_i = hugepages.zeros((n, IN_I), np.int32)
    parents = np.full(n, -1, dtype=np.int32)
    for position, spec in enumerate(pools):
        if spec.parent is None:
            continue
        parent = index.get(spec.parent)
        if parent is None:
            raise SnapshotError(
                "UnknownParent", f"pool {spec.name!r}: parent {spec.parent!r} does not exist"
            )
        if pools[parent].mode is SchedulingMode.FIFO:
            raise SnapshotError(
                "FifoPoolWithSubpools",
                f"pool {spec.name!r}: its parent {spec.parent!r} is a fifo pool,"
                " and fifo pools may hold only operations",
            )
        parents[position] = parent
    _check_acyclic(parents[:pool_count], root, [spec.name for spec in pools])

    operation_names: list[str] = []
    seen_operations: set[str] = set()
    for offset, op in enumerate(operations):
        check_operation(op, seen_operations, index)
        seen_operations.add(op.name)
        parent = index[op.parent]
        parents[pool_count + offset] = parent
        operation_names.append(op.name)
    pool_names = [spec.name for spec in pools]
    names = pool_names + operation_names

    in_i[:, II_PARENT] = parents
    in_i[pool_count:, II_IS_OP] = 1
    in_i[:, II_STEP_ENABLED] = 1
    in_i[:, II_CAN_ACCEPT] = 1
    in_i[:, II_SHOULD_DISTRIBUTE] = -1
    in_i[:, II_FIFO_PARAMS : II_FIFO_PARAMS + 3] = -1

    if operations:
        ops_f = in_f[pool_count:]
        ops_f[:, IN_WEIGHT] = [op.weight for op in operations]
        ops_f[:, IN_DEMAND : IN_DEMAND + 5] = [op.resource_demand for op in operations]
        ops_f[:, IN_USAGE : IN_USAGE + 5] = [op.resource_usage for op in operations]
        ops_f[:, IN_LIMITS : IN_LIMITS + 5] = [op.resource_limits for op in operations]
        ops_f[:, IN_START_TIME] = [
            math.inf if op.start_time is None else op.start_time for op in operations
        ]
        ops_f[:, IN_PENDING] = [float(op.pending_job_count) for op in operations]
        vanilla = options.consider_vanilla_operations_as_gang
        in_i[pool_count:, II_GANG] = [
            op.is_gang or (vanilla and op.operation_type == "vanilla") for op in operations
        ]

    _fill_pools(in_f, in_i, snapshot)
    _check_values(in_f, names)
    return FlatTree(
        in_f=in_f,
        in_i=in_i,
        opts_f=_options_f(snapshot),
        opts_i=_options_i(snapshot),
        pool_names=pool_names,
        operation_names=operation_names,
        root_index=root,
    )


def _fill_pools(
    in_f: npt.NDArray[np.float64], in_i: npt.NDArray[np.int32], snapshot: TreeSnapshot
) -> None:
    """Write the pools' rows (the first ``len(pools)`` rows) column by column.

    Gathering each column into a list and assigning it once costs a fraction of assigning
    numpy rows field by field (about 15 numpy calls per pool: half of the flat input's time on
    the production tree).
    """
    pools = snapshot.pools
    count = len(pools)
    if not count:
        return
    total = tuple(snapshot.total_resource_limits)
    gpu_only = snapshot.options.use_only_gpu_strong_guarantees
    floats: list[list[float]] = []
    ints: list[list[int]] = []
    for spec in pools:
        explicit_sg = [0.0] * 5
        mask = 0
        for resource, value in spec.strong_guarantee_resources.items():
            if gpu_only and resource != GPU_INDEX:
                continue
            mask |= 1 << resource
            explicit_sg[resource] = value
        ig = spec.integral_guarantees
        relaxed = ig.relaxed_share_multiplier_limit
        distribute = ig.should_distribute_free_volume_among_children
        parameters = spec.fifo_sort_parameters
        if len(parameters) > 3:
            raise _bad(f"pool {spec.name!r}: at most three fifo sort parameters")
        fifo_codes = [_FIFO_CODES[parameter] for parameter in parameters]
        fifo_codes += [-1] * (3 - len(fifo_codes))
        # Columns in ``InF`` order: weight, demand (zero: pools sum their children's), usage,
        # limits, explicit guarantees, flow, burst, relaxed multiplier, volume, last ratio.
        floats.append(
            [
                1.0 if spec.weight is None else spec.weight,
                *(0.0,) * 10,
                *(total if spec.parent is None else spec.resource_limits),
                *explicit_sg,
                *ig.resource_flow,
                *ig.burst_guarantee_resources,
                0.0 if relaxed is None else relaxed,
                *spec.accumulated_resource_volume,
                spec.last_integral_share_ratio,
            ]
        )
        # ``InI`` columns from II_WEIGHT_EXPLICIT to II_STEP_ENABLED.
        ints.append(
            [
                spec.weight is not None,
                mask,
                _INTEGRAL_CODES[ig.guarantee_type],
                relaxed is not None,
                ig.can_accept_free_volume,
                -1 if distribute is None else int(distribute),
                *fifo_codes,
                spec.compute_promised_guarantee_fair_share,
                spec.enable_fifo_children_reordering_for_guarantee_utilization,
                spec.enable_step_function_for_gang_operations,
            ]
        )
    in_f[:count, IN_WEIGHT : IN_LAST_RATIO + 1] = floats
    in_i[:count, II_WEIGHT_EXPLICIT : II_STEP_ENABLED + 1] = ints
    in_i[:count, II_FIFO] = [spec.mode is SchedulingMode.FIFO for spec in pools]


def _check_values(in_f: npt.NDArray[np.float64], names: list[str]) -> None:
    for column, what, infinite in (
        (IN_DEMAND, "resource_demand", False),
        (IN_USAGE, "resource_usage", False),
        (IN_LIMITS, "resource_limits", True),
        (IN_EXPLICIT_SG, "strong_guarantee_resources", False),
        (IN_FLOW, "integral_guarantees.resource_flow", False),
        (IN_BURST, "integral_guarantees.burst_guarantee_resources", False),
        (IN_VOLUME, "accumulated_resource_volume", False),
    ):
        _check_matrix(in_f[:, column : column + 5], names, what, allow_infinite=infinite)
    scalars = in_f[:, [IN_WEIGHT, IN_RELAXED_MULT, IN_LAST_RATIO, IN_PENDING]]
    bad = ~np.isfinite(scalars) | (scalars < 0)
    bad[:, 0] |= scalars[:, 0] <= 0
    if bad.any():
        row, column = (int(v) for v in np.argwhere(bad)[0])
        what = (
            "weight",
            "relaxed_share_multiplier_limit",
            "last_integral_share_ratio",
            "pending_job_count",
        )[column]
        raise _bad(
            f"element {names[row]!r}: {what} = {scalars[row, column]!r}"
            " (expected a finite, non-negative number; weights positive)"
        )
    start = in_f[:, IN_START_TIME]
    if np.isnan(start).any() or np.isneginf(start).any():
        row = int(np.argwhere(np.isnan(start) | np.isneginf(start))[0][0])
        raise _bad(f"element {names[row]!r}: start_time = {start[row]!r} (expected a finite time)")


def _check_acyclic(parents: npt.NDArray[np.int32], root: int, names: list[str]) -> None:
    """Every pool must reach the root by following parents (``ParentCycle`` otherwise)."""
    count = len(parents)
    done = [False] * count
    reaches = [False] * count
    done[root] = reaches[root] = True
    for start in range(count):
        path: list[int] = []
        on_path: set[int] = set()
        current = start
        while not done[current] and current not in on_path:
            on_path.add(current)
            path.append(current)
            parent = int(parents[current])
            if parent < 0:
                break
            current = parent
        ok = done[current] and reaches[current]
        for element in path:
            done[element] = True
            reaches[element] = ok
    unreachable = sorted(names[i] for i in range(count) if not reaches[i])
    if unreachable:
        raise SnapshotError(
            "ParentCycle",
            "pools form a cycle and never reach the root: " + ", ".join(unreachable[:10]),
        )


def _options_f(snapshot: TreeSnapshot) -> npt.NDArray[np.float64]:
    options = snapshot.options
    multiplier = options.infer_weight_from_guarantees_share_multiplier
    timed = snapshot.now is not None and snapshot.previous_update_time is not None
    return np.array(
        [
            *snapshot.total_resource_limits,
            snapshot.now if timed else 0.0,
            snapshot.previous_update_time if timed else 0.0,
            options.integral_pool_capacity_saturation_period,
            options.integral_smooth_period,
            options.relaxed_share_multiplier_limit,
            0.0 if multiplier is None else multiplier,
        ],
        dtype=np.float64,
    )


def _options_i(snapshot: TreeSnapshot) -> npt.NDArray[np.int32]:
    options = snapshot.options
    timed = snapshot.now is not None and snapshot.previous_update_time is not None
    return np.array(
        [
            timed,
            RESOURCE_NAMES.index(options.main_resource),
            options.should_distribute_free_volume_among_children,
            options.enable_step_function_for_gang_operations,
            options.enable_improved_fair_share_by_fit_factor_computation,
            options.enable_improved_fair_share_by_fit_factor_computation_distribution_gap,
            options.enable_fast_fifo_fair_share_by_fit_factor_computation,
            options.enable_fifo_children_reordering_for_guarantee_utilization,
            options.infer_weight_from_guarantees_share_multiplier is not None,
            False,
        ],
        dtype=np.int32,
    )
