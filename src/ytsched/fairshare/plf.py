"""Monotone piecewise-linear functions, the currency of the vector-HDRF update.

The semantics follow YTsaurus's ``yt/yt/library/numeric/piecewise_linear_function{.h,-inl.h}``
and ``yt/yt/library/vector_hdrf/piecewise_linear_function_helpers.cpp`` so that our fair shares
match theirs to the last bit where possible:

* A function is a list of segments ``(left_bound, left_value, right_bound, right_value)``
  joined end to end.  A *vertical* segment (equal bounds, different values) is a jump.
* Functions are **left-continuous**: the value at a jump is the left limit.
* Segments are appended through one merge rule (:func:`_push`): points vanish, and two
  verticals or two horizontals in a row become one.  Tilted segments are never merged, because
  the number and position of breakpoints feeds later critical-point sets.
* Interpolation uses the two-sided formula that is exact at both ends and monotone.

Values are either ``float`` (scalar functions) or 5-tuples (vector functions, one component per
resource); :class:`ValueOps` supplies the arithmetic for each.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

from ytsched.resources import ZERO, Vector, vadd, vscale, vsub

V = TypeVar("V")
Segment = tuple[float, Any, float, Any]


@dataclass(frozen=True, slots=True)
class ValueOps(Generic[V]):
    """Arithmetic for the value type of a function."""

    zero: V
    add: Callable[[V, V], V]
    sub: Callable[[V, V], V]
    scale: Callable[[V, float], V]


SCALAR_OPS: ValueOps[float] = ValueOps(
    zero=0.0,
    add=lambda a, b: a + b,
    sub=lambda a, b: a - b,
    scale=lambda a, k: a * k,
)
VECTOR_OPS: ValueOps[Vector] = ValueOps(zero=ZERO, add=vadd, sub=vsub, scale=vscale)


# --- segments ------------------------------------------------------------------------------


def _interpolate(seg: Segment, x: float, ops: ValueOps[Any]) -> Any:
    lb, lv, rb, rv = seg
    t = (x - lb) / (rb - lb)
    if t < 0.5:
        return ops.add(lv, ops.scale(ops.sub(rv, lv), t))
    return ops.sub(rv, ops.scale(ops.sub(rv, lv), 1.0 - t))


def _interpolate_vector(lb: float, lv: Vector, rb: float, rv: Vector, x: float) -> Vector:
    """:func:`_interpolate` with ``VECTOR_OPS`` written out: the same operations per resource
    (``vadd(lv, vscale(vsub(rv, lv), t))`` is ``lv[r] + (rv[r] - lv[r]) * t``), without the
    three intermediate tuples and calls."""
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


def _limits_on_segment(seg: Segment, x: float, ops: ValueOps[Any]) -> tuple[Any, Any]:
    """Left and right limits at ``x`` of one segment (both ends differ only for a jump)."""
    lb, lv, rb, rv = seg
    if lb == rb:
        return lv, rv
    value = _interpolate(seg, x, ops)
    return value, value


def _is_vertical(seg: Segment) -> bool:
    return seg[0] == seg[2] and seg[1] != seg[3]


def _is_horizontal(seg: Segment) -> bool:
    return seg[0] != seg[2] and seg[1] == seg[3]


def _is_point(seg: Segment) -> bool:
    return seg[0] == seg[2] and seg[1] == seg[3]


def _is_tilted(seg: Segment) -> bool:
    return seg[0] != seg[2] and seg[1] != seg[3]


def _push(segments: list[Segment], seg: Segment) -> None:
    """Append a segment, merging degenerate neighbours exactly as YTsaurus does."""
    if segments:
        left = segments[-1]
        if _is_point(seg):
            return
        if _is_point(left):
            segments[-1] = seg
            return
        if (_is_vertical(left) and _is_vertical(seg)) or (
            _is_horizontal(left) and _is_horizontal(seg)
        ):
            segments[-1] = (left[0], left[1], seg[2], seg[3])
            return
    segments.append(seg)


class Builder:
    """Builds a function from points or segments, applying the merge rule."""

    __slots__ = ("_last", "_segments")

    def __init__(self) -> None:
        self._segments: list[Segment] = []
        self._last: tuple[float, Any] | None = None

    def add_point(self, x: float, value: Any) -> None:
        last = self._last
        if last is not None:
            _push(self._segments, (last[0], last[1], x, value))
        self._last = (x, value)

    def push_segment(self, seg: Segment) -> None:
        _push(self._segments, seg)
        self._last = (seg[2], seg[3])

    def finish(self, ops: ValueOps[Any]) -> PLF:
        if not self._segments:
            raise ValueError("a piecewise-linear function needs at least one segment")
        return PLF(self._segments, ops)


# --- functions -----------------------------------------------------------------------------


class PLF:
    """A piecewise-linear function on ``[left_bound, right_bound]``.

    Lookups are by binary search over segment bounds; the bound lists are built lazily because
    most intermediate functions are only ever transformed, never sampled.
    """

    __slots__ = ("_chain", "_factory", "_lbs", "_rbs", "_segments", "ops")

    def __init__(self, segments: list[Segment], ops: ValueOps[Any]) -> None:
        self._segments: list[Segment] | None = segments
        self.ops = ops
        self._rbs: list[float] | None = None
        self._lbs: list[float] | None = None
        self._chain: tuple[list[float], list[Any]] | None = None
        self._factory: Callable[[], tuple[list[float], list[Any]]] | None = None

    @classmethod
    def from_chain(cls, xs: list[float], ys: list[Any], ops: ValueOps[Any]) -> Self:
        """A function from its points (``xs[i], ys[i]`` ends segment ``i - 1``, starts ``i``).

        The lists are kept (see :meth:`chain`) and must not be modified afterwards; the segment
        list is only built if something asks for it.
        """
        func = cls.__new__(cls)
        func._segments = None
        func.ops = ops
        func._rbs = None
        func._lbs = None
        func._chain = (xs, ys)
        func._factory = None
        return func

    @staticmethod
    def lazy(factory: Callable[[], tuple[list[float], list[Any]]], ops: ValueOps[Any]) -> PLF:
        """A function whose points ``factory`` computes when they are first needed."""
        func = PLF.__new__(PLF)
        func._segments = None
        func.ops = ops
        func._rbs = None
        func._lbs = None
        func._chain = None
        func._factory = factory
        return func

    @property
    def segments(self) -> list[Segment]:
        segments = self._segments
        if segments is None:
            xs, ys = self.chain()
            segments = self._segments = list(zip(xs, ys, xs[1:], ys[1:], strict=False))
        return segments

    def chain(self) -> tuple[list[float], list[Any]]:
        """Arguments and values of the points of a function whose segments join end to end.

        Every function the update builds is such a chain (the native core, ``src/native/``,
        stores functions only that way).
        """
        chain = self._chain
        if chain is None:
            factory = self._factory
            if factory is not None:
                chain = self._chain = factory()
                self._factory = None
                return chain
            segments = self.segments
            xs = [seg[0] for seg in segments]
            xs.append(segments[-1][2])
            ys = [seg[1] for seg in segments]
            ys.append(segments[-1][3])
            chain = self._chain = (xs, ys)
        return chain

    # -- construction --

    @staticmethod
    def linear(lb: float, lv: Any, rb: float, rv: Any, ops: ValueOps[Any]) -> PLF:
        return PLF([(lb, lv, rb, rv)], ops)

    @staticmethod
    def constant(lb: float, rb: float, value: Any, ops: ValueOps[Any]) -> PLF:
        return PLF([(lb, value, rb, value)], ops)

    # -- basic accessors --

    @property
    def left_bound(self) -> float:
        if self._segments is None:
            return float(self.chain()[0][0])
        return float(self._segments[0][0])

    @property
    def right_bound(self) -> float:
        if self._segments is None:
            return float(self.chain()[0][-1])
        return float(self._segments[-1][2])

    @property
    def left_value(self) -> Any:
        if self._segments is None:
            return self.chain()[1][0]
        return self._segments[0][1]

    @property
    def right_value(self) -> Any:
        if self._segments is None:
            return self.chain()[1][-1]
        return self._segments[-1][3]

    def is_defined_at(self, x: float) -> bool:
        return self.segments[0][0] <= x <= self.segments[-1][2]

    def _right_bounds(self) -> list[float]:
        rbs = self._rbs
        if rbs is None:
            rbs = self._rbs = [s[2] for s in self.segments]
        return rbs

    def _left_bounds(self) -> list[float]:
        lbs = self._lbs
        if lbs is None:
            lbs = self._lbs = [s[0] for s in self.segments]
        return lbs

    def left_segment_index(self, x: float) -> int:
        """Index of the first segment whose right bound is ``>= x``."""
        return bisect.bisect_left(self._right_bounds(), x)

    def segment_index(self, x: float) -> int:
        """Like :meth:`left_segment_index`, but prefers a jump that starts exactly at ``x``."""
        i = bisect.bisect_left(self._right_bounds(), x)
        segments = self.segments
        if segments[i][2] == x and i + 1 < len(segments) and _is_vertical(segments[i + 1]):
            return i + 1
        return i

    def right_segment_index(self, x: float) -> int:
        """Index of the last segment whose left bound is ``<= x``."""
        return bisect.bisect_right(self._left_bounds(), x) - 1

    def value_at(self, x: float) -> Any:
        """The value (left limit) at ``x``."""
        chain = self._chain
        if chain is not None or self._factory is not None:
            xs, ys = self.chain()
            i = bisect.bisect_left(xs, x, 1) - 1
            lb = xs[i]
            rb = xs[i + 1]
            if lb == rb:
                return ys[i]
            ops = self.ops
            if ops is VECTOR_OPS:
                return _interpolate_vector(lb, ys[i], rb, ys[i + 1], x)
            if ops is SCALAR_OPS:
                t = (x - lb) / (rb - lb)
                lv = ys[i]
                rv = ys[i + 1]
                if t < 0.5:
                    return lv + (rv - lv) * t
                return rv - (rv - lv) * (1.0 - t)
            return _interpolate((lb, ys[i], rb, ys[i + 1]), x, ops)
        seg = self.segments[bisect.bisect_left(self._right_bounds(), x)]
        if seg[0] == seg[2]:
            return seg[1]
        return _interpolate(seg, x, self.ops)

    left_limit_at = value_at

    def right_limit_at(self, x: float) -> Any:
        seg = self.segments[self.right_segment_index(x)]
        if seg[0] == seg[2]:
            return seg[3]
        return _interpolate(seg, x, self.ops)

    def left_right_limit_at(self, x: float) -> tuple[Any, Any]:
        return _limits_on_segment(self.segments[self.segment_index(x)], x, self.ops)

    def critical_points(self) -> list[float]:
        """Left bound plus every strictly increasing right bound."""
        segments = self.segments
        last = segments[0][0]
        out = [last]
        for seg in segments:
            rb = seg[2]
            if rb > last:
                out.append(rb)
                last = rb
        return out

    # -- transformations (each returns a new function) --

    def transpose(self) -> PLF:
        """Swap arguments and values (for a non-decreasing scalar function: its inverse)."""
        return PLF([(lv, lb, rv, rb) for lb, lv, rb, rv in self.segments], SCALAR_OPS)

    def trim_left(self) -> PLF:
        segments = self.segments
        if _is_vertical(segments[0]):
            if len(segments) > 1:
                return PLF(segments[1:], self.ops)
            lb, _, _, rv = segments[0]
            return PLF([(lb, rv, lb, rv)], self.ops)
        return self

    def trim_right(self) -> PLF:
        segments = self.segments
        if _is_vertical(segments[-1]):
            if len(segments) > 1:
                return PLF(segments[:-1], self.ops)
            lb, lv, _, _ = segments[-1]
            return PLF([(lb, lv, lb, lv)], self.ops)
        return self

    trim = trim_right

    def is_trimmed(self) -> bool:
        return not _is_vertical(self.segments[-1])

    def scale_argument(self, scale: float) -> PLF:
        builder = Builder()
        for lb, lv, rb, rv in self.segments:
            builder.push_segment((lb / scale, lv, rb / scale, rv))
        return builder.finish(self.ops)

    def shift(self, delta_argument: float, delta_value: Any = None) -> PLF:
        ops = self.ops
        builder = Builder()
        if delta_value is None:
            delta_value = ops.zero
        add = ops.add
        for lb, lv, rb, rv in self.segments:
            builder.push_segment(
                (
                    lb + delta_argument,
                    add(lv, delta_value),
                    rb + delta_argument,
                    add(rv, delta_value),
                )
            )
        return builder.finish(ops)

    def extend(self, new_lb: float, new_lv: Any, new_rb: float, new_rv: Any) -> PLF:
        if new_lb > self.left_bound:
            raise ValueError("extend: new left bound lies inside the function")
        builder = Builder()
        segments = self.segments
        lb = segments[0][0]
        if new_lb < lb:
            builder.push_segment((new_lb, new_lv, lb, new_lv))
            first_value = segments[0][1]
            if new_lv != first_value:
                builder.push_segment((lb, new_lv, lb, first_value))
        for seg in segments:
            builder.push_segment(seg)
        rb = segments[-1][2]
        if rb < new_rb:
            last_value = segments[-1][3]
            if new_rv != last_value:
                builder.push_segment((rb, last_value, rb, new_rv))
            builder.push_segment((rb, new_rv, new_rb, new_rv))
        return builder.finish(self.ops)

    def extend_both(self, new_lb: float, new_rb: float) -> PLF:
        return self.extend(new_lb, self.segments[0][1], new_rb, self.segments[-1][3])

    def extend_right(self, new_rb: float) -> PLF:
        return self.extend(self.left_bound, self.left_value, new_rb, self.segments[-1][3])

    def narrow(self, new_lb: float, new_rb: float) -> PLF:
        """Restrict to ``[new_lb, new_rb]`` (done, as in YTsaurus, by adding a zero constant)."""
        if not (self.is_defined_at(new_lb) and self.is_defined_at(new_rb) and new_lb <= new_rb):
            raise ValueError(f"narrow: [{new_lb}, {new_rb}] is not inside the function's domain")
        return add_functions(self, PLF.constant(new_lb, new_rb, self.ops.zero, self.ops))

    def compose(self, inner: PLF) -> PLF:
        """``self(inner(x))`` for a non-decreasing scalar ``inner``."""
        return compose(self, inner)


# --- building from samples -----------------------------------------------------------------


def _clear_and_sort(points: list[float], lb: float, rb: float) -> list[float]:
    return sorted({p for p in points if lb <= p <= rb})


def create(
    sample: Callable[[float], tuple[Any, Any]],
    lb: float,
    rb: float,
    critical_points: list[float],
    ops: ValueOps[Any],
) -> PLF:
    """Sample left and right limits at every critical point and join them."""
    points = _clear_and_sort(critical_points, lb, rb)
    if not points or points[0] != lb or points[-1] != rb:
        raise ValueError("create: the bounds must be critical points")
    builder = Builder()
    for x in points:
        left, right = sample(x)
        builder.add_point(x, left)
        builder.add_point(x, right)
    return builder.finish(ops)


def add_functions(lhs: PLF, rhs: PLF) -> PLF:
    ops = lhs.ops
    add = ops.add

    def sample(x: float) -> tuple[Any, Any]:
        l1, r1 = lhs.left_right_limit_at(x)
        l2, r2 = rhs.left_right_limit_at(x)
        return add(l1, l2), add(r1, r2)

    points = lhs.critical_points() + rhs.critical_points()
    return create(
        sample,
        max(lhs.left_bound, rhs.left_bound),
        min(lhs.right_bound, rhs.right_bound),
        points,
        ops,
    )


def sum_functions(funcs: Sequence[PLF]) -> PLF:
    """Pointwise sum over the common domain of all functions."""
    if not funcs:
        raise ValueError("sum of no functions")
    ops = funcs[0].ops
    lb = max(f.left_bound for f in funcs)
    rb = min(f.right_bound for f in funcs)
    points: list[float] = []
    for f in funcs:
        points.extend(f.critical_points())
    zero = ops.zero
    add = ops.add

    def sample(x: float) -> tuple[Any, Any]:
        left = zero
        right = zero
        for f in funcs:
            fl, fr = f.left_right_limit_at(x)
            left = add(left, fl)
            right = add(right, fr)
        return left, right

    return create(sample, lb, rb, points, ops)


# --- binary search over doubles ------------------------------------------------------------

_SIGN = 1 << 63
_MASK64 = (1 << 64) - 1
_DOUBLE = struct.Struct("<d")
_UINT64 = struct.Struct("<Q")


def double_to_key(x: float) -> int:
    """An integer whose order is the order of the doubles (negative ones included)."""
    bits: int = _UINT64.unpack(_DOUBLE.pack(x))[0]
    return (bits ^ _MASK64) if bits & _SIGN else (bits ^ _SIGN)


def key_to_double(key: int) -> float:
    bits = (key ^ _SIGN) if key & _SIGN else (key ^ _MASK64)
    value: float = _DOUBLE.unpack(_UINT64.pack(bits))[0]
    return value


_double_to_key = double_to_key
_key_to_double = key_to_double


def inverse_lower_bound(lo: float, hi: float, predicate: Callable[[float], bool]) -> float:
    """The largest double in ``[lo, hi]`` satisfying a predicate that holds at ``lo``.

    The predicate must be monotone (true, then false).  Like YTsaurus's
    ``FloatingPointInverseLowerBound`` (``yt/yt/library/numeric/binary_search-inl.h``) this
    bisects the ordered bit patterns, so it needs at most 64 predicate calls and is exact.
    """
    if lo == hi:
        return lo
    if predicate(hi):
        return hi
    klo = _double_to_key(lo)
    khi = _double_to_key(hi)
    while klo + 1 < khi:
        mid = klo + ((khi - klo) >> 1)
        if predicate(_key_to_double(mid)):
            klo = mid
        else:
            khi = mid
    return _key_to_double(klo)


# --- pointwise minimum (scalar functions) ---------------------------------------------------


def pointwise_min(lhs: PLF, rhs: PLF) -> PLF:
    lb = max(lhs.left_bound, rhs.left_bound)
    rb = min(lhs.right_bound, rhs.right_bound)
    if lb > rb:
        raise ValueError("pointwise_min: the domains do not intersect")
    points = _clear_and_sort(lhs.critical_points() + rhs.critical_points(), lb, rb)
    crossings: list[float] = []
    for i in range(1, len(points)):
        left = points[i - 1]
        right = points[i]
        seg_a = lhs.segments[lhs.right_segment_index(left)]
        seg_b = rhs.segments[rhs.right_segment_index(left)]
        va = _segment_value(seg_a, left)
        vb = _segment_value(seg_b, left)
        if va <= vb:
            lo_seg, hi_seg, lo_v, hi_v = seg_a, seg_b, va, vb
        else:
            lo_seg, hi_seg, lo_v, hi_v = seg_b, seg_a, vb, va
        if lo_v < hi_v and _segment_value(lo_seg, right) > _segment_value(hi_seg, right):
            crossings.append(inverse_lower_bound(left, right, _below_predicate(lo_seg, hi_seg)))

    def sample(x: float) -> tuple[float, float]:
        l1, r1 = lhs.left_right_limit_at(x)
        l2, r2 = rhs.left_right_limit_at(x)
        return (l1 if l1 < l2 else l2), (r1 if r1 < r2 else r2)

    return create(sample, lb, rb, points + crossings, SCALAR_OPS)


def _below_predicate(lower: Segment, upper: Segment) -> Callable[[float], bool]:
    def predicate(m: float) -> bool:
        return _segment_value(lower, m) <= _segment_value(upper, m)

    return predicate


def _segment_value(seg: Segment, x: float) -> float:
    if seg[0] == seg[2]:
        return float(seg[1])
    return float(_interpolate(seg, x, SCALAR_OPS))


def pointwise_min_all(funcs: Sequence[PLF]) -> PLF:
    result = funcs[0]
    for f in funcs[1:]:
        result = pointwise_min(result, f)
    return result


# --- composition ---------------------------------------------------------------------------


def compose(outer: PLF, inner: PLF) -> PLF:
    """``outer(inner(x))`` where ``inner`` is a non-decreasing scalar function."""
    inner_segments = inner.segments
    points: list[tuple[float, float]] = [(inner_segments[0][0], inner_segments[0][1])]
    points.extend((seg[2], seg[3]) for seg in inner_segments)

    inverse = inner.transpose()
    for value in outer.critical_points():
        if inverse.is_defined_at(value):
            inv_seg = inverse.segments[inverse.segment_index(value)]
            # inv_seg transposed back is the segment of ``inner`` that reaches ``value``.
            if (
                inv_seg[0] != inv_seg[2]
                and inv_seg[1] != inv_seg[3]
                and value != inv_seg[0]
                and value != inv_seg[2]
            ):
                points.append((_segment_value(inv_seg, value), value))
    points.sort()

    builder = Builder()
    n = len(points)
    for i in range(n):
        x, inner_value = points[i]
        if i == 0 or points[i - 1][0] != x:
            if i > 0 and points[i - 1][1] < inner_value:
                left = outer.left_limit_at(inner_value)
            else:
                left = outer.value_at(inner_value)
            builder.add_point(x, left)
        if i + 1 == n or points[i + 1][0] != x:
            if i + 1 < n and points[i + 1][1] > inner_value:
                right = outer.right_limit_at(inner_value)
            else:
                right = outer.value_at(inner_value)
            builder.add_point(x, right)
    return builder.finish(outer.ops).trim()


# --- vector helpers ------------------------------------------------------------------------


def extract_component(index: int, func: PLF) -> PLF:
    """One resource of a vector function, as a scalar function."""
    builder = Builder()
    for lb, lv, rb, rv in func.segments:
        builder.push_segment((lb, lv[index], rb, rv[index]))
    return builder.finish(SCALAR_OPS)


def _cross(seg: tuple[float, float, float, float]) -> tuple[float, float]:
    return seg[2] - seg[0], seg[3] - seg[1]


def _compare(
    first: tuple[float, float, float, float], second: tuple[float, float, float, float]
) -> int:
    dx1, dy1 = _cross(first)
    dx2, dy2 = _cross(second)
    cross = dx1 * dy2 - dx2 * dy1
    if cross > 0:
        return 1
    if cross < 0:
        return -1
    return 0


COMPRESS_EPSILON = 1e-15


def compress(func: PLF, epsilon: float = COMPRESS_EPSILON) -> PLF:
    """Merge runs of nearly collinear segments of a vector function.

    Port of the greedy corridor test of ``CompressFunction``: a run of segments is replaced by
    the chord from its start to its end while, for every resource, that chord stays inside the
    corridor of ``±epsilon`` around all segments of the run.
    """
    segments = func.segments
    builder = Builder()
    accumulated = segments[0]

    def bounds(
        seg: Segment,
    ) -> tuple[list[tuple[float, float, float, float]], list[tuple[float, float, float, float]]]:
        lb, lv, rb, rv = seg
        top = [(lb, lv[r], rb, rv[r] + epsilon) for r in range(5)]
        bottom = [(lb, lv[r], rb, rv[r] - epsilon) for r in range(5)]
        return top, bottom

    top, bottom = bounds(accumulated)
    for current in segments[1:]:
        merged = (accumulated[0], accumulated[1], current[2], current[3])
        cur_top, cur_bottom = bounds(merged)
        lb, lv, rb, rv = merged
        can_extend = True
        for r in range(5):
            if _compare(cur_top[r], top[r]) > 0:
                top[r] = cur_top[r]
            if _compare(cur_bottom[r], bottom[r]) < 0:
                bottom[r] = cur_bottom[r]
            unpacked = (lb, lv[r], rb, rv[r])
            if _compare(bottom[r], unpacked) <= 0 or _compare(top[r], unpacked) >= 0:
                can_extend = False
                break
        if can_extend:
            accumulated = merged
        else:
            builder.push_segment(accumulated)
            accumulated = current
            top, bottom = bounds(current)
    builder.push_segment(accumulated)
    return builder.finish(func.ops)
