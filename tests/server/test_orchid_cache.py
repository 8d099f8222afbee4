"""Orchid reads from the versioned cache: the same values as the full orchid, built per subtree.

The second test is the scenario of ``benchmarks/orchid_load.py`` without timing: many
operations, nodes heartbeating and clients polling pool and operation attributes between
fair-share updates.  It checks what makes the benchmark's latencies possible: no poll builds the
whole orchid, each entry is built at most once per version, and every answer equals the full
orchid of that version.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.server.conftest import Service
from ytsched.server.orchid import build_orchid, navigate

ORCHID = "//sys/scheduler/orchid/scheduler"


def _start(service: Service, pool: str, jobs: int = 2) -> str:
    spec = {"pool": pool, "tasks": {"t": {"job_count": jobs, "command": "sleep 100"}}}
    return str(service.call("start_op", spec=spec)["operation_id"])


def _get(service: Service, path: str) -> Any:
    return service.call("get", path=f"{ORCHID}/{path}")["value"]


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _paths(service: Service, operations: list[str]) -> list[str]:
    assert service.cluster is not None
    tree = service.cluster.trees.trees["default"]
    paths = ["pool_trees/default/pools", "pool_trees/default/operations"]
    for pool in tree.pools:
        paths += [
            f"pool_trees/default/pools/{pool}",
            f"pool_trees/default/pools/{pool}/fair_share_ratio",
            f"pool_trees/default/operations_by_pool/{pool}",
            f"scheduling_info_per_pool_tree/default/fair_share_info/pools/{pool}",
        ]
    for op in operations:
        paths += [
            f"pool_trees/default/operations/{op}",
            f"pool_trees/default/operations/{op}/usage_ratio",
            f"scheduling_info_per_pool_tree/default/fair_share_info/operations/{op}",
            f"operations/{op}",
            f"operations/{op}/progress/scheduling_info_per_pool_tree/default",
        ]
    return paths


def test_routed_entries_equal_the_full_orchid(service: Service) -> None:
    operations = [_start(service, pool) for pool in ("research", "team", "batch", "batch")]
    service.tick()
    service.heartbeat("n1")
    service.tick()
    service.heartbeat("n2")
    assert service.cluster is not None
    cache = service.cluster.orchid_cache
    for path in _paths(service, operations):
        cache.invalidate()
        routed = _get(service, path)
        full = navigate(build_orchid(service.cluster), tuple(path.split("/")), path)
        assert _same(routed, full), path
    assert cache.full_builds == 0
    # Absent entries are the full orchid's ResolveError, not an empty answer.
    assert service.error("get", path=f"{ORCHID}/pool_trees/default/pools/nope") == (
        404,
        "ResolveError",
    )
    assert service.error("get", path=f"{ORCHID}/operations/nope/progress") == (404, "ResolveError")


def test_polling_under_heartbeats_builds_entries_once_per_version(service: Service) -> None:
    pools = ["team", "batch"]  # 48 operations each: within the pools' limit of 50
    operations = [_start(service, pools[i % 2], jobs=3) for i in range(96)]
    assert service.cluster is not None
    cache = service.cluster.orchid_cache
    chooser = random.Random(7)
    nodes = [f"n{i}" for i in range(4)]
    running: dict[str, list[str]] = {node: [] for node in nodes}
    for _ in range(5):  # five fair-share updates, with heartbeats and polls in between
        service.tick()
        version, builds = cache.version, cache.builds
        asked: set[str] = set()
        for _ in range(4):
            for node in nodes:
                answer = service.heartbeat(node, running=running[node])
                running[node] += [start["job_id"] for start in answer["start"]]
            for _ in range(32):  # 32 clients, one poll each
                if chooser.random() < 0.5:
                    path = f"pool_trees/default/pools/{chooser.choice(pools)}/fair_share_ratio"
                else:
                    path = f"pool_trees/default/operations/{chooser.choice(operations)}/usage_ratio"
                asked.add(path.rsplit("/", 1)[0])
                value = _get(service, path)
                assert isinstance(value, float)
        assert cache.version == version  # heartbeats do not invalidate
        # Each entry at most once per version (plus the tree's job counts).
        assert cache.builds - builds <= len(asked) + 1
        full = build_orchid(service.cluster)
        for path in asked:
            segments = tuple(path.split("/"))
            assert _same(cache.get(segments, path), navigate(full, segments, path)), path
    assert cache.full_builds == 0
    assert sum(len(jobs) for jobs in running.values()) > 0


def test_a_slow_whole_orchid_is_not_rebuilt_at_every_version(service: Service) -> None:
    assert service.cluster is not None
    cache = service.cluster.orchid_cache
    first = _get(service, "")
    assert cache.full_builds == 1
    cache.full_build_seconds = 1.0  # as if it had taken a second (thousands of operations)
    service.tick()
    assert _get(service, "") == first and cache.full_builds == 1  # served again, not rebuilt
    # Routed subtrees stay current meanwhile.
    service.call("set", path="//sys/pools/batch/@max_running_operation_count", value=3)
    assert _get(service, "pool_trees/default/pools/batch/max_running_operation_count") == 3
    cache.full_build_seconds = 0.001  # fast builds are redone at every version
    service.tick()
    _get(service, "")
    assert cache.full_builds == 2
