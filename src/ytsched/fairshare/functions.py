"""The three per-element functions and the top-down distribution of fair share.

For every element we build (``TElement::PrepareFairShareFunctions`` in
``yt/yt/library/vector_hdrf/fair_share_update.cpp``):

* **FSBFF**, fair share by fit factor (vector-valued).  An operation first covers its usage
  (``min(u_r, f * max u)`` on ``[0, 1]``), then moves linearly to its demand on ``[1, 2]``; a
  gang operation with the step function jumps from 0 to its demand at ``f = 1``.  A fair-share
  pool sums its children's FSBS with arguments scaled by ``weight / min weight``; a FIFO pool
  concatenates them in FIFO order.
* **MFFBS**, max fit factor by suggestion (scalar): per resource the inverse of FSBFF restricted
  to ``[guarantee, limit]`` and shifted so that suggestion 0 means "just the guarantee"; the
  pointwise minimum over resources.
* **FSBS**, fair share by suggestion = FSBFF o MFFBS, compressed.

The root is then offered suggestion 1 and each pool hands its children the suggestions implied by
its fit factor, lowering the fit factor where a jump would overshoot.

This is the *reference* implementation, the line-by-line port of YTsaurus that the tests
compare the native core (``src/native/``, :mod:`ytsched.fairshare.native`) against, bit for bit.
It is deliberately plain; speed lives in the native core.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import SchedulingMode, UpdateOptions
from ytsched.fairshare.plf import (
    PLF,
    SCALAR_OPS,
    VECTOR_OPS,
    Builder,
    compress,
    extract_component,
    inverse_lower_bound,
    pointwise_min_all,
    sum_functions,
)
from ytsched.resources import (
    EPSILON_VECTOR,
    ZERO,
    Vector,
    dominates,
    vadd,
    vconst,
    vmin,
    vsub,
)

EPSILON = 1e-9
_DOUBLE_MAX = 1.7976931348623157e308


# --- FIFO order ----------------------------------------------------------------------------


def prepare_fifo_pool(pool: Element) -> None:
    """Sort a FIFO pool's operations and assign their canonical ``fifo_index``."""
    assert pool.pool is not None
    parameters = pool.pool.fifo_sort_parameters
    ordered = sorted(pool.children, key=lambda child: child.fifo_sort_key(parameters))
    pool.sorted_children = ordered
    for index, child in enumerate(ordered):
        child.fifo_index = index
        child.effective_fifo_index = None


def reorder_fifo_children_for_guarantee_utilization(pool: Element, options: UpdateOptions) -> None:
    """Move pending gangs that do not fit the pool's strong guarantee behind those that do.

    Without this a large pending gang at the head of a FIFO pool pins its fit factor below the
    point where the children behind it are reached, and the guarantee stays unused.  Only the
    order used by this update changes; ``fifo_index`` keeps the canonical order and the used one
    is reported as ``effective_fifo_index``.
    """
    assert pool.pool is not None
    if not (
        options.enable_step_function_for_gang_operations
        and pool.step_function_enabled_here
        and options.enable_fifo_children_reordering_for_guarantee_utilization
        and pool.pool.enable_fifo_children_reordering_for_guarantee_utilization
    ):
        return
    guarantee = pool.strong_guarantee_share
    if dominates(EPSILON_VECTOR, guarantee):
        return
    reordered: list[Element] = []
    deferred: list[Element] = []
    accepted = ZERO
    stopped = False
    bound = vadd(guarantee, EPSILON_VECTOR)
    for child in pool.sorted_children:
        if child.is_gang_like and not dominates(child.limits_share, child.demand_share):
            limited_demand = ZERO
        else:
            limited_demand = vmin(child.demand_share, child.limits_share)
        running = child.resource_usage != ZERO
        fits = dominates(bound, vadd(accepted, limited_demand))
        if stopped or (child.is_gang_like and not running and not fits):
            deferred.append(child)
            continue
        if not fits and not child.is_gang_like:
            stopped = True
        reordered.append(child)
        accepted = vadd(accepted, limited_demand)
    reordered.extend(deferred)
    if reordered == pool.sorted_children:
        return
    pool.sorted_children = reordered
    for index, child in enumerate(reordered):
        child.effective_fifo_index = index


# --- building the functions ----------------------------------------------------------------

_P = ParamSpec("_P")
_R = TypeVar("_R")


def without_cyclic_gc(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``func`` with Python's cyclic garbage collector paused (restored afterwards).

    An update allocates millions of small tuples and lists, and every 700 allocations of
    container objects trigger a collection that, in the older generations, walks the whole
    element tree: 10-25% of an update's time on large trees.  An update creates no cyclic
    garbage worth collecting early (the element tree it builds is its result), so nothing is
    lost by leaving collection to after it.  ``gc.disable`` is process-wide: other threads run
    without cyclic collection while an update is in progress.
    """

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


@without_cyclic_gc
def prepare_recursively(element: Element, options: UpdateOptions) -> None:
    """Build FSBFF, MFFBS and FSBS bottom-up, skipping elements already prepared."""
    _prepare(element, options)


def _prepare(element: Element, options: UpdateOptions) -> None:
    if element.prepared:
        return
    for child in element.children:
        _prepare(child, options)
    if element.is_operation:
        element.fsbff = _operation_fsbff(element, options)
    elif element.mode is SchedulingMode.FIFO:
        element.fsbff = _fifo_fsbff(element, options)
    else:
        element.fsbff = _fair_share_pool_fsbff(element, options)
    element.mffbs = _max_fit_factor_by_suggestion(element, element.fsbff)
    element.fsbs = compress(element.fsbff.compose(element.mffbs))
    element.prepared = True


def _uses_step_function(element: Element, options: UpdateOptions) -> bool:
    parent = element.parent
    return (
        options.enable_step_function_for_gang_operations
        and parent is not None
        and parent.step_function_enabled_here
        and element.is_gang_like
    )


def _fsbs(element: Element) -> PLF:
    fsbs = element.fsbs
    assert fsbs is not None
    return fsbs


def _operation_fsbff(element: Element, options: UpdateOptions) -> PLF:
    builder = Builder()
    demand = element.demand_share
    parent = element.parent
    if (
        options.enable_step_function_for_gang_operations
        and parent is not None
        and parent.step_function_enabled_here
        and element.is_gang_like
    ):
        builder.push_segment((0.0, ZERO, 1.0, ZERO))
        builder.push_segment((1.0, ZERO, 1.0, demand))
        builder.push_segment((1.0, demand, 2.0, demand))
        return builder.finish(VECTOR_OPS)
    usage = element.usage_share
    max_usage = max(usage)
    if max_usage == 0.0:
        builder.push_segment((0.0, ZERO, 1.0, ZERO))
    else:
        builder.add_point(0.0, ZERO)
        previous = 0.0
        for value in sorted(usage):
            fit_factor = value / max_usage
            if fit_factor > previous:
                builder.add_point(fit_factor, vmin(vconst(value), usage))
                previous = fit_factor
    builder.push_segment((1.0, usage, 2.0, demand))
    return builder.finish(VECTOR_OPS)


def _min_child_weight(pool: Element) -> float:
    result = _DOUBLE_MAX
    for child in pool.children:
        if child.weight > EPSILON and child.weight < result:
            result = child.weight
    return result


def _fair_share_pool_fsbff(pool: Element, options: UpdateOptions) -> PLF:
    if not pool.children:
        return PLF.constant(0.0, 1.0, ZERO, VECTOR_OPS)
    min_weight = _min_child_weight(pool)
    scaled: list[PLF] = []
    for child in pool.children:
        assert child.fsbs is not None
        scaled.append(child.fsbs.scale_argument(child.weight / min_weight).extend_right(1.0))
    if options.enable_improved_fair_share_by_fit_factor_computation:
        return _improved_fsbff(pool, scaled)
    return sum_functions(scaled)


def _improved_fsbff(pool: Element, child_functions: list[PLF]) -> PLF:
    """Spread joint jumps of several children into one step per child.

    Every critical point of every child becomes its own unit of fit factor, in order of
    (suggestion, child index); at each, the children before the one that owns the point
    contribute their right limit, the ones after it their left limit.  The per-child parts are
    kept so that the top-down pass can hand each child exactly its share of a jump.
    """
    points: list[tuple[float, int]] = []
    for index, func in enumerate(child_functions):
        for x in func.critical_points():
            points.append((x, index))
    points.sort()

    builder = Builder()
    child_builders = [Builder() for _ in child_functions]
    fit_factor = 0.0
    for x, owner in points:
        left_total = ZERO
        right_total = ZERO
        for index, func in enumerate(child_functions):
            left, right = func.left_right_limit_at(x)
            child_builder = child_builders[index]
            if index < owner:
                left_total = vadd(left_total, right)
                right_total = vadd(right_total, right)
                child_builder.add_point(fit_factor, right)
            elif index > owner:
                left_total = vadd(left_total, left)
                right_total = vadd(right_total, left)
                child_builder.add_point(fit_factor, left)
            else:
                left_total = vadd(left_total, left)
                right_total = vadd(right_total, right)
                child_builder.add_point(fit_factor, left)
                child_builder.add_point(fit_factor, right)
        builder.add_point(fit_factor, left_total)
        builder.add_point(fit_factor, right_total)
        fit_factor += 1.0
    pool.child_fsbff = [b.finish(VECTOR_OPS) for b in child_builders]
    return builder.finish(VECTOR_OPS)


def _fifo_fsbff(pool: Element, options: UpdateOptions) -> PLF:
    children = pool.sorted_children
    if not children:
        return PLF.constant(0.0, 1.0, ZERO, VECTOR_OPS)
    if options.enable_fast_fifo_fair_share_by_fit_factor_computation:
        builder = Builder()
        prefix = ZERO
        shift = 0.0
        for child in children:
            fsbs = child.fsbs
            assert fsbs is not None
            for lb, lv, rb, rv in fsbs.segments:
                builder.push_segment((lb + shift, vadd(lv, prefix), rb + shift, vadd(rv, prefix)))
            prefix = vadd(prefix, fsbs.right_value)
            shift += 1.0
        return builder.finish(VECTOR_OPS)
    count = float(len(children))
    shifted: list[PLF] = []
    for index, child in enumerate(children):
        assert child.fsbs is not None
        shifted.append(child.fsbs.shift(float(index)).extend_both(0.0, count))
    return sum_functions(shifted)


def _max_fit_factor_by_suggestion(element: Element, fsbff: PLF) -> PLF:
    limits = element.limits_share
    guarantee = element.guarantee_share
    per_resource: list[PLF] = []
    for r in range(5):
        component = extract_component(r, fsbff)
        lo = component.left_value
        hi = component.right_value
        limit = min(max(limits[r], lo), hi)
        g = min(max(guarantee[r], lo), limit)
        inverse = (
            component.transpose().narrow(g, limit).trim_left().shift(-g).extend_right(1.0).trim()
        )
        per_resource.append(inverse)
    return pointwise_min_all(per_resource)


# --- top-down distribution -----------------------------------------------------------------


def _children_in_order(pool: Element) -> list[Element]:
    return pool.sorted_children if pool.mode is SchedulingMode.FIFO else pool.children


def _child_suggestions(pool: Element, fit_factor: float) -> list[float]:
    if pool.mode is SchedulingMode.FIFO:
        count = len(pool.sorted_children)
        satisfied = int(fit_factor)
        partial = fit_factor - satisfied
        suggestions = [0.0] * count
        for i in range(satisfied):
            suggestions[i] = 1.0
        if partial != 0.0:
            suggestions[satisfied] = partial
        return suggestions
    min_weight = _min_child_weight(pool)
    return [min(1.0, fit_factor * (child.weight / min_weight)) for child in pool.children]


def distribute_scalar(element: Element, suggestion: float, promised: bool) -> None:
    """Give ``element`` the fair share for a scalar suggestion and recurse."""
    fsbs = element.fsbs
    assert fsbs is not None
    if element.is_operation:
        element.set_detailed_fair_share(fsbs.value_at(suggestion), promised)
        return
    children = _children_in_order(element)
    if not children:
        element.set_detailed_fair_share(ZERO, promised)
        return
    suggested = fsbs.value_at(suggestion)
    ceiling = vadd(suggested, EPSILON_VECTOR)

    def fits(fit_factor: float) -> bool:
        acc = ZERO
        for child, child_suggestion in zip(
            children, _child_suggestions(element, fit_factor), strict=True
        ):
            assert child.fsbs is not None
            acc = vadd(acc, child.fsbs.value_at(child_suggestion))
        return dominates(ceiling, acc)

    assert element.mffbs is not None
    fit_factor = float(element.mffbs.value_at(suggestion))
    if not fits(fit_factor):
        fit_factor = inverse_lower_bound(0.0, fit_factor, fits)
    for child, child_suggestion in zip(
        children, _child_suggestions(element, fit_factor), strict=True
    ):
        distribute_scalar(child, child_suggestion, promised)
    element.set_detailed_fair_share(suggested, promised)


def _child_shares(pool: Element, fit_factor: float) -> list[Vector]:
    if pool.mode is SchedulingMode.FIFO:
        children = pool.sorted_children
        satisfied = int(fit_factor)
        partial = fit_factor - satisfied
        shares = [ZERO] * len(children)
        for i in range(satisfied):
            fsbs = children[i].fsbs
            assert fsbs is not None
            shares[i] = fsbs.value_at(1.0)
        if partial != 0.0:
            fsbs = children[satisfied].fsbs
            assert fsbs is not None
            shares[satisfied] = fsbs.value_at(partial)
        return shares
    assert pool.child_fsbff is not None
    return [func.value_at(fit_factor) for func in pool.child_fsbff]


def distribute_vector(
    element: Element, suggested: Vector, promised: bool, options: UpdateOptions
) -> None:
    """Vector-suggestion variant used by the improved computation."""
    if element.is_operation:
        element.set_detailed_fair_share(suggested, promised)
        return
    children = _children_in_order(element)
    if not children:
        element.set_detailed_fair_share(ZERO, promised)
        return

    def reference_total(fit_factor: float) -> Vector:
        acc = ZERO
        for share in _child_shares(element, fit_factor):
            acc = vadd(acc, share)
        return acc

    children_total: Callable[[float], Vector] = reference_total

    assert element.fsbff is not None
    right_bound = element.fsbff.right_bound
    fit_factor = inverse_lower_bound(
        0.0, right_bound, lambda f: dominates(suggested, children_total(f))
    )
    if (
        not dominates(EPSILON_VECTOR, vsub(suggested, children_total(fit_factor)))
        and options.enable_improved_fair_share_by_fit_factor_computation_distribution_gap
    ):
        ceiling = vadd(suggested, EPSILON_VECTOR)
        fit_factor = inverse_lower_bound(
            fit_factor, right_bound, lambda f: dominates(ceiling, children_total(f))
        )
    if fit_factor < EPSILON:
        fit_factor = 0.0
    for child, share in zip(children, _child_shares(element, fit_factor), strict=True):
        distribute_vector(child, share, promised, options)
    element.set_detailed_fair_share(suggested, promised)


__all__ = [
    "SCALAR_OPS",
    "distribute_scalar",
    "distribute_vector",
    "prepare_fifo_pool",
    "prepare_recursively",
    "reorder_fifo_children_for_guarantee_utilization",
]
