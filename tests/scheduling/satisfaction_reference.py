"""Plain Python forms of ``ShareView.local_satisfaction`` and ``fits``, the references the
tests compare the native functions (and any fast form) with."""

from __future__ import annotations

from ytsched.resources import Vector
from ytsched.scheduling.satisfaction import INFINITE_SATISFACTION_RATIO, RESOURCE_EPSILON, ShareView


def local_satisfaction(view: ShareView, usage: Vector) -> float:
    """``ComputeLocalSatisfactionRatio`` for a live absolute usage, as the plain loops of
    ``ShareView.local_satisfaction`` before its fast forms (round seven's Python, now the
    native function)."""
    if view.fair_share_is_zero:
        return INFINITE_SATISFACTION_RATIO
    fair = view.fair_share
    amounts = view.fair_amounts
    measured = view.measured
    over = False
    for index in measured:
        if usage[index] > amounts[index]:
            over = True
            break
    if over:
        ratio = 0.0
        for index in measured:
            f = amounts[index]
            u = usage[index]
            if f != 0.0:
                r = u / f
            elif u != 0.0:
                r = INFINITE_SATISFACTION_RATIO
            else:
                r = 0.0
            if r > ratio:
                ratio = r
        return min(ratio, INFINITE_SATISFACTION_RATIO)
    if view.all_blocked:
        ratio = INFINITE_SATISFACTION_RATIO
        for index in range(5):
            if fair[index] == 0.0:
                r = 1.0
            elif amounts[index] == 0.0:
                r = 0.0
            else:
                r = usage[index] / amounts[index]
            if r < ratio:
                ratio = r
        return ratio
    ratio = 0.0
    blocked = view.blocked
    for index in measured:
        f = amounts[index]
        if not blocked[index] and f != 0.0:
            r = usage[index] / f
            if r > ratio:
                ratio = r
    return ratio


def fits(need: Vector, available: Vector) -> bool:
    """``available >= need`` in every resource, with float slack."""
    eps = RESOURCE_EPSILON
    return (
        need[0] <= available[0] + eps
        and need[1] <= available[1] + eps
        and need[2] <= available[2] + eps
        and need[3] <= available[3] + eps
        and need[4] <= available[4] + eps
    )
