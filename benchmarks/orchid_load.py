"""Orchid load benchmark: clients polling the orchid must not stall node heartbeats.

Starts ``ytsched server`` on loopback with many operations (default 3,000 in 30 pools), runs
simulated exec nodes heartbeating once per period (``benchmarks/service.py``'s ``Node``), and
32 clients polling the orchid as dashboards do: single attributes of pools and operations
(``pool_trees/default/pools/<pool>/fair_share_ratio``, ``.../operations/<op>/usage_ratio``) and,
for a few of them, a tree's whole ``pools`` map.  Prints heartbeat latency and single-attribute
``get`` latency (p50/p90/p99/max).  Targets (issue 18): heartbeat p99 < 50 ms and
single-attribute get p99 < 20 ms, measured with ``--paced`` (dashboards poll on timers; the
default closed-loop clients leave every stall together and then arrive in bursts, see
``docs/performance.md``, "Orchid reads under load").

    .venv/bin/python benchmarks/orchid_load.py [--operations 3000] [--clients 32] [--seconds 20]
    .venv/bin/python benchmarks/orchid_load.py --src /work/main/src   # another checkout's server
    .venv/bin/python benchmarks/orchid_load.py --paced   # each client on its own fixed schedule
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from service import TOKEN, Node, parse_metrics, percentile, running_server  # noqa: E402
from ytsched.client import Client  # noqa: E402

ORCHID = "//sys/scheduler/orchid/scheduler/pool_trees/default"


class Poller:
    """One dashboard-like client on one keep-alive connection."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> Any:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        body = json.dumps({"path": path}).encode()
        head = (
            f"POST /api/v4/get HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.writer.write(head + body)
        status = await self.reader.readline()
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        if b" 200 " not in status:
            raise RuntimeError(f"get {path}: {status!r} {payload[:300]!r}")
        return json.loads(payload)["value"]


async def drive(
    nodes: list[Node],
    pollers: list[Poller],
    pools: list[str],
    operations: list[str],
    *,
    period: float,
    seconds: float,
    warmup: float,
    map_pollers: int,
    poll_interval: float,
    paced: bool = False,
) -> tuple[list[float], list[float], list[float]]:
    heartbeats: list[float] = []
    attributes: list[float] = []
    maps: list[float] = []
    loop = asyncio.get_running_loop()
    begin = loop.time()
    measure_from = begin + warmup
    end = measure_from + seconds

    async def beat(index: int, node: Node) -> None:
        next_time = begin + period * index / len(nodes)
        while next_time < end:
            delay = next_time - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now = loop.time()
            latency, _ = await node.heartbeat(now, 1000.0)
            if now >= measure_from:
                heartbeats.append(latency)
            next_time = max(next_time + period, loop.time())

    async def poll(index: int, poller: Poller) -> None:
        chooser = random.Random(index)
        next_time = begin + poll_interval * index / len(pollers)
        await asyncio.sleep(poll_interval * index / len(pollers))
        while loop.time() < end:
            if paced:
                # Open loop: each client keeps its own phase, as independent dashboards do
                # (a missed slot is skipped, never made up in a burst).
                delay = next_time - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                next_time = max(next_time + poll_interval, loop.time())
            if index < map_pollers:
                path, sink = f"{ORCHID}/pools", maps
            elif chooser.random() < 0.5:
                path = f"{ORCHID}/pools/{chooser.choice(pools)}/fair_share_ratio"
                sink = attributes
            else:
                path = f"{ORCHID}/operations/{chooser.choice(operations)}/usage_ratio"
                sink = attributes
            started = loop.time()
            await poller.get(path)
            if started >= measure_from:
                sink.append(loop.time() - started)
            if not paced:
                await asyncio.sleep(poll_interval)

    await asyncio.gather(
        *(beat(i, node) for i, node in enumerate(nodes)),
        *(poll(i, poller) for i, poller in enumerate(pollers)),
    )
    return heartbeats, attributes, maps


def _line(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: no samples"
    ms = [1000 * v for v in values]
    return (
        f"{name} ms ({len(ms)}): p50={percentile(ms, 0.5):.1f} p90={percentile(ms, 0.9):.1f}"
        f" p99={percentile(ms, 0.99):.1f} max={max(ms):.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=3000)
    parser.add_argument("--pools", type=int, default=30)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--map-clients", type=int, default=2, help="clients polling pools maps")
    parser.add_argument("--poll-interval", type=float, default=0.1, help="seconds between gets")
    parser.add_argument(
        "--paced",
        action="store_true",
        help="each client polls on its own fixed schedule (default: sleeps after each answer,"
        " so clients stalled together fire together again)",
    )
    parser.add_argument("--period", type=float, default=1.0, help="heartbeat period, seconds")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--src", type=Path, help="run the server from this source tree")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="ytsched-orchid-bench-"))
    pools = [f"pool{i:02d}" for i in range(args.pools)]
    per_pool = args.operations // args.pools + 1
    trees = {
        "default_tree": "default",
        "pool_trees": {
            "default": {
                "config": {
                    "max_running_operation_count_per_pool": per_pool,
                    "max_operation_count_per_pool": per_pool,
                },
                "pools": {name: {"weight": 1 + i % 3} for i, name in enumerate(pools)},
            }
        },
    }
    with running_server(
        args.src, directory, trees, args.period, [], start_timeout=60, stop_timeout=20
    ) as (_, port):
        started = time.monotonic()
        operations = []
        with Client(f"http://127.0.0.1:{port}", TOKEN, timeout=120) as yt:
            strategy = yt.get("//sys/scheduler/orchid/scheduler/config")
            if strategy.get("max_operation_count", 0) < args.operations:
                raise SystemExit("the scheduler's max_operation_count is below --operations")
            for index in range(args.operations):
                operations.append(
                    yt.run_vanilla(
                        "true",
                        job_count=20,
                        pool=pools[index % len(pools)],
                        cpu_limit=1,
                        memory_limit=2**28,
                    )
                )
        print(f"submitted {len(operations)} operations in {time.monotonic() - started:.1f} s")
        nodes = [Node(i, "127.0.0.1", port, args.slots) for i in range(args.nodes)]
        pollers = [Poller("127.0.0.1", port) for _ in range(args.clients)]
        heartbeats, attributes, maps = asyncio.run(
            drive(
                nodes,
                pollers,
                pools,
                operations,
                period=args.period,
                seconds=args.seconds,
                warmup=args.warmup,
                map_pollers=args.map_clients,
                poll_interval=args.poll_interval,
                paced=args.paced,
            )
        )
        print(
            f"operations={args.operations} pools={args.pools} nodes={args.nodes}"
            f" clients={args.clients} (of which {args.map_clients} poll pools maps)"
            f" poll interval={args.poll_interval}s{' paced' if args.paced else ''}"
            f" window={args.seconds:.0f}s"
        )
        print(_line("heartbeat latency", heartbeats))
        print(_line("single-attribute get latency", attributes))
        print(_line("pools map get latency", maps))
        with Client(f"http://127.0.0.1:{port}", TOKEN, timeout=120) as yt:
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
        for name in (
            "ytsched_fair_share_update_recomputations_total",
            "ytsched_fair_share_update_state_rebuilds_total",
        ):
            if name in server_side:
                print(f"server side {name}: {server_side[name]:.0f}")
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f}")


if __name__ == "__main__":
    main()
