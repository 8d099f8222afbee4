"""Orchid attributes and explain_operation of the scheduling layer (YTsaurus names)."""

from __future__ import annotations

import pytest

from tests.scheduling.helpers import Cluster, vanilla


def contended() -> Cluster:
    cluster = Cluster()
    cluster.pool("a")
    cluster.pool("b")
    cluster.operation("op1", vanilla("a", jobs=10))
    cluster.update(0.0)
    cluster.heartbeat()
    cluster.operation("op2", vanilla("b", jobs=10))
    cluster.update(1.0)
    cluster.update(32.0)
    return cluster


def test_operation_attributes() -> None:
    cluster = contended()
    op1 = cluster.op_orchid("op1")
    assert op1["scheduling_status"] == "normal"
    assert op1["starvation_status"] == "non_starving"
    assert op1["satisfaction_ratio"] == pytest.approx(2.0)  # 10 cpu against a fair share of 5
    assert op1["local_satisfaction_ratio"] == pytest.approx(2.0)
    assert (op1["preemptible_job_count"], op1["aggressively_preemptible_job_count"]) == (5, 4)
    assert op1["non_preemptible_job_count"] == 1
    op2 = cluster.op_orchid("op2")
    assert op2["starvation_status"] == "starving"
    assert op2["below_fair_share_since"] == 1.0
    assert op2["starving_since"] == 32.0
    assert op2["satisfaction_ratio"] == 0.0
    assert op2["lowest_starving_ancestor"] == "op2"
    assert op2["preemption_priority"] == "normal"
    assert op2["schedulable"] is True and op2["unschedulable_reason"] is None


def test_pool_tree_and_node_attributes() -> None:
    cluster = contended()
    orchid = cluster.scheduler.orchid()
    tree = orchid["pool_trees"]["physical"]
    pool_a = tree["pools"]["a"]
    assert pool_a["preemptible_job_count"] == 5
    assert pool_a["satisfaction_ratio"] == pytest.approx(2.0)  # its best active child's
    assert tree["pools"]["b"]["starvation_status"] == "starving"
    assert tree["scheduling"] == {"last_update_time": 32.0, "starving_operation_count": 1}
    node = orchid["nodes"]["n1"]
    assert node["allocation_count"] == 10
    assert node["resource_usage"]["cpu"] == 10.0
    # the pool-tree orchid is still there
    assert tree["pools"]["a"]["full_path"] == "/a"


def test_explain_tells_why_an_operation_starves_and_who_preempted_whom() -> None:
    cluster = contended()
    cluster.heartbeat(now=32.0)
    explain = cluster.scheduler.explain_operation("op2")
    info = explain["scheduling"]["physical"]
    codes = [reason["code"] for reason in info["reasons"]]
    assert "below_fair_share" in codes and "starving" in codes
    starving = next(r for r in info["reasons"] if r["code"] == "starving")
    assert starving["waiting_seconds"] == 31.0
    assert info["starvation"]["fair_share_starvation_timeout"] == 30.0
    assert info["fair_share"]["cpu"] == pytest.approx(0.5)
    assert info["usage_share"]["cpu"] == pytest.approx(0.1)
    assert info["allocations_preempted_for_it"][0]["victim_operation"] == "op1"
    victim = cluster.scheduler.explain_operation("op1")["scheduling"]["physical"]
    (preempted,) = victim["preempted_allocations"]
    assert preempted["reason"] == "preemption"
    assert preempted["preempted_for_operation"] == "op2"
    assert preempted["starving_element"] == "op2"
    assert preempted["preemption_status"] == "preemptible"
    assert explain["state"] == "running"  # the pool-tree explanation is kept


def test_explain_of_a_pending_operation_keeps_the_pool_tree_reason() -> None:
    cluster = Cluster()
    cluster.pool("a", max_running_operation_count=1)
    cluster.operation("op1", vanilla("a"))
    cluster.operation("op2", vanilla("a"))
    cluster.update(0.0)
    explain = cluster.scheduler.explain_operation("op2")
    assert explain["state"] == "pending"
    assert "running operations (1) of pool 'a'" in explain["trees"]["physical"]["reason"]
    info = explain["scheduling"]["physical"]
    assert info["unschedulable_reason"] == "not_running"


def test_schedulable_operation_count_counts_the_subtrees_schedulable_operations() -> None:
    """``schedulable_operation_count`` (``BuildCompositeElementInfo``): operations without
    pending allocations, or waiting at a running-operation limit, do not count."""
    cluster = Cluster()
    cluster.pool("parent")
    cluster.pool("a", "parent")
    cluster.pool("b", "parent", max_running_operation_count=1)
    cluster.pool("idle")
    cluster.operation("op1", vanilla("a", jobs=100))
    cluster.operation("op2", vanilla("b", jobs=100))
    cluster.operation("op3", vanilla("b", jobs=100))  # pending at b's running limit
    cluster.operation("op4", vanilla("idle", jobs=1))
    cluster.update(0.0)
    cluster.heartbeat()  # op4's only job starts (it is the most starved): nothing left
    cluster.update(1.0)
    counts = {
        name: cluster.pool_orchid(name)["schedulable_operation_count"]
        for name in ("<Root>", "parent", "a", "b", "idle")
    }
    assert counts == {"<Root>": 2, "parent": 2, "a": 1, "b": 1, "idle": 0}
    assert cluster.op_orchid("op4")["unschedulable_reason"] == "no_pending_allocations"
