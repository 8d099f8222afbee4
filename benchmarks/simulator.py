"""Benchmark the simulator: simulated seconds per wall-clock second on a day of work.

Run from the repository root::

    .venv/bin/python benchmarks/simulator.py                   # 1,000 nodes, 10,000 ops, a day
    .venv/bin/python benchmarks/simulator.py --hours 2         # the first two hours only
    .venv/bin/python benchmarks/simulator.py --profile         # cProfile, print the top
    .venv/bin/python benchmarks/simulator.py --no-park         # run every idle heartbeat too

The scenario is generated from a seed: ``--nodes`` nodes (32 cpu, 32 slots, 128 GiB each) in one
tree of seven leaf pools under two parents (guarantees, weights, a FIFO pool; per-pool operation
limits raised to 2,000 total / 500 running); ``--operations``
operations arriving as a Poisson process over the day, each with one task of a lognormal job
count (median 20, at most 1,000), 1-16 cpu per job and lognormal job durations (median
5 minutes); about half the cluster's capacity is asked for.  Nothing is recorded (no event log,
no orchid): the run measures the engine, the scheduler and the fair-share updates.  Prints
simulated seconds per wall second (and per CPU second: the machine may be shared), heartbeats
(run and in all) and jobs per wall second, and the machine.
A script, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import random
import time
from typing import Any

from ytsched.simulator import load_scenario
from ytsched.simulator.engine import Simulation

HOUR = 3600.0
GIB = 2**30

POOLS: dict[str, Any] = {
    "$attributes": {
        "config": {
            "max_operation_count_per_pool": 2000,
            "max_running_operation_count_per_pool": 500,
        }
    },
    "$value": {
        "prod": {
            "$attributes": {"strong_guarantee_resources": {"cpu": 12000}},
            "$value": {
                "etl": {"$attributes": {"strong_guarantee_resources": {"cpu": 8000}}},
                "serving": {"$attributes": {"strong_guarantee_resources": {"cpu": 4000}}},
                "reports": {"$attributes": {"mode": "fifo"}},
            },
        },
        "dev": {
            "$attributes": {"weight": 2},
            "$value": {
                "adhoc": {"$attributes": {"weight": 3}},
                "research": {"$attributes": {"weight": 1}},
                "ci": {"$attributes": {"weight": 1}},
                "backfill": {"$attributes": {"weight": 0.5}},
            },
        },
    },
}
LEAVES = ("etl", "serving", "reports", "adhoc", "research", "ci", "backfill")
CPUS = (1, 1, 1, 2, 2, 4, 8, 16)


def generate(
    nodes: int, operations: int, hours: float, seed: int, heartbeat: str, update: str
) -> Any:
    """A scenario document with ``operations`` arrivals over a day (only those before
    ``hours`` are kept)."""
    rng = random.Random(seed)
    rate = operations / (24 * HOUR)
    ops = []
    clock = 0.0
    for index in range(operations):
        clock += rng.expovariate(rate)
        if clock >= hours * HOUR:
            break
        jobs = min(1000, max(1, round(rng.lognormvariate(3.0, 1.2))))
        cpu = rng.choice(CPUS)
        ops.append(
            {
                "id": f"op-{index:05d}",
                "user": f"user-{rng.randrange(200):03d}",
                "start_time": int(clock * 1000),
                "spec": {
                    "pool": rng.choice(LEAVES),
                    "tasks": {
                        "main": {
                            "job_count": jobs,
                            "cpu_limit": cpu,
                            "memory_limit": cpu * 2 * GIB,
                            "job_duration": {
                                "distribution": "lognormal",
                                "median": "5m",
                                "sigma": 1.0,
                                "min": "10s",
                                "max": "4h",
                            },
                        }
                    },
                },
            }
        )
    return {
        "duration": int(hours * HOUR * 1000),
        "seed": seed,
        "orchid_period": 0,
        "cluster": {
            "heartbeat_period": heartbeat,
            "node_groups": [
                {
                    "count": nodes,
                    "resource_limits": {"cpu": 32, "user_slots": 32, "memory": 128 * GIB},
                }
            ],
        },
        "scheduler": {"fair_share_update_period": update},
        "pool_trees": {"physical": POOLS},
        "operations": ops,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--operations", type=int, default=10_000, help="arrivals per day")
    parser.add_argument("--hours", type=float, default=24.0, help="simulated hours")
    period_help = "a duration such as 5s or 500ms; a bare number is milliseconds, as in scenarios"
    parser.add_argument("--heartbeat-period", default="5s", help=period_help)
    parser.add_argument("--update-period", default="5s", help=period_help)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--no-park", action="store_true", help="run every heartbeat (no idle-node parking)"
    )
    args = parser.parse_args()

    document = generate(
        args.nodes,
        args.operations,
        args.hours,
        args.seed,
        args.heartbeat_period,
        args.update_period,
    )
    scenario = load_scenario(document)
    print(
        f"{args.nodes} nodes, {len(scenario.operations)} operations over {args.hours:g} h,"
        f" heartbeat {scenario.document.cluster.heartbeat_period / 1000:g} s,"
        f" fair-share update {scenario.document.scheduler.fair_share_update_period / 1000:g} s"
    )
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    last = [started]

    def progress(now: float, end: float) -> None:
        wall = time.perf_counter()
        if wall - last[0] > 30:
            last[0] = wall
            print(f"  {now / HOUR:6.2f} h simulated after {wall - started:7.1f} s", flush=True)

    simulation = Simulation(scenario, progress=progress)
    simulation.park_idle_nodes = not args.no_park
    cpu_started = time.process_time()
    result = simulation.run()
    cpu = time.process_time() - cpu_started
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - started
    counters = result.counters
    states: dict[str, int] = {}
    for record in result.operations:
        states[record.state] = states.get(record.state, 0) + 1
    print(f"wall time                     {wall:10.1f} s")
    print(f"simulated seconds per second  {result.end_time / wall:10.1f}")
    print(f"CPU time                      {cpu:10.1f} s")
    print(f"simulated seconds per CPU s   {result.end_time / cpu:10.1f}")
    print(f"heartbeats per second         {counters.heartbeats / wall:10.0f}")
    print(f"heartbeats run (not skipped)  {simulation.heartbeats_run:10d}")
    print(f"heartbeats in all             {counters.heartbeats:10d}")
    print(f"jobs started per second       {counters.jobs_started / wall:10.0f}")
    print(f"fair-share updates            {counters.fair_share_updates:10d}")
    print(f"jobs started                  {counters.jobs_started:10d}")
    print(f"operations by state           {dict(sorted(states.items()))}")
    print(f"cpu utilization               {counters.used[1] / counters.capacity[1]:10.3f}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus,")
    print(f"         Python {platform.python_version()}")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
