"""Fast, bit-exact versions of the piecewise-linear operations used by the fair-share update.

:mod:`ytsched.fairshare.plf` is a direct port of YTsaurus's function library
(``yt/yt/library/numeric/piecewise_linear_function{.h,-inl.h}`` and
``yt/yt/library/vector_hdrf/piecewise_linear_function_helpers.cpp``): every operation samples its
inputs at a set of critical points through binary searches, builds intermediate functions and
re-applies the segment merge rule.  That is easy to check against the original but costs about a
millisecond per element in CPython.

This module computes **the same functions, segment for segment and bit for bit**, by walking the
inputs with cursors instead of searching them, and by skipping intermediate objects.  It relies on
a few facts about the functions the update builds (all checked by the tests in
``tests/fairshare/test_fast_paths.py`` against the reference implementation):

* Every function is a *chain*: consecutive segments share their end points, so a function is a
  list of arguments ``xs`` and a list of values ``ys`` (point ``i`` ends segment ``i - 1`` and
  starts segment ``i``).  A chain built through the merge rule is *canonical*: an argument occurs
  at most twice in a row (a jump), and a zero-length segment only occurs as the single segment of
  a one-point function.
* Sampling a canonical chain at one of its own arguments returns its own stored values
  (interpolation is exact at both ends of a segment), so resampling a chain at its critical points
  rebuilds the same chain.  This is why the pointwise minimum can skip components that never bind.
* Floating-point operations are done in exactly the order the reference uses
  (``lv + (rv - lv) * t`` and ``rv - (rv - lv) * (1 - t)``, sums in child order), so results agree
  to the last bit.

* Applying the merge rule point by point is, for non-decreasing functions, the same as
  dropping repeated points and the interior points of runs of jumps or of horizontal segments;
  the numpy versions (used for large functions and sums, see :data:`NUMPY_MIN_POINTS` and
  :data:`NUMPY_MIN_SUM_POINTS`) canonicalise whole arrays that way, and do every interpolation
  with the same element-wise operations (numpy float64 rounds exactly like Python floats).

Functions here take and return chains (``list[float]`` arguments, ``list[float]`` or
``list[Vector]`` values); :mod:`ytsched.fairshare.functions` wraps them into :class:`PLF` objects.
:func:`prepare_functions` is the entry point for MFFBS and FSBS of one element.

What still costs time: every operation is linear in the number of points, and a pool's
functions have as many points as its subtree has breakpoints (its MFFBS several times more,
one set per resource), so the work grows with the tree.  Two parts are inherently sequential
and stay in Python: :func:`compress` (a greedy scan) and the in-order sums of many children at
every point (``O(points x children)`` additions, which numpy does per child).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import TypeVar

import numpy as np

from ytsched.fairshare.plf import PLF, double_to_key, key_to_double
from ytsched.resources import Vector

ScalarChain = tuple[list[float], list[float]]
VectorChain = tuple[list[float], list[Vector]]

COMPRESS_EPSILON = 1e-15

_T = TypeVar("_T")

# --- merge rule ----------------------------------------------------------------------------


def push_point(xs: list[float], ys: list[_T], x: float, y: _T) -> None:
    """Append the segment from the chain's last point to ``(x, y)`` under the merge rule.

    Same outcome as ``plf._push``: a zero-length segment vanishes; a segment that follows a
    one-point function replaces it; two jumps or two horizontal segments in a row become one.
    Scalar and vector values alike (tuple equality is component-wise equality).
    """
    px = xs[-1]
    py = ys[-1]
    if x == px:
        if y == py:
            return
        if xs[-2] == px:
            ys[-1] = y
            return
    elif y == py:
        if ys[-2] == py:
            xs[-1] = x
            return
    elif xs[-2] == px and ys[-2] == py:
        xs[-1] = x
        ys[-1] = y
        return
    xs.append(x)
    ys.append(y)


push_scalar = push_point
push_vector = push_point


def merge_points(px: list[float], py: list[_T]) -> tuple[list[float], list[_T]]:
    """The chain of points ``px[k], py[k]``: the first two as they are, every later one
    through the merge rule (:func:`push_point`, which this is, inlined).

    Works for scalar and vector values alike (tuple equality is component-wise equality).
    Building a function as a plain list of points and merging it here costs one call per
    function instead of one per point.
    """
    xs = [px[0], px[1]]
    ys = [py[0], py[1]]
    for k in range(2, len(px)):
        x = px[k]
        y = py[k]
        x1 = xs[-1]
        y1 = ys[-1]
        if x == x1:
            if y == y1:
                continue
            if xs[-2] == x1:
                ys[-1] = y
                continue
        elif y == y1:
            if ys[-2] == y1:
                xs[-1] = x
                continue
        elif xs[-2] == x1 and ys[-2] == y1:
            xs[-1] = x
            ys[-1] = y
            continue
        xs.append(x)
        ys.append(y)
    return xs, ys


# --- interpolation -------------------------------------------------------------------------


def interpolate(lb: float, lv: float, rb: float, rv: float, x: float) -> float:
    """The two-sided interpolation of ``plf._interpolate`` (exact at both ends, monotone)."""
    t = (x - lb) / (rb - lb)
    if t < 0.5:
        return lv + (rv - lv) * t
    return rv - (rv - lv) * (1.0 - t)


def interpolate_vector(lb: float, lv: Vector, rb: float, rv: Vector, x: float) -> Vector:
    """:func:`interpolate` per resource (the order of operations of ``VECTOR_OPS``)."""
    t = (x - lb) / (rb - lb)
    if t < 0.5:
        return (
            lv[0] + (rv[0] - lv[0]) * t,
            lv[1] + (rv[1] - lv[1]) * t,
            lv[2] + (rv[2] - lv[2]) * t,
            lv[3] + (rv[3] - lv[3]) * t,
            lv[4] + (rv[4] - lv[4]) * t,
        )
    u = 1.0 - t
    return (
        rv[0] - (rv[0] - lv[0]) * u,
        rv[1] - (rv[1] - lv[1]) * u,
        rv[2] - (rv[2] - lv[2]) * u,
        rv[3] - (rv[3] - lv[3]) * u,
        rv[4] - (rv[4] - lv[4]) * u,
    )


def vector_value_at(xs: list[float], ys: list[Vector], x: float) -> Vector:
    """``PLF.value_at`` (the left limit) of a vector chain."""
    i = bisect_left(xs, x, 1) - 1
    lb = xs[i]
    rb = xs[i + 1]
    if lb == rb:
        return ys[i]
    return interpolate_vector(lb, ys[i], rb, ys[i + 1], x)


def vector_right_limit_at(xs: list[float], ys: list[Vector], x: float) -> Vector:
    """``PLF.right_limit_at`` of a vector chain."""
    i = bisect_right(xs, x, 0, len(xs) - 1) - 1
    lb = xs[i]
    rb = xs[i + 1]
    if lb == rb:
        return ys[i + 1]
    return interpolate_vector(lb, ys[i], rb, ys[i + 1], x)


# --- binary search over doubles ------------------------------------------------------------

_key = double_to_key
_double = key_to_double


def _segment_value(x0: float, y0: float, x1: float, y1: float, m: float) -> float:
    if x0 == x1:
        return y0
    return interpolate(x0, y0, x1, y1, m)


def _crossing(
    left: float,
    right: float,
    lo: tuple[float, float, float, float],
    hi: tuple[float, float, float, float],
) -> float:
    """``inverse_lower_bound(left, right, lo(m) <= hi(m))`` for two segments.

    The same bit-pattern bisection as ``plf.inverse_lower_bound`` (and hence the same answer even
    where rounding makes the predicate flicker), with the predicate inlined.
    """
    if left == right:
        return left
    lx0, ly0, lx1, ly1 = lo
    hx0, hy0, hx1, hy1 = hi
    if _segment_value(lx0, ly0, lx1, ly1, right) <= _segment_value(hx0, hy0, hx1, hy1, right):
        return right
    klo = _key(left)
    khi = _key(right)
    while klo + 1 < khi:
        mid = klo + ((khi - klo) >> 1)
        m = _double(mid)
        if _segment_value(lx0, ly0, lx1, ly1, m) <= _segment_value(hx0, hy0, hx1, hy1, m):
            klo = mid
        else:
            khi = mid
    return _double(klo)


# --- max fit factor by suggestion ----------------------------------------------------------


def _component_inverse(
    fx: list[float], fv: list[Vector], r: int, limit_share: float, guarantee_share: float
) -> ScalarChain:
    """One resource's inverse, restricted, shifted and extended (one term of the MFFBS minimum).

    Reference: ``extract_component(r, fsbff).transpose().narrow(g, limit).trim_left()
    .shift(-g).extend_right(1.0).trim()`` as in ``functions._max_fit_factor_by_suggestion``
    (``TElement::PrepareMaxFitFactorBySuggestion`` in ``fair_share_update.cpp``).
    """
    # Extract the component under the merge rule; its values become the inverse's arguments.
    a = [fv[0][r], fv[1][r]]
    f = [fx[0], fx[1]]
    for i in range(2, len(fx)):
        x = fx[i]
        y = fv[i][r]
        px = f[-1]
        py = a[-1]
        if x == px:
            if y == py:
                continue
            if f[-2] == px:
                a[-1] = y
                continue
        elif y == py:
            if a[-2] == py:
                f[-1] = x
                continue
        elif f[-2] == px and a[-2] == py:
            f[-1] = x
            a[-1] = y
            continue
        f.append(x)
        a.append(y)

    lo = a[0]
    hi = a[-1]
    limit = min(max(limit_share, lo), hi)
    g = min(max(guarantee_share, lo), limit)

    # narrow(g, limit): sample the inverse at g, at its own arguments inside, and at limit.
    n = len(a)
    i = 0
    while a[i] < g:
        i += 1
    if a[i] == g:
        if i + 1 < n and a[i + 1] == g:
            xs = [g, g]
            ys = [f[i], f[i + 1]]
            i += 2
        else:
            xs = [g, g]
            ys = [f[i], f[i]]
            i += 1
    else:
        v = interpolate(a[i - 1], f[i - 1], a[i], f[i], g)
        xs = [g, g]
        ys = [v, v]
    while i < n and a[i] <= limit:
        x = a[i]
        if i + 1 < n and a[i + 1] == x:
            push_scalar(xs, ys, x, f[i])
            push_scalar(xs, ys, x, f[i + 1])
            i += 2
        else:
            push_scalar(xs, ys, x, f[i])
            i += 1
    if xs[-1] != limit:
        v = interpolate(a[i - 1], f[i - 1], a[i], f[i], limit)
        push_scalar(xs, ys, limit, v)

    # trim_left
    if xs[0] == xs[1] and ys[0] != ys[1]:
        if len(xs) > 2:
            del xs[0]
            del ys[0]
        else:
            xs = [xs[0], xs[0]]
            ys = [ys[1], ys[1]]

    # shift(-g): rounding can make neighbouring arguments equal, so re-apply the merge rule.
    if g != 0.0:
        sx = [xs[0] - g, xs[1] - g]
        sy = [ys[0], ys[1]]
        for j in range(2, len(xs)):
            push_scalar(sx, sy, xs[j] - g, ys[j])
        xs = sx
        ys = sy

    # extend_right(1.0), then trim (drop a final jump).
    rb = xs[-1]
    if rb < 1.0:
        push_scalar(xs, ys, 1.0, ys[-1])
    if xs[-1] == xs[-2] and ys[-1] != ys[-2]:
        if len(xs) > 2:
            xs.pop()
            ys.pop()
        else:
            xs = [xs[0], xs[0]]
            ys = [ys[0], ys[0]]
    return xs, ys


def max_fit_factor_by_suggestion(
    fx: list[float], fv: list[Vector], limits: Vector, guarantee: Vector
) -> ScalarChain:
    """MFFBS: the pointwise minimum over resources of :func:`_component_inverse`.

    A resource whose FSBFF component is constant has the constant inverse ``fx[-1]`` (the whole
    fit-factor range) on ``[0, 1]``.  Every other inverse takes values in ``[fx[0], fx[-1]]`` and
    every inverse lives on exactly ``[0, 1]``, so such a constant never wins a minimum, never
    creates a crossing and adds no critical point that is not already there: skipping it gives
    the same chain as the reference ``pointwise_min_all`` over all five resources.
    """
    first = fv[0]
    result: ScalarChain | None = None
    for r in range(5):
        c = first[r]
        if all(v[r] == c for v in fv):
            continue
        inverse = _component_inverse(fx, fv, r, limits[r], guarantee[r])
        if inverse[0][0] != 0.0 or inverse[0][-1] != 1.0:
            return _generic_min_all(fx, fv, limits, guarantee)
        result = inverse if result is None else pointwise_min(result, inverse)
    if result is None:
        return [0.0, 1.0], [fx[-1], fx[-1]]
    return result


def _generic_min_all(
    fx: list[float], fv: list[Vector], limits: Vector, guarantee: Vector
) -> ScalarChain:
    """All five inverses, constants included (used when a domain is not exactly ``[0, 1]``)."""
    result: ScalarChain | None = None
    for r in range(5):
        inverse = _component_inverse(fx, fv, r, limits[r], guarantee[r])
        result = inverse if result is None else pointwise_min(result, inverse)
    assert result is not None
    return result


# --- pointwise minimum ---------------------------------------------------------------------


def pointwise_min(a: ScalarChain, b: ScalarChain) -> ScalarChain:
    """``plf.pointwise_min`` of two scalar chains, crossing search included.

    One merged pass over the critical points of both chains.  At each point the left and right
    limits of both functions are taken (stored values at a function's own points, interpolation
    on the segment that contains the point otherwise); these are exactly the values the
    reference reads through ``left_right_limit_at`` and, for the crossing test of the interval
    that ends or starts there, through ``right_segment_index`` + segment evaluation.
    """
    ax, ay = a
    bx, by = b
    lb = ax[0] if ax[0] > bx[0] else bx[0]
    rb = ax[-1] if ax[-1] < bx[-1] else bx[-1]
    if lb > rb:
        raise ValueError("pointwise_min: the domains do not intersect")
    na = len(ax)
    nb = len(bx)
    ia = bisect_left(ax, lb)
    ib = bisect_left(bx, lb)
    xs: list[float] = []
    ys: list[float] = []
    p = lb
    previous = lb
    prev_ra = prev_rb = 0.0
    ja0 = jb0 = 0
    first = True
    while True:
        # Limits of a at p; afterwards ax[ia - 1] <= p < ax[ia] (the segment a continues on).
        xa = ax[ia]
        if xa == p:
            la = ay[ia]
            if ia + 1 < na and ax[ia + 1] == p:
                ra = ay[ia + 1]
                ia += 2
            else:
                ra = la
                ia += 1
        else:
            la = ra = interpolate(ax[ia - 1], ay[ia - 1], xa, ay[ia], p)
        xb = bx[ib]
        if xb == p:
            lb_ = by[ib]
            if ib + 1 < nb and bx[ib + 1] == p:
                rb_ = by[ib + 1]
                ib += 2
            else:
                rb_ = lb_
                ib += 1
        else:
            lb_ = rb_ = interpolate(bx[ib - 1], by[ib - 1], xb, by[ib], p)

        if first:
            first = False
            xs.append(p)
            ys.append(la if la < lb_ else lb_)
            xs.append(p)
            ys.append(ra if ra < rb_ else rb_)
        else:
            # Crossing inside (previous point, p): the lower function at the previous point
            # (right limits) ends above the other one at p (left limits).
            if prev_ra != prev_rb:
                crosses = la > lb_ if prev_ra < prev_rb else lb_ > la
                if crosses:
                    sa = (ax[ja0], ay[ja0], ax[ja0 + 1], ay[ja0 + 1])
                    sb = (bx[jb0], by[jb0], bx[jb0 + 1], by[jb0 + 1])
                    if prev_ra < prev_rb:
                        crossing = _crossing(previous, p, sa, sb)
                    else:
                        crossing = _crossing(previous, p, sb, sa)
                    if crossing != previous:
                        ca = interpolate(sa[0], sa[1], sa[2], sa[3], crossing)
                        cb = interpolate(sb[0], sb[1], sb[2], sb[3], crossing)
                        push_scalar(xs, ys, crossing, ca if ca < cb else cb)
            push_scalar(xs, ys, p, la if la < lb_ else lb_)
            push_scalar(xs, ys, p, ra if ra < rb_ else rb_)
        if p >= rb:
            break
        previous = p
        prev_ra = ra
        prev_rb = rb_
        ja0 = ia - 1
        jb0 = ib - 1
        xa = ax[ia]
        xb = bx[ib]
        p = xa if xa < xb else xb
        if p > rb:
            p = rb
    return xs, ys


# --- composition ---------------------------------------------------------------------------


def compose(fx: list[float], fv: list[Vector], mx: list[float], my: list[float]) -> VectorChain:
    """``plf.compose(outer, inner).trim()`` for a vector ``outer`` and a scalar ``inner``.

    The points of the result are those of ``inner`` plus, for every critical argument of
    ``outer`` that ``inner`` passes strictly inside a tilted segment, the suggestion where it
    does; ``outer`` is evaluated at each (left and right limits where ``inner`` jumps).

    The evaluations are :func:`vector_value_at` and :func:`vector_right_limit_at` written out
    (the same searches and the same interpolation), and the emitted points go through the merge
    rule in one pass (:func:`merge_points`) instead of a call per point.
    """
    points = list(zip(mx, my, strict=True))
    lo = my[0]
    hi = my[-1]
    n = len(my)
    i = 0
    previous = None
    for value in fx:
        if value == previous:
            continue
        previous = value
        if value <= lo or value >= hi:
            continue
        while my[i + 1] < value:
            i += 1
        y1 = my[i + 1]
        if y1 == value:
            continue
        y0 = my[i]
        if y0 == value:
            continue
        x0 = mx[i]
        x1 = mx[i + 1]
        if x0 != x1 and y0 != y1:
            points.append((interpolate(y0, x0, y1, x1, value), value))
    if len(points) > n:
        points.sort()

    out_x: list[float] = []
    out_y: list[Vector] = []
    add_x = out_x.append
    add_y = out_y.append
    last = len(fx) - 1
    count = len(points)
    previous_x = None
    for k in range(count):
        x, v = points[k]
        if x != previous_x:
            # value_at(v): the segment [fx[j - 1], fx[j]] with fx[j - 1] < v <= fx[j].
            j = bisect_left(fx, v, 1)
            lb = fx[j - 1]
            rb = fx[j]
            add_x(x)
            add_y(fv[j - 1] if lb == rb else interpolate_vector(lb, fv[j - 1], rb, fv[j], v))
            previous_x = x
        if k + 1 == count:
            right_limit = False
        else:
            following = points[k + 1]
            if following[0] == x:
                continue
            right_limit = following[1] > v
        if right_limit:
            j = bisect_right(fx, v, 0, last)
            lb = fx[j - 1]
            rb = fx[j]
            limit = fv[j] if lb == rb else interpolate_vector(lb, fv[j - 1], rb, fv[j], v)
        else:
            j = bisect_left(fx, v, 1)
            lb = fx[j - 1]
            rb = fx[j]
            limit = fv[j - 1] if lb == rb else interpolate_vector(lb, fv[j - 1], rb, fv[j], v)
        add_x(x)
        add_y(limit)
    if len(out_x) < 2:
        raise ValueError("a piecewise-linear function needs at least one segment")
    xs, ys = merge_points(out_x, out_y)
    # trim (drop a final jump)
    if xs[-1] == xs[-2] and ys[-1] != ys[-2]:
        if len(xs) > 2:
            xs.pop()
            ys.pop()
        else:
            xs = [xs[0], xs[0]]
            ys = [ys[0], ys[0]]
    return xs, ys


# --- compression ---------------------------------------------------------------------------


def compress(xs: list[float], ys: list[Vector], epsilon: float = COMPRESS_EPSILON) -> VectorChain:
    """``plf.compress``: greedy merge of runs whose chord stays within ``±epsilon`` corridors.

    The accumulated segment starts at point ``start``; adding the next segment is allowed while,
    for every resource, the chord to its end lies strictly between the lowest "upper" slope and
    the highest "lower" slope seen in the run (compared through cross products, exactly as the
    reference does).  The five resources are unrolled into local variables: this loop runs once
    per point of every composed function, so attribute and list traffic matter.
    """
    n = len(xs) - 1
    if n == 1:
        return [xs[0], xs[1]], [ys[0], ys[1]]
    eps = epsilon
    if eps > 0.0:
        used = [r for r in range(5) if any(map(_COMPONENT[r], ys))]
        if len(used) <= 3:
            unused = [r for r in range(5) if r not in used]
            return _compress_three(xs, ys, eps, *sorted(used + unused[: 3 - len(used)]))
    out_x = [xs[0]]
    out_y = [ys[0]]
    end = 1
    c = 0
    while True:
        # (Re)start the run with segment c.
        lb = xs[c]
        l0, l1, l2, l3, l4 = ys[c]
        v0, v1, v2, v3, v4 = ys[c + 1]
        dx = xs[c + 1] - lb
        t0x = b0x = dx
        t0y = (v0 + eps) - l0
        b0y = (v0 - eps) - l0
        t1x = b1x = dx
        t1y = (v1 + eps) - l1
        b1y = (v1 - eps) - l1
        t2x = b2x = dx
        t2y = (v2 + eps) - l2
        b2y = (v2 - eps) - l2
        t3x = b3x = dx
        t3y = (v3 + eps) - l3
        b3y = (v3 - eps) - l3
        t4x = b4x = dx
        t4y = (v4 + eps) - l4
        b4y = (v4 - eps) - l4
        end = c + 1
        c += 1
        while c < n:
            rb = xs[c + 1]
            v0, v1, v2, v3, v4 = ys[c + 1]
            dx = rb - lb
            cty = (v0 + eps) - l0
            cby = (v0 - eps) - l0
            if dx * t0y - t0x * cty > 0:
                t0x = dx
                t0y = cty
            if dx * b0y - b0x * cby < 0:
                b0x = dx
                b0y = cby
            u = v0 - l0
            if b0x * u - dx * b0y <= 0 or t0x * u - dx * t0y >= 0:
                break
            cty = (v1 + eps) - l1
            cby = (v1 - eps) - l1
            if dx * t1y - t1x * cty > 0:
                t1x = dx
                t1y = cty
            if dx * b1y - b1x * cby < 0:
                b1x = dx
                b1y = cby
            u = v1 - l1
            if b1x * u - dx * b1y <= 0 or t1x * u - dx * t1y >= 0:
                break
            cty = (v2 + eps) - l2
            cby = (v2 - eps) - l2
            if dx * t2y - t2x * cty > 0:
                t2x = dx
                t2y = cty
            if dx * b2y - b2x * cby < 0:
                b2x = dx
                b2y = cby
            u = v2 - l2
            if b2x * u - dx * b2y <= 0 or t2x * u - dx * t2y >= 0:
                break
            cty = (v3 + eps) - l3
            cby = (v3 - eps) - l3
            if dx * t3y - t3x * cty > 0:
                t3x = dx
                t3y = cty
            if dx * b3y - b3x * cby < 0:
                b3x = dx
                b3y = cby
            u = v3 - l3
            if b3x * u - dx * b3y <= 0 or t3x * u - dx * t3y >= 0:
                break
            cty = (v4 + eps) - l4
            cby = (v4 - eps) - l4
            if dx * t4y - t4x * cty > 0:
                t4x = dx
                t4y = cty
            if dx * b4y - b4x * cby < 0:
                b4x = dx
                b4y = cby
            u = v4 - l4
            if b4x * u - dx * b4y <= 0 or t4x * u - dx * t4y >= 0:
                break
            end = c + 1
            c += 1
        # Flush the accumulated segment (it ends at point ``end``).
        if len(out_x) >= 2:
            push_vector(out_x, out_y, xs[end], ys[end])
        else:
            out_x.append(xs[end])
            out_y.append(ys[end])
        if c >= n:
            return out_x, out_y


_COMPONENT = [itemgetter(r) for r in range(5)]


def _compress_three(
    xs: list[float], ys: list[Vector], eps: float, ra: int, rb_: int, rc: int
) -> VectorChain:
    """:func:`compress` when every resource but ``ra``, ``rb_``, ``rc`` is zero everywhere.

    Why skipping a resource whose values are all ``±0.0`` is exact (``eps > 0``): its corridor
    is ``(v ± eps) - l = ±eps`` at every point and its chord ``u = v - l`` is a zero, so its two
    break tests reduce to ``±0 + dx * eps <= 0`` and ``±0 - dx * eps >= 0``: it ends a run
    exactly when ``dx * eps <= 0`` (the run has zero width, or the product underflows), whatever
    its corridor state.  A run ends when any resource ends it and the state of the others is
    rebuilt at the restart, so testing ``dx * eps <= 0`` once and the three other resources as
    :func:`compress` does (same expressions) ends the same runs, which are the only decisions.
    """
    n = len(xs) - 1
    out_x = [xs[0]]
    out_y = [ys[0]]
    end = 1
    c = 0
    while True:
        lb = xs[c]
        start = ys[c]
        la = start[ra]
        lb_ = start[rb_]
        lc = start[rc]
        following = ys[c + 1]
        va = following[ra]
        vb = following[rb_]
        vc = following[rc]
        dx = xs[c + 1] - lb
        tax = bax = dx
        tay = (va + eps) - la
        bay = (va - eps) - la
        tbx = bbx = dx
        tby = (vb + eps) - lb_
        bby = (vb - eps) - lb_
        tcx = bcx = dx
        tcy = (vc + eps) - lc
        bcy = (vc - eps) - lc
        end = c + 1
        c += 1
        while c < n:
            rb = xs[c + 1]
            dx = rb - lb
            if dx * eps <= 0:
                break
            following = ys[c + 1]
            va = following[ra]
            cty = (va + eps) - la
            cby = (va - eps) - la
            if dx * tay - tax * cty > 0:
                tax = dx
                tay = cty
            if dx * bay - bax * cby < 0:
                bax = dx
                bay = cby
            u = va - la
            if bax * u - dx * bay <= 0 or tax * u - dx * tay >= 0:
                break
            vb = following[rb_]
            cty = (vb + eps) - lb_
            cby = (vb - eps) - lb_
            if dx * tby - tbx * cty > 0:
                tbx = dx
                tby = cty
            if dx * bby - bbx * cby < 0:
                bbx = dx
                bby = cby
            u = vb - lb_
            if bbx * u - dx * bby <= 0 or tbx * u - dx * tby >= 0:
                break
            vc = following[rc]
            cty = (vc + eps) - lc
            cby = (vc - eps) - lc
            if dx * tcy - tcx * cty > 0:
                tcx = dx
                tcy = cty
            if dx * bcy - bcx * cby < 0:
                bcx = dx
                bcy = cby
            u = vc - lc
            if bcx * u - dx * bcy <= 0 or tcx * u - dx * tcy >= 0:
                break
            end = c + 1
            c += 1
        if len(out_x) >= 2:
            push_vector(out_x, out_y, xs[end], ys[end])
        else:
            out_x.append(xs[end])
            out_y.append(ys[end])
        if c >= n:
            return out_x, out_y


# --- fair share by fit factor --------------------------------------------------------------

_ZERO: Vector = (0.0, 0.0, 0.0, 0.0, 0.0)


def operation_fsbff(usage: Vector, demand: Vector, step: bool) -> VectorChain:
    """An operation's FSBFF as a chain (``functions._operation_fsbff`` through the merge rule).

    ``step``: the gang step function (0 on ``[0, 1)``, a jump to demand at 1, demand up to 2).
    Otherwise ``min(u_r, f * max u)`` on ``[0, 1]`` (one point per distinct usage value), then
    linear to demand on ``[1, 2]``.
    """
    zero = _ZERO
    if step:
        if demand == zero:
            return [0.0, 2.0], [zero, zero]
        return [0.0, 1.0, 1.0, 2.0], [zero, zero, demand, demand]
    max_usage = max(usage)
    if max_usage == 0.0:
        xs = [0.0, 1.0]
        ys = [zero, zero]
    else:
        xs = [0.0]
        ys = [zero]
        previous = 0.0
        u0, u1, u2, u3, u4 = usage
        for value in sorted(usage):
            fit_factor = value / max_usage
            if fit_factor > previous:
                point = (
                    value if value < u0 else u0,
                    value if value < u1 else u1,
                    value if value < u2 else u2,
                    value if value < u3 else u3,
                    value if value < u4 else u4,
                )
                if len(xs) >= 2:
                    push_vector(xs, ys, fit_factor, point)
                else:
                    xs.append(fit_factor)
                    ys.append(point)
                previous = fit_factor
        # The last usage point is (1, usage); the demand ramp continues from it.
    push_vector(xs, ys, 2.0, demand)
    return xs, ys


def scale_and_extend(xs: list[float], ys: list[Vector], scale: float) -> VectorChain:
    """``func.scale_argument(scale).extend_right(1.0)`` (a child's FSBS as its pool sees it)."""
    if scale != 1.0:
        nx = [xs[0] / scale, xs[1] / scale]
        ny = [ys[0], ys[1]]
        for j in range(2, len(xs)):
            push_vector(nx, ny, xs[j] / scale, ys[j])
    elif xs[-1] < 1.0:
        nx = list(xs)
        ny = list(ys)
    else:
        return xs, ys
    if nx[-1] < 1.0:
        push_vector(nx, ny, 1.0, ny[-1])
    return nx, ny


def _sample_limits(
    xs: list[float], ys: list[Vector], points: list[float]
) -> tuple[list[Vector], list[Vector]]:
    """Left and right limits (``left_right_limit_at``) at increasing ``points`` in the domain."""
    n = len(xs)
    lefts: list[Vector] = []
    rights: list[Vector] = []
    i = bisect_left(xs, points[0])
    for p in points:
        while xs[i] < p:
            i += 1
        x = xs[i]
        if x == p:
            left = ys[i]
            lefts.append(left)
            if i + 1 < n and xs[i + 1] == p:
                rights.append(ys[i + 1])
            else:
                rights.append(left)
        else:
            lv = ys[i - 1]
            rv = ys[i]
            if lv == rv:
                lefts.append(lv)
                rights.append(lv)
            else:
                value = interpolate_vector(xs[i - 1], lv, x, rv, p)
                lefts.append(value)
                rights.append(value)
    return lefts, rights


def _accumulate(total: list[Vector], terms: list[Vector]) -> list[Vector]:
    return [
        (a0 + b0, a1 + b1, a2 + b2, a3 + b3, a4 + b4)
        for (a0, a1, a2, a3, a4), (b0, b1, b2, b3, b4) in zip(total, terms, strict=True)
    ]


def _build(xs_points: Sequence[float], lefts: list[Vector], rights: list[Vector]) -> VectorChain:
    """``create``'s builder: points ``(x, left)``, ``(x, right)`` under the merge rule."""
    xs = [xs_points[0], xs_points[0]]
    ys = [lefts[0], rights[0]]
    for k in range(1, len(xs_points)):
        x = xs_points[k]
        push_vector(xs, ys, x, lefts[k])
        push_vector(xs, ys, x, rights[k])
    return xs, ys


def sum_chains(chains: Sequence[VectorChain]) -> VectorChain:
    """``plf.sum_functions``: sample every function at every critical point, add in order."""
    if len(chains) > 1 and sum(len(xs) for xs, _ in chains) >= NUMPY_MIN_SUM_POINTS:
        return sum_chains_np(chains)
    return _sum_chains_python(chains)


def _sum_chains_python(chains: Sequence[VectorChain]) -> VectorChain:
    """:func:`sum_chains` point by point in Python (small sums)."""
    lb = max(xs[0] for xs, _ in chains)
    rb = min(xs[-1] for xs, _ in chains)
    distinct: set[float] = set()
    for xs, _ in chains:
        distinct.update(xs)
    points = sorted(p for p in distinct if lb <= p <= rb)
    left_total: list[Vector] | None = None
    right_total: list[Vector] = []
    for xs, ys in chains:
        lefts, rights = _sample_limits(xs, ys, points)
        if left_total is None:
            left_total = lefts
            right_total = rights
        else:
            left_total = _accumulate(left_total, lefts)
            right_total = _accumulate(right_total, rights)
    assert left_total is not None
    return _build(points, left_total, right_total)


class ImprovedParts:
    """Each child's share of an improved FSBFF, as values at the integer fit factors.

    Child ``c``'s function (``TElement::FairShareByFitFactor`` split per child, see
    ``functions._improved_fsbff``) is the chain of points ``(k, arriving[c][k])``,
    ``(k, leaving[c][k])`` for ``k = 0 .. count - 1``.  Its ``value_at(f)`` is ``arriving[c][k]``
    at an integer ``f = k`` and otherwise the interpolation between ``(k, leaving[c][k])`` and
    ``(k + 1, arriving[c][k + 1])``: the merge rule only joins horizontal runs (where that
    interpolation is exact anyway), never a tilted segment.  ``distribute_vector`` evaluates the
    children this way, many times per pool, without building the chains.
    """

    __slots__ = ("arriving", "count", "leaving")

    def __init__(self, arriving: list[list[Vector]], leaving: list[list[Vector]]) -> None:
        self.arriving = arriving
        self.leaving = leaving
        self.count = len(arriving[0]) if arriving else 0

    def chain(self, child: int) -> VectorChain:
        fit_factors = [float(k) for k in range(self.count)]
        return _build(fit_factors, self.arriving[child], self.leaving[child])

    def shares(self, fit_factor: float) -> list[Vector]:
        """``[part.value_at(fit_factor) for part in parts]``."""
        k = int(fit_factor)
        if fit_factor == k:
            return [values[k] for values in self.arriving]
        lb = float(k)
        rb = float(k + 1)
        out: list[Vector] = []
        for leaving, arriving in zip(self.leaving, self.arriving, strict=True):
            lv = leaving[k]
            rv = arriving[k + 1]
            out.append(lv if lv == rv else interpolate_vector(lb, lv, rb, rv, fit_factor))
        return out

    def total(self, fit_factor: float) -> Vector:
        """The children's shares added in child order (from zero, as the reference does)."""
        s0 = s1 = s2 = s3 = s4 = 0.0
        for v in self.shares(fit_factor):
            s0 += v[0]
            s1 += v[1]
            s2 += v[2]
            s3 += v[3]
            s4 += v[4]
        return (s0, s1, s2, s3, s4)


class ImprovedFsbff(PLF):
    """A pool's improved FSBFF together with its children's parts."""

    __slots__ = ("parts",)

    parts: ImprovedParts


def improved_sum(chains: Sequence[VectorChain]) -> tuple[VectorChain, ImprovedParts] | None:
    """``functions._improved_fsbff``: one unit of fit factor per (critical point, child).

    Returns the pool's chain and each child's share of it, or ``None`` when the children do not
    share one domain (the reference would sample outside a domain there; the caller falls back
    to it).
    """
    rb = chains[0][0][-1]
    for xs, _ in chains:
        if xs[0] != 0.0 or xs[-1] != rb:
            return None
    owned: list[tuple[float, int]] = []
    for index, (xs, _) in enumerate(chains):
        previous = None
        for x in xs:
            if x != previous:
                owned.append((x, index))
                previous = x
    owned.sort()
    points = [x for x, _ in owned]
    owners = [owner for _, owner in owned]
    count = len(points)
    left_total: list[Vector] | None = None
    right_total: list[Vector] = []
    all_arriving: list[list[Vector]] = []
    all_leaving: list[list[Vector]] = []
    for index, (xs, ys) in enumerate(chains):
        lefts, rights = _sample_limits(xs, ys, points)
        # Children before the owner of a point contribute their right limit, those after it their
        # left limit, the owner both (left to the left total, right to the right total).
        arriving = [rights[k] if index < owners[k] else lefts[k] for k in range(count)]
        leaving = [lefts[k] if index > owners[k] else rights[k] for k in range(count)]
        if left_total is None:
            left_total = arriving
            right_total = leaving
        else:
            left_total = _accumulate(left_total, arriving)
            right_total = _accumulate(right_total, leaving)
        all_arriving.append(arriving)
        all_leaving.append(leaving)
    assert left_total is not None
    fit_factors = [float(k) for k in range(count)]
    return _build(fit_factors, left_total, right_total), ImprovedParts(all_arriving, all_leaving)


def fifo_concat(chains: Sequence[VectorChain]) -> VectorChain | None:
    """A FIFO pool's FSBFF: the children's FSBS end to end, each lifted by its predecessors.

    This is the fast FIFO construction (``enable_fast_fifo_fair_share_by_fit_factor_computation``).
    When every child's FSBS starts at exactly zero on ``[0, 1]`` it is also, point for point, the
    generic construction (the sum of all children shifted to ``[k, k + 1]`` and extended to
    ``[0, n]``): at a point inside child ``k``'s interval the generic sum adds the finished
    children's right values (the same running prefix), child ``k``'s value, and exact zeros.
    Returns ``None`` when a child breaks that shape; the caller then uses the reference.
    """
    zero = _ZERO
    xs: list[float] = []
    ys: list[Vector] = []
    prefix = zero
    shift = 0.0
    for cx, cy in chains:
        if cx[0] != 0.0 or cx[-1] != 1.0 or cy[0] != zero:
            return None
        p0, p1, p2, p3, p4 = prefix
        if xs:
            # The child starts where its predecessor ended (its zero lifted by the prefix).
            if xs[-1] != shift or ys[-1] != prefix:
                return None
            start = 1
        else:
            y0 = cy[0]
            y1 = cy[1]
            xs = [cx[0] + shift, cx[1] + shift]
            ys = [
                (y0[0] + p0, y0[1] + p1, y0[2] + p2, y0[3] + p3, y0[4] + p4),
                (y1[0] + p0, y1[1] + p1, y1[2] + p2, y1[3] + p3, y1[4] + p4),
            ]
            start = 2
        for j in range(start, len(cx)):
            y = cy[j]
            push_vector(
                xs, ys, cx[j] + shift, (y[0] + p0, y[1] + p1, y[2] + p2, y[3] + p3, y[4] + p4)
            )
        last = cy[-1]
        prefix = (p0 + last[0], p1 + last[1], p2 + last[2], p3 + last[3], p4 + last[4])
        shift += 1.0
    return xs, ys


# --- numpy versions for large inputs -------------------------------------------------------
#
# The same floating-point operations as above, element-wise (numpy's float64 ufuncs round exactly
# like Python floats), for functions with many points, where per-point interpreter overhead
# dominates.  Worth it from a few hundred sampled values on.

NUMPY_MIN_SUM_POINTS = 32
"""Sum with numpy when the children have this many points in total (and there are two or more):
the sampling then costs a constant number of numpy calls (about 100 us) instead of a Python step
per point and child (measured on the simulator benchmark's pools: the Python sum of 32-63 child
points takes 150-180 us, the numpy one 150; from 64 points on numpy wins by 1.5x and more)."""

_PER_CHILD_MIN_SUM_POINTS = 48
"""The threshold from before :func:`sum_chains_np` was vectorized: inputs it sends back (those
with a sign bit set) take the path they took then, the Python sum below it and the per-child
numpy sum from it on (the two can differ in the sign of a zero)."""


def canonical_vector(x: np.ndarray, y: np.ndarray) -> VectorChain:
    """Apply the merge rule to a whole sequence of points at once.

    Pushing the points one by one (:func:`push_vector`) drops zero-length segments and merges
    runs of jumps and runs of horizontal segments.  For a non-decreasing function that is the
    same as: drop each point equal to its predecessor, then drop each point whose two
    neighbouring segments are both jumps or both horizontal (a merged run keeps its kind, so
    every interior point of a run goes).
    """
    n = len(x)
    if n > 1:
        same = (x[1:] == x[:-1]) & (y[1:] == y[:-1]).all(axis=1)
        if same.any():
            keep = np.concatenate(([True], ~same))
            x = x[keep]
            y = y[keep]
            n = len(x)
    if n == 1:
        point = tuple(y[0].tolist())
        return [float(x[0]), float(x[0])], [point, point]
    flat_x = x[1:] == x[:-1]
    flat_y = (y[1:] == y[:-1]).all(axis=1)
    vertical = flat_x & ~flat_y
    horizontal = ~flat_x & flat_y
    interior = (vertical[1:] & vertical[:-1]) | (horizontal[1:] & horizontal[:-1])
    if interior.any():
        keep = np.concatenate(([True], ~interior, [True]))
        x = x[keep]
        y = y[keep]
    return x.tolist(), [tuple(row) for row in y.tolist()]


def _sample_limits_np(
    xs: np.ndarray, ys: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sample_limits` for arrays: ``xs`` (n), ``ys`` (n x 5), sorted ``points``."""
    n = len(xs)
    k = np.searchsorted(xs, points, side="left")
    on_point = xs[k] == points
    k_next = np.minimum(k + 1, n - 1)
    jump = on_point & (k + 1 < n) & (xs[k_next] == points)
    k_prev = np.maximum(k - 1, 0)
    x0 = xs[k_prev]
    x1 = xs[k]
    y0 = ys[k_prev]
    y1 = ys[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((points - x0) / (x1 - x0))[:, None]
        delta = y1 - y0
        inner = np.where(t < 0.5, y0 + delta * t, y1 - delta * (1.0 - t))
    left = np.where(on_point[:, None], y1, inner)
    right = np.where(jump[:, None], ys[k_next], left)
    return left, right


def sum_chains_np(chains: Sequence[VectorChain]) -> VectorChain:
    """:func:`sum_chains` with numpy: same points, same values, same order of additions.

    The reference samples every child at every point, ``O(points x children)``, and adds the
    samples in child order; both stay (the additions must happen in that order to round the
    same).  What is saved is the interpreter: all children are sampled together by a constant
    number of numpy calls, so a pool of fifty children costs about as many calls as one of two.

    Every point of the pool is a point of some child, so it is located in all children at once
    by one search over integer keys ``child * m + rank`` (``rank``: the position of an argument
    in the sorted union of all arguments, ``m`` more than any rank): the first key ``>=`` the
    query key of (child, point) is the child's first argument ``>=`` the point, exactly what
    ``searchsorted(xs, point, side="left")`` finds in that child alone, and key equality is
    argument equality within the child.  Left and right limits are then the element-wise
    operations of :func:`_sample_limits_np` (stored values at a child's own points, the
    two-sided interpolation inside a segment), and the sums run child by child from zero, as in
    :func:`_sum_chains_np_per_child`.  Right limits are summed at every point, not only where a
    child jumps: elsewhere every child's right limit is its left limit, so the sum is the same.

    The per-child version skips the interpolation on a child's horizontal tail (adding its last
    value instead), and the Python one copies stored values and starts from the first child;
    they agree with this one bit for bit unless some value is a negative zero
    (``-0.0 + 0.0 * t`` is ``+0.0``), so inputs with any sign bit set, and non-finite ones, go
    to whichever of them the code took before this version existed.
    """
    count = len(chains)
    lengths = [len(xs) for xs, _ in chains]
    total_points = sum(lengths)
    xs_all = np.fromiter(
        chain.from_iterable(xs for xs, _ in chains), dtype=np.float64, count=total_points
    )
    ys_all = np.fromiter(
        chain.from_iterable(chain.from_iterable(ys for _, ys in chains)),
        dtype=np.float64,
        count=5 * total_points,
    ).reshape(total_points, 5)
    if not _plain(xs_all, ys_all):
        # What the code before the vectorized sum did with such inputs, exactly.
        if len(chains) > 1 and total_points >= _PER_CHILD_MIN_SUM_POINTS:
            return _sum_chains_np_per_child(chains)
        return _sum_chains_python(chains)
    lb = max([xs[0] for xs, _ in chains])
    rb = min([xs[-1] for xs, _ in chains])
    # np.unique without its overhead (no NaN and no -0.0 here, so equal means identical).
    union = np.sort(xs_all)
    distinct = np.empty(total_points, dtype=bool)
    distinct[0] = True
    np.not_equal(union[1:], union[:-1], out=distinct[1:])
    union = union[distinct]
    inside = np.nonzero((union >= lb) & (union <= rb))[0]
    points = union[inside]
    size = len(points)
    child_base = np.arange(0, count * (len(union) + 1), len(union) + 1, dtype=np.int64)
    keys = np.repeat(child_base, lengths) + np.searchsorted(union, xs_all)
    queries = child_base[:, None] + inside[None, :]
    k = np.searchsorted(keys, queries.ravel(), side="left").reshape(count, size)
    on_point = keys[k] == queries
    k_next = np.minimum(k + 1, total_points - 1)
    # (At the very last argument ``k_next`` is ``k`` itself: a "jump" to the same value.)
    jump = on_point & (keys[k_next] == queries)
    k_prev = k - 1
    x0 = xs_all[k_prev]
    # Only the resources some child uses: a resource that is exactly zero at every point of
    # every child samples to exactly zero (``0.0`` stored, ``0.0 + 0.0 * t`` or
    # ``0.0 - 0.0 * (1 - t)`` interpolated, with ``t`` finite wherever it is selected) and sums
    # to exactly zero, so its column of the result is filled with zeros instead (gpu and
    # network in most trees).
    used = ys_all.any(axis=0)
    width = int(np.count_nonzero(used))
    if width == 5:
        columns = np.ascontiguousarray(ys_all.T)  # gathers of rows of five are slow
    else:
        columns = np.ascontiguousarray(ys_all[:, used].T)
    y0 = columns[:, k_prev]
    y1 = columns[:, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (points - x0) / (xs_all[k] - x0)
        delta = y1 - y0
        inner = np.where(t < 0.5, y0 + delta * t, y1 - delta * (1.0 - t))
    # limits[side, resource, child, point]; side 0 = left limit, 1 = right limit.
    limits = np.empty((2, width, count, size))
    np.copyto(limits[0], np.where(on_point, y1, inner))
    np.copyto(limits[1], np.where(jump, columns[:, k_next], limits[0]))
    # Child by child, in child order (``accumulate`` is sequential by definition); the
    # reference starts from zero, and ``0.0 + v`` is ``v`` for every ``v`` but ``-0.0``, which
    # neither the inputs nor these operations on them produce.
    total = np.add.accumulate(limits, axis=2)[:, :, -1, :]
    if width == 5:
        values = total.transpose(2, 0, 1).reshape(2 * size, 5)
    else:
        values = np.zeros((2 * size, 5))
        values[:, used] = total.transpose(2, 0, 1).reshape(2 * size, width)
    return canonical_vector(np.repeat(points, 2), values)


def _plain(xs: np.ndarray, ys: np.ndarray) -> bool:
    """All values finite and none with its sign bit set (no ``-0.0``, nothing negative)."""
    return bool(
        np.isfinite(xs).all()
        and np.isfinite(ys).all()
        and not np.signbit(xs).any()
        and not np.signbit(ys).any()
    )


def _sum_chains_np_per_child(chains: Sequence[VectorChain]) -> VectorChain:
    """:func:`sum_chains_np` one child at a time (used where a value has its sign bit set).

    The reference samples every child at every point, ``O(points x children)``; that stays (the
    additions must happen in child order to round the same), but two things are cheaper here:

    * a child is only interpolated up to the start of its last segment when that segment is
      horizontal (a child's FSBS is constant once its demand is met, and most of a wide pool's
      points lie beyond that for most children); further right its value is that constant, which
      interpolation would return exactly, so it is added as one broadcast;
    * right limits differ from left limits only where some child jumps, so the right-hand sums
      are recomputed only at those points.
    """
    lb = max(xs[0] for xs, _ in chains)
    rb = min(xs[-1] for xs, _ in chains)
    arrays = [(np.asarray(xs), np.asarray(ys, dtype=float)) for xs, ys in chains]
    points = np.unique(np.concatenate([xs for xs, _ in arrays]))
    points = points[(points >= lb) & (points <= rb)]
    count = len(points)
    left_total = np.zeros((count, 5))
    jumps: list[np.ndarray] = []
    for xs, ys in arrays:
        n = len(xs)
        stop = count
        if n > 2 and (ys[-1] == ys[-2]).all():
            stop = int(np.searchsorted(points, xs[-2], side="right"))
        if stop:
            left, _ = _sample_limits_np(xs, ys, points[:stop])
            left_total[:stop] += left
        if stop < count:
            left_total[stop:] += ys[-1]
        if n > 1:
            same_x = xs[1:] == xs[:-1]
            if same_x.any():
                jumps.append(xs[1:][same_x])
    right_total = left_total.copy()
    if jumps:
        at = np.unique(np.concatenate(jumps))
        at = at[(at >= lb) & (at <= rb)]
        if len(at):
            where = np.searchsorted(points, at)
            right_at = np.zeros((len(at), 5))
            for xs, ys in arrays:
                _, right = _sample_limits_np(xs, ys, at)
                right_at += right
            right_total[where] = right_at
    x = np.repeat(points, 2)
    y = np.empty((2 * count, 5))
    y[0::2] = left_total
    y[1::2] = right_total
    return canonical_vector(x, y)


def _canonical_scalar(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`canonical_vector` for scalar values; a one-point function keeps one point."""
    if len(x) > 1:
        same = (x[1:] == x[:-1]) & (y[1:] == y[:-1])
        if same.any():
            keep = np.concatenate(([True], ~same))
            x = x[keep]
            y = y[keep]
    if len(x) > 2:
        flat_x = x[1:] == x[:-1]
        flat_y = y[1:] == y[:-1]
        vertical = flat_x & ~flat_y
        horizontal = ~flat_x & flat_y
        interior = (vertical[1:] & vertical[:-1]) | (horizontal[1:] & horizontal[:-1])
        if interior.any():
            keep = np.concatenate(([True], ~interior, [True]))
            x = x[keep]
            y = y[keep]
    return x, y


def _interpolate_np(
    x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray, x: np.ndarray
) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (x - x0) / (x1 - x0)
        delta = y1 - y0
        return np.where(t < 0.5, y0 + delta * t, y1 - delta * (1.0 - t))


def _limits_np(xs: np.ndarray, ys: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scalar ``left_right_limit_at`` at sorted ``points`` inside the domain."""
    n = len(xs)
    k = np.searchsorted(xs, points, side="left")
    on_point = xs[k] == points
    k_next = np.minimum(k + 1, n - 1)
    jump = on_point & (k + 1 < n) & (xs[k_next] == points)
    k_prev = np.maximum(k - 1, 0)
    inner = _interpolate_np(xs[k_prev], ys[k_prev], xs[k], ys[k], points)
    left = np.where(on_point, ys[k], inner)
    right = np.where(jump, ys[k_next], left)
    return left, right


def _component_inverse_np(
    fx: np.ndarray, fr: np.ndarray, limit_share: float, guarantee_share: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_component_inverse` on arrays (``fr``: the component's values at ``fx``)."""
    a, f = _canonical_scalar(fr, fx)
    n = len(a)
    lo = float(a[0])
    hi = float(a[-1])
    limit = min(max(limit_share, lo), hi)
    g = min(max(guarantee_share, lo), limit)
    i0 = int(np.searchsorted(a, g, side="left"))
    if a[i0] == g:
        if i0 + 1 < n and a[i0 + 1] == g:
            head_y = [float(f[i0]), float(f[i0 + 1])]
            rest = i0 + 2
        else:
            head_y = [float(f[i0]), float(f[i0])]
            rest = i0 + 1
    else:
        v = interpolate(float(a[i0 - 1]), float(f[i0 - 1]), float(a[i0]), float(f[i0]), g)
        head_y = [v, v]
        rest = i0
    i1 = int(np.searchsorted(a, limit, side="right"))
    parts_x = [np.array([g, g]), a[rest:i1]]
    parts_y = [np.array(head_y), f[rest:i1]]
    last_x = float(a[i1 - 1]) if i1 > rest else g
    if last_x != limit:
        v = interpolate(float(a[i1 - 1]), float(f[i1 - 1]), float(a[i1]), float(f[i1]), limit)
        parts_x.append(np.array([limit]))
        parts_y.append(np.array([v]))
    xs, ys = _canonical_scalar(np.concatenate(parts_x), np.concatenate(parts_y))
    if len(xs) == 1:
        xs = np.array([xs[0], xs[0]])
        ys = np.array([ys[0], ys[0]])
    # trim_left
    if xs[0] == xs[1] and ys[0] != ys[1]:
        if len(xs) > 2:
            xs = xs[1:]
            ys = ys[1:]
        else:
            xs = np.array([xs[0], xs[0]])
            ys = np.array([ys[1], ys[1]])
    # shift(-g), extend_right(1.0)
    if g != 0.0:
        xs = xs - g
    if xs[-1] < 1.0:
        xs = np.append(xs, 1.0)
        ys = np.append(ys, ys[-1])
    xs, ys = _canonical_scalar(xs, ys)
    if len(xs) == 1:
        xs = np.array([xs[0], xs[0]])
        ys = np.array([ys[0], ys[0]])
    # trim
    if xs[-1] == xs[-2] and ys[-1] != ys[-2]:
        if len(xs) > 2:
            xs = xs[:-1]
            ys = ys[:-1]
        else:
            xs = np.array([xs[0], xs[0]])
            ys = np.array([ys[0], ys[0]])
    return xs, ys


_VECTOR_CROSSINGS = 16
"""Bisect crossings with numpy (all in lock step) only when there are more than this many."""

_SIGN_U = np.uint64(1 << 63)
_MASK_U = np.uint64((1 << 64) - 1)
_ONE_U = np.uint64(1)


def _keys_np(values: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return np.where((bits & _SIGN_U) != 0, bits ^ _MASK_U, bits ^ _SIGN_U)


def _doubles_np(keys: np.ndarray) -> np.ndarray:
    bits = np.where((keys & _SIGN_U) != 0, keys ^ _SIGN_U, keys ^ _MASK_U)
    return np.ascontiguousarray(bits, dtype=np.uint64).view(np.float64)


def _segment_values_np(seg: tuple[np.ndarray, ...], m: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = seg
    return np.where(x0 == x1, y0, _interpolate_np(x0, y0, x1, y1, m))


def _crossings_np(
    left: np.ndarray, right: np.ndarray, lo: tuple[np.ndarray, ...], hi: tuple[np.ndarray, ...]
) -> np.ndarray:
    """:func:`_crossing` for many intervals at once (the same bisection path for each)."""
    result = np.where(_segment_values_np(lo, right) <= _segment_values_np(hi, right), right, left)
    active = ~(left == right) & (result != right)
    klo = _keys_np(left)
    khi = _keys_np(right)
    while True:
        active &= klo + _ONE_U < khi
        if not active.any():
            break
        mid = klo + ((khi - klo) >> _ONE_U)
        m = _doubles_np(mid)
        below = _segment_values_np(lo, m) <= _segment_values_np(hi, m)
        klo = np.where(active & below, mid, klo)
        khi = np.where(active & ~below, mid, khi)
    searched = ~(left == right) & (result != right)
    return np.where(searched, _doubles_np(klo), result)


def pointwise_min_np(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pointwise_min` on arrays (same points, crossings and values)."""
    ax, ay = a
    bx, by = b
    lb = max(ax[0], bx[0])
    rb = min(ax[-1], bx[-1])
    if lb > rb:
        raise ValueError("pointwise_min: the domains do not intersect")
    points = np.union1d(ax, bx)
    points = points[(points >= lb) & (points <= rb)]
    la, ra = _limits_np(ax, ay, points)
    lb_, rb_ = _limits_np(bx, by, points)
    a_lower = ra[:-1] < rb_[:-1]
    b_lower = rb_[:-1] < ra[:-1]
    crosses = (a_lower & (la[1:] > lb_[1:])) | (b_lower & (lb_[1:] > la[1:]))
    low = np.where(la < lb_, la, lb_)
    high = np.where(ra < rb_, ra, rb_)
    m = len(points)
    if crosses.any():
        j = np.nonzero(crosses)[0]
        left = points[j]
        right = points[j + 1]
        ia = np.searchsorted(ax, left, side="right") - 1
        ib = np.searchsorted(bx, left, side="right") - 1
        sa = (ax[ia], ay[ia], ax[ia + 1], ay[ia + 1])
        sb = (bx[ib], by[ib], bx[ib + 1], by[ib + 1])
        lower_is_a = a_lower[j]
        lo = tuple(np.where(lower_is_a, u, v) for u, v in zip(sa, sb, strict=True))
        hi = tuple(np.where(lower_is_a, v, u) for u, v in zip(sa, sb, strict=True))
        if len(j) > _VECTOR_CROSSINGS:
            crossing = _crossings_np(left, right, lo, hi)
        else:
            lo_rows = np.stack(lo, axis=1).tolist()
            hi_rows = np.stack(hi, axis=1).tolist()
            crossing = np.array(
                [
                    _crossing(lft, rgt, tuple(lo_row), tuple(hi_row))
                    for lft, rgt, lo_row, hi_row in zip(
                        left.tolist(), right.tolist(), lo_rows, hi_rows, strict=True
                    )
                ]
            )
        keep = crossing != left
        j = j[keep]
        crossing = crossing[keep]
        ca = _interpolate_np(sa[0][keep], sa[1][keep], sa[2][keep], sa[3][keep], crossing)
        cb = _interpolate_np(sb[0][keep], sb[1][keep], sb[2][keep], sb[3][keep], crossing)
        cv = np.where(ca < cb, ca, cb)
        flags = np.zeros(m, dtype=np.int64)
        flags[j + 1] = 1
        position = np.arange(m) + np.cumsum(flags)
        total = m + len(j)
        sx = np.empty(total)
        s_low = np.empty(total)
        s_high = np.empty(total)
        sx[position] = points
        s_low[position] = low
        s_high[position] = high
        cpos = position[j] + 1
        sx[cpos] = crossing
        s_low[cpos] = cv
        s_high[cpos] = cv
    else:
        sx = points
        s_low = low
        s_high = high
    x = np.repeat(sx, 2)
    y = np.empty(2 * len(sx))
    y[0::2] = s_low
    y[1::2] = s_high
    return _canonical_scalar(x, y)


def _vector_values_np(
    fx: np.ndarray, fv: np.ndarray, v: np.ndarray, right_limit: bool
) -> np.ndarray:
    """``value_at`` (or ``right_limit_at``) of a vector chain at many arguments."""
    n = len(fx)
    if right_limit:
        i = np.searchsorted(fx[:-1], v, side="right") - 1
    else:
        i = np.searchsorted(fx[1:], v, side="left")
    i = np.minimum(i, n - 2)
    x0 = fx[i]
    x1 = fx[i + 1]
    y0 = fv[i]
    y1 = fv[i + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((v - x0) / (x1 - x0))[:, None]
        delta = y1 - y0
        inner = np.where(t < 0.5, y0 + delta * t, y1 - delta * (1.0 - t))
    jump = (x0 == x1)[:, None]
    return np.where(jump, y1 if right_limit else y0, inner)


def compose_np(fx: np.ndarray, fv: np.ndarray, mx: np.ndarray, my: np.ndarray) -> VectorChain:
    """:func:`compose` on arrays."""
    lo = my[0]
    hi = my[-1]
    crit = np.unique(fx)
    crit = crit[(crit > lo) & (crit < hi)]
    k = np.searchsorted(my, crit, side="left")
    ok = (my[k] != crit) & (my[k - 1] != crit) & (mx[k - 1] != mx[k])
    if ok.any():
        crit = crit[ok]
        k = k[ok]
        ex = _interpolate_np(my[k - 1], mx[k - 1], my[k], mx[k], crit)
        x = np.concatenate((mx, ex))
        v = np.concatenate((my, crit))
        order = np.lexsort((v, x))
        x = x[order]
        v = v[order]
    else:
        x = mx
        v = my
    count = len(x)
    differs = x[1:] != x[:-1]
    first = np.concatenate(([True], differs))
    last = np.concatenate((differs, [True]))
    rises = np.concatenate((v[1:] > v[:-1], [False]))
    left = _vector_values_np(fx, fv, v, right_limit=False)
    right = np.where((last & rises)[:, None], _vector_values_np(fx, fv, v, right_limit=True), left)
    out_x = np.repeat(x, 2)
    out_y = np.empty((2 * count, 5))
    out_y[0::2] = left
    out_y[1::2] = right
    valid = np.empty(2 * count, dtype=bool)
    valid[0::2] = first
    valid[1::2] = last
    xs, ys = canonical_vector(out_x[valid], out_y[valid])
    if xs[-1] == xs[-2] and ys[-1] != ys[-2]:
        if len(xs) > 2:
            xs.pop()
            ys.pop()
        else:
            xs = [xs[0], xs[0]]
            ys = [ys[0], ys[0]]
    return xs, ys


def max_fit_factor_by_suggestion_np(
    fx: np.ndarray, fv: np.ndarray, limits: Vector, guarantee: Vector
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`max_fit_factor_by_suggestion` on arrays; ``None`` where the Python version must
    handle it (an inverse whose domain is not ``[0, 1]``)."""
    result: tuple[np.ndarray, np.ndarray] | None = None
    for r in range(5):
        component = fv[:, r]
        if (component == component[0]).all():
            continue
        inverse = _component_inverse_np(fx, component, limits[r], guarantee[r])
        if inverse[0][0] != 0.0 or inverse[0][-1] != 1.0:
            return None
        result = inverse if result is None else pointwise_min_np(result, inverse)
    if result is None:
        last = float(fx[-1])
        return np.array([0.0, 1.0]), np.array([last, last])
    if len(result[0]) == 1:
        return np.repeat(result[0], 2), np.repeat(result[1], 2)
    return result


NUMPY_MIN_POINTS = 128
"""Build MFFBS and the composition with numpy from this many FSBFF points on.  The numpy
versions cost about 500 us of fixed overhead (dozens of small calls per resource); on the
simulator benchmark's pools the Python versions are faster up to about 130 points."""


def prepare_functions(
    fx: list[float], fv: list[Vector], limits: Vector, guarantee: Vector
) -> tuple[ScalarChain, VectorChain]:
    """MFFBS and FSBS (compressed FSBFF o MFFBS) of one element from its FSBFF chain."""
    if len(fx) >= NUMPY_MIN_POINTS:
        ax = np.asarray(fx)
        av = np.asarray(fv, dtype=float)
        mffbs = max_fit_factor_by_suggestion_np(ax, av, limits, guarantee)
        if mffbs is not None:
            mx, my = mffbs
            cx, cv = compose_np(ax, av, mx, my)
            return (mx.tolist(), my.tolist()), compress(cx, cv)
    mx_list, my_list = max_fit_factor_by_suggestion(fx, fv, limits, guarantee)
    cx, cv = compose(fx, fv, mx_list, my_list)
    return (mx_list, my_list), compress(cx, cv)
