"""The failover scenario: two scheduler instances on one PostgreSQL, two nodes, many operations,
the leader killed (``kill -9``, via crash points) at three moments; used by the e2e test and by
``benchmarks/failover.py`` (which prints the takeover times)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.cluster import TOKEN, ProcessCluster, free_port, wait_until
from ytsched.client import ResponseError

POOL_TREES = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {},
            "pools": {
                "work": {"weight": 1},
                "integral": {
                    "integral_guarantees": {
                        "guarantee_type": "relaxed",
                        "resource_flow": {"cpu": 1},
                    }
                },
            },
        }
    },
}

KILLS = (
    ("A", "fair_share_update:10"),
    ("B", "heartbeat:15"),
    ("A", "operation_start:20"),
)
"""Which instance dies at which crash point, in order; after the last, B leads to the end."""


class HaCluster(ProcessCluster):
    """:class:`ProcessCluster` with two server instances sharing ``store``."""

    def __init__(self, root: Path, store: str, **options: Any) -> None:
        super().__init__(root, pool_trees=POOL_TREES, **options)
        self.store = store
        self.ports = {"A": free_port(), "B": free_port()}
        self.urls = {name: f"http://127.0.0.1:{port}" for name, port in self.ports.items()}
        self.url = ",".join(self.urls.values())  # nodes and clients get both
        self.instances: dict[str, subprocess.Popen[bytes]] = {}
        self.deaths: list[tuple[str, float]] = []
        """(instance, time.monotonic() of its exit), stamped by a thread waiting on it."""
        self.leading: list[tuple[str, float]] = []
        """(instance, when it was first seen leading), sampled every 10 ms by a monitor."""
        self._monitoring = threading.Event()
        self._monitor: threading.Thread | None = None

    def monitor(self) -> None:
        """Start sampling the instances' roles (for takeover times independent of polling
        in the test's own loop)."""

        def sample() -> None:
            with httpx.Client(timeout=1) as http:
                last: str | None = None
                while not self._monitoring.wait(0.01):
                    for name, url in self.urls.items():
                        try:
                            role = http.get(f"{url}/ping").json().get("role")
                        except (httpx.HTTPError, ValueError):
                            continue
                        if role == "leader" and last != name:
                            last = name
                            self.leading.append((name, time.monotonic()))

        self._monitor = threading.Thread(target=sample, daemon=True)
        self._monitor.start()

    def start_instance(self, name: str, crash_at: str | None = None) -> Path:
        """Start instance ``name``; with ``crash_at`` it dies there once the returned file
        exists (see :mod:`ytsched.server.crashpoints`)."""
        arm = self.root / f"arm-{name}-{len(self.deaths)}"
        if crash_at is not None:
            # Inherited by the child only (removed again below).
            os.environ["YTSCHED_CRASH_AT"] = crash_at
            os.environ["YTSCHED_CRASH_ARM"] = str(arm)
        try:
            self.instances[name] = self._spawn(
                f"server-{name}",
                [
                    "server",
                    "--data-dir",
                    str(self.root / f"server-{name}"),
                    "--port",
                    str(self.ports[name]),
                    "--admin-token",
                    TOKEN,
                    "--store",
                    self.store,
                    "--pool-trees",
                    str(self.pool_trees_file),
                    "--heartbeat-period",
                    str(self.heartbeat_period),
                    "--node-heartbeat-timeout",
                    str(self.node_heartbeat_timeout),
                    "--fair-share-update-period",
                    str(self.update_period),
                ],
            )
        finally:
            os.environ.pop("YTSCHED_CRASH_AT", None)
            os.environ.pop("YTSCHED_CRASH_ARM", None)
        process = self.instances[name]

        def stamp() -> None:
            process.wait()
            self.deaths.append((name, time.monotonic()))

        threading.Thread(target=stamp, daemon=True).start()
        return arm

    def role(self, name: str) -> str | None:
        try:
            return str(httpx.get(f"{self.urls[name]}/ping", timeout=2).json()["role"])
        except (httpx.HTTPError, ValueError, KeyError):
            return None

    def wait_role(self, name: str, role: str = "leader", timeout: float = 60) -> None:
        process = self.instances[name]
        wait_until(
            lambda: self.role(name) == role or process.poll() is not None,
            timeout,
            f"instance {name} to be {role}",
            poll=0.01,
        )
        if process.poll() is not None:
            raise AssertionError(f"instance {name} exited:\n{self.log(f'server-{name}')}")

    def stop(self) -> None:
        self._monitoring.set()
        if self._monitor is not None:
            self._monitor.join(timeout=5)
        for process in self.instances.values():
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        self.instances.clear()
        super().stop()

    def takeover_after(self, victim: str, survivor: str) -> float:
        """Seconds from ``victim``'s last death to ``survivor`` first seen leading after it."""
        died = max(moment for name, moment in self.deaths if name == victim)
        led = min(moment for name, moment in self.leading if name == survivor and moment >= died)
        return led - died


@dataclass
class Result:
    takeovers: list[tuple[str, float]] = field(default_factory=list)
    """(crash point, seconds from the leader's death to the other instance serving)."""
    acknowledged: list[str] = field(default_factory=list)
    unacknowledged: int = 0
    """start_op calls whose answer was lost with the leader (never retried, by design)."""
    states: dict[str, str] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    """How many times each operation's job command ran to its end."""
    volume_before: float = 0.0
    volume_after: float = 0.0
    aborted_jobs: list[dict[str, Any]] = field(default_factory=list)


def integral_volume(yt: Any) -> float:
    path = "//sys/scheduler/orchid/scheduler/pool_trees/default/pools/integral"
    value = yt.get(f"{path}/accumulated_resource_volume", default={})
    return float((value or {}).get("cpu", 0.0))


def run_scenario(root: Path, store: str, operations: int = 200) -> Result:
    result = Result()
    cluster = HaCluster(root, store, node_resources="cpu=4,memory=8G,user_slots=4")
    ran = root / "ran"
    try:
        cluster.monitor()
        arms = [cluster.start_instance("A", KILLS[0][1])]
        cluster.wait_role("A")
        arms.append(cluster.start_instance("B", KILLS[1][1]))
        cluster.wait_role("B", "standby")
        for index in (1, 2):
            cluster.start_node(index)
        yt = cluster.client()
        wait_until(
            lambda: yt.get("//sys/scheduler/orchid/scheduler/cluster/node_count", default=0) >= 2,
            60,
            "nodes to register",
        )
        wait_until(lambda: integral_volume(yt) > 0, 30, "the integral pool to accumulate")
        result.volume_before = integral_volume(yt)

        flowing = threading.Event()
        flowing.set()

        def submit() -> None:
            client = cluster.client()
            for _ in range(operations):
                flowing.wait(120)
                try:
                    op = client.run_vanilla(
                        f'echo "$YT_OPERATION_ID" >> {ran}', job_count=1, pool="work"
                    )
                except ResponseError as error:
                    if error.code != "ConnectionError":
                        raise
                    result.unacknowledged += 1
                    continue
                result.acknowledged.append(op)
                time.sleep(0.03)

        submitter = threading.Thread(target=submit, daemon=True)
        submitter.start()
        for step, (victim, point) in enumerate(KILLS):
            # Armed only now: the other instance is a ready standby (not still starting).
            arms[step].touch()
            process = cluster.instances[victim]
            wait_until(lambda p=process: p.poll() is not None, 120, f"{victim} to die at {point}")
            survivor = "B" if victim == "A" else "A"
            cluster.wait_role(survivor)
            wait_until(
                lambda s=survivor: any(n == s for n, _ in cluster.leading[-1:]),
                10,
                "the monitor to see the new leader",
                poll=0.01,
            )
            result.takeovers.append((point.split(":")[0], cluster.takeover_after(victim, survivor)))
            # The victim comes back as a standby (armed for its next death, if any); new work
            # waits meanwhile, so the next kill also finds a ready standby.
            flowing.clear()
            following = KILLS[step + 2][1] if step + 2 < len(KILLS) else None
            arms.append(cluster.start_instance(victim, following))
            cluster.wait_role(victim, "standby")
            flowing.set()
        submitter.join(timeout=300)
        assert not submitter.is_alive(), "submission did not finish"
        final = cluster.client()
        for op in result.acknowledged:
            result.states[op] = final.track(op, timeout=120)
        result.volume_after = integral_volume(final)
        lines = ran.read_text().split() if ran.exists() else []
        for op in lines:
            result.runs[op] = result.runs.get(op, 0) + 1
        for op in result.acknowledged[:: max(1, len(result.acknowledged) // 40)]:
            result.aborted_jobs += [
                job for job in final.list_jobs(op) if job["state"] in ("aborted", "failed")
            ]
        return result
    finally:
        cluster.stop()
