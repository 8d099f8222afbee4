"""End to end hardening: one owner per data directory, jobs that die with their agent."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil

from tests.e2e.cluster import TOKEN, ProcessCluster, wait_until


def _ytsched(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ytsched.cli.main", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_second_server_and_agent_on_a_data_directory_are_refused(
    cluster: ProcessCluster,
) -> None:
    assert cluster.server is not None
    data_dir = cluster.root / "server"
    second = _ytsched("server", "--data-dir", str(data_dir), "--port", "0")
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "[DataDirectoryLocked]" in lines[0]
    assert str(data_dir) in lines[0] and f"pid {cluster.server.pid}" in lines[0]
    node_dir = cluster.root / "node-1"
    agent = _ytsched(
        "node", "--proxy", cluster.url, "--token", TOKEN, "--address", "intruder",
        "--data-dir", str(node_dir),
    )  # fmt: skip
    assert agent.returncode == 2 and "[DataDirectoryLocked]" in agent.stderr
    assert str(node_dir) in agent.stderr
    # The first owners are untouched: the cluster still runs work on both nodes.
    yt = cluster.client()
    assert yt.track(yt.run_vanilla("true", job_count=2, pool="alpha"), timeout=60) == "completed"


def _job_processes(groups: list[int]) -> list[psutil.Process]:
    """Live (non-zombie) processes in the given process groups."""
    alive = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and os.getpgid(process.pid) in groups:
                alive.append(process)
        except (psutil.Error, ProcessLookupError):
            continue
    return alive


def test_jobs_die_with_a_killed_agent_and_are_reported_node_offline(
    cluster: ProcessCluster,
) -> None:
    yt = cluster.client()
    # A job with a background child: the whole group must go, not only the shell.
    op = yt.run_vanilla("sleep 120 & sleep 120; wait", job_count=4, pool="alpha")
    wait_until(
        lambda: len(yt.list_jobs(op, job_state="running")) == 4 and cluster.job_groups(1), 30,
        "jobs running on node-1",
    )  # fmt: skip
    groups = cluster.job_groups(1)
    wait_until(lambda: len(_job_processes(groups)) >= 2 * len(groups), 10, "job processes")
    cluster.kill_agent(1)
    wait_until(lambda: not _job_processes(groups), 15, "orphaned jobs to be killed")
    lost = {j["id"] for j in yt.list_jobs(op, job_state="running") if j["address"] == "node-1"}
    assert lost
    cluster.start_node(1)  # a restarted agent no longer runs them: they were lost

    def aborted() -> list[dict[str, object]]:
        return [j for j in yt.list_jobs(op) if j["id"] in lost and j["state"] == "aborted"]

    wait_until(lambda: len(aborted()) == len(lost), 30, "lost jobs to be aborted")
    for job in aborted():
        assert job["abort_reason"] == "node_offline"
    yt.abort_op(op)


def test_a_busy_port_is_one_line_for_server_and_local(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = str(busy.getsockname()[1])
        server = _ytsched("server", "--data-dir", str(tmp_path / "s"), "--port", port)
        assert server.returncode == 2
        assert server.stderr.strip().splitlines() == [
            f"ytsched: error: cannot listen on 127.0.0.1:{port}: the port is already in use"
            " [AddressInUse]"
        ]
        assert not (tmp_path / "s" / "ytsched.db").exists()  # refused before touching state
        local = _ytsched("local", "--nodes", "0", "--port", port, "--data-dir", str(tmp_path / "l"))
        assert local.returncode == 2
        lines = local.stderr.strip().splitlines()
        assert len(lines) == 1 and "the port is already in use" in lines[0], local.stderr


def test_a_second_local_cluster_on_a_directory_is_refused(tmp_path: Path) -> None:
    from ytsched.datadir import lock_data_directory

    with lock_data_directory(tmp_path / "l", "ytsched local"):
        local = _ytsched("local", "--nodes", "0", "--port", "0", "--data-dir", str(tmp_path / "l"))
    assert local.returncode == 2
    assert "[DataDirectoryLocked]" in local.stderr and "ytsched local pid" in local.stderr
