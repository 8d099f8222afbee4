"""``ytsched local``: one command starts a cluster, runs the demo, and stops cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.e2e.cluster import wait_until


def _local(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ytsched.cli.main",
            "local",
            "--nodes",
            "2",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "local"),
            "--heartbeat-period",
            "0.2",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _descendants(process: subprocess.Popen[str]) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_demo_runs_and_the_cluster_stops(tmp_path: Path) -> None:
    process = _local(tmp_path, "--demo", "--exit-after-demo")
    try:
        output, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, output
    assert "admin token:" in output and "URL:" in output
    assert output.count("completed") >= 3
    assert "stopped" in output
    assert "Press Ctrl-C" not in output  # it stops by itself


def test_ctrl_c_stops_server_and_nodes(tmp_path: Path) -> None:
    process = _local(tmp_path)
    children: list[psutil.Process] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        for line in process.stdout:
            if "Press Ctrl-C" in line or time.monotonic() > deadline:
                break
        children = wait_until(
            lambda: len(_descendants(process)) >= 3 and _descendants(process),
            30,
            "server and nodes",
        )
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        assert process.returncode == 0
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        for child in children:
            if child.is_running():
                child.kill()
