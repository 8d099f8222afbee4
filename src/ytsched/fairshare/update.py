"""One fair-share update: the vector-HDRF executor.

This follows the step order of ``TFairShareUpdateExecutor::Run`` in
``yt/yt/library/vector_hdrf/fair_share_update.cpp``:

1. validate pool configs (nested promised-guarantee pools);
2. infer strong guarantees for resources the config leaves implicit;
3. collect burst and relaxed pools (pre-order);
4. bottom-up attributes: limits, usage, demand, strong-guarantee shares, flow and burst ratios,
   FIFO order;
5. consume and refill integral volumes, redistribute free volume;
6. validate guarantees against the cluster and shrink them where they overcommit;
7. reorder FIFO children for guarantee utilization (when enabled);
8. integral shares of burst pools, then of relaxed pools;
9. build the three functions bottom-up and distribute fair share top-down from the root;
10. promised-guarantee fair share for opted-in subtrees; root fair share = sum of children.

The math of each step lives in :mod:`ytsched.fairshare.functions` (function building and the
top-down pass), :mod:`ytsched.fairshare.guarantees` and :mod:`ytsched.fairshare.integral`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ytsched.fairshare import functions, guarantees, integral
from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import (
    IntegralGuaranteeType,
    SchedulingMode,
    TreeSnapshot,
    UpdateError,
    UpdateOptions,
)
from ytsched.fairshare.tree import build_tree
from ytsched.resources import (
    ZERO,
    Vector,
    dominant_resource,
    max_resource_ratio,
    share_of,
    vadd,
    vmin,
)


@dataclass(slots=True)
class UpdateContext:
    """Per-update state shared by all steps (``TFairShareUpdateContext``)."""

    options: UpdateOptions
    total: Vector
    now: float | None
    previous_update_time: float | None
    errors: list[UpdateError] = field(default_factory=list)
    burst_pools: list[Element] = field(default_factory=list)
    relaxed_pools: list[Element] = field(default_factory=list)
    fifo_pools: list[Element] = field(default_factory=list)


@dataclass(slots=True)
class UpdateResult:
    """The element tree after the update, with errors; elements are keyed by name."""

    root: Element
    pools: Mapping[str, Element]
    operations: Mapping[str, Element]
    errors: list[UpdateError]
    total_resource_limits: Vector
    options: UpdateOptions


Engine = Literal["native", "python"]
ENGINE_VARIABLE = "YTSCHED_ENGINE"
"""Environment variable choosing the default engine: ``native`` (default) or ``python``."""

_warned_fallback = False


def run_update(snapshot: TreeSnapshot, engine: Engine | None = None) -> UpdateResult:
    """Compute fair shares (and integral volumes) for one tree snapshot.

    Pure and deterministic: the snapshot is not modified and nothing outside it is read.
    ``engine`` picks the implementation: ``native`` (the C++ core, bit-identical to the
    reference and the default) or ``python`` (:func:`run_reference_update`, the reference the
    tests compare against).  Without it, ``$YTSCHED_ENGINE`` decides, then ``native``; if the
    compiled core is missing (a source checkout that was never built) the reference runs, with
    a warning.
    """
    from ytsched.fairshare import flat, native

    chosen = engine or os.environ.get(ENGINE_VARIABLE) or "native"
    if chosen == "python":
        flat.build_flat(snapshot)  # the same input checks as the native path
        return run_reference_update(snapshot)
    if chosen != "native":
        raise ValueError(f"unknown fair-share engine {chosen!r} (expected native or python)")
    if engine is None and not native.native_available():
        global _warned_fallback
        if not _warned_fallback:
            _warned_fallback = True
            warnings.warn(
                "ytsched's native fair-share core is not built; using the (slow) Python"
                " reference engine. Reinstall with `pip install -e .` and a C++17 compiler.",
                RuntimeWarning,
                stacklevel=2,
            )
        flat.build_flat(snapshot)
        return run_reference_update(snapshot)
    return native.run_native_update(snapshot)


@functions.without_cyclic_gc
def run_reference_update(snapshot: TreeSnapshot) -> UpdateResult:
    """The reference engine: the straightforward Python port, step by step."""
    root, pools, operations = build_tree(snapshot)
    context = UpdateContext(
        options=snapshot.options,
        total=snapshot.total_resource_limits,
        now=snapshot.now,
        previous_update_time=snapshot.previous_update_time,
    )

    guarantees.validate_pool_configs(root, context.errors)
    guarantees.determine_inferred_strong_guarantees(root, context.total, context.options)
    _collect_integral_pools(root, context)
    _update_cumulative_attributes(root, context)
    integral.consume_and_refill(root, context)
    guarantees.validate_and_adjust(root, context)
    for pool in context.fifo_pools:
        functions.reorder_fifo_children_for_guarantee_utilization(pool, context.options)
    integral.update_burst_pool_integral_shares(context)
    integral.update_relaxed_pool_integral_shares(root, context)

    functions.prepare_recursively(root, context.options)
    if context.options.enable_improved_fair_share_by_fit_factor_computation:
        assert root.fsbs is not None
        functions.distribute_vector(root, root.fsbs.value_at(1.0), False, context.options)
    else:
        functions.distribute_scalar(root, 1.0, False)
    _compute_promised_guarantee_fair_share(root, context.options)
    _update_root_fair_share(root)
    for element in (*pools.values(), *operations.values()):
        fsbs, fsbff, mffbs = element.fsbs, element.fsbff, element.mffbs
        if fsbs is not None and fsbff is not None and mffbs is not None:
            element.function_sizes = (
                len(fsbs.segments),
                len(fsbff.segments),
                len(mffbs.segments),
            )
            element.limited_demand_share = fsbs.right_value

    return UpdateResult(
        root=root,
        pools=pools,
        operations=operations,
        errors=context.errors,
        total_resource_limits=context.total,
        options=context.options,
    )


def _collect_integral_pools(element: Element, context: UpdateContext) -> None:
    """Burst and relaxed pools in pre-order.  Operations are skipped: they have no integral
    guarantee type and no children, so visiting them could add nothing."""
    kind = element.integral_type
    if kind is IntegralGuaranteeType.BURST:
        context.burst_pools.append(element)
    elif kind is IntegralGuaranteeType.RELAXED:
        context.relaxed_pools.append(element)
    for child in element.children:
        if not child.is_operation:
            _collect_integral_pools(child, context)


def _update_cumulative_attributes(element: Element, context: UpdateContext) -> None:
    """Bottom-up: shares, ratios and FIFO order (``UpdateCumulativeAttributes``)."""
    total = context.total
    if not element.is_operation:
        pool = element.pool
        assert pool is not None
        if element.integral_type is not IntegralGuaranteeType.NONE:
            ig = pool.integral_guarantees
            element.burst_ratio = max_resource_ratio(ig.burst_guarantee_resources, total)
            element.resource_flow_ratio = max_resource_ratio(ig.resource_flow, total)
        else:
            element.burst_ratio = 0.0
            element.resource_flow_ratio = 0.0
        element.total_burst_ratio = element.burst_ratio
        element.total_resource_flow_ratio = element.resource_flow_ratio
        usage = ZERO
        demand = ZERO
        for child in element.children:
            _update_cumulative_attributes(child, context)
            element.total_resource_flow_ratio += child.total_resource_flow_ratio
            element.total_burst_ratio += child.total_burst_ratio
            usage = vadd(usage, child.resource_usage)
            demand = vadd(demand, child.resource_demand)
        element.resource_usage = usage
        element.resource_demand = demand

    element.limits_share = share_of(vmin(element.resource_limits, total), total)
    element.strong_guarantee_share = share_of(
        (
            element.inferred_strong_guarantee_resources[0],
            element.inferred_strong_guarantee_resources[1],
            element.inferred_strong_guarantee_resources[2],
            element.inferred_strong_guarantee_resources[3],
            element.inferred_strong_guarantee_resources[4],
        ),
        total,
    )
    if element.resource_usage == ZERO:
        element.dominant_resource = dominant_resource(element.resource_demand, total)
    else:
        element.dominant_resource = dominant_resource(element.resource_usage, total)
    element.usage_share = share_of(element.resource_usage, total)
    element.demand_share = share_of(element.resource_demand, total)

    if not element.is_operation and element.mode is SchedulingMode.FIFO:
        functions.prepare_fifo_pool(element)
        context.fifo_pools.append(element)

    if element.is_root:
        strong = ZERO
        for child in element.children:
            strong = vadd(strong, child.strong_guarantee_share)
        element.strong_guarantee_share = strong


def _compute_promised_guarantee_fair_share(element: Element, options: UpdateOptions) -> None:
    if element.is_operation:
        return
    assert element.pool is not None
    if element.pool.compute_promised_guarantee_fair_share and not element.is_root:
        assert element.fsbs is not None
        if options.enable_improved_fair_share_by_fit_factor_computation:
            functions.distribute_vector(element, element.fsbs.value_at(0.0), True, options)
        else:
            functions.distribute_scalar(element, 0.0, True)
        return
    for child in element.children:
        _compute_promised_guarantee_fair_share(child, options)


def _update_root_fair_share(root: Element) -> None:
    """Root fair share = sum of its children, decomposed with the *used* strong guarantee."""
    used_strong = ZERO
    total = ZERO
    for child in root.children:
        used_strong = vadd(used_strong, child.fair_share.strong_guarantee)
        total = vadd(total, child.fair_share.total)
    configured = root.strong_guarantee_share
    root.strong_guarantee_share = used_strong
    root.set_detailed_fair_share(total)
    root.strong_guarantee_share = configured
