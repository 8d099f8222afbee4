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
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ytsched.errors import SnapshotError
from ytsched.fairshare import hugepages
from ytsched.fairshare.model import (
    FifoSortParameter,
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
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

# Per pool, the float and int values ``_fill_pools`` gathers (see there).
_POOL_FLOATS = 23
_POOL_INTS = 13
_OPERATION_FLOATS = 18
_RESOURCE_INDEXES = frozenset(range(len(RESOURCE_NAMES)))

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

    def name_index(self) -> dict[str, int]:
        """Every element's name to its row (pools, then operations; the names are distinct).
        Built on request: only callers that look elements up by name pay for it."""
        names = self.pool_names + self.operation_names
        return dict(zip(names, range(len(names)), strict=True))


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


_checked_options: UpdateOptions | None = None
"""The last options that passed :func:`_check_options`: options are frozen, and consecutive
snapshots of a tree share them (``snapshot.tree_update_options``), so they are checked once."""


def _check_prelude(snapshot: TreeSnapshot) -> None:
    """The tree-level checks both builders run first: options, totals and times."""
    global _checked_options
    options = snapshot.options
    if options is not _checked_options:
        _check_options(options)
        _checked_options = options
    total = snapshot.total_resource_limits
    if any(math.isnan(v) or math.isinf(v) or v < 0 for v in total):
        raise _bad(f"total_resource_limits = {total!r} (expected finite, non-negative amounts)")
    for name, moment in (
        ("now", snapshot.now),
        ("previous_update_time", snapshot.previous_update_time),
    ):
        if moment is not None and not math.isfinite(moment):
            raise _bad(f"{name} = {moment!r} (expected a finite time)")


_KINDS = (
    PoolSpec,
    OperationSpec,
    IntegralGuarantees,
    SchedulingMode.FIFO,
    SchedulingMode.FAIR_SHARE,
    IntegralGuaranteeType.NONE,
    IntegralGuaranteeType.BURST,
    IntegralGuaranteeType.RELAXED,
    FifoSortParameter.WEIGHT,
    FifoSortParameter.START_TIME,
    FifoSortParameter.PENDING_JOB_COUNT,
)
"""The types and enum members the native reader recognises (by identity), in the order
``read_flat`` expects them (src/native/flat_input.hpp)."""

_reader: Any = None
"""``_native.read_flat`` once loaded; ``False`` when the core cannot be imported."""


def _native_reader() -> Any:
    global _reader
    if _reader is None:
        from ytsched.fairshare import native  # native imports this module

        try:
            _reader = native.load_module().read_flat
        except (ImportError, AttributeError):
            _reader = False
    return _reader or None


def build_flat(snapshot: TreeSnapshot) -> FlatTree:
    """Check a snapshot and lay it out as the native core's arrays.

    Raises :class:`~ytsched.errors.SnapshotError`: the structural errors of
    :func:`~ytsched.fairshare.tree.build_tree` with the same codes, and ``InvalidValue`` for NaN,
    infinite or negative numbers.

    The native reader (``src/native/flat_input.cpp``) does the per-row work in one pass over
    the snapshot's objects (~50x faster than the Python builder).  It reads only objects of the
    package's own exact types and applies every check of :func:`build_flat_python`; on any
    other input, or any check that fails, it declines and the Python builder runs, so errors
    (codes, messages, exception types) are exactly that builder's.
    """
    _check_prelude(snapshot)
    pools = snapshot.pools
    operations = snapshot.operations
    reader = _native_reader()
    if reader is not None and type(pools) is list and type(operations) is list:
        n = len(pools) + len(operations)
        in_f = hugepages.empty((n, IN_F), np.float64)
        in_i = hugepages.empty((n, IN_I), np.int32)
        options = snapshot.options
        read = reader(
            pools,
            operations,
            snapshot.total_resource_limits,
            options.use_only_gpu_strong_guarantees,
            GPU_INDEX,
            options.consider_vanilla_operations_as_gang,
            _KINDS,
            in_f,
            in_i,
        )
        if read is not None:
            pool_names, operation_names, root = read
            return FlatTree(
                in_f=in_f,
                in_i=in_i,
                opts_f=_options_f(snapshot),
                opts_i=_options_i(snapshot),
                pool_names=pool_names,
                operation_names=operation_names,
                root_index=root,
            )
        del in_f, in_i
    return build_flat_python(snapshot)


def build_flat_python(snapshot: TreeSnapshot) -> FlatTree:
    """:func:`build_flat` in Python: the reference for the native reader and its fallback.

    Raises the same errors as :func:`build_flat` (it is where they come from).
    """
    _check_prelude(snapshot)
    options = snapshot.options
    pools = snapshot.pools
    operations = snapshot.operations
    pool_count = len(pools)
    n = pool_count + len(operations)
    structure = _pool_structure(pools)
    index = structure.index
    in_f = hugepages.zeros((n, IN_F), np.float64)
    in_i = hugepages.zeros((n, IN_I), np.int32)
    parents = np.empty(n, dtype=np.int32)
    parents[:pool_count] = structure.parents

    operation_names = [op.name for op in operations]
    operation_parents = [index.get(op.parent, -1) for op in operations]
    if (
        -1 in operation_parents
        or len(set(operation_names)) != len(operation_names)
        or not index.keys().isdisjoint(operation_names)
    ):
        _check_operations(operations, index)  # raises the first problem, in row order
    parents[pool_count:] = operation_parents
    pool_names = list(structure.names)
    names = pool_names + operation_names

    in_i[:, II_PARENT] = parents
    in_i[pool_count:, II_IS_OP] = 1
    in_i[:, II_STEP_ENABLED] = 1
    in_i[:, II_CAN_ACCEPT] = 1
    in_i[:, II_SHOULD_DISTRIBUTE] = -1
    in_i[:, II_FIFO_PARAMS : II_FIFO_PARAMS + 3] = -1

    if operations:
        _fill_operations(in_f[pool_count:], operations)
        ops_f = in_f[pool_count:]
        demand = ops_f[:, IN_DEMAND : IN_DEMAND + 5]
        usage = ops_f[:, IN_USAGE : IN_USAGE + 5]
        if not (demand >= usage).all():  # NaN fails too, as in ``dominates``
            _check_operations(operations, index)
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
        root_index=structure.root,
    )


@dataclass(frozen=True, slots=True)
class _PoolStructure:
    """The checked shape of a snapshot's pools: what depends only on names, parents and which
    pools are FIFO (``key``, one ``(name, parent, is fifo)`` per pool, in order)."""

    key: list[tuple[str, str | None, bool]]
    index: dict[str, int]
    root: int
    parents: npt.NDArray[np.int32]
    names: tuple[str, ...]


_last_structure: _PoolStructure | None = None
"""The structure of the last snapshot that passed the checks.  Consecutive updates of one tree
(the scheduler, the simulator, the service) almost always have the same pools; comparing the
key (strings, ``None`` and booleans, so equality is exact) is ~5x cheaper than rebuilding the
index and re-checking roots, parents and cycles.  Never mutated once built (the parents array
is read-only), so sharing it between threads and results is safe."""


def _pool_structure(pools: list[PoolSpec]) -> _PoolStructure:
    """Index, root and parent rows of the pools, checked as ``build_tree`` checks them
    (``DuplicateElementName``, ``MultipleRoots``, ``MissingRoot``, ``UnknownParent``,
    ``FifoPoolWithSubpools``, ``ParentCycle``), reusing the last result for an equal key."""
    global _last_structure
    fifo = SchedulingMode.FIFO
    key = [(spec.name, spec.parent, spec.mode is fifo) for spec in pools]
    cached = _last_structure
    if cached is not None and cached.key == key:
        return cached
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
    parents = np.full(len(pools), -1, dtype=np.int32)
    for position, spec in enumerate(pools):
        if spec.parent is None:
            continue
        parent = index.get(spec.parent)
        if parent is None:
            raise SnapshotError(
                "UnknownParent", f"pool {spec.name!r}: parent {spec.parent!r} does not exist"
            )
        if pools[parent].mode is fifo:
            raise SnapshotError(
                "FifoPoolWithSubpools",
                f"pool {spec.name!r}: its parent {spec.parent!r} is a fifo pool,"
                " and fifo pools may hold only operations",
            )
        parents[position] = parent
    names = tuple(spec.name for spec in pools)
    _check_acyclic(parents, root, list(names))
    parents.flags.writeable = False
    structure = _PoolStructure(key, index, root, parents, names)
    _last_structure = structure
    return structure


def _packed(values: list[Any], code: str, dtype: type[Any]) -> npt.NDArray[Any]:
    """``values`` as a 1-d array: ``struct.pack`` writes the C values in one pass (about twice
    as fast as ``numpy.fromiter``, which goes through the iterator protocol per item) and
    ``numpy.frombuffer`` wraps the bytes without copying."""
    try:
        packed = struct.pack(f"={len(values)}{code}", *values)
    except struct.error as error:
        raise TypeError(f"flat input: {error}") from error
    return np.frombuffer(packed, dtype=dtype)


def _check_operations(operations: list[OperationSpec], index: dict[str, int]) -> None:
    """The per-row structural checks of the operations, in row order (the reference's order).

    :func:`build_flat` checks names, parents and usage for all operations at once and calls
    this only when something is wrong, so the error raised is the one the reference engine
    raises first.
    """
    seen: set[str] = set()
    for op in operations:
        check_operation(op, seen, index)
        seen.add(op.name)


def _fill_operations(rows: npt.NDArray[np.float64], operations: list[OperationSpec]) -> None:
    """Write the operations' float inputs: one flat list, one ``numpy.fromiter``, two slices.

    Weight, demand, usage and limits are the contiguous columns 0-15 of ``InF``; start time
    and pending job count follow in the flat list (stride ``_OPERATION_FLOATS``).
    """
    values: list[float] = []
    append = values.append
    inf = math.inf
    for op in operations:
        # ``+=`` on a list is one bytecode; ``extend`` a method call per vector.
        append(op.weight)
        values += op.resource_demand
        values += op.resource_usage
        values += op.resource_limits
        start = op.start_time
        append(inf if start is None else start)
        append(op.pending_job_count)
    count = len(operations)
    if len(values) != count * _OPERATION_FLOATS:
        raise ValueError("an operation's resource vector does not have five components")
    block = _packed(values, "d", np.float64).reshape(count, _OPERATION_FLOATS)
    rows[:, IN_WEIGHT : IN_LIMITS + 5] = block[:, :16]
    rows[:, IN_START_TIME : IN_PENDING + 1] = block[:, 16:]


def _fill_pools(
    in_f: npt.NDArray[np.float64], in_i: npt.NDArray[np.int32], snapshot: TreeSnapshot
) -> None:
    """Write the pools' rows (the first ``len(pools)`` rows) column block by column block.

    One pass over the pools appends each pool's non-zero float inputs to one flat list and its
    integer flags to another, each with a fixed stride; ``numpy.fromiter`` turns each list into
    an array in one call and a few slice assignments place the blocks.  Nested per-pool lists
    converted by numpy cost ~2.5 µs per pool, the largest part of the flat input on the
    production tree.  Explicit strong guarantees (a few pools have them) are scattered
    separately.
    """
    pools = snapshot.pools
    count = len(pools)
    if not count:
        return
    total = tuple(snapshot.total_resource_limits)
    gpu_only = snapshot.options.use_only_gpu_strong_guarantees
    floats: list[float] = []
    ints: list[int] = []
    add_float = floats.append
    fifo_codes = _FIFO_CODES
    fifo_cache: dict[tuple[FifoSortParameter, ...], tuple[int, ...]] = {}
    integral_codes = _INTEGRAL_CODES
    fifo = SchedulingMode.FIFO
    guarantee_rows: list[int] = []
    guarantee_columns: list[int] = []
    guarantee_values: list[float] = []
    for position, spec in enumerate(pools):
        weight = spec.weight
        ig = spec.integral_guarantees
        relaxed = ig.relaxed_share_multiplier_limit
        distribute = ig.should_distribute_free_volume_among_children
        parameters = spec.fifo_sort_parameters
        codes = fifo_cache.get(parameters)
        if codes is None:
            if len(parameters) > 3:
                raise _bad(f"pool {spec.name!r}: at most three fifo sort parameters")
            codes = tuple(fifo_codes[parameter] for parameter in parameters)
            codes += (-1,) * (3 - len(parameters))
            fifo_cache[parameters] = codes
        mask = 0
        if spec.strong_guarantee_resources:
            for resource, value in spec.strong_guarantee_resources.items():
                if gpu_only and resource != GPU_INDEX:
                    continue
                if resource not in _RESOURCE_INDEXES:
                    raise _bad(f"pool {spec.name!r}: unknown resource index {resource!r}")
                mask |= 1 << resource
                guarantee_rows.append(position)
                guarantee_columns.append(IN_EXPLICIT_SG + resource)
                guarantee_values.append(value)
        # Stride _POOL_FLOATS: weight, limits (5), flow (5), burst (5), relaxed multiplier,
        # volume (5), last ratio; see the slice assignments below.  (``+=`` on a list is one
        # bytecode; ``extend`` a method call per vector.)
        add_float(1.0 if weight is None else weight)
        floats += total if spec.parent is None else spec.resource_limits
        floats += ig.resource_flow
        floats += ig.burst_guarantee_resources
        add_float(0.0 if relaxed is None else relaxed)
        floats += spec.accumulated_resource_volume
        add_float(spec.last_integral_share_ratio)
        # Stride _POOL_INTS: fifo mode, then ``InI`` columns from II_WEIGHT_EXPLICIT to
        # II_STEP_ENABLED.
        ints += (
            spec.mode is fifo,
            weight is not None,
            mask,
            integral_codes[ig.guarantee_type],
            relaxed is not None,
            ig.can_accept_free_volume,
            -1 if distribute is None else distribute,
            *codes,
            spec.compute_promised_guarantee_fair_share,
            spec.enable_fifo_children_reordering_for_guarantee_utilization,
            spec.enable_step_function_for_gang_operations,
        )
    if len(floats) != count * _POOL_FLOATS or len(ints) != count * _POOL_INTS:
        raise ValueError("a pool's resource vector does not have five components")
    block = _packed(floats, "d", np.float64).reshape(count, _POOL_FLOATS)
    rows = in_f[:count]
    rows[:, IN_WEIGHT] = block[:, 0]
    rows[:, IN_LIMITS : IN_LIMITS + 5] = block[:, 1:6]
    rows[:, IN_FLOW : IN_RELAXED_MULT + 1] = block[:, 6:17]
    rows[:, IN_VOLUME : IN_LAST_RATIO + 1] = block[:, 17:23]
    if guarantee_rows:
        in_f[guarantee_rows, guarantee_columns] = guarantee_values
    flags = _packed(ints, "i", np.int32).reshape(count, _POOL_INTS)
    in_i[:count, II_FIFO] = flags[:, 0]
    in_i[:count, II_WEIGHT_EXPLICIT : II_STEP_ENABLED + 1] = flags[:, 1:]


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


_last_options_i: tuple[UpdateOptions, bool, npt.NDArray[np.int32]] | None = None
"""The last :func:`_options_i`: options, whether timed, and the (read-only) array, which
depends on nothing else."""


def _options_i(snapshot: TreeSnapshot) -> npt.NDArray[np.int32]:
    global _last_options_i
    options = snapshot.options
    timed = snapshot.now is not None and snapshot.previous_update_time is not None
    known = _last_options_i
    if known is not None and known[0] is options and known[1] is timed:
        return known[2]
    array = _options_i_array(options, timed)
    array.flags.writeable = False
    _last_options_i = (options, timed, array)
    return array


def _options_i_array(options: UpdateOptions, timed: bool) -> npt.NDArray[np.int32]:
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
