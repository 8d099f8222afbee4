"""The service's heartbeat path in process: CPU per heartbeat, and the cyclic garbage it leaves.

The cluster of ``benchmarks/service.py`` (30 vanilla operations in three pools, nodes of 8
slots, jobs of 0.5-1.5 x the mean duration) without HTTP: every simulated second each node's
heartbeat body is decoded as the direct path decodes it, processed
(``heartbeats.process``) and committed, and the fair-share update runs once
(``Cluster.tick``).  No sockets and no second process, so it measures the server's own work
per heartbeat with far less noise than the service benchmark on a shared machine.

``--garbage``: the cyclic collector is off over the window and one full collection after it
counts what only it could free (objects in reference cycles): how much garbage a policy that
stops collecting the older generations (``ytsched.server.gcpolicy``) would keep until its
next full collection.

    .venv/bin/python benchmarks/heartbeat_path.py --nodes 2000 --seconds 10 [--garbage]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "--src" in sys.argv:  # another version of the package (to compare on the same machine state)
    SRC = Path(sys.argv[sys.argv.index("--src") + 1])
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
else:
    SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from ytsched.server import heartbeats, operations  # noqa: E402
from ytsched.server.cluster import Cluster, ServiceConfig  # noqa: E402
from ytsched.server.models import HeartbeatRequest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service import TREES  # noqa: E402  (the same cluster as the service benchmark)

GROUP = 10
"""Heartbeats per group commit."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=10, help="simulated seconds measured")
    parser.add_argument("--warmup", type=int, default=10, help="simulated seconds before")
    parser.add_argument("--job-duration", type=float, default=7.5)
    parser.add_argument("--operations", type=int, default=30)
    parser.add_argument("--garbage", action="store_true", help="count cyclic garbage (above)")
    parser.add_argument("--src", type=Path, help="run this source tree's package instead")
    args = parser.parse_args()

    clock = [1000.0]
    cluster = Cluster(
        ServiceConfig(
            data_dir=Path(tempfile.mkdtemp(prefix="ytsched-hbpath-")),
            admin_token="t",
            initial_pool_trees=TREES,
            node_heartbeat_timeout=60,
        ),
        clock=lambda: clock[0],
    )
    total = args.nodes * args.slots * (args.seconds + args.warmup) / args.job_duration * 1.5
    per_op = max(1, int(total) // args.operations)
    for index in range(args.operations):
        spec = {
            "pool": "abc"[index % 3],
            "tasks": {"t": {"job_count": per_op, "command": "true", "cpu_limit": 1}},
        }
        operations.start_operation(cluster, "root", "vanilla", spec)
    # As the service does (``create_app``): row writes wait for the group commit, which
    # takes the heartbeats of ~5 ms (GROUP at 2,000 a second) together.
    cluster.store.deferred = True
    cluster.store.write_behind = True  # type: ignore[attr-defined]

    def commit() -> None:
        in_writer = cluster.store.take_commit()
        if in_writer is not None:
            in_writer()
        else:
            cluster.store.commit()

    limits = {"cpu": args.slots, "user_slots": args.slots, "memory": args.slots * 4 * 2**30}
    rng = random.Random(1)
    running: list[dict[str, tuple[str, float]]] = [{} for _ in range(args.nodes)]
    finished: list[list[dict[str, object]]] = [[] for _ in range(args.nodes)]
    beats = 0
    started = 0
    cpu = 0.0
    for second in range(args.warmup + args.seconds):
        measuring = second >= args.warmup
        if measuring and second == args.warmup:
            if args.garbage:
                gc.collect()
                gc.disable()
            cpu = time.process_time()
        clock[0] += 1.0
        cluster.tick()
        commit()
        for node in range(args.nodes):
            now = clock[0] + node / args.nodes
            jobs = running[node]
            for job_id, (operation_id, ends) in list(jobs.items()):
                if now >= ends:
                    del jobs[job_id]
                    finished[node].append(
                        {"operation_id": operation_id, "job_id": job_id, "outcome": "completed"}
                    )
            body = json.dumps(
                {
                    "address": f"sim-node-{node:05d}",
                    "resource_limits": limits,
                    "running_job_ids": list(jobs),
                    "finished_jobs": finished[node],
                }
            ).encode()
            request = HeartbeatRequest.model_validate_json(body)
            answer = heartbeats.process(cluster, request)
            if node % GROUP == GROUP - 1:
                commit()
            json.dumps(answer, separators=(",", ":"), allow_nan=False)
            finished[node] = []
            for start in answer["start"]:
                duration = args.job_duration * rng.uniform(0.5, 1.5)
                jobs[start["job_id"]] = (start["operation_id"], now + duration)
            beats += measuring
            started += len(answer["start"]) if measuring else 0
    cpu = time.process_time() - cpu
    print(
        f"nodes={args.nodes} simulated seconds={args.seconds}: {beats} heartbeats,"
        f" {started / args.seconds:.0f} allocations per simulated second,"
        f" {1000 * cpu / beats:.3f} ms CPU per heartbeat (fair-share updates included)"
    )
    if args.garbage:
        found = gc.collect()
        gc.enable()
        print(
            f"cyclic garbage: {found} objects over the window,"
            f" {found / beats:.2f} per heartbeat, {found / args.seconds:.0f} per second"
        )
    cluster.close()


if __name__ == "__main__":
    main()
