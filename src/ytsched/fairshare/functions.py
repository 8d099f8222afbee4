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

Fast paths
==========

Two implementations build these functions.  The *reference* (``_operation_fsbff``,
``_fair_share_pool_fsbff``, ``_improved_fsbff``, ``_fifo_fsbff``, ``_max_fit_factor_by_suggestion``
and ``plf.compose``/``plf.compress``) is the line-by-line port of YTsaurus.  The *fast* one
(:func:`_fast_fsbff` and :func:`ytsched.fairshare.fast_plf.prepare_functions`, the default)
computes the very same functions, segment for segment and bit for bit, without the generic
sampling machinery; see :mod:`ytsched.fairshare.fast_plf` for what it relies on.  Where one of
those assumptions does not hold for some input (children without a common domain in an improved
pool, a FIFO child whose FSBS does not start at zero on ``[0, 1]``, an MFFBS term whose domain
is not ``[0, 1]``) the fast path hands that element to the reference.  The top-down pass uses two
more shortcuts in :func:`distribute_vector` (:func:`_fast_children_total`).
:func:`reference_implementation` switches everything back to the reference; the tests in
``tests/fairshare/test_fast_paths.py`` compare both on random functions and random trees, and
``tests/fairshare/test_golden.py`` pins the results on large trees.
"""

from __future__ import annotations

import functools
import gc
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from ytsched.fairshare import fast_plf
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


_fast_paths = True


@contextmanager
def reference_implementation() -> Iterator[None]:
    """Use the straightforward port (``plf``) instead of the fast paths while in the block.

    The fast paths (:mod:`ytsched.fairshare.fast_plf`) must build the same functions bit for
    bit; tests run both and compare, and the benchmark can time either.  Not thread-safe: it
    flips a module-level switch.
    """
    global _fast_paths
    saved = _fast_paths
    _fast_paths = False
    try:
        yield
    finally:
        _fast_paths = saved


@without_cyclic_gc
def prepare_recursively(element: Element, options: UpdateOptions) -> None:
    """Build FSBFF, MFFBS and FSBS bottom-up, skipping elements already prepared."""
    _prepare(element, options)


_OPERATION_FUNCTIONS: dict[bytes, tuple[PLF, PLF, PLF]] = {}
"""Memo of :func:`_prepare` for operations: the exact inputs -> (FSBFF, MFFBS, FSBS)."""
_OPERATION_FUNCTIONS_LIMIT = 1 << 15
_OPERATION_KEY = struct.Struct("<20d?")


def _prepare_operation(element: Element, options: UpdateOptions) -> None:
    """An operation's three functions depend on nothing but its usage and demand shares, its
    limits and guarantee shares and whether it uses the step function (see :func:`_fast_fsbff`
    and :func:`fast_plf.prepare_functions`).  Most operations keep all of these from one update
    to the next, so the functions are memoized on the exact bit patterns of those inputs (a
    packed key: ``-0.0`` and ``0.0`` differ, a NaN equals itself); a hit returns the very
    functions the computation would build again.  The functions are immutable once built
    (``PLF.from_chain``: the point lists are never modified afterwards), so updates can share
    them.
    """
    usage = element.usage_share
    demand = element.demand_share
    limits = element.limits_share
    guarantee = element.guarantee_share
    step = _uses_step_function(element, options)
    key = _OPERATION_KEY.pack(*usage, *demand, *limits, *guarantee, step)
    found = _OPERATION_FUNCTIONS.get(key)
    if found is None:
        xs, ys = fast_plf.operation_fsbff(usage, demand, step)
        fsbff = PLF.from_chain(xs, ys, VECTOR_OPS)
        (mx, my), (sx, sv) = fast_plf.prepare_functions(xs, ys, limits, guarantee)
        found = (fsbff, PLF.from_chain(mx, my, SCALAR_OPS), PLF.from_chain(sx, sv, VECTOR_OPS))
        if len(_OPERATION_FUNCTIONS) >= _OPERATION_FUNCTIONS_LIMIT:
            _OPERATION_FUNCTIONS.clear()
        _OPERATION_FUNCTIONS[key] = found
    element.fsbff, element.mffbs, element.fsbs = found
    element.prepared = True


def _prepare(element: Element, options: UpdateOptions) -> None:
    if element.prepared:
        return
    if _fast_paths and element.is_operation:
        _prepare_operation(element, options)
        return
    for child in element.children:
        _prepare(child, options)
    if _fast_paths:
        element.fsbff = _fast_fsbff(element, options)
        fx, fv = element.fsbff.chain()
        (mx, my), (sx, sv) = fast_plf.prepare_functions(
            fx, fv, element.limits_share, element.guarantee_share
        )
        element.mffbs = PLF.from_chain(mx, my, SCALAR_OPS)
        element.fsbs = PLF.from_chain(sx, sv, VECTOR_OPS)
    else:
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


def _fast_fsbff(element: Element, options: UpdateOptions) -> PLF:
    """FSBFF through :mod:`fast_plf`; the same function as the reference builders below.

    * operation: the chain of ``_operation_fsbff`` written down directly;
    * FIFO pool: :func:`fast_plf.fifo_concat` for both constructions (the fast one is that
      concatenation by definition; the generic sum of shifted children equals it point for
      point when every child's FSBS starts at zero on ``[0, 1]``, which it checks);
    * fair-share pool: children scaled and extended (``scale_argument``/``extend_right``) and
      summed by cursor walks (numpy for large sums), or for the improved construction
      (``TCompositeElement::PrepareFairShareByFitFactor`` with
      ``enable_improved_fair_share_by_fit_factor_computation``) one fit-factor unit per
      (critical point, child) with the children's parts kept as value tables
      (:class:`fast_plf.ImprovedParts`), their chains built only when asked for.
    """
    if element.is_operation:
        xs, ys = fast_plf.operation_fsbff(
            element.usage_share, element.demand_share, _uses_step_function(element, options)
        )
        return PLF.from_chain(xs, ys, VECTOR_OPS)
    if element.mode is SchedulingMode.FIFO:
        children = element.sorted_children
        if not children:
            return PLF.constant(0.0, 1.0, ZERO, VECTOR_OPS)
        chain = fast_plf.fifo_concat([_fsbs(child).chain() for child in children])
        if chain is None:
            return _fifo_fsbff(element, options)
        return PLF.from_chain(chain[0], chain[1], VECTOR_OPS)
    if not element.children:
        return PLF.constant(0.0, 1.0, ZERO, VECTOR_OPS)
    min_weight = _min_child_weight(element)
    scaled = [
        fast_plf.scale_and_extend(*_fsbs(child).chain(), child.weight / min_weight)
        for child in element.children
    ]
    if options.enable_improved_fair_share_by_fit_factor_computation:
        improved = fast_plf.improved_sum(scaled)
        if improved is None:
            return _improved_fsbff(
                element, [PLF.from_chain(xs, ys, VECTOR_OPS) for xs, ys in scaled]
            )
        (xs, ys), parts = improved
        func = fast_plf.ImprovedFsbff.from_chain(xs, ys, VECTOR_OPS)
        func.parts = parts
        element.child_fsbff = [
            PLF.lazy(functools.partial(parts.chain, index), VECTOR_OPS)
            for index in range(len(scaled))
        ]
        return func
    xs, ys = fast_plf.sum_chains(scaled)
    return PLF.from_chain(xs, ys, VECTOR_OPS)


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
    if isinstance(pool.fsbff, fast_plf.ImprovedFsbff):
        return pool.fsbff.parts.shares(fit_factor)
    assert pool.child_fsbff is not None
    return [func.value_at(fit_factor) for func in pool.child_fsbff]


def _fast_children_total(pool: Element) -> Callable[[float], Vector] | None:
    """``children_total`` of :func:`distribute_vector` without re-evaluating every child.

    Improved pools evaluate their children's parts directly (:class:`fast_plf.ImprovedParts`).
    In a FIFO pool the children before the partially served one contribute their full share,
    the ones after it exactly zero, so the in-order sum is a running prefix of full shares plus
    the partial child's share (adding zeros changes nothing).
    """
    fsbff = pool.fsbff
    if isinstance(fsbff, fast_plf.ImprovedFsbff):
        return fsbff.parts.total
    if pool.mode is not SchedulingMode.FIFO:
        return None
    children = pool.sorted_children
    prefix = [ZERO]
    acc = ZERO
    for child in children:
        acc = vadd(acc, _fsbs(child).value_at(1.0))
        prefix.append(acc)

    def total(fit_factor: float) -> Vector:
        satisfied = int(fit_factor)
        partial = fit_factor - satisfied
        if partial != 0.0:
            return vadd(prefix[satisfied], _fsbs(children[satisfied]).value_at(partial))
        return prefix[satisfied]

    return total


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
    if _fast_paths:
        children_total = _fast_children_total(element) or reference_total

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
