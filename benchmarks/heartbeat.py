"""Benchmark heartbeat scheduling (``ytsched.scheduling.Scheduler.process_heartbeat``).

Run from the repository root::

    .venv/bin/python benchmarks/heartbeat.py                   # 1k nodes, 1k pools, 10k ops
    .venv/bin/python benchmarks/heartbeat.py --quick           # a tenth of everything
    .venv/bin/python benchmarks/heartbeat.py --profile steady  # cProfile a phase, print the top

The cluster: ``--nodes`` nodes (64 slots, 48 cpu, 192 GiB each), ``--pools`` pools in two levels
(a fifth of the leaves FIFO), ``--operations`` vanilla operations spread over the leaf pools,
each with pending jobs (1-4 cpu, 1-8 GiB, from a seeded generator) far beyond what fits.

Phases (virtual time; every heartbeat reports the node's running jobs and the ones that ended):

1. *fill*: every node heartbeats once on an empty cluster and is filled;
2. *steady*: rounds in which every node heartbeats once; jobs last a random 5-40 s, so each
   heartbeat reports a few finished jobs and gets replacements.  With long jobs and late
   operations (``--job-duration 1000 2000 --late 0.3 --rounds 14``) the late operations starve
   30 s after their arrival and the preemptive stages take allocations from operations above
   their fair share.  A fair-share update runs
   every 5 s of virtual time (not timed; its duration is printed separately).

Only ``process_heartbeat`` is timed, by wall clock and by process cpu time (the latter is
steadier on a shared machine).  The garbage collector is managed as ``ytsched server`` manages
it (``--gc service``: the setup collected and frozen, no automatic full collections, new
objects collected and frozen every minute of virtual time, after an update); ``--gc freeze``
only freezes the setup (full collections triggered by the updates' new objects then land in
some heartbeats, 0.2-0.3 s each), ``--gc none`` leaves Python's defaults.  The collector's
time inside the timed calls is printed per phase.  Prints heartbeats per second and
allocations started per second for each phase, plus the machine.  A script, not a test:
timings depend on the machine.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import platform
import pstats
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ytsched.pooltree import PoolTrees
from ytsched.scheduling import FinishedJob, JobOutcome, NodeHeartbeat, Scheduler
from ytsched.scheduling.api import HeartbeatResponse
from ytsched.server.gcpolicy import CollectorPolicy

GIB = 2**30
NODE_LIMITS = (64.0, 48.0, 0.0, 192.0 * GIB, 0.0)
HEARTBEAT_PERIOD = 5.0
UPDATE_PERIOD = 5.0
LATE_START = 10.0
"""When the operations of ``--late`` start (virtual seconds)."""


@dataclass
class NodeSim:
    address: str
    running: dict[str, tuple[str, float]] = field(default_factory=dict)
    """job -> (operation, end time)."""


def build(
    pools: int, operations: int, seed: int, late: float
) -> tuple[PoolTrees, Scheduler, list[tuple[str, str, dict[str, Any]]]]:
    """Trees, scheduler and the operations to start later: (id, user, spec)."""
    rng = random.Random(seed)
    trees = PoolTrees({"max_operation_count": operations * 2})
    tree = trees.create_tree(
        "physical",
        {
            "max_running_operation_count": operations * 2,
            "max_operation_count": operations * 2,
            "max_running_operation_count_per_pool": 1000,
            "max_operation_count_per_pool": 1000,
        },
    )
    trees.set_default_tree("physical")
    top = max(1, pools // 50)
    leaves: list[str] = []
    for index in range(top):
        tree.create_pool(f"dept{index}", config={"weight": float(rng.randint(1, 4))})
    for index in range(pools - top):
        parent = f"dept{index % top}"
        mode = "fifo" if index % 5 == 0 else "fair_share"
        name = f"pool{index}"
        tree.create_pool(name, parent, {"mode": mode})
        leaves.append(name)
    later: list[tuple[str, str, dict[str, Any]]] = []
    first_late = operations - int(operations * late)
    for index in range(operations):
        tasks = {
            "main": {
                "job_count": rng.randint(20, 200),
                "cpu_limit": float(rng.randint(1, 4)),
                "memory_limit": rng.randint(1, 8) * GIB,
            }
        }
        spec = {"pool": leaves[index % len(leaves)], "tasks": tasks}
        if index >= first_late:
            later.append((f"op{index}", f"user{index % 97}", spec))
        else:
            trees.start_operation(f"op{index}", user=f"user{index % 97}", spec=spec, now=0.0)
    return trees, Scheduler(trees), later


def heartbeat(
    scheduler: Scheduler,
    sim: NodeSim,
    now: float,
    rng: random.Random,
    duration: tuple[float, float] = (5.0, 40.0),
) -> tuple[HeartbeatResponse, float, float]:
    finished = []
    for job_id, (operation_id, end) in list(sim.running.items()):
        if end <= now:
            finished.append(FinishedJob(operation_id, job_id, JobOutcome.COMPLETED))
            del sim.running[job_id]
    request = NodeHeartbeat(
        address=sim.address,
        now=now,
        resource_limits=NODE_LIMITS,
        running_job_ids=tuple(sim.running),
        finished_jobs=tuple(finished),
    )
    start = time.perf_counter()
    cpu_start = time.process_time()
    response = scheduler.process_heartbeat(request)
    cpu = time.process_time() - cpu_start
    elapsed = time.perf_counter() - start
    for job in response.start:
        sim.running[job.job_id] = (job.operation_id, now + rng.uniform(*duration))
    for abort in response.abort:
        sim.running.pop(abort.job_id, None)
    for interrupt in response.interrupt:
        entry = sim.running.get(interrupt.job_id)
        if entry is not None:
            sim.running[interrupt.job_id] = (entry[0], min(entry[1], now + interrupt.timeout / 2))
    return response, elapsed, cpu


@dataclass
class Phase:
    name: str
    heartbeats: int = 0
    started: int = 0
    preempted: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    collector: float = 0.0
    """Cpu seconds the garbage collector ran inside the timed calls (part of ``cpu``)."""

    def row(self) -> str:
        rate = self.heartbeats / self.seconds if self.seconds else 0.0
        starts = self.started / self.seconds if self.seconds else 0.0
        cpu_starts = self.started / self.cpu if self.cpu else 0.0
        return (
            f"{self.name:<7} {self.heartbeats:>7,} heartbeats {self.started:>7,} starts"
            f" {self.seconds:>6.2f} s: {rate:>7,.0f} heartbeats/s {starts:>7,.0f} allocations/s"
            f" (by cpu time: {cpu_starts:,.0f} allocations/s; collector {self.collector:.2f} s)"
        )


def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    setup = time.perf_counter()
    trees, scheduler, later = build(args.pools, args.operations, args.seed, args.late)
    sims = [NodeSim(f"node{index:05d}") for index in range(args.nodes)]
    for sim in sims:  # register every node (empty heartbeats before the first update)
        scheduler.process_heartbeat(NodeHeartbeat(sim.address, 0.0, NODE_LIMITS))
    clock = [0.0]
    policy: CollectorPolicy | None = None
    if args.gc == "service":
        # What ``ytsched server`` does (``ytsched.server.gcpolicy``): collect and freeze the
        # start-up state, no automatic full collections, a collect-and-freeze of what is new
        # every ``freeze_period`` (here of virtual time, after an update, untimed).
        policy = CollectorPolicy(clock=lambda: clock[0])
        policy.install()
    elif args.gc == "freeze":
        # The setup leaves millions of long-lived objects (operations, jobs, pools); Python's
        # full collections walk them all and stall whatever runs (seconds at this size).
        # Freezing them keeps them out of later collections; the full collections that the
        # updates' new objects trigger still land in heartbeats.
        gc.collect()
        gc.freeze()
    in_heartbeat = [False]
    collector = [0.0, 0.0]  # cpu seconds inside heartbeats; start of the current collection

    def on_collection(phase_name: str, info: dict[str, Any]) -> None:
        if not in_heartbeat[0]:
            return
        if phase_name == "start":
            collector[1] = time.process_time()
        else:
            collector[0] += time.process_time() - collector[1]

    gc.callbacks.append(on_collection)
    update_start = time.perf_counter()
    scheduler.update(0.0)
    update_seconds = [time.perf_counter() - update_start]
    print(f"setup {update_start - setup:.1f} s, first update {update_seconds[0]:.2f} s")

    fill = Phase("fill")
    steady = Phase("steady")
    phases = [fill] + [steady] * args.rounds
    now = 0.0
    next_update = UPDATE_PERIOD
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    for round_index, phase in enumerate(phases):
        for index, sim in enumerate(sims):
            now = round_index * HEARTBEAT_PERIOD + HEARTBEAT_PERIOD * index / len(sims)
            if now >= next_update:
                if later and now >= LATE_START:
                    for operation_id, user, spec in later:
                        trees.start_operation(operation_id, user=user, spec=spec, now=now)
                    later = []
                update_start = time.perf_counter()
                scheduler.update(now)
                update_seconds.append(time.perf_counter() - update_start)
                next_update += UPDATE_PERIOD
                if policy is not None:
                    clock[0] = now
                    policy.maintain()
            if profiler is not None and phase.name == args.profile:
                profiler.enable()
            in_heartbeat[0] = True
            collected = collector[0]
            response, elapsed, cpu = heartbeat(scheduler, sim, now, rng, args.job_duration)
            in_heartbeat[0] = False
            if profiler is not None and phase.name == args.profile:
                profiler.disable()
            phase.collector += collector[0] - collected
            phase.heartbeats += 1
            phase.started += len(response.start)
            phase.preempted += len(response.interrupt)
            phase.seconds += elapsed
            phase.cpu += cpu
    running = sum(len(sim.running) for sim in sims)
    total = Phase("total", fill.heartbeats + steady.heartbeats, fill.started + steady.started)
    total.seconds = fill.seconds + steady.seconds
    total.cpu = fill.cpu + steady.cpu
    total.collector = fill.collector + steady.collector
    gc.callbacks.remove(on_collection)
    if policy is not None:
        policy.uninstall()
    print(
        f"running allocations at the end: {running:,}; preempted in the steady phase:"
        f" {steady.preempted:,}"
    )
    mean = sum(update_seconds) / len(update_seconds)
    print(f"fair-share updates: {len(update_seconds)}, mean {mean:.2f} s (not included below)")
    for phase in (fill, steady, total):
        print(phase.row())
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(25)


def machine() -> None:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print(f"CPU: {cpu}; cores: {os.cpu_count()}; Python {platform.python_version()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pools", type=int, default=1000)
    parser.add_argument("--operations", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=6, help="steady rounds (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--late",
        type=float,
        default=0.0,
        help="fraction of the operations that start at 10 s instead of 0 (with long jobs they"
        " starve and preempt)",
    )
    parser.add_argument(
        "--job-duration",
        type=float,
        nargs=2,
        default=(5.0, 40.0),
        metavar=("MIN", "MAX"),
        help="job durations in seconds (default 5 40; long jobs make operations starve)",
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of nodes, pools, operations")
    parser.add_argument(
        "--gc",
        choices=("service", "freeze", "none"),
        default="service",
        help="garbage collector: as `ytsched server` manages it (default), the setup frozen"
        " and automatic collections otherwise (the behaviour before issue 15's round three), or"
        " Python's defaults",
    )
    parser.add_argument(
        "--no-freeze", action="store_true", help="the same as --gc none (kept for old commands)"
    )
    parser.add_argument(
        "--profile", choices=("fill", "steady"), help="cProfile one phase and print the top"
    )
    args = parser.parse_args(argv)
    if args.no_freeze:
        args.gc = "none"
    if args.quick:
        args.nodes //= 10
        args.pools //= 10
        args.operations //= 10
    machine()
    print(
        f"{args.nodes:,} nodes, {args.pools:,} pools, {args.operations:,} operations,"
        f" {args.rounds} steady rounds"
    )
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
