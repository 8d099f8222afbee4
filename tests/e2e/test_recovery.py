"""End to end: the server killed with -9 and restarted, and a node that dies mid-job."""

from __future__ import annotations

from tests.e2e.cluster import ProcessCluster, wait_until

FINAL = ("completed", "failed", "aborted")


def test_server_kill_9_and_restart_loses_nothing(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    yt.create("scheduler_pool", attributes={"name": "durable", "pool_tree": "default", "weight": 3})
    yt.set("//sys/pools/alpha/@max_operation_count", 7)
    running = [yt.run_vanilla("sleep 2", job_count=2, pool="alpha") for _ in range(2)]
    pending = [yt.run_vanilla("sleep 0.3", job_count=1, pool="limited") for _ in range(2)]
    wait_until(
        lambda: all(
            yt.get_operation(op, attributes=["brief_progress"])["brief_progress"]["jobs"]["running"]
            for op in running
        ),
        30,
        "jobs to run",
    )
    before = {op: yt.get_operation(op, attributes=["state"])["state"] for op in running + pending}
    cluster.kill_server()
    cluster.start_server()
    after = cluster.client()
    assert after.get("//sys/pools/durable/@weight") == 3
    assert after.get("//sys/pools/alpha/@max_operation_count") == 7
    reachable = {
        "pending": ("pending", "running", "completed"),
        "running": ("running", "completed"),
    }
    for op, state in before.items():
        # Revived in its state (or moved on since: jobs kept running while the server was down).
        assert after.get_operation(op, attributes=["state"])["state"] in reachable[state]
    for op in running + pending:
        assert after.track(op, timeout=60) == "completed"
    for op in running:
        jobs = after.list_jobs(op)
        # Jobs that were running when the server died were re-attached, not run again.
        assert [job["state"] for job in jobs] == ["completed", "completed"]
    events = after.get_operation(running[0])["events"]
    assert any(event["attributes"].get("revived") for event in events)


def test_node_killed_mid_job_has_its_jobs_rescheduled(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    op = yt.run_vanilla("sleep 1.5", job_count=4, pool="alpha")
    wait_until(
        lambda: {j["address"] for j in yt.list_jobs(op, job_state="running")}
        == {"node-1", "node-2"},
        30,
        "jobs on both nodes",
    )
    cluster.kill_node(1)
    wait_until(
        lambda: yt.get("//sys/cluster_nodes/node-1/@state") == "offline", 30, "node-1 offline"
    )
    assert yt.track(op, timeout=60) == "completed"
    jobs = yt.list_jobs(op)
    aborted = [job for job in jobs if job["state"] == "aborted"]
    assert aborted and {job["address"] for job in aborted} == {"node-1"}
    # YTsaurus's EAbortReason::NodeOffline, not "other".
    assert {job["abort_reason"] for job in aborted} == {"node_offline"}
    completed = [job for job in jobs if job["state"] == "completed"]
    assert len(completed) == 4
    assert {job["job_index"] for job in completed} == {0, 1, 2, 3}
    assert {job["address"] for job in completed if job["attempt"] > 0} == {"node-2"}
