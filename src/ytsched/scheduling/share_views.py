""":meth:`ShareView.create` written out for the update path.

Every operation whose computed shares moved gets a new :class:`ShareView` at each update (on
the simulator's 30 s / 30 s day, tens of thousands per simulated hour), and ``create`` spends
most of its time in three generator expressions and a ``tuple`` of one.  :func:`share_view`
gives an equal view (the same field values, bit for bit: the same comparisons and products
in the same order) with the comparisons written out, ``measured`` (a function of the tree's
total alone, the same for every element of an update) kept for the last total seen, and
``ratio_measured`` looked up from a bit mask.
"""

from __future__ import annotations

from ytsched.resources import EPSILON, Vector
from ytsched.scheduling.satisfaction import ShareView

_INDEXES: tuple[tuple[int, ...], ...] = tuple(
    tuple(index for index in range(5) if mask >> index & 1) for mask in range(32)
)
"""Per bit mask of resources, their indexes in increasing order."""

_last_measured: tuple[Vector, tuple[int, ...], int] = ((0.0, 0.0, 0.0, 0.0, 0.0), (), 0)
"""The last total seen, its ``measured`` indexes and their bit mask (one tuple, read and
replaced whole, which keeps the total alive: the same object is the same total)."""


def _measured(total: Vector) -> tuple[tuple[int, ...], int]:
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


def share_view(fair: Vector, demand: Vector, usage: Vector, total: Vector) -> ShareView:
    """``ShareView.create(fair, demand, usage, total)``, equal field by field."""
    b0 = fair[0] >= demand[0]
    b1 = fair[1] >= demand[1]
    b2 = fair[2] >= demand[2]
    b3 = fair[3] >= demand[3]
    b4 = fair[4] >= demand[4]
    a0 = fair[0] * total[0]
    a1 = fair[1] * total[1]
    a2 = fair[2] * total[2]
    a3 = fair[3] * total[3]
    a4 = fair[4] * total[4]
    measured, mask = _measured(total)
    ratio = (
        (0 if b0 or a0 == 0.0 else 1)
        | (0 if b1 or a1 == 0.0 else 2)
        | (0 if b2 or a2 == 0.0 else 4)
        | (0 if b3 or a3 == 0.0 else 8)
        | (0 if b4 or a4 == 0.0 else 16)
    )
    return ShareView(
        fair,
        demand,
        usage,
        total,
        (b0, b1, b2, b3, b4),
        b0 and b1 and b2 and b3 and b4,
        fair[0] <= EPSILON
        and fair[1] <= EPSILON
        and fair[2] <= EPSILON
        and fair[3] <= EPSILON
        and fair[4] <= EPSILON,
        (a0, a1, a2, a3, a4),
        measured,
        _INDEXES[ratio & mask],
    )
