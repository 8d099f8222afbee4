"""Satisfaction ratio and status edge cases (reference §6.2, §7.1), hand-computed."""

from __future__ import annotations

import pytest

from ytsched.scheduling.satisfaction import INFINITE_SATISFACTION_RATIO, ShareView
from ytsched.scheduling.starvation import (
    SchedulableStatus,
    operation_tolerance,
    schedulable_status,
)

TOTAL = (10.0, 10.0, 4.0, 100.0, 0.0)
"""10 slots, 10 cpu, 4 gpu, 100 bytes of memory, no network."""


def view(fair: tuple[float, ...], demand: tuple[float, ...]) -> ShareView:
    f = (fair[0], fair[1], fair[2], fair[3], fair[4])
    d = (demand[0], demand[1], demand[2], demand[3], demand[4])
    return ShareView.create(f, d, (0.0, 0.0, 0.0, 0.0, 0.0), TOTAL)


FAIR = (0.5, 0.5, 0.0, 0.05, 0.0)
DEMAND = (1.0, 1.0, 0.0, 0.1, 0.0)


def test_zero_fair_share_is_infinitely_satisfied() -> None:
    v = view((0.0, 1e-10, 0.0, 0.0, 0.0), DEMAND)
    assert v.local_satisfaction((0.0, 0.0, 0.0, 0.0, 0.0)) == INFINITE_SATISFACTION_RATIO


def test_over_fair_share_uses_the_largest_ratio() -> None:
    # shares 0.6 / 0.6 / 0 / 0.06: every ratio is 1.2; 0/0 on gpu and network counts 0.
    assert view(FAIR, DEMAND).local_satisfaction((6.0, 6.0, 0.0, 6.0, 0.0)) == pytest.approx(1.2)
    # only cpu above: 0.7 / 0.5 = 1.4 beats slots 0.2 / 0.5.
    assert view(FAIR, DEMAND).local_satisfaction((2.0, 7.0, 0.0, 1.0, 0.0)) == pytest.approx(1.4)


def test_over_fair_share_on_a_resource_without_fair_share_is_infinite() -> None:
    # 1 gpu of 4 used, fair share of gpu 0: x/0 is infinite (capped at 1e9).
    assert view(FAIR, DEMAND).local_satisfaction((1.0, 1.0, 1.0, 1.0, 0.0)) == (
        INFINITE_SATISFACTION_RATIO
    )


def test_below_fair_share_uses_the_largest_ratio_over_non_blocked_resources() -> None:
    # shares 0.2 / 0.3 / 0 / 0.01 against 0.5 / 0.5 / - / 0.05: ratios 0.4, 0.6, 0.2.
    assert view(FAIR, DEMAND).local_satisfaction((2.0, 3.0, 0.0, 1.0, 0.0)) == pytest.approx(0.6)


def test_blocked_resources_do_not_count_below_fair_share() -> None:
    # memory is blocked (fair 0.05 >= demand 0.05): its ratio 0.8 is ignored.
    v = view(FAIR, (1.0, 1.0, 0.0, 0.05, 0.0))
    assert v.blocked == (False, False, True, True, True)
    assert v.local_satisfaction((2.0, 3.0, 0.0, 4.0, 0.0)) == pytest.approx(0.6)


def test_all_blocked_uses_the_smallest_ratio_with_x_over_zero_as_one() -> None:
    v = view(FAIR, FAIR)
    assert v.all_blocked
    # ratios 0.8, 0.4, gpu 0/0 -> 1, memory 0.04/0.05 = 0.8, network 0/0 -> 1: min 0.4.
    assert v.local_satisfaction((4.0, 2.0, 0.0, 4.0, 0.0)) == pytest.approx(0.4)


def test_strictly_dominates_non_blocked() -> None:
    v = view(FAIR, DEMAND)  # non-blocked: slots, cpu, memory
    assert v.strictly_dominates_non_blocked((0.5, 0.5, 0.0, 0.05, 0.0), (0.4, 0.4, 9.0, 0.04, 9.0))
    assert not v.strictly_dominates_non_blocked(
        (0.5, 0.5, 0.0, 0.05, 0.0), (0.4, 0.5, 0.0, 0.0, 0.0)
    )
    every = view(FAIR, FAIR)  # all blocked: strictly greater in *some* resource is enough
    assert every.strictly_dominates_non_blocked(
        (0.5, 0.0, 0.0, 0.0, 0.0), (0.4, 1.0, 1.0, 1.0, 1.0)
    )
    assert not every.strictly_dominates_non_blocked((0.1,) * 5, (0.1,) * 5)


def test_status_is_below_fair_share_under_fair_share_times_tolerance() -> None:
    v = view(FAIR, DEMAND)
    # bound = min(0.5 * 0.8, 1.0) = 0.4 on slots and cpu, 0.04 on memory.
    assert schedulable_status(v, 0.8, (0.39, 0.39, 0.0, 0.039, 0.0)) is (
        SchedulableStatus.BELOW_FAIR_SHARE
    )
    assert schedulable_status(v, 0.8, (0.4, 0.39, 0.0, 0.039, 0.0)) is SchedulableStatus.NORMAL


def test_status_bound_is_capped_by_demand() -> None:
    # fair 0.5 but demand 0.3: the bound is min(0.5, 0.3) = 0.3.
    v = view(FAIR, (0.3, 0.3, 0.0, 0.03, 0.0))
    assert schedulable_status(v, 1.0, (0.29, 0.29, 0.0, 0.029, 0.0)) is (
        SchedulableStatus.BELOW_FAIR_SHARE
    )


def test_operation_whose_fair_share_covers_demand_uses_tolerance_one() -> None:
    covered = view(FAIR, (0.5 + 5e-5, 0.5, 0.0, 0.05, 0.0))
    assert operation_tolerance(covered, 0.8) == 1.0
    assert operation_tolerance(view(FAIR, DEMAND), 0.8) == 0.8


def test_rounding_errors_below_one_billionth_count_as_equality() -> None:
    # the engine may publish 0.6000000000000001 for a limit of 6 of 10 cpu: 6 cpu of usage
    # has reached that fair share.
    v = view((0.6000000000000001, 0.6000000000000001, 0.0, 0.06, 0.0), DEMAND)
    assert not v.strictly_dominates_non_blocked(v.fair_share, (0.6, 0.6, 0.0, 0.06, 0.0))
    assert v.strictly_dominates_non_blocked(v.fair_share, (0.59, 0.59, 0.0, 0.05, 0.0))
