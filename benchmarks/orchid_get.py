"""What one orchid read costs on the event loop, in process: full orchid vs one routed entry.

Builds a service (no HTTP) with N operations in 30 pools and 100 nodes running jobs, runs a
fair-share update, then times, per read: the whole orchid (what every ``get`` built before
issue 18), a cold single pool / operation attribute (first read after an update: builds that
entry), a warm one (served from the version's cache), and a tree's whole ``pools`` map.

    .venv/bin/python benchmarks/orchid_get.py [--operations 3000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ytsched.server import heartbeats, operations  # noqa: E402
from ytsched.server.cluster import Cluster, ServiceConfig  # noqa: E402
from ytsched.server.models import HeartbeatRequest  # noqa: E402
from ytsched.server.orchid import build_orchid  # noqa: E402


def _time(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return 1000 * statistics.median(samples), 1000 * max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    pools = [f"pool{i:02d}" for i in range(30)]
    per_pool = args.operations // len(pools) + 1
    trees = {
        "default_tree": "default",
        "pool_trees": {
            "default": {
                "config": {
                    "max_running_operation_count_per_pool": per_pool,
                    "max_operation_count_per_pool": per_pool,
                },
                "pools": {name: {} for name in pools},
            }
        },
    }
    cluster = Cluster(
        ServiceConfig(data_dir=Path(tempfile.mkdtemp()), admin_token="t", initial_pool_trees=trees)
    )
    ids = [
        operations.start_operation(
            cluster,
            "root",
            "vanilla",
            {"pool": pools[i % len(pools)], "tasks": {"t": {"job_count": 20, "command": "true"}}},
        )
        for i in range(args.operations)
    ]
    limits = {"cpu": 8, "user_slots": 8, "memory": 32 * 2**30}
    for _ in range(2):
        cluster.tick()
        for node in range(100):
            request = HeartbeatRequest(address=f"n{node}", resource_limits=limits)
            heartbeats.process(cluster, request)
    cluster.tick()
    cache = cluster.orchid_cache
    pool_attribute = ("pool_trees", "default", "pools", pools[7], "fair_share_ratio")
    op_attribute = ("pool_trees", "default", "operations", ids[123], "usage_ratio")
    pools_map = ("pool_trees", "default", "pools")

    def cold(segments: tuple[str, ...]) -> Callable[[], object]:
        def read() -> object:
            cache.invalidate()
            return cache.get(segments, "/".join(segments))

        return read

    def warm(segments: tuple[str, ...]) -> Callable[[], object]:
        return lambda: cache.get(segments, "/".join(segments))

    rows = [
        ("whole orchid (every get before issue 18)", lambda: build_orchid(cluster)),
        ("pool attribute, first read of a version", cold(pool_attribute)),
        ("operation attribute, first read of a version", cold(op_attribute)),
        ("pool attribute, cached", warm(pool_attribute)),
        ("pools map of the tree, first read of a version", cold(pools_map)),
    ]
    print(f"operations={args.operations} pools={len(pools)} nodes=100 (ms: median, max)")
    for label, action in rows:
        median, worst = _time(action, max(3, args.repeat // 4) if "whole" in label else args.repeat)
        print(f"  {label:50s} {median:9.3f} {worst:9.3f}")
    cluster.close()


if __name__ == "__main__":
    main()
