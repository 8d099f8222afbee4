"""Failover on PostgreSQL: kill -9 the leader at three moments under load; nothing acknowledged
is lost or run twice, the standby takes over, integral volumes continue."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.e2e.failover import KILLS, HaCluster, run_scenario


def test_leader_killed_three_times_loses_and_repeats_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    result = run_scenario(tmp_path, postgres_url, operations=200)
    print("takeovers (crash point, seconds):", result.takeovers)
    assert [point for point, _ in result.takeovers] == [k[1].split(":")[0] for k in KILLS]
    # start_op carries a mutation id, so the client safely repeats a start whose answer died
    # with the leader: every submission is acknowledged.
    assert result.unacknowledged == 0
    assert len(result.acknowledged) == 200
    lost = [op for op, state in result.states.items() if state != "completed"]
    assert lost == []
    # Every acknowledged operation's job ran exactly once, and nothing else ran.
    assert all(result.runs.get(op) == 1 for op in result.acknowledged)
    assert all(count == 1 for count in result.runs.values())
    assert result.volume_after >= result.volume_before > 0
    # A job the old leader started but could not tell its node about is aborted with a reason.
    assert all(job.get("abort_reason") for job in result.aborted_jobs if job["state"] == "aborted")


def test_a_paused_leader_cannot_act_after_a_standby_took_over(
    tmp_path: Path, postgres_url: str
) -> None:
    """SIGSTOP stands for a partition: the leader is alive but silent.  The standby takes the
    lease when it expires; the old leader, resumed with its model (and pending timeouts, e.g.
    nodes it has not heard from), finds its writes refused and steps down."""
    cluster = HaCluster(tmp_path, postgres_url, nodes=1)
    try:
        cluster.start_instance("A")
        cluster.wait_role("A")
        cluster.start_instance("B")
        cluster.start_node(1)
        yt = cluster.client()
        cluster.wait_role("B", "standby")
        first = yt.run_vanilla("true", job_count=1)
        assert yt.track(first, timeout=60) == "completed"
        paused = cluster.instances["A"]
        os.killpg(paused.pid, signal.SIGSTOP)
        try:
            cluster.wait_role("B")
        finally:
            os.killpg(paused.pid, signal.SIGCONT)
        cluster.wait_role("A", "standby", timeout=30)
        second = yt.run_vanilla("true", job_count=1)
        assert yt.track(second, timeout=60) == "completed"
        roles = {
            row["address"]: row["role"] for row in yt.get("//sys/scheduler/instances").values()
        }
        assert roles == {cluster.urls["A"]: "standby", cluster.urls["B"]: "leader"}
        # The node stayed online in the leader's view: the old leader's timeouts were not
        # committed.
        assert yt.get("//sys/cluster_nodes/node-1/@state") == "online"
    finally:
        cluster.stop()
