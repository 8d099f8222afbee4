"""Service benchmark: many simulated exec nodes heartbeating over HTTP to one real server.

Starts ``ytsched server`` on loopback, submits vanilla operations with plenty of short jobs,
then runs N simulated nodes (default 1,000) that heartbeat once per period (default 1 s),
spread evenly over the period, each over its own keep-alive HTTP connection.  A simulated node
"runs" a started job for a duration drawn uniformly from [0.5, 1.5] x ``--job-duration`` and
then reports it completed; a node whose answer comes late skips the beats it missed.

Prints heartbeat latency (end to end, as the node sees it) p50/p90/p99/max and allocations
started per second over the measurement window (after a warm-up).  Targets: p99 < 50 ms and
>= 1,000 allocations/s.

    .venv/bin/python benchmarks/service.py --nodes 1000 --seconds 30 [--timeline]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ytsched import yson  # noqa: E402
from ytsched.client import Client  # noqa: E402

TOKEN = "bench-token"
TREES = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {"max_running_operation_count_per_pool": 100},
            "pools": {"a": {"weight": 1}, "b": {"weight": 2}, "c": {"weight": 1}},
        }
    },
}


class Node:
    """One simulated node on one keep-alive connection."""

    def __init__(self, index: int, host: str, port: int, slots: int) -> None:
        self.address = f"sim-node-{index:05d}"
        self.host, self.port = host, port
        self.limits = {"cpu": slots, "user_slots": slots, "memory": slots * 4 * 2**30}
        self.running: dict[str, tuple[str, float]] = {}
        """job id -> (operation id, when the job ends)"""
        self.random = random.Random(index)
        self.finished: list[dict[str, Any]] = []
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        # What never changes, encoded once (the bytes sent are those of ``json.dumps`` of the
        # whole request and of the request head built each time, as before).
        self.head = (
            f"POST /api/v4/node_heartbeat HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            "Content-Length: "
        ).encode()
        self.body_start = json.dumps({"address": self.address, "resource_limits": self.limits})
        self.body_start = self.body_start[:-1] + ', "running_job_ids": '

    async def request(self, body: bytes) -> dict[str, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(b"%s%d\r\n\r\n%s" % (self.head, len(body), body))
        # The head in one read (not a line at a time): the client shares the server's cores.
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = head[: head.index(b"\r\n")]
        length = 0
        for line in head.lower().split(b"\r\n"):
            if line.startswith(b"content-length:"):
                length = int(line[15:])
        payload = await self.reader.readexactly(length)
        if b" 200 " not in status:
            raise RuntimeError(f"{self.address}: {status!r} {payload[:300]!r}")
        result: dict[str, Any] = json.loads(payload)
        return result

    async def heartbeat(self, now: float, job_duration: float) -> tuple[float, int]:
        for job_id, (operation_id, ends) in list(self.running.items()):
            if now >= ends:
                del self.running[job_id]
                self.finished.append(
                    {"operation_id": operation_id, "job_id": job_id, "outcome": "completed"}
                )
        body = (
            f"{self.body_start}{json.dumps(list(self.running))},"
            f' "finished_jobs": {json.dumps(self.finished)}}}'
        ).encode()
        begin = time.perf_counter()
        answer = await self.request(body)
        latency = time.perf_counter() - begin
        self.finished = []
        for abort in answer["abort"]:
            self.running.pop(abort["job_id"], None)
        for interrupt in answer["interrupt"]:
            job = self.running.pop(interrupt["job_id"], None)
            if job is not None:
                self.finished.append(
                    {
                        "operation_id": job[0],
                        "job_id": interrupt["job_id"],
                        "outcome": "aborted",
                        "interrupted": True,
                    }
                )
        for start in answer["start"]:
            # Durations spread over [0.5, 1.5] x the mean, as real jobs are: with one fixed
            # duration every job started in the first second would end in the same second.
            duration = job_duration * self.random.uniform(0.5, 1.5)
            self.running[start["job_id"]] = (start["operation_id"], now + duration)
        return latency, len(answer["start"])


async def drive(
    nodes: list[Node], period: float, seconds: float, warmup: float, job_duration: float
) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    timeline.clear()
    started = 0
    loop = asyncio.get_running_loop()
    begin = loop.time()
    measure_from = begin + warmup
    end = measure_from + seconds

    async def run(index: int, node: Node) -> None:
        nonlocal started
        next_time = begin + period * index / len(nodes)
        while next_time < end:
            delay = next_time - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now = loop.time()
            latency, count = await node.heartbeat(now, job_duration)
            sent[0] += 1
            if now >= measure_from:
                latencies.append(latency)
                timeline.append((now - measure_from, latency))
                started += count
            # Like a real node, one heartbeat per period: a late answer skips the missed
            # beats instead of sending them back to back (which would stretch the window).
            next_time = max(next_time + period, loop.time())

    await asyncio.gather(*(run(i, node) for i, node in enumerate(nodes)))
    return latencies, started, seconds


sent = [0]
"""Heartbeats answered since the nodes started, warm-up included (for CPU per heartbeat)."""

timeline: list[tuple[float, float]] = []
"""(seconds into the window, latency) of every measured heartbeat, for ``--timeline``."""


def print_timeline(samples: list[tuple[float, float]]) -> None:
    """The worst latency in each 100 ms slice of the window, to see where stalls fall."""
    worst: dict[int, float] = {}
    for moment, latency in samples:
        slot = int(moment * 10)
        worst[slot] = max(worst.get(slot, 0.0), latency)
    cells = [f"{slot / 10:6.1f}s {1000 * worst[slot]:7.1f}ms" for slot in sorted(worst)]
    for row in range(0, len(cells), 6):
        print("  ".join(cells[row : row + 6]))


def server_command(src: Path | None) -> list[str]:
    """The command that runs ``ytsched`` (then its arguments): this checkout's, or the one in
    ``src`` (to compare with another version on the same machine state).  An editable install
    puts a finder ahead of ``PYTHONPATH``; it is dropped so that ``src`` wins.  The native
    core is looked up in ``src`` (copy the built ``_native*.so`` there)."""
    if src is None:
        return [sys.executable, "-m", "ytsched.cli.main"]
    boot = (
        "import runpy, sys;"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in type(f).__module__];"
        f"sys.path.insert(0, {str(src)!r});"
        "sys.argv[0] = 'ytsched';"
        "runpy.run_module('ytsched.cli.main', run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", boot]


@contextlib.contextmanager
def running_server(
    src: Path | None,
    directory: Path,
    trees: dict[str, Any],
    period: float,
    extra: list[str],
    *,
    start_timeout: float,
    stop_timeout: float,
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A real ``ytsched server`` on loopback with ``trees``, its data and log in ``directory``
    (removed afterwards); yields the process and its port.  Shared by the service and orchid
    load benchmarks."""
    trees_file = directory / "trees.yson"
    trees_file.write_text(yson.dumps(trees), encoding="utf-8")
    port_file = directory / "port"
    server = subprocess.Popen(
        [
            *server_command(src),
            "server",
            "--data-dir",
            str(directory / "data"),
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--admin-token",
            TOKEN,
            "--pool-trees",
            str(trees_file),
            "--node-heartbeat-timeout",
            "60",
            "--heartbeat-period",
            str(period),
            *extra,
        ],
        stdout=(directory / "server.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + start_timeout
        while not port_file.exists():
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("server did not start: " + (directory / "server.log").read_text())
            time.sleep(0.05)
        yield server, int(port_file.read_text())
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        shutil.rmtree(directory, ignore_errors=True)  # the data directory and the server log


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def parse_metrics(text: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=8, help="user_slots (and cores) per node")
    parser.add_argument("--period", type=float, default=1.0, help="heartbeat period, seconds")
    parser.add_argument("--seconds", type=float, default=30.0, help="measurement window")
    parser.add_argument(
        "--warmup", type=float, default=10.0, help="seconds before the window (the fill)"
    )
    parser.add_argument(
        "--job-duration",
        type=float,
        default=7.5,
        help="mean job duration, seconds (7.5 s: 1,000 nodes of 8 slots start ~1,000 a second)",
    )
    parser.add_argument("--operations", type=int, default=30)
    parser.add_argument(
        "--timeline", action="store_true", help="print the worst latency of every 100 ms"
    )
    parser.add_argument(
        "--priority",
        type=int,
        default=0,
        help="nice value for the server and the load generator (negative needs root): keeps"
        " other work on a shared machine from skewing the numbers",
    )
    parser.add_argument(
        "--store",
        help="postgresql://... to run the server on PostgreSQL (default: SQLite in a temp dir)",
    )
    parser.add_argument("--src", type=Path, help="run the server from this source tree")
    parser.add_argument(
        "--client-loop",
        choices=("uvloop", "asyncio"),
        default="uvloop",
        help="event loop of the simulated nodes (asyncio: the benchmark's loop before issue 15)",
    )
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="ytsched-bench-"))
    with running_server(
        args.src,
        directory,
        TREES,
        args.period,
        ["--store", args.store] if args.store else [],
        start_timeout=30,
        stop_timeout=10,
    ) as (server, port):
        if args.priority:
            os.setpriority(os.PRIO_PROCESS, server.pid, args.priority)
            os.setpriority(os.PRIO_PROCESS, 0, args.priority)
        total_jobs = int(
            args.nodes * args.slots * (args.seconds + args.warmup) / args.job_duration * 1.5
        )
        per_op = max(1, total_jobs // args.operations)
        with Client(f"http://127.0.0.1:{port}", TOKEN) as yt:
            for index in range(args.operations):
                yt.run_vanilla(
                    "true", job_count=per_op, pool="abc"[index % 3], cpu_limit=1, memory_limit=2**30
                )
        nodes = [Node(i, "127.0.0.1", port, args.slots) for i in range(args.nodes)]
        server_process, own_process = psutil.Process(server.pid), psutil.Process()
        server_cpu, own_cpu, wall = _cpu(server_process), _cpu(own_process), time.monotonic()
        # The simulated nodes share the machine with the server: on uvloop they cost ~20%
        # less CPU than on asyncio's own loop (0.076 against 0.093 ms per heartbeat at 2,000
        # nodes; --client-loop asyncio: as before); the server sees the same requests.
        loop_factory = uvloop.new_event_loop if args.client_loop == "uvloop" else None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            latencies, started, seconds = runner.run(
                drive(nodes, args.period, args.seconds, args.warmup, args.job_duration)
            )
        wall = time.monotonic() - wall
        server_cpu = _cpu(server_process) - server_cpu
        own_cpu = _cpu(own_process) - own_cpu
        print(
            f"cpu: server {100 * server_cpu / wall:.0f}%,"
            f" load generator {100 * own_cpu / wall:.0f}% (of one core);"
            f" per heartbeat: server {1000 * server_cpu / max(1, sent[0]):.3f} ms,"
            f" load generator {1000 * own_cpu / max(1, sent[0]):.3f} ms"
            f" ({sent[0]} heartbeats, load average {os.getloadavg()[0]:.1f})"
        )
        ms = [1000 * v for v in latencies]
        print(
            f"nodes={args.nodes} slots/node={args.slots} period={args.period}s"
            f" window={seconds:.0f}s heartbeats={len(ms)} ({len(ms) / seconds:.0f}/s)"
        )
        print(
            f"heartbeat latency ms: p50={percentile(ms, 0.5):.1f} p90={percentile(ms, 0.9):.1f}"
            f" p99={percentile(ms, 0.99):.1f} max={max(ms):.1f} mean={statistics.mean(ms):.1f}"
        )
        print(f"allocations started: {started} ({started / seconds:.0f}/s)")
        if args.timeline:
            print_timeline(timeline)
        with Client(f"http://127.0.0.1:{port}", TOKEN) as yt:
            server_side = parse_metrics(yt.metrics())
        for name in (
            "ytsched_heartbeat_duration_seconds",
            "ytsched_fair_share_update_duration_seconds",
            "ytsched_fair_share_update_longest_step_seconds",
            "ytsched_fair_share_update_publish_seconds",
        ):
            count = server_side.get(f"{name}_count", 0.0)
            total = server_side.get(f"{name}_sum", 0.0)
            if count:
                print(f"server side {name}: {count:.0f} x, mean {1000 * total / count:.2f} ms")
        for generation in range(3):
            labels = f'{{generation="{generation}"}}'
            count = server_side.get(f"ytsched_gc_pause_seconds_count{labels}", 0.0)
            total = server_side.get(f"ytsched_gc_pause_seconds_sum{labels}", 0.0)
            found = server_side.get(f"ytsched_gc_collected_objects_total{labels}", 0.0)
            if count:
                print(
                    f"server side collections of generation {generation}: {count:.0f} x,"
                    f" mean {1000 * total / count:.2f} ms, {found:.0f} objects freed"
                )
        for name in (
            "ytsched_fair_share_update_recomputations_total",
            "ytsched_fair_share_update_state_rebuilds_total",
        ):
            if name in server_side:
                print(f"server side {name}: {server_side[name]:.0f}")


if __name__ == "__main__":
    main()
