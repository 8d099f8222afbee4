"""A real cluster for tests: one ``ytsched server`` and N ``ytsched node`` processes.

Everything listens on 127.0.0.1 with a port chosen free at runtime, lives in a temporary
directory, runs in its own process group, and is killed (with the jobs it started) by
:meth:`ProcessCluster.stop`, which fixtures call as a finalizer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ytsched import yson
from ytsched.client import Client

TOKEN = "e2e-admin-token"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(predicate: Any, timeout: float, what: str, poll: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(poll)


def _kill_group(process: subprocess.Popen[bytes] | None) -> None:
    if process is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


class ProcessCluster:
    def __init__(
        self,
        root: Path,
        *,
        nodes: int = 2,
        node_resources: str = "cpu=2,memory=4G,user_slots=2",
        pool_trees: dict[str, Any] | None = None,
        heartbeat_period: float = 0.2,
        node_heartbeat_timeout: float = 2.0,
        update_period: float = 0.1,
        server_args: list[str] | None = None,
    ) -> None:
        self.root = root
        self.server_args = list(server_args or [])
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.node_count = nodes
        self.node_resources = node_resources
        self.heartbeat_period = heartbeat_period
        self.node_heartbeat_timeout = node_heartbeat_timeout
        self.update_period = update_period
        self.server: subprocess.Popen[bytes] | None = None
        self.nodes: dict[int, subprocess.Popen[bytes]] = {}
        self.pool_trees_file = root / "pool_trees.yson"
        document = pool_trees or {
            "default_tree": "default",
            "pool_trees": {"default": {"config": {}, "pools": {}}},
        }
        self.pool_trees_file.write_text(yson.dumps(document), encoding="utf-8")
        self.clients: list[Client] = []

    def _spawn(self, name: str, arguments: list[str]) -> subprocess.Popen[bytes]:
        log = (self.root / f"{name}.log").open("ab")
        return subprocess.Popen(
            [sys.executable, "-m", "ytsched.cli.main", *arguments],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def log(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def start_server(self) -> None:
        port_file = self.root / "server.port"
        port_file.unlink(missing_ok=True)
        self.server = self._spawn(
            "server",
            [
                "server",
                "--data-dir",
                str(self.root / "server"),
                "--port",
                str(self.port),
                "--port-file",
                str(port_file),
                "--admin-token",
                TOKEN,
                "--pool-trees",
                str(self.pool_trees_file),
                "--heartbeat-period",
                str(self.heartbeat_period),
                "--node-heartbeat-timeout",
                str(self.node_heartbeat_timeout),
                "--fair-share-update-period",
                str(self.update_period),
                *self.server_args,
            ],
        )
        server = self.server
        wait_until(
            lambda: port_file.exists() or server.poll() is not None, 30, "the server to listen"
        )
        if server.poll() is not None:
            raise AssertionError(f"server exited:\n{self.log('server')}")

    def start_node(self, index: int, tags: str = "") -> None:
        address = f"node-{index}"
        self.nodes[index] = self._spawn(
            address,
            [
                "node",
                "--proxy",
                self.url,
                "--token",
                TOKEN,
                "--address",
                address,
                "--resources",
                self.node_resources,
                "--tags",
                tags,
                "--data-dir",
                str(self.root / address),
                "--heartbeat-period",
                str(self.heartbeat_period),
            ],
        )

    def start(self) -> ProcessCluster:
        self.start_server()
        for index in range(1, self.node_count + 1):
            self.start_node(index)
        yt = self.client()
        wait_until(
            lambda: yt.get("//sys/scheduler/orchid/scheduler/cluster/node_count", default=0)
            >= self.node_count,
            30,
            "nodes to register",
        )
        return self

    def client(self) -> Client:
        client = Client(self.url, TOKEN, timeout=30)
        self.clients.append(client)
        return client

    def kill_server(self) -> None:
        if self.server is not None:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(timeout=10)

    def job_groups(self, index: int) -> list[int]:
        groups = []
        for pgid_file in (self.root / f"node-{index}" / "jobs").glob("*/pgid"):
            with contextlib.suppress(OSError, ValueError):
                groups.append(int(pgid_file.read_text(encoding="utf-8")))
        return groups

    def kill_agent(self, index: int) -> None:
        """kill -9 the agent process alone (its jobs are left to its watchdog)."""
        process = self.nodes.pop(index)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def kill_node(self, index: int) -> None:
        """kill -9 the agent and the jobs it runs (a machine that died)."""
        groups = self.job_groups(index)
        process = self.nodes.pop(index)
        _kill_group(process)
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        for index in list(self.nodes):
            self.kill_node(index)
        _kill_group(self.server)
        self.server = None
