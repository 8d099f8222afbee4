"""Satisfaction ratios and the "strictly dominates on non-blocked resources" relation.

Both follow ``TPoolTreeElement`` in ``yt/yt/server/scheduler/strategy/pool_tree_element.cpp``
(``ComputeLocalSatisfactionRatio``, ``IsResourceBlocked``, ``AreAllResourcesBlocked``,
``IsStrictlyDominatesNonBlocked``).  Everything here is evaluated against one element's
attributes from the last fair-share update (fair share, demand share, tree totals) and a *live*
absolute usage, because YTsaurus compares live usage (with precommit) against the fair share it
published at the last update.

A resource is *blocked* for an element when its fair share already covers its demand
(``fair_share_r >= demand_share_r``): the element cannot want more of it, so it must not count
when deciding whether the element is below its fair share.  That is why "below fair share" is
"strictly below on every non-blocked resource" (or, when every resource is blocked, strictly
below on some resource).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ytsched.resources import EPSILON, Vector
from ytsched.scheduling.selector import fits as native_fits
from ytsched.scheduling.selector import local_satisfaction as native_local_satisfaction

INFINITE_SATISFACTION_RATIO = 1e9
"""``InfiniteSatisfactionRatio``: the ratio of an element with (near) zero fair share."""

LARGE_EPSILON = 1e-4
"""``NVectorHdrf::LargeEpsilon``: slack of "fair share covers demand" for the tolerance rule."""

RESOURCE_EPSILON = 1e-6
"""Slack of absolute resource comparisons (cpu sums are floats here, fixed point in YTsaurus)."""


_INDEXES: tuple[tuple[int, ...], ...] = tuple(
    tuple(index for index in range(5) if mask >> index & 1) for mask in range(32)
)
"""Per bit mask of resources, their indexes in increasing order."""

_last_measured: tuple[Vector, tuple[int, ...], int] = ((0.0, 0.0, 0.0, 0.0, 0.0), (), 0)
"""The last total seen by :meth:`ShareView.create`, its ``measured`` indexes and their bit
mask (one tuple, read and replaced whole; it keeps the total alive, so the same object is
the same total)."""


def _measured(total: Vector) -> tuple[tuple[int, ...], int]:
    """The resources with a non-zero total, as indexes and as a bit mask."""
    global _last_measured
    last = _last_measured
    if last[0] is total:
        return last[1], last[2]
    mask = (
        (1 if total[0] else 0)
        | (2 if total[1] else 0)
        | (4 if total[2] else 0)
        | (8 if total[3] else 0)
        | (16 if total[4] else 0)
    )
    measured = _INDEXES[mask]
    _last_measured = (total, measured, mask)
    return measured, mask


@dataclass(frozen=True, slots=True)
class ShareView:
    """What satisfaction and status computations need from one element's last update."""

    fair_share: Vector
    demand_share: Vector
    usage_share: Vector
    """Usage share at the update (without preempted allocations)."""
    total: Vector
    """The tree's total resources at the update (a resource with total 0 has share 0)."""
    blocked: tuple[bool, bool, bool, bool, bool]
    all_blocked: bool
    fair_share_is_zero: bool
    """Every component of the fair share is at most epsilon (satisfaction is infinite)."""
    fair_amounts: Vector
    """``fair_share x total``: the fair share in absolute amounts (ratios without division)."""
    measured: tuple[int, ...]
    """Resources with a non-zero total (the others always have share 0)."""
    ratio_measured: tuple[int, ...]
    """The measured resources that are not blocked and have a non-zero fair amount: the
    ones :meth:`local_satisfaction` takes ratios of when usage is within the fair share and
    not every resource is blocked (kept here so that loop skips nothing per call)."""

    @staticmethod
    def create(
        fair_share: Vector, demand_share: Vector, usage_share: Vector, total: Vector
    ) -> ShareView:
        """The view of one element's shares.  Every operation whose computed shares moved
        gets a new view at each update, so the comparisons are written per resource,
        ``measured`` (a function of the total alone, the same for every element of an
        update) is kept for the last total object seen, and ``ratio_measured`` is looked up
        from a bit mask; the fields are what the plain definitions give (``measured``: the
        resources with a non-zero total; ``ratio_measured``: those of them not blocked and
        with a non-zero fair amount; tests/scheduling/test_share_views.py checks this)."""
        f0, f1, f2, f3, f4 = fair_share
        d0, d1, d2, d3, d4 = demand_share
        b0 = f0 >= d0
        b1 = f1 >= d1
        b2 = f2 >= d2
        b3 = f3 >= d3
        b4 = f4 >= d4
        a0 = f0 * total[0]
        a1 = f1 * total[1]
        a2 = f2 * total[2]
        a3 = f3 * total[3]
        a4 = f4 * total[4]
        measured, mask = _measured(total)
        ratio = (
            (0 if b0 or a0 == 0.0 else 1)
            | (0 if b1 or a1 == 0.0 else 2)
            | (0 if b2 or a2 == 0.0 else 4)
            | (0 if b3 or a3 == 0.0 else 8)
            | (0 if b4 or a4 == 0.0 else 16)
        )
        eps = EPSILON
        return ShareView(
            fair_share,
            demand_share,
            usage_share,
            total,
            (b0, b1, b2, b3, b4),
            b0 and b1 and b2 and b3 and b4,
            f0 <= eps and f1 <= eps and f2 <= eps and f3 <= eps and f4 <= eps,
            (a0, a1, a2, a3, a4),
            measured,
            _INDEXES[ratio & mask],
        )

    def share(self, amounts: Vector) -> Vector:
        """Absolute amounts as a share of the tree (``TResourceVector::FromJobResources``).

        Divides like the fair-share update does, so a usage equal to the demand gives exactly
        the demand share.
        """
        total = self.total
        return (
            amounts[0] / total[0] if total[0] else 0.0,
            amounts[1] / total[1] if total[1] else 0.0,
            amounts[2] / total[2] if total[2] else 0.0,
            amounts[3] / total[3] if total[3] else 0.0,
            amounts[4] / total[4] if total[4] else 0.0,
        )

    def strictly_dominates_non_blocked(self, lhs: Vector, rhs: Vector) -> bool:
        """``lhs > rhs`` on every non-blocked resource; if all are blocked, on some resource.

        Monotone in both arguments, which is what makes the prefix rule of the preemptible
        lists and the status checks well defined (see the YTsaurus comment on
        ``IsStrictlyDominatesNonBlocked``).  A difference of at most 1e-9 counts as equality:
        the fair-share engine's results can land a rounding error above an exact bound (a
        fair share of ``0.6000000000000001`` under a limit of 6 of 10 cpu), and the usage of
        whole allocations must then still count as reaching it.
        """
        eps = EPSILON
        if self.all_blocked:
            return (
                lhs[0] > rhs[0] + eps
                or lhs[1] > rhs[1] + eps
                or lhs[2] > rhs[2] + eps
                or lhs[3] > rhs[3] + eps
                or lhs[4] > rhs[4] + eps
            )
        b = self.blocked
        return (
            (b[0] or lhs[0] > rhs[0] + eps)
            and (b[1] or lhs[1] > rhs[1] + eps)
            and (b[2] or lhs[2] > rhs[2] + eps)
            and (b[3] or lhs[3] > rhs[3] + eps)
            and (b[4] or lhs[4] > rhs[4] + eps)
        )

    def local_satisfaction(self, usage: Vector) -> float:
        """``ComputeLocalSatisfactionRatio`` for a live absolute usage.

        * fair share ~ 0: infinite (1e9);
        * usage above fair share in some resource: the largest usage/fair ratio (x/0 is
          infinite, 0/0 is 0), capped at 1e9; the result is at least 1;
        * every resource blocked: the smallest usage/fair ratio (x/0 and 0/0 count as 1);
        * otherwise: the largest usage/fair ratio over non-blocked resources with non-zero
          fair share (0 if there is none); the result is at most 1.

        Native (``local_satisfaction`` in ``src/native/usage_sums.cpp``, this method's former
        body statement for statement over the same attributes, each ratio and comparison as
        the interpreter makes it): it runs for every start and end of an allocation.  The
        heartbeat path calls :data:`native_local_satisfaction` directly.
        """
        return native_local_satisfaction(self, usage)


fits: Callable[[Vector, Vector], bool] = native_fits
"""``fits(need, available)``: ``available >= need`` in every resource, with float slack
(``need[i] <= available[i] + RESOURCE_EPSILON``, in order, stopping at the first failure).
Native (``src/native/usage_sums.cpp``, the same additions and comparisons): it runs on every
attempt and heartbeat."""


def strictly_below(amounts: Vector, bound: Vector) -> bool:
    """``bound > amounts`` in every resource (``StrictlyDominates(bound, amounts)``)."""
    return (
        amounts[0] < bound[0]
        and amounts[1] < bound[1]
        and amounts[2] < bound[2]
        and amounts[3] < bound[3]
        and amounts[4] < bound[4]
    )
