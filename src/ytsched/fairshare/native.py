"""Run one update in the native core and map its flat results back to elements.

:func:`run_native_update` is what :func:`ytsched.fairshare.update.run_update` calls by default:
it lays the snapshot out as arrays (:mod:`ytsched.fairshare.flat`, which also checks it), runs
the C++ core (``src/native/``) with the GIL released, and builds the same
:class:`~ytsched.fairshare.update.UpdateResult` the reference engine returns, so callers cannot
tell the two apart.  The piecewise-linear functions stay inside the core; each element gets
their sizes and the limited demand share (the FSBS right value), which is all callers read.

``YTSCHED_NATIVE_LIBRARY`` (a path to a built ``_native`` shared object) loads another build of
the core instead of the installed one; CI uses it to run the engine tests against an
AddressSanitizer build.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ytsched.errors import YtschedError
from ytsched.fairshare import hugepages
from ytsched.fairshare.elements import Element, IntegralState
from ytsched.fairshare.flat import FlatTree, build_flat
from ytsched.fairshare.functions import without_cyclic_gc
from ytsched.fairshare.model import DetailedShare, SchedulingMode, TreeSnapshot, UpdateError
from ytsched.resources import GPU_INDEX, RESOURCE_NAMES, amounts_to_map

if TYPE_CHECKING:
    from ytsched.fairshare.update import UpdateResult

STEPS = (
    "setup",
    "attributes",
    "integral volumes",
    "guarantees",
    "integral shares",
    "fsbff",
    "mffbs",
    "compose",
    "compress",
    "distribute",
    "output",
)
"""Names of the per-step seconds the core reports (``Step`` in src/native/update.hpp); the
last item of :func:`run_flat`'s summary holds them in this order."""

# Output columns (``OutF`` / ``OutI`` in src/native/update.hpp).
OUT_F = 121
OUT_I = 6


class NativeEngineError(YtschedError):
    """The native core refused an input the checks let through (a bug: please report it)."""


_module: ModuleType | None = None


def _load() -> ModuleType:
    global _module
    if _module is None:
        path = os.environ.get("YTSCHED_NATIVE_LIBRARY")
        if path:
            spec = importlib.util.spec_from_file_location("ytsched.fairshare._native", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load the native core from {path!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module("ytsched.fairshare._native")
        if module.OUT_F != OUT_F or module.OUT_I != OUT_I:
            raise ImportError("the native core's result layout does not match this package")
        if os.environ.get("YTSCHED_EXPECT_SANITIZED") and not module.SANITIZED:
            raise ImportError("YTSCHED_EXPECT_SANITIZED is set but the core is not sanitized")
        _module = module
    return _module


def native_available() -> bool:
    """Whether the compiled core can be imported."""
    try:
        _load()
    except ImportError:
        return False
    return True


def threads() -> int:
    """How many threads one native update uses (the caller's included)."""
    return int(_load().engine_threads())


def default_threads() -> int:
    """The default thread count: ``min(2, hardware threads)``."""
    return int(_load().default_engine_threads())


def set_threads(count: int) -> int:
    """Set how many threads one native update may use; returns the previous count.

    The count is a speed setting only: the core shares out work whose every double is computed
    the same way on any thread (an element's functions once its children's are built, a range
    of a wide sum's sample points), so every count gives ``==`` results.  ``1`` runs the whole
    update on the calling thread, for a process that needs its other core for something else
    (the service's event loop beside the engine's worker thread); the default is
    :func:`default_threads`.  The helper threads are started once, on the first update that
    needs them, and wait for work between updates.
    """
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"thread count must be an int, got {type(count).__name__}")
    module = _load()
    if not 1 <= count <= module.MAX_ENGINE_THREADS:
        raise ValueError(
            f"native engine thread count must be in 1..{module.MAX_ENGINE_THREADS}, got {count}"
        )
    return int(module.set_engine_threads(count))


def set_parallel_build_min(elements: int) -> int:
    """Set how many elements an update (or an integral pool's subtree) must have to build
    unbuilt functions on several threads; returns the previous threshold (default 64).

    Like the sum threshold it only trades waking a helper against the work handed to it; tests
    set 0 so that the threaded build runs (and is compared) on small trees.
    """
    if elements < 0:
        raise ValueError(f"parallel build threshold must be >= 0, got {elements}")
    module = _load()
    previous = int(module.parallel_build_min())
    module.set_parallel_build_min(elements)
    return previous


def set_parallel_sum_pairs(pairs: int) -> int:
    """Set how many (sample point x child) pairs a pool sum needs to split its points over the
    engine's threads (see :func:`set_threads`; none with one thread); returns the previous
    threshold.

    The split is exact (every point's total depends only on that point), so the threshold only
    trades a thread's start against the sum's length; tests set 0 to run the threaded path on
    small trees and compare it with the reference.
    """
    if pairs < 0:
        raise ValueError(f"parallel sum threshold must be >= 0, got {pairs}")
    module = _load()
    previous = int(module.parallel_sum_pairs())
    module.set_parallel_sum_pairs(pairs)
    return previous


def use_wide_vector_kernels(enabled: bool) -> bool:
    """Let pool sums and compression use their AVX2 kernels (the default where the CPU has
    AVX2) or not; returns the previous setting.

    Both kernel builds perform the same IEEE operations per point (compression: per resource),
    so the results are the same doubles; tests switch the wide ones off to compare the SSE2 /
    scalar build with the reference too.
    """
    return bool(_load().set_wide_vector_kernels(enabled))


def run_flat(flat: FlatTree) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[Any, ...]]:
    """Run the core on checked arrays: (float results, int results, error summary)."""
    module = _load()
    n = flat.in_f.shape[0]
    out_f = hugepages.empty((n, OUT_F), np.float64)
    out_i = hugepages.empty((n, OUT_I), np.int32)
    try:
        summary = module.run_update(flat.in_f, flat.in_i, flat.opts_f, flat.opts_i, out_f, out_i)
    except module.NativeEngineError as error:
        message = f"native fair-share core: {error}"
        raise NativeEngineError("NativeEngineFailure", message) from error
    return out_f, out_i, summary


@without_cyclic_gc
def run_native_update(snapshot: TreeSnapshot) -> UpdateResult:
    """The native equivalent of the reference ``run_update`` (same result, same errors)."""
    from ytsched.fairshare.update import UpdateResult

    flat = build_flat(snapshot)
    out_f, out_i, summary = run_flat(flat)
    root, pools, operations = _elements(snapshot, flat, out_f, out_i)
    errors = _errors(summary, flat, snapshot)
    return UpdateResult(
        root=root,
        pools=pools,
        operations=operations,
        errors=errors,
        total_resource_limits=snapshot.total_resource_limits,
        options=snapshot.options,
    )


def _errors(summary: tuple[Any, ...], flat: FlatTree, snapshot: TreeSnapshot) -> list[UpdateError]:
    nested, flow_overcommit, burst_overcommit, total_strong, total_flow, total_burst, _ = summary
    errors: list[UpdateError] = []
    if nested:
        errors.append(
            UpdateError(
                code="NestedPromisedGuaranteeFairSharePools",
                message="Found pools with enabled promised guarantee fair share computation"
                " which are nested inside other such pools",
                attributes={
                    "nested_promised_guarantee_fair_share_pools": [
                        flat.pool_names[i] for i in nested
                    ]
                },
            )
        )
    total = snapshot.total_resource_limits
    for failed, what, key, amounts in (
        (flow_overcommit, "resource flows", "total_resource_flow", total_flow),
        (burst_overcommit, "burst guarantees", "total_burst_resources", total_burst),
    ):
        if failed:
            errors.append(
                UpdateError(
                    code="PoolTreeGuaranteesOvercommit",
                    message=f"Strong guarantees and {what} exceed total cluster resources",
                    attributes={
                        "total_strong_guarantee_resources": amounts_to_map(total_strong),
                        key: amounts_to_map(amounts),
                        "total_cluster_resources": amounts_to_map(total),
                    },
                )
            )
    return errors


# --- elements ------------------------------------------------------------------------------


def _vector(start: int) -> Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]:
    def build(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
        return tuple(f[start : start + 5].tolist())

    return build


def _scalar(column: int) -> Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]:
    def build(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
        return float(f[column])

    return build


def _detailed(start: int) -> Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]:
    def build(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
        v = f[start : start + 20].tolist()
        return DetailedShare(tuple(v[0:5]), tuple(v[5:10]), tuple(v[10:15]), tuple(v[15:20]))

    return build


def _integral(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
    v = f[74:100].tolist()
    return IntegralState(
        tuple(v[0:5]), v[5], tuple(v[6:11]), tuple(v[11:16]), tuple(v[16:21]), tuple(v[21:26])
    )


def _index_or_none(column: int) -> Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]:
    def build(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
        value = int(i[column])
        return None if value < 0 else value

    return build


def _sizes(f: np.ndarray[Any, Any], i: np.ndarray[Any, Any]) -> Any:
    return None if i[3] < 0 else (int(i[3]), int(i[4]), int(i[5]))


_LAZY: dict[str, Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]] = {
    "fair_share": _detailed(0),
    "promised_guarantee_fair_share": _detailed(20),
    "limits_share": _vector(40),
    "strong_guarantee_share": _vector(45),
    "proposed_integral_share": _vector(50),
    "usage_share": _vector(55),
    "demand_share": _vector(60),
    "estimated_guarantee_share": _vector(65),
    "burst_ratio": _scalar(70),
    "total_burst_ratio": _scalar(71),
    "resource_flow_ratio": _scalar(72),
    "total_resource_flow_ratio": _scalar(73),
    "integral": _integral,
    "weight": _scalar(100),
    "inferred_strong_guarantee_resources": lambda f, i: f[101:106].tolist(),
    "resource_usage": _vector(106),
    "resource_demand": _vector(111),
    "limited_demand_share": _vector(116),
    "dominant_resource": lambda f, i: RESOURCE_NAMES[int(i[0])],
    "fifo_index": _index_or_none(1),
    "effective_fifo_index": _index_or_none(2),
    "function_sizes": _sizes,
}


def _lazy_attribute(name: str) -> property:
    """A computed attribute read from the core's result row on first access, then stored in the
    element's own slot (so later reads and writes are plain slot accesses)."""
    slot = Element.__dict__[name]
    build = _LAZY[name]

    def get(self: NativeElement) -> Any:
        try:
            return slot.__get__(self, Element)
        except AttributeError:
            rows_f, rows_i, _ = self._rows
            value = build(rows_f[self._row], rows_i[self._row])
            slot.__set__(self, value)
            return value

    def set(self: NativeElement, value: Any) -> None:
        slot.__set__(self, value)

    return property(get, set, doc=f"``{name}``, read from the native result on first access.")


def _defaulted_attribute(name: str, default: Callable[[NativeElement], Any]) -> property:
    """An attribute no caller of a native result needs set up front (the engine's working
    state, the explicit guarantee map): ``default(element)`` is stored on first read, so
    building an element costs one slot write less per such attribute."""
    slot = Element.__dict__[name]

    def get(self: NativeElement) -> Any:
        try:
            return slot.__get__(self, Element)
        except AttributeError:
            value = default(self)
            slot.__set__(self, value)
            return value

    def set(self: NativeElement, value: Any) -> None:
        slot.__set__(self, value)

    return property(get, set, doc=f"``{name}``, ``{default.__name__}`` until set.")


def _none(element: NativeElement) -> None:
    return None


def _true(element: NativeElement) -> bool:
    return True


def _empty_list(element: NativeElement) -> list[Element]:
    return []


def _explicit_guarantee(element: NativeElement) -> dict[int, float]:
    """The pool's configured strong guarantees as ``build_tree`` keeps them (only the GPU one
    under ``use_only_gpu_strong_guarantees``); none for an operation."""
    spec = element.pool
    if spec is None:
        return {}
    explicit = dict(spec.strong_guarantee_resources)
    if element._rows[2]:
        explicit = {GPU_INDEX: explicit[GPU_INDEX]} if GPU_INDEX in explicit else {}
    return explicit


_DEFAULTED: dict[str, Callable[[NativeElement], Any]] = {
    "sorted_children": _empty_list,
    "fsbff": _none,
    "mffbs": _none,
    "fsbs": _none,
    "child_fsbff": _none,
    "prepared": _true,
    "explicit_strong_guarantee": _explicit_guarantee,
}


class NativeElement(Element):
    """An :class:`Element` whose computed attributes come from the native core's result arrays.

    Building every attribute of every element eagerly costs ~8 µs per element in CPython, more
    than the update itself; most callers read a few attributes of some elements.  The structure
    (names, specs, parent, children, FIFO order) is built eagerly; each computed attribute is
    converted when first read and kept, and the engine's working state (functions, sorted
    children of fair-share pools) gets its default when first read.  Behaves as an ``Element``
    in every other respect.
    """

    __slots__ = ("_row", "_rows")

    _row: int
    _rows: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], bool]
    """The result arrays, and whether only GPU strong guarantees count (shared by all the
    elements of one result)."""


for _name in _LAZY:
    setattr(NativeElement, _name, _lazy_attribute(_name))
for _name, _default in _DEFAULTED.items():
    setattr(NativeElement, _name, _defaulted_attribute(_name, _default))
del _name, _default


def _elements(
    snapshot: TreeSnapshot,
    flat: FlatTree,
    out_f: np.ndarray[Any, Any],
    out_i: np.ndarray[Any, Any],
) -> tuple[Element, dict[str, Element], dict[str, Element]]:
    """The element tree, linked as ``build_tree`` links it; computed attributes are lazy."""
    parents = flat.in_i[:, 0].tolist()
    pool_count = len(snapshot.pools)
    new = NativeElement.__new__
    rows = (out_f, out_i, snapshot.options.use_only_gpu_strong_guarantees)
    total = snapshot.total_resource_limits
    elements: list[NativeElement] = []
    append = elements.append
    fifo_pools: list[NativeElement] = []
    fifo = SchedulingMode.FIFO
    index = 0
    for spec in snapshot.pools:
        element = new(NativeElement)
        element.name = spec.name
        element.is_operation = False
        element.is_root = spec.parent is None
        element.pool = spec
        element.operation = None
        element.children = []
        element.resource_limits = total if spec.parent is None else spec.resource_limits
        element.is_gang_like = False
        element._row = index
        element._rows = rows
        append(element)
        if spec.mode is fifo:
            fifo_pools.append(element)
        index += 1
    gangs = flat.in_i[pool_count:, 15].tolist()
    for op, gang in zip(snapshot.operations, gangs, strict=True):
        element = new(NativeElement)
        element.name = op.name
        element.is_operation = True
        element.is_root = False
        element.pool = None
        element.operation = op
        element.children = []
        element.resource_limits = op.resource_limits
        element.is_gang_like = gang != 0
        element._row = index
        element._rows = rows
        append(element)
        index += 1
    for element, parent in zip(elements, parents, strict=True):
        if parent >= 0:
            owner = elements[parent]
            element.parent = owner
            owner.children.append(element)
        else:
            element.parent = None
    effective = out_i[:, 2]
    order = np.where(effective >= 0, effective, out_i[:, 1]).tolist()
    for element in fifo_pools:
        if element.children:
            element.sorted_children = sorted(
                element.children,
                key=lambda child: order[child._row],  # type: ignore[attr-defined]
            )
    root = elements[flat.root_index]
    pools: dict[str, Element] = dict(zip(flat.pool_names, elements[:pool_count], strict=True))
    operations: dict[str, Element] = dict(
        zip(flat.operation_names, elements[pool_count:], strict=True)
    )
    return root, pools, operations


# --- exact share keys for the post-update --------------------------------------------------

_KEY_COLUMNS = np.r_[15:20, 60:65, 55:60]
"""Result columns of the fair share's total, the demand share and the usage share."""
_DEMAND_COLUMNS = np.r_[111:116]


class ShareKeys:
    """Per element of one native result, the bit patterns of the floats that key an
    operation's scheduling template, taken from the core's rows in one numpy pass.

    The post-update reuses an operation's template when the exact floats it was built from
    are unchanged (``scheduling.post_update._current_template``); reading them through the
    lazy attributes costs ~1 µs per attribute and operation, the largest single cost of an
    update in the simulator (issue 15).  Row ``r`` of :attr:`blob` is the native-order
    doubles of ``fair_share.total``, ``demand_share``, ``usage_share``, ``total`` and
    ``resource_demand``: byte for byte what ``struct.pack("25d", ...)`` gives on the same
    attributes (``tolist`` and the lazy getters hand out the very same doubles).
    """

    __slots__ = ("blob", "fifo_indexes")

    def __init__(self, rows_f: np.ndarray[Any, Any], rows_i: np.ndarray[Any, Any], total: Any):
        block = np.empty((rows_f.shape[0], 25), dtype=np.float64)
        block[:, 0:15] = rows_f[:, _KEY_COLUMNS]
        block[:, 15:20] = np.asarray(total, dtype=np.float64)
        block[:, 20:25] = rows_f[:, _DEMAND_COLUMNS]
        self.blob = block.tobytes()
        fifo = rows_i[:, 1].tolist()
        self.fifo_indexes: list[int | None] = [None if value < 0 else value for value in fifo]

    @staticmethod
    def rows_of(element: Element) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        """The result arrays ``element`` reads from, or ``None`` for a Python-engine element."""
        if type(element) is not NativeElement:
            return None
        return element._rows[0], element._rows[1]

    @staticmethod
    def row(element: Element) -> int:
        return cast(NativeElement, element)._row

    @staticmethod
    def fifo_index(element: Element) -> int | None:
        """``element.fifo_index`` without storing it in the element."""
        native = cast(NativeElement, element)
        value = int(native._rows[1][native._row, 1])
        return None if value < 0 else value
