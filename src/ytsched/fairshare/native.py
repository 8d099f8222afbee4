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

import threading
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ytsched.errors import YtschedError
from ytsched.extensions import load_extension
from ytsched.fairshare import hugepages
from ytsched.fairshare.elements import Element, IntegralState
from ytsched.fairshare.flat import FlatTree, build_flat
from ytsched.fairshare.functions import without_cyclic_gc
from ytsched.fairshare.model import (
    DetailedShare,
    PoolSpec,
    SchedulingMode,
    TreeSnapshot,
    UpdateError,
)
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
# Float result columns: the first of each block (vectors: 5 columns, one per resource).
OUT_FAIR_SHARE = 0  # 20: strong guarantee, integral guarantee, weight proportional, total
OUT_FAIR_SHARE_TOTAL = 15
OUT_PROMISED_GUARANTEE_FAIR_SHARE = 20  # 20, as OUT_FAIR_SHARE
OUT_LIMITS_SHARE = 40
OUT_STRONG_GUARANTEE_SHARE = 45
OUT_PROPOSED_INTEGRAL_SHARE = 50
OUT_USAGE_SHARE = 55
OUT_DEMAND_SHARE = 60
OUT_ESTIMATED_GUARANTEE_SHARE = 65
OUT_BURST_RATIO = 70
OUT_TOTAL_BURST_RATIO = 71
OUT_RESOURCE_FLOW_RATIO = 72
OUT_TOTAL_RESOURCE_FLOW_RATIO = 73
OUT_INTEGRAL = 74  # 26: IntegralState's fields in order
OUT_WEIGHT = 100
OUT_INFERRED_STRONG_GUARANTEE = 101
OUT_RESOURCE_USAGE = 106
OUT_RESOURCE_DEMAND = 111
OUT_LIMITED_DEMAND_SHARE = 116
# Int result columns.
OUT_DOMINANT_RESOURCE = 0  # index into RESOURCE_NAMES
OUT_FIFO_INDEX = 1  # -1: none
OUT_EFFECTIVE_FIFO_INDEX = 2  # -1: none
OUT_FUNCTION_SIZES = 3  # 3 columns; -1: none


class NativeEngineError(YtschedError):
    """The native core refused an input the checks let through (a bug: please report it)."""


_module: ModuleType | None = None


def load_module() -> ModuleType:
    """The compiled core (``ImportError`` if it cannot be loaded)."""
    return _load()


def _load() -> ModuleType:
    global _module
    if _module is None:
        module = load_extension(
            "ytsched.fairshare._native", "YTSCHED_NATIVE_LIBRARY", "the native core"
        )
        if module.OUT_F != OUT_F or module.OUT_I != OUT_I:
            raise ImportError("the native core's result layout does not match this package")
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
            rows = self._rows
            value = build(rows.out_f[self._row], rows.out_i[self._row])
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


def _explicit_guarantee(element: NativeElement) -> dict[int, float]:
    """The pool's configured strong guarantees as ``build_tree`` keeps them (only the GPU one
    under ``use_only_gpu_strong_guarantees``); none for an operation."""
    spec = element.pool
    if spec is None:
        return {}
    explicit = dict(spec.strong_guarantee_resources)
    if element._rows.gpu_only:
        explicit = {GPU_INDEX: explicit[GPU_INDEX]} if GPU_INDEX in explicit else {}
    return explicit


_DEFAULTED: dict[str, Callable[[NativeElement], Any]] = {
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
    than the update itself; most callers read a few attributes of some elements.  Elements are
    created on demand (:class:`ElementsByName`); an element's links (parent, children, FIFO
    order) are resolved when first read, each computed attribute is converted when first read
    and kept, and the engine's working state (functions) gets its default when first read.
    Behaves as an ``Element`` in every other respect.
    """

    __slots__ = ("_children", "_row", "_rows", "_sorted_children")

    _children: list[Element] | None
    _sorted_children: list[Element] | None
    _row: int
    _rows: _ResultRows
    """The result arrays and the rest of what all the elements of one result share."""


for _name in _LAZY:
    setattr(NativeElement, _name, _lazy_attribute(_name))
for _name, _default in _DEFAULTED.items():
    setattr(NativeElement, _name, _defaulted_attribute(_name, _default))
del _name, _default


class _ResultRows:
    """What the elements of one native result share: the core's result arrays, the snapshot
    rows they stand for, and the elements created so far (``None`` until first asked for).

    Elements are created on demand (:meth:`element`), each exactly once, so identity holds as
    with eagerly built trees (``result.pools[a].parent is result.pools[b]``).  Parents, children
    and FIFO order are found from the flat input's parent column, also on demand.
    """

    __slots__ = (
        "_children",
        "_lock",
        "_order",
        "distinct",
        "elements",
        "gpu_only",
        "in_i",
        "index",
        "names",
        "operations",
        "out_f",
        "out_i",
        "pool_count",
        "pools",
        "total",
    )

    def __init__(
        self,
        snapshot: TreeSnapshot,
        flat: FlatTree,
        out_f: np.ndarray[Any, Any],
        out_i: np.ndarray[Any, Any],
    ) -> None:
        self.out_f = out_f
        self.out_i = out_i
        self.gpu_only = snapshot.options.use_only_gpu_strong_guarantees
        self.in_i = flat.in_i
        self.pools = snapshot.pools
        self.operations = snapshot.operations
        self.pool_count = len(flat.pool_names)
        self.total = snapshot.total_resource_limits
        self.names = (flat.pool_names, flat.operation_names)  # not ``flat``: its in_f may go
        self.index: dict[str, int] | None = None
        self.distinct = True
        """The names are distinct (``build_flat`` rejects a snapshot whose are not), so a
        mapping's rows are its range in order (:meth:`ElementsByName.rows`)."""
        self.elements: list[NativeElement | None] = [None] * out_f.shape[0]
        self._children: tuple[list[int], list[int]] | None = None
        self._lock = threading.Lock()
        self._order: list[int] | None = None

    def element(self, row: int) -> NativeElement:
        """The element of ``row``, created (and kept) on first use."""
        element = self.elements[row]
        if element is not None:
            return element
        with self._lock:  # one element per row even if two threads read the result
            return self._create_chain(row)

    def _create_chain(self, row: int) -> NativeElement:
        """Create ``row``'s element and the missing part of its ancestor chain, top down (the
        element links its parent; a loop, as chains of 10k pools exist)."""
        existing = self.elements[row]
        if existing is not None:
            return existing
        missing = [row]
        parents = self.in_i
        parent = int(parents[row, 0])
        while parent >= 0 and self.elements[parent] is None:
            missing.append(parent)
            parent = int(parents[parent, 0])
        for pending in reversed(missing):
            created = self._create(pending)
            self.elements[pending] = created
        return created

    def _create(self, row: int) -> NativeElement:
        element: NativeElement = NativeElement.__new__(NativeElement)
        if row < self.pool_count:
            spec = self.pools[row]
            root = spec.parent is None
            element.name = spec.name
            element.is_operation = False
            element.is_root = root
            element.pool = spec
            element.operation = None
            element.resource_limits = self.total if root else spec.resource_limits
            element.is_gang_like = False
            element._children = None
            # Only a FIFO pool sorts its children (on first read); others keep none.
            element._sorted_children = None if spec.mode is SchedulingMode.FIFO else []
        else:
            op = self.operations[row - self.pool_count]
            element.name = op.name
            element.is_operation = True
            element.is_root = False
            element.pool = None
            element.operation = op
            element.resource_limits = op.resource_limits
            element.is_gang_like = bool(self.in_i[row, 15])
            element._children = []  # operations are never parents
            element._sorted_children = []
        element._row = row
        element._rows = self
        parent = int(self.in_i[row, 0])
        element.parent = None if parent < 0 else self.elements[parent]  # created before
        return element

    def child_rows(self, row: int) -> list[int]:
        """The rows naming ``row`` as parent, in row order (``build_tree``'s child order)."""
        if self._children is None:
            parents = self.in_i[:, 0]
            order = np.argsort(parents, kind="stable")
            counts = np.bincount(parents + 1, minlength=parents.shape[0] + 1)
            starts = np.zeros(counts.shape[0] + 1, dtype=np.int64)
            np.cumsum(counts, out=starts[1:])
            self._children = (order.tolist(), starts.tolist())
        order_list, starts_list = self._children
        return order_list[starts_list[row + 1] : starts_list[row + 2]]

    def fifo_order(self) -> list[int]:
        """Per row, the key FIFO pools sort their children by (effective FIFO index if set)."""
        if self._order is None:
            effective = self.out_i[:, 2]
            self._order = np.where(effective >= 0, effective, self.out_i[:, 1]).tolist()
        return self._order


def _children(element: NativeElement) -> list[Element]:
    context = element._rows
    return [context.element(row) for row in context.child_rows(element._row)]


def _sorted_children(element: NativeElement) -> list[Element]:
    """A FIFO pool's children in FIFO order (what the eager build set); otherwise empty."""
    spec = element.pool
    if spec is None or spec.mode is not SchedulingMode.FIFO:
        return []
    children = element.children
    if not children:
        return []
    order = element._rows.fifo_order()
    return sorted(children, key=lambda child: order[child._row])  # type: ignore[attr-defined]


def _link(name: str, build: Callable[[NativeElement], list[Element]]) -> property:
    """``children`` / ``sorted_children``: built on first read into the private slot ``name``
    (``None`` until then: a test, where the slot's AttributeError would cost ~1 µs per read)."""
    private = NativeElement.__dict__[name]

    def get(self: NativeElement) -> list[Element]:
        value = private.__get__(self, NativeElement)
        if value is None:
            value = build(self)
            private.__set__(self, value)
        return cast(list[Element], value)

    def set(self: NativeElement, value: list[Element]) -> None:
        private.__set__(self, value)

    return property(get, set, doc=f"``{name[1:]}``, found from the flat rows on first read.")


NativeElement.children = _link("_children", _children)  # type: ignore[assignment,misc]
NativeElement.sorted_children = _link(  # type: ignore[assignment,misc]
    "_sorted_children", _sorted_children
)


class ElementsByName(Mapping[str, Element]):
    """The pools (or the operations) of a native result by name, in snapshot order.

    Reads like the ``dict`` the reference engine returns; an element is created when first
    looked up or iterated over, so a caller that reads a few elements pays for those only
    (building all 110k elements of a 10k-pool tree costs ~0.5 s of CPython).  :meth:`row` gives
    an element's row in the result arrays (:func:`result_arrays`, columns ``OUT_*``) without
    creating it.
    """

    __slots__ = ("_context", "_names", "_start")

    def __init__(self, context: _ResultRows, names: list[str], start: int) -> None:
        self._context = context
        self._names = names
        self._start = start

    def _index(self) -> dict[str, int]:
        context = self._context
        index = context.index
        if index is None:
            pool_names, operation_names = context.names
            names = pool_names + operation_names
            index = context.index = dict(zip(names, range(len(names)), strict=True))
        return index

    def _row(self, name: object) -> int | None:
        row = self._index().get(name)  # type: ignore[call-overload]
        if row is None or not self._start <= row < self._start + len(self._names):
            return None
        return cast(int, row)

    def row(self, name: str) -> int:
        """The element's row in the result arrays (``KeyError`` if there is none)."""
        row = self._row(name)
        if row is None:
            raise KeyError(name)
        return row

    def rows(self) -> dict[str, int]:
        """:meth:`row` of every name that has one, in one pass: for a caller that looks up
        most of them (a call per name costs more than the lookup itself).  With distinct
        names (every result of the engine: ``_ResultRows.distinct``) the rows are this
        mapping's range in order, numbered without building the name index; otherwise each
        name's row is checked as :meth:`row` does."""
        names = self._names
        start = self._start
        stop = start + len(names)
        if self._context.distinct:
            return dict(zip(names, range(start, stop), strict=True))
        index = self._index()
        if len(index) == len(self._context.names[0]) + len(self._context.names[1]):
            return dict(zip(names, range(start, stop), strict=True))
        return {name: row for name in names if start <= (row := index[name]) < stop}

    def __getitem__(self, name: str) -> Element:
        row = self._row(name)
        if row is None:
            raise KeyError(name)
        return self._context.element(row)

    def get(self, name: str, default: Any = None) -> Any:
        row = self._row(name)
        return default if row is None else self._context.element(row)

    def __contains__(self, name: object) -> bool:
        return self._row(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    @without_cyclic_gc
    def _all(self) -> list[NativeElement]:
        """Every element, created in one go with cyclic collection paused (creating 100k
        objects would otherwise trigger collections that walk all of them, again and again)."""
        element = self._context.element
        return [element(row) for row in range(self._start, self._start + len(self._names))]

    def values(self) -> ValuesView[Element]:
        return _Values(self)

    def items(self) -> ItemsView[str, Element]:
        return _Items(self)

    def __repr__(self) -> str:
        return f"ElementsByName({len(self._names)} elements)"


class _Values(ValuesView[Element]):
    _mapping: ElementsByName

    def __iter__(self) -> Iterator[Element]:
        return iter(self._mapping._all())


class _Items(ItemsView[str, Element]):
    _mapping: ElementsByName

    def __iter__(self) -> Iterator[tuple[str, Element]]:
        mapping = self._mapping
        return zip(mapping._names, mapping._all(), strict=True)


def _elements(
    snapshot: TreeSnapshot,
    flat: FlatTree,
    out_f: np.ndarray[Any, Any],
    out_i: np.ndarray[Any, Any],
) -> tuple[Element, ElementsByName, ElementsByName]:
    """The root and lazy mappings of the pools and operations (see :class:`ElementsByName`)."""
    context = _ResultRows(snapshot, flat, out_f, out_i)
    pools = ElementsByName(context, flat.pool_names, 0)
    operations = ElementsByName(context, flat.operation_names, context.pool_count)
    return context.element(flat.root_index), pools, operations


@without_cyclic_gc
def read_all(result: UpdateResult) -> int:
    """Create every element of ``result`` with its links (parent, children, FIFO order): the
    work the eager build did for every update; computed attributes stay lazy as they were.
    Returns the number of elements.  For benchmarks and tests."""
    count = 0
    for mapping in (result.pools, result.operations):
        for element in mapping.values():
            element.parent  # noqa: B018 - the read is the point
            element.children  # noqa: B018
            element.sorted_children  # noqa: B018
            count += 1
    return count


def linked_elements(result: UpdateResult) -> list[Element]:
    """The elements of ``result`` that exist: for a native result, those created so far (the
    others hold no references to break); for a reference result, all of them."""
    root = result.root
    if type(root) is NativeElement:
        return [element for element in root._rows.elements if element is not None]
    return [root, *result.pools.values(), *result.operations.values()]


def forget_elements(result: UpdateResult) -> None:
    """Drop a native result's record of its created elements (nothing may read the result
    afterwards): with their parent and children links cleared (the scheduler's ``_unlink``),
    reference counting then frees the whole result at once."""
    root = result.root
    if type(root) is NativeElement:
        context = root._rows
        context.elements = [None] * len(context.elements)


def result_arrays(
    result: UpdateResult,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """The core's result arrays (rows: :meth:`ElementsByName.row`; columns ``OUT_*``), or
    ``None`` for a reference-engine result."""
    root = result.root
    if type(root) is NativeElement:
        return root._rows.out_f, root._rows.out_i
    return None


def result_pool_specs(result: UpdateResult) -> Sequence[PoolSpec] | None:
    """The pools' engine inputs of a native result by row (``result.pools.rows()``; what
    ``element.pool`` holds), without creating the elements; ``None`` for a reference result."""
    root = result.root
    if type(root) is NativeElement:
        return root._rows.pools
    return None


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
        return element._rows.out_f, element._rows.out_i

    @staticmethod
    def row(element: Element) -> int:
        return cast(NativeElement, element)._row

    @staticmethod
    def fifo_index(element: Element) -> int | None:
        """``element.fifo_index`` without storing it in the element."""
        native = cast(NativeElement, element)
        value = int(native._rows.out_i[native._row, 1])
        return None if value < 0 else value
