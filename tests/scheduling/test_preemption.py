"""Starvation-driven preemption, interruption and limits (reference §7.2-§7.5)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.scheduling.helpers import Cluster, limits, vanilla
from ytsched.scheduling import InterruptionReason
from ytsched.scheduling.preemption import blocking_reason
from ytsched.scheduling.starvation import PreemptionPriority, StarvationStatus


def starving(tree_config: dict[str, Any] | None = None, **op2: Any) -> Cluster:
    """op1 (pool a) fills the 10-cpu node at t=0; op2 (pool b) starves from t=32."""
    cluster = Cluster(tree_config)
    cluster.pool("a")
    cluster.pool("b")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.operation("op2", vanilla("b", jobs=10, **op2))
    cluster.update(1.0)
    cluster.heartbeat()
    cluster.update(32.0)
    return cluster


def test_starving_operation_preempts_the_newest_preemptible_allocation() -> None:
    cluster = starving()
    assert cluster.op_orchid("op1")["preemptible_job_count"] == 5
    response = cluster.heartbeat()
    assert [s.operation_id for s in response.start] == ["op2"]
    (interrupt,) = response.interrupt
    assert interrupt.job_id == "op1/main/9/0"
    assert interrupt.reason is InterruptionReason.PREEMPTION
    assert interrupt.timeout == 10.0
    assert interrupt.preempted_for_operation == "op2"
    assert interrupt.preempted_for_job == response.start[0].job_id
    assert interrupt.starving_element == "op2"
    assert "op2" in interrupt.explanation and "deficit" in interrupt.explanation
    # the preempted allocation no longer counts: op1 has 9 allocations in the scheduler's
    # accounting although the node still runs 10 jobs
    assert cluster.usage("op1") == 9 and len(cluster.running("op1")) == 10


def test_one_preemptive_start_per_heartbeat_and_backoff_per_node() -> None:
    cluster = starving()
    assert len(cluster.heartbeat(now=32.0).start) == 1
    assert cluster.heartbeat(now=36.0).start == ()  # within preemptive_scheduling_backoff (5 s)
    assert len(cluster.heartbeat(now=37.5).start) == 1


def test_preemption_stops_as_soon_as_the_new_allocation_fits() -> None:
    cluster = starving(tasks={"main": {"job_count": 3, "cpu_limit": 3, "memory_limit": 2**30}})
    response = cluster.heartbeat()
    assert len(response.start) == 1
    # 3 cpu are needed: the three newest preemptible allocations, no more
    assert [i.job_id for i in response.interrupt] == [
        "op1/main/9/0",
        "op1/main/8/0",
        "op1/main/7/0",
    ]


def test_allocations_of_operations_within_their_fair_share_are_never_victims() -> None:
    # op1 runs 6 and op3 runs 4 of 10 cpu; fair shares are 10/3 each.  Only op1's allocations
    # whose preceding usage reaches 10/3 (its 5th and 6th) are preemptible.
    cluster = Cluster()
    for pool in ("a", "b", "c"):
        cluster.pool(pool)
    cluster.operation("op1", vanilla("a", jobs=6))
    cluster.operation("op3", vanilla("c", jobs=4))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.operation("op2", vanilla("b", jobs=10))
    cluster.update(1.0)
    cluster.update(32.0)
    preempted: list[str] = []
    for step in range(10):
        cluster.update(32.0 + 6 * step)
        preempted += [i.job_id for i in cluster.heartbeat().interrupt]
    assert sorted(preempted) == ["op1/main/4/0", "op1/main/5/0"]
    assert cluster.op_orchid("op2")["starvation_status"] == "starving"  # still, but nothing left


def test_aggressive_starvation_takes_aggressively_preemptible_allocations() -> None:
    # With preemption_satisfaction_threshold 2 op1 (fair share 5, usage 10) has no
    # preemptible allocation, only aggressively preemptible ones.
    config = {
        "preemption_satisfaction_threshold": 2.0,
        "enable_aggressive_starvation": True,
        "fair_share_aggressive_starvation_timeout": 60_000,
    }
    cluster = starving(config)
    assert cluster.op_orchid("op1")["aggressively_preemptible_job_count"] == 9
    assert cluster.heartbeat(now=32.0).interrupt == ()  # normal starvation is not enough
    cluster.update(62.0)
    assert cluster.op_orchid("op2")["starvation_status"] == "aggressively_starving"
    response = cluster.heartbeat(now=62.0)
    (interrupt,) = response.interrupt
    assert interrupt.reason is InterruptionReason.AGGRESSIVE_PREEMPTION
    assert interrupt.job_id == "op1/main/9/0"


def test_aggressive_preemption_can_be_forbidden_for_a_pool() -> None:
    config = {
        "preemption_satisfaction_threshold": 2.0,
        "enable_aggressive_starvation": True,
        "fair_share_aggressive_starvation_timeout": 60_000,
    }
    cluster = starving(config)
    cluster.tree.update_pool("a", {"allow_aggressive_preemption": False})
    cluster.update(62.0)
    assert cluster.heartbeat(now=62.0).interrupt == ()


def test_normal_preemption_can_be_forbidden_for_a_pool() -> None:
    cluster = starving()
    cluster.tree.update_pool("a", {"allow_normal_preemption": False})
    cluster.update(32.0)
    response = cluster.heartbeat()
    assert response.start == () and response.interrupt == ()


def test_blocking_rules() -> None:
    cluster = starving({"allow_preemption_from_starving_operations": False})
    state = cluster.scheduler.ledger.tree_states["physical"]
    ctx: Any = SimpleNamespace(tree=state)
    op1 = state.operations["op1"]
    assert blocking_reason(ctx, op1, PreemptionPriority.NORMAL) is None
    op1.element.starvation.status = StarvationStatus.STARVING
    assert blocking_reason(ctx, op1, PreemptionPriority.NORMAL) == "victim is starving"
    op1.graceful = True
    assert blocking_reason(ctx, op1, PreemptionPriority.NORMAL) == "graceful_preemption_mode"


def test_interrupted_job_is_aborted_after_the_preemption_timeout() -> None:
    cluster = starving()
    victim = cluster.heartbeat().interrupt[0].job_id
    assert cluster.heartbeat(now=41.9).abort == ()
    response = cluster.heartbeat(now=42.0)
    (abort,) = response.abort
    assert abort.job_id == victim
    assert abort.reason is InterruptionReason.INTERRUPTION_TIMEOUT
    job = cluster.trees.operation("op1").jobs[victim]
    assert job.state.value == "aborted"
    assert cluster.trees.operation("op1").pending_job_count == 1


def test_job_without_interruption_signal_is_aborted_at_once_with_reason_preemption() -> None:
    """A vanilla job without ``interruption_signal`` cannot be interrupted: YTsaurus aborts it
    at once (abort reason ``preemption``), not after ``allocation_preemption_timeout`` as
    ``interruption_timeout``."""
    cluster = Cluster()
    cluster.pool("a")
    cluster.pool("b")
    victim_spec = vanilla("a", jobs=10)
    del victim_spec["tasks"]["main"]["interruption_signal"]
    cluster.operation("op1", victim_spec)
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.operation("op2", vanilla("b", jobs=10))
    cluster.update(1.0)
    cluster.heartbeat()
    cluster.update(32.0)
    response = cluster.heartbeat()
    assert response.interrupt == ()
    (abort,) = response.abort
    assert abort.reason is InterruptionReason.PREEMPTION
    assert abort.preempted_for_operation == "op2"
    assert [s.operation_id for s in response.start] == ["op2"]
    job = cluster.trees.operation("op1").jobs[abort.job_id]
    assert job.state.value == "aborted" and job.reason is not None
    assert job.reason.startswith("preemption")
    assert cluster.trees.operation("op1").pending_job_count == 1
    # nothing is left to time out later (op2 still starves, so it may preempt again)
    later = cluster.heartbeat(now=42.0)
    assert all(a.reason is InterruptionReason.PREEMPTION for a in later.abort)
    assert later.interrupt == ()


def test_interrupted_job_that_finishes_returns_its_work_to_pending() -> None:
    cluster = starving()
    cluster.nodes["n1"].interrupt_delay = 2.0
    victim = cluster.heartbeat().interrupt[0].job_id
    response = cluster.heartbeat(now=34.0)
    assert response.abort == ()
    assert cluster.trees.operation("op1").jobs[victim].state.value == "aborted"
    assert cluster.trees.operation("op1").jobs[victim].reason == "interrupted after preemption"


def test_zero_preemption_timeout_aborts_at_once() -> None:
    cluster = starving({"allocation_preemption_timeout": 0})
    response = cluster.heartbeat()
    assert response.interrupt == ()
    (abort,) = response.abort
    assert abort.reason is InterruptionReason.PREEMPTION


def test_operation_preemption_timeout_overrides_the_tree() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.pool("b")
    cluster.operation("op1", vanilla("a", jobs=10, allocation_preemption_timeout=3000))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.operation("op2", vanilla("b", jobs=10))
    cluster.update(1.0)
    cluster.update(32.0)
    assert cluster.heartbeat().interrupt[0].timeout == 3.0


def test_preempted_usage_is_not_in_the_next_update() -> None:
    cluster = starving()
    cluster.heartbeat()
    cluster.update(33.0)
    usage = cluster.op_orchid("op1")["resource_usage"]["cpu"]
    assert usage == 9.0


def test_reduced_operation_limits_preempt_the_excess() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.trees.update_operation_parameters(
        "op1", {"scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"cpu": 6}}}}
    )
    cluster.update(10.0)
    response = cluster.heartbeat(now=10.0)
    assert {i.reason for i in response.interrupt} == {InterruptionReason.RESOURCE_LIMITS_VIOLATED}
    assert [i.job_id for i in response.interrupt] == [f"op1/main/{i}/0" for i in (9, 8, 7, 6)]
    assert "resource limits of operation op1" in response.interrupt[0].explanation


def test_reduced_pool_limits_preempt_the_excess() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.tree.update_pool("a", {"resource_limits": {"user_slots": 7}})
    cluster.update(10.0)
    response = cluster.heartbeat(now=10.0)
    assert len(response.interrupt) == 3
    assert "limits on pool 'a'" in response.interrupt[0].explanation


def test_node_over_its_limits_aborts_allocations_after_the_allowed_duration() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.nodes["n1"].resource_limits = limits(cpu=6)
    assert cluster.heartbeat(now=1.0).abort == ()
    assert cluster.heartbeat(now=16.0).abort == ()  # allowed_node_resources_overcommit_duration
    response = cluster.heartbeat(now=16.5)
    assert {a.reason for a in response.abort} == {InterruptionReason.RESOURCE_OVERCOMMIT}
    # the preemption order, not reversed: the oldest, least preemptible allocations stay
    assert sorted(a.job_id for a in response.abort) == [f"op1/main/{i}/0" for i in (6, 7, 8, 9)]
    assert cluster.scheduler.ledger.nodes["n1"].usage[1] == 6.0


def test_non_preemptible_usage_threshold_protects_small_operations() -> None:
    # the legacy count fills user_slots of the threshold: op1's first 7 allocations are
    # protected, so only the 8th to 10th (above its fair share of 5) remain preemptible
    cluster = starving({"max_unpreemptible_running_allocation_count": 7})
    assert cluster.op_orchid("op1")["preemptible_job_count"] == 3
    assert cluster.op_orchid("op1")["non_preemptible_job_count"] == 7


def test_pool_threshold_replaces_the_inherited_one_and_the_spec_can_only_lower_it() -> None:
    cluster = starving({"non_preemptible_resource_usage_threshold": {"user_slots": 7}})
    cluster.tree.update_pool("a", {"non_preemptible_resource_usage_threshold": {"cpu": 3}})
    cluster.update(33.0)
    assert cluster.op_orchid("op1")["non_preemptible_job_count"] == 3


def test_gang_operations_are_not_aggressively_preemptible_when_the_tree_says_so() -> None:
    cluster = Cluster({"allow_aggressive_preemption_for_gang_operations": False})
    cluster.pool("a")
    cluster.operation("gang", vanilla("a", is_gang=True))
    cluster.operation("plain", vanilla("a"))
    cluster.update(0.0)
    assert cluster.op_orchid("gang")["effective_aggressive_preemption_allowed"] is False
    assert cluster.op_orchid("plain")["effective_aggressive_preemption_allowed"] is True
