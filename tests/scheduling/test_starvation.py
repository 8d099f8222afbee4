"""Starvation: the status machine, effective parameters and inheritance (reference §7.1)."""

from __future__ import annotations

import pytest

from tests.scheduling.helpers import Cluster, vanilla
from ytsched.scheduling.starvation import (
    SchedulableStatus,
    StarvationState,
    StarvationStatus,
    check_for_starvation,
    scaled_timeouts,
)

BELOW = SchedulableStatus.BELOW_FAIR_SHARE
NORMAL = SchedulableStatus.NORMAL


def test_first_update_below_fair_share_only_records_the_time() -> None:
    state = StarvationState()
    check_for_starvation(state, BELOW, 10.0, 30.0, 120.0, False)
    assert state.below_fair_share_since == 10.0
    assert state.status is StarvationStatus.NON_STARVING


def test_starving_strictly_after_the_timeout() -> None:
    state = StarvationState()
    check_for_starvation(state, BELOW, 10.0, 30.0, 120.0, False)
    check_for_starvation(state, BELOW, 40.0, 30.0, 120.0, False)
    assert state.status.value == "non_starving"  # 40 is not > 10 + 30
    check_for_starvation(state, BELOW, 40.5, 30.0, 120.0, False)
    assert state.status.value == "starving"
    assert state.starving_since == 40.5
    check_for_starvation(state, BELOW, 200.0, 30.0, 120.0, False)
    assert state.status.value == "starving"  # aggressive starvation is disabled
    assert state.starving_since == 40.5


def test_aggressive_starvation_after_the_aggressive_timeout_when_enabled() -> None:
    state = StarvationState()
    for now in (0.0, 31.0, 121.0):
        check_for_starvation(state, BELOW, now, 30.0, 120.0, True)
    assert state.status is StarvationStatus.AGGRESSIVELY_STARVING
    assert state.starving_since == 121.0


def test_normal_status_ends_starvation_and_clears_the_timestamps() -> None:
    state = StarvationState()
    for now in (0.0, 31.0):
        check_for_starvation(state, BELOW, now, 30.0, 120.0, False)
    check_for_starvation(state, NORMAL, 32.0, 30.0, 120.0, False)
    assert state == StarvationState()


@pytest.mark.parametrize(
    ("pending", "coefficient", "expected"),
    [
        (0, 1.0, (0.0, 0.0)),
        (1, 1.0, (30.0, 120.0)),
        (2, 4.0, (15.0, 60.0)),
        (8, 4.0, (30.0, 120.0)),
    ],
)
def test_few_pending_allocations_shorten_the_timeouts(
    pending: int, coefficient: float, expected: tuple[float, float]
) -> None:
    assert scaled_timeouts(30.0, 120.0, pending, coefficient) == expected


def starved_cluster(tree_config: dict[str, object] | None = None) -> Cluster:
    """op1 (pool a) fills the 10-cpu node; op2 (pool b) is owed half and gets nothing."""
    cluster = Cluster({"preemptive_scheduling_backoff": 10**9, **(tree_config or {})})
    cluster.pool("a")
    cluster.pool("b")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    return cluster


def test_operation_starves_after_its_timeout() -> None:
    cluster = starved_cluster()
    cluster.operation("op2", vanilla("b", jobs=10))
    cluster.update(1.0)
    attributes = cluster.op_orchid("op2")
    assert attributes["scheduling_status"] == "below_fair_share"
    assert attributes["below_fair_share_since"] == 1.0
    assert attributes["starvation_status"] == "non_starving"
    cluster.update(31.0)
    assert cluster.op_orchid("op2")["starvation_status"] == "non_starving"
    cluster.update(32.0)
    attributes = cluster.op_orchid("op2")
    assert attributes["starvation_status"] == "starving"
    assert attributes["starving_since"] == 32.0
    assert attributes["lowest_starving_ancestor"] == "op2"
    # the pool of op2 starves too (pool starvation is on by default), with the pool timeout.
    assert cluster.pool_orchid("b")["starvation_status"] == "starving"
    assert cluster.pool_orchid("<Root>")["starvation_status"] == "non_starving"


def test_pool_starvation_can_be_disabled() -> None:
    cluster = starved_cluster({"enable_pool_starvation": False})
    cluster.operation("op2", vanilla("b", jobs=10))
    for now in (1.0, 40.0):
        cluster.update(now)
    assert cluster.pool_orchid("b")["starvation_status"] == "non_starving"
    assert cluster.op_orchid("op2")["starvation_status"] == "starving"


def test_operation_tolerance_is_the_min_of_pool_and_spec() -> None:
    cluster = starved_cluster()
    cluster.tree.update_pool("b", {"fair_share_starvation_tolerance": 0.9})
    # op2 owes 5 cpu and gets 0; its spec tolerance 0 makes the bound 0: never below.
    cluster.operation("op2", vanilla("b", jobs=10, fair_share_starvation_tolerance=0.0))
    cluster.update(1.0)
    assert cluster.op_orchid("op2")["scheduling_status"] == "normal"
    # the pool uses its own 0.9 and is below.
    assert cluster.pool_orchid("b")["scheduling_status"] == "below_fair_share"


def test_operation_timeout_is_the_max_of_pool_and_spec() -> None:
    cluster = starved_cluster()
    cluster.tree.update_pool("b", {"fair_share_starvation_timeout": 5000})
    cluster.operation("op2", vanilla("b", jobs=10, fair_share_starvation_timeout=60_000))
    cluster.update(1.0)
    cluster.update(7.0)
    assert cluster.pool_orchid("b")["starvation_status"] == "starving"  # 7 > 1 + 5
    assert cluster.op_orchid("op2")["starvation_status"] == "non_starving"
    cluster.update(62.0)
    assert cluster.op_orchid("op2")["starvation_status"] == "starving"  # 62 > 1 + 60


def test_operation_with_one_pending_job_and_coefficient_starves_sooner() -> None:
    cluster = starved_cluster({"allocation_count_preemption_timeout_coefficient": 4.0})
    cluster.operation("op2", vanilla("b", jobs=2))
    cluster.update(1.0)
    cluster.update(17.0)  # 2 pending / 4 = 0.5: timeout 15 s
    assert cluster.op_orchid("op2")["starvation_status"] == "starving"


def test_starving_pool_is_inherited_by_its_operations() -> None:
    cluster = starved_cluster()
    cluster.tree.update_pool("b", {"fair_share_starvation_timeout": 5000})
    cluster.operation("op2", vanilla("b", jobs=10, fair_share_starvation_timeout=100_000))
    cluster.update(1.0)
    cluster.update(7.0)
    attributes = cluster.op_orchid("op2")
    assert attributes["starvation_status"] == "non_starving"
    assert attributes["lowest_starving_ancestor"] == "b"
    assert attributes["preemption_priority"] == "normal"


def test_priority_scope_operation_only_ignores_starving_ancestors() -> None:
    cluster = starved_cluster({"scheduling_preemption_priority_scope": "operation_only"})
    cluster.tree.update_pool("b", {"fair_share_starvation_timeout": 5000})
    cluster.operation("op2", vanilla("b", jobs=10, fair_share_starvation_timeout=100_000))
    cluster.update(1.0)
    cluster.update(7.0)
    assert cluster.op_orchid("op2")["preemption_priority"] == "none"


def test_operation_without_pending_jobs_is_unschedulable_and_never_starves() -> None:
    cluster = starved_cluster()
    cluster.operation("op2", vanilla("b", jobs=1))
    cluster.update(1.0)
    cluster.heartbeat()  # nothing fits
    job = cluster.running("op1")[0]
    cluster.finish(job)
    cluster.heartbeat(now=2.0)  # op2 takes the freed cpu: its only job runs
    cluster.update(3.0)
    attributes = cluster.op_orchid("op2")
    assert attributes["unschedulable_reason"] == "no_pending_allocations"
    assert attributes["scheduling_status"] == "normal"
