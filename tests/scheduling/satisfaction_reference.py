"""The Python ``ShareView.local_satisfaction`` and ``fits`` the native ones replaced (their
bodies as they were in ``satisfaction.py``), kept as the references the tests compare the
native functions with."""

from __future__ import annotations

from ytsched.resources import Vector
from ytsched.scheduling.satisfaction import INFINITE_SATISFACTION_RATIO, RESOURCE_EPSILON, ShareView


def local_satisfaction(view: ShareView, usage: Vector) -> float:
    """``ComputeLocalSatisfactionRatio`` for a live absolute usage (see ``ShareView``)."""
    if view.fair_share_is_zero:
        return INFINITE_SATISFACTION_RATIO
    # Shares are usage / total; usage / (fair x total) is the usage-to-fair ratio.
    amounts = view.fair_amounts
    measured = view.measured
    for index in measured:
        if usage[index] > amounts[index]:
            break
    else:
        # Within the fair share everywhere (the common case).
        if view.all_blocked:
            fair = view.fair_share
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
        # The measured resources that are not blocked and have a non-zero fair amount
        # (``ratio_measured``, filtered once per update instead of on every call).
        ratio = 0.0
        for index in view.ratio_measured:
            r = usage[index] / amounts[index]
            if r > ratio:
                ratio = r
        return ratio
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
