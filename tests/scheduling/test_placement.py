"""Regular scheduling on heartbeats: nodes, fit, limits, order (reference §6)."""

from __future__ import annotations

import pytest

from tests.scheduling.helpers import GIB, Cluster, limits, vanilla
from ytsched.errors import YtschedError
from ytsched.scheduling import InterruptionReason, JobOutcome, NodeHeartbeat, Scheduler


def counts(cluster: Cluster, *operations: str) -> list[int]:
    return [len(cluster.running(op)) for op in operations]


def test_unknown_node_is_registered_with_resources_and_tags() -> None:
    cluster = Cluster(nodes=0)
    cluster.add_node("n7", limits(cpu=8), tags=frozenset({"ssd"}))
    node = cluster.trees.nodes["n7"]
    assert node.tree == "physical"
    assert node.resource_limits == limits(cpu=8)
    assert node.tags == {"ssd"}
    assert cluster.scheduler.orchid()["nodes"]["n7"]["allocation_count"] == 0


def test_changed_node_limits_reach_the_pool_trees() -> None:
    cluster = Cluster()
    cluster.nodes["n1"].resource_limits = limits(cpu=20)
    cluster.heartbeat()
    assert cluster.trees.tree_resource_limits("physical")[1] == 20.0


def test_nothing_is_scheduled_before_the_first_update() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a"))
    assert cluster.heartbeat().start == ()
    cluster.update(1.0)
    assert len(cluster.heartbeat().start) == 10


def test_operation_started_after_the_update_waits_for_the_next_update() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.update(0.0)
    cluster.operation("op1", vanilla("a"))
    assert cluster.heartbeat().start == ()
    reasons = cluster.scheduler.explain_operation("op1")["scheduling"]["physical"]["reasons"]
    assert reasons[0]["code"] == "not_in_last_update"
    cluster.update(1.0)
    assert len(cluster.heartbeat().start) == 10


def test_equal_pools_share_the_node_evenly() -> None:
    cluster = Cluster()
    for pool in ("a", "b"):
        cluster.pool(pool)
    cluster.operation("op1", vanilla("a", jobs=20))
    cluster.operation("op2", vanilla("b", jobs=20))
    cluster.update(0.0)
    response = cluster.heartbeat()
    assert counts(cluster, "op1", "op2") == [5, 5]
    # the descent alternates: the lower satisfaction wins, ties go to the earlier child
    assert [s.operation_id for s in response.start[:4]] == ["op1", "op2", "op1", "op2"]
    start = response.start[0]
    assert start.task == "main" and start.resources == (1.0, 1.0, 0.0, float(GIB), 0.0)


def test_lowest_satisfaction_first_with_unequal_weights() -> None:
    # fair shares 7.5 and 2.5 cpu.  Greedy by usage / fair share: 7 and 3.
    cluster = Cluster()
    cluster.pool("a", weight=3.0)
    cluster.pool("b", weight=1.0)
    cluster.operation("op1", vanilla("a", jobs=20))
    cluster.operation("op2", vanilla("b", jobs=20))
    cluster.update(0.0)
    cluster.heartbeat()
    assert counts(cluster, "op1", "op2") == [7, 3]


def test_min_spare_resources_stop_the_stage() -> None:
    # jobs of 0.5 cpu on 10 cpu: the stage goes on while 1 cpu (the default spare) is free,
    # so it starts the 19th job at 1.0 free and stops at 0.5.
    cluster = Cluster(node_limits=limits(cpu=10, slots=40))
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=40, cpu=0.5))
    cluster.update(0.0)
    assert len(cluster.heartbeat().start) == 19


def test_min_spare_resources_are_configurable() -> None:
    cluster = Cluster(
        node_limits=limits(cpu=10, slots=40),
        strategy={"min_spare_allocation_resources_on_node": {"cpu": 0.5, "user_slots": 1}},
    )
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=40, cpu=0.5))
    cluster.update(0.0)
    assert len(cluster.heartbeat().start) == 20


def test_max_started_allocations_per_heartbeat() -> None:
    cluster = Cluster(strategy={"max_started_allocations_per_heartbeat": 3})
    cluster.pool("a")
    cluster.operation("op1", vanilla("a"))
    cluster.update(0.0)
    assert len(cluster.heartbeat().start) == 3
    assert len(cluster.heartbeat().start) == 3


def test_operation_resource_limits_are_respected() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", resource_limits={"cpu": 3}))
    cluster.update(0.0)
    cluster.heartbeat()
    assert counts(cluster, "op1") == [3]
    reasons = cluster.op_orchid("op1")["deactivation_reasons"]
    assert reasons == {"resource_limits_exceeded": 1}


def test_every_ancestor_pool_limit_is_respected() -> None:
    cluster = Cluster(nodes=2)
    cluster.pool("top", resource_limits={"cpu": 5})
    cluster.pool("a", "top")
    cluster.pool("b", "top", resource_limits={"user_slots": 2})
    cluster.operation("op1", vanilla("a"))
    cluster.operation("op2", vanilla("b"))
    cluster.update(0.0)
    cluster.heartbeat_all()
    assert counts(cluster, "op1", "op2") == [3, 2]


def test_job_larger_than_the_node_is_never_started() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.pool("b")
    cluster.operation("big", vanilla("a", jobs=2, cpu=20))
    cluster.operation("small", vanilla("b", jobs=20))
    cluster.update(0.0)
    cluster.heartbeat()
    assert counts(cluster, "big", "small") == [0, 10]
    reasons = cluster.op_orchid("big")["deactivation_reasons"]
    assert reasons == {"min_needed_resources_unsatisfied": 1}


def test_multi_task_operation_starts_the_first_task_that_fits() -> None:
    cluster = Cluster(node_limits=limits(cpu=5))
    cluster.pool("a")
    spec = {
        "pool": "a",
        "tasks": {
            "large": {"job_count": 1, "cpu_limit": 4, "memory_limit": GIB},
            "small": {"job_count": 5, "cpu_limit": 1, "memory_limit": GIB},
        },
    }
    cluster.operation("op1", spec)
    cluster.update(0.0)
    response = cluster.heartbeat()
    assert [s.task for s in response.start] == ["large", "small"]


def test_scheduling_tag_filters_of_operations_and_pools() -> None:
    cluster = Cluster(nodes=0)
    cluster.add_node("plain", limits(cpu=4))
    cluster.add_node("gpu", limits(cpu=4), tags=frozenset({"gpu"}))
    cluster.pool("a")
    cluster.pool("only_gpu", scheduling_tag_filter="gpu")
    cluster.operation("op_gpu", vanilla("a", scheduling_tag_filter="gpu"))
    cluster.operation("op_pool", vanilla("only_gpu"))
    cluster.operation("op_any", vanilla("a"))
    cluster.update(0.0)
    plain = cluster.heartbeat("plain")
    assert {s.operation_id for s in plain.start} == {"op_any"}
    gpu = cluster.heartbeat("gpu")
    assert {"op_gpu", "op_pool"} <= {s.operation_id for s in gpu.start}
    # the stage-local deactivations were undone: both filtered operations remain schedulable
    cluster.nodes["plain"].resource_limits = limits(cpu=8)
    assert {s.operation_id for s in cluster.heartbeat("plain").start} == {"op_any"}


def test_fifo_pool_serves_operations_in_order() -> None:
    cluster = Cluster()
    cluster.pool("queue", mode="fifo")
    cluster.operation("first", vanilla("queue", jobs=6))
    cluster.now = 1.0
    cluster.operation("second", vanilla("queue", jobs=20))
    cluster.update(2.0)
    cluster.heartbeat()
    assert counts(cluster, "first", "second") == [6, 4]


def test_finished_jobs_free_room_and_the_last_completes_the_operation() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=12))
    cluster.update(0.0)
    cluster.heartbeat()
    for job in cluster.running("op1")[:3]:
        cluster.finish(job)
    cluster.update(1.0)
    assert len(cluster.heartbeat(now=1.0).start) == 2  # only two jobs were still waiting
    for job in cluster.running("op1"):
        cluster.finish(job)
    cluster.heartbeat(now=2.0)
    assert cluster.trees.operation("op1").state.value == "completed"


def test_failed_job_is_retried_after_the_next_update() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.update(1.0)  # every job runs: the operation is unschedulable until next update
    assert cluster.op_orchid("op1")["unschedulable_reason"] == "no_pending_allocations"
    job = cluster.running("op1")[0]
    cluster.finish(job, JobOutcome.FAILED)
    assert cluster.heartbeat(now=1.0).start == ()
    cluster.update(2.0)
    restarted = cluster.heartbeat(now=2.0).start
    assert [s.job_id for s in restarted] == ["op1/main/0/1"]


def test_job_the_node_no_longer_reports_is_lost_and_returns_to_pending() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    lost = cluster.running("op1")[0]
    del cluster.nodes["n1"].running[lost]
    response = cluster.heartbeat(now=1.0)
    assert cluster.trees.operation("op1").jobs[lost].state.value == "aborted"
    assert response.abort == ()  # the node does not have it: nothing to abort there
    # it waits again and, the operation being schedulable since the update, restarts at once
    assert [s.job_id for s in response.start] == ["op1/main/0/1"]


def test_node_matching_no_tree_is_not_scheduled() -> None:
    cluster = Cluster({"node_tag_filter": "prod"})
    cluster.pool("a")
    cluster.operation("op1", vanilla("a"))
    cluster.update(0.0)
    assert cluster.heartbeat().start == ()
    cluster.nodes["n1"].tags = frozenset({"prod"})
    cluster.update(1.0)
    assert len(cluster.heartbeat(now=1.0).start) == 10


def test_node_changing_tree_has_its_jobs_aborted() -> None:
    cluster = Cluster({"node_tag_filter": "!other"})
    cluster.trees.create_tree("other", {"node_tag_filter": "other"})
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=4))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.nodes["n1"].tags = frozenset({"other"})
    response = cluster.heartbeat(now=1.0)
    assert len(response.abort) == 4
    assert {a.reason for a in response.abort} == {InterruptionReason.NODE_CHANGED_TREE}
    assert cluster.scheduler.ledger.nodes["n1"].usage == (0.0,) * 5


def test_jobs_of_an_aborted_operation_are_aborted_on_the_node() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=4))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.trees.abort_operation("op1", now=1.0)
    cluster.update(1.0)
    response = cluster.heartbeat(now=1.0)
    assert len(response.abort) == 4
    assert {a.reason for a in response.abort} == {InterruptionReason.OPERATION_FINISHED}


@pytest.mark.parametrize(
    "heartbeat",
    [
        NodeHeartbeat("", 0.0, limits()),
        NodeHeartbeat("n", float("nan"), limits()),
        NodeHeartbeat("n", 0.0, (1.0, -1.0, 0.0, 0.0, 0.0)),
        NodeHeartbeat("n", 0.0, (1.0, float("inf"), 0.0, 0.0, 0.0)),
    ],
)
def test_invalid_heartbeats_are_typed_errors(heartbeat: NodeHeartbeat) -> None:
    cluster = Cluster(nodes=0)
    with pytest.raises(YtschedError) as error:
        cluster.scheduler.process_heartbeat(heartbeat)
    assert error.value.code == "InvalidNodeHeartbeat"


def test_running_jobs_are_adopted_after_a_restart() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=12))
    cluster.update(0.0)
    cluster.heartbeat()
    # a new scheduler over the same pool trees (the service after a restart)
    revived = Scheduler(cluster.trees)
    assert revived.adopt_running_jobs() == 10
    assert revived.adopt_running_jobs() == 0
    revived.update(1.0)
    cluster.scheduler = revived
    finished = cluster.running("op1")[0]
    cluster.finish(finished)
    response = cluster.heartbeat(now=1.0)
    assert [s.job_id for s in response.start] == ["op1/main/10/0"]
    assert cluster.trees.operation("op1").jobs[finished].state.value == "completed"
    assert revived.orchid()["nodes"]["n1"]["allocation_count"] == 10


def test_fifo_pool_schedulable_element_limit() -> None:
    # past 1 schedulable child, fifo children with no fair share wait (unschedulable)
    cluster = Cluster({"max_schedulable_element_count_in_fifo_pool": 1})
    cluster.pool("queue", mode="fifo")
    cluster.operation("first", vanilla("queue", jobs=20))
    cluster.now = 1.0
    cluster.operation("second", vanilla("queue", jobs=20))
    cluster.update(2.0)
    assert cluster.op_orchid("second")["unschedulable_reason"] == (
        "fifo_schedulable_element_count_limit_reached"
    )
    cluster.heartbeat()
    assert counts(cluster, "first", "second") == [10, 0]
