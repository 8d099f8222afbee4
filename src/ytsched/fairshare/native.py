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
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ytsched.errors import YtschedError
from ytsched.fairshare.elements import Element, IntegralState
from ytsched.fairshare.flat import FlatTree, build_flat
from ytsched.fairshare.functions import without_cyclic_gc
from ytsched.fairshare.model import DetailedShare, TreeSnapshot, UpdateError
from ytsched.resources import RESOURCE_NAMES, amounts_to_map

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


def run_flat(flat: FlatTree) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[Any, ...]]:
    """Run the core on checked arrays: (float results, int results, error summary)."""
    module = _load()
    n = flat.in_f.shape[0]
    out_f = np.empty((n, OUT_F), dtype=np.float64)
    out_i = np.empty((n, OUT_I), dtype=np.int32)
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


def _elements(
    snapshot: TreeSnapshot,
    flat: FlatTree,
    out_f: np.ndarray[Any, Any],
    out_i: np.ndarray[Any, Any],
) -> tuple[Element, dict[str, Element], dict[str, Element]]:
    """Elements with every attribute the reference computes, linked as ``build_tree`` links
    them.  Built through ``__new__`` and direct slot stores: a dataclass ``__init__`` with its
    default factories costs several times more, and this runs once per element per update."""
    rows = out_f.tolist()
    ints = out_i.tolist()
    parents = flat.in_i[:, 0].tolist()
    gangs = flat.in_i[:, 15].tolist()
    pool_count = len(snapshot.pools)
    names = RESOURCE_NAMES
    new = Element.__new__
    elements: list[Element] = []
    specs: list[Any] = [*snapshot.pools, *snapshot.operations]
    for index, spec in enumerate(specs):
        r = rows[index]
        k = ints[index]
        is_op = index >= pool_count
        element = new(Element)
        element.name = spec.name
        element.is_operation = is_op
        element.is_root = parents[index] < 0
        element.pool = None if is_op else spec
        element.operation = spec if is_op else None
        element.parent = None
        element.children = []
        element.weight = r[100]
        element.resource_demand = (r[111], r[112], r[113], r[114], r[115])
        element.resource_usage = (r[106], r[107], r[108], r[109], r[110])
        element.resource_limits = (
            snapshot.total_resource_limits if element.is_root else spec.resource_limits
        )
        element.is_gang_like = bool(gangs[index])
        element.explicit_strong_guarantee = {} if is_op else dict(spec.strong_guarantee_resources)
        element.inferred_strong_guarantee_resources = r[101:106]
        element.limits_share = (r[40], r[41], r[42], r[43], r[44])
        element.strong_guarantee_share = (r[45], r[46], r[47], r[48], r[49])
        element.proposed_integral_share = (r[50], r[51], r[52], r[53], r[54])
        element.usage_share = (r[55], r[56], r[57], r[58], r[59])
        element.demand_share = (r[60], r[61], r[62], r[63], r[64])
        element.dominant_resource = names[k[0]]
        element.estimated_guarantee_share = (r[65], r[66], r[67], r[68], r[69])
        element.burst_ratio = r[70]
        element.total_burst_ratio = r[71]
        element.resource_flow_ratio = r[72]
        element.total_resource_flow_ratio = r[73]
        element.fair_share = DetailedShare(
            (r[0], r[1], r[2], r[3], r[4]),
            (r[5], r[6], r[7], r[8], r[9]),
            (r[10], r[11], r[12], r[13], r[14]),
            (r[15], r[16], r[17], r[18], r[19]),
        )
        element.promised_guarantee_fair_share = DetailedShare(
            (r[20], r[21], r[22], r[23], r[24]),
            (r[25], r[26], r[27], r[28], r[29]),
            (r[30], r[31], r[32], r[33], r[34]),
            (r[35], r[36], r[37], r[38], r[39]),
        )
        element.fifo_index = None if k[1] < 0 else k[1]
        element.effective_fifo_index = None if k[2] < 0 else k[2]
        element.integral = IntegralState(
            (r[74], r[75], r[76], r[77], r[78]),
            r[79],
            (r[80], r[81], r[82], r[83], r[84]),
            (r[85], r[86], r[87], r[88], r[89]),
            (r[90], r[91], r[92], r[93], r[94]),
            (r[95], r[96], r[97], r[98], r[99]),
        )
        element.sorted_children = []
        element.fsbff = None
        element.mffbs = None
        element.fsbs = None
        element.child_fsbff = None
        element.prepared = True
        element.function_sizes = (k[3], k[4], k[5]) if k[3] >= 0 else None
        element.limited_demand_share = (r[116], r[117], r[118], r[119], r[120])
        elements.append(element)
    for index, element in enumerate(elements):
        parent = parents[index]
        if parent >= 0:
            owner = elements[parent]
            element.parent = owner
            owner.children.append(element)
    for element in elements[:pool_count]:
        assert element.pool is not None
        if element.children and element.pool.mode.value == "fifo":
            element.sorted_children = sorted(element.children, key=_fifo_position)
    if snapshot.options.use_only_gpu_strong_guarantees:
        for element in elements[:pool_count]:
            explicit = element.explicit_strong_guarantee
            element.explicit_strong_guarantee = {2: explicit[2]} if 2 in explicit else {}
    root = elements[flat.root_index]
    pools = dict(zip(flat.pool_names, elements[:pool_count], strict=True))
    operations = dict(zip(flat.operation_names, elements[pool_count:], strict=True))
    return root, pools, operations


def _fifo_position(element: Element) -> int:
    position = element.effective_fifo_index
    if position is None:
        position = element.fifo_index
    assert position is not None
    return position
