"""Builders shared by the pool-tree tests."""

from __future__ import annotations

from typing import Any

from ytsched.pooltree import PoolTree, PoolTrees

GIB = 2**30


def vanilla(
    pool: str | None = None, jobs: int = 10, cpu: float = 1.0, **extra: Any
) -> dict[str, Any]:
    """A vanilla spec with one task of ``jobs`` jobs of ``cpu`` cores and 1 GiB each."""
    spec: dict[str, Any] = {
        "tasks": {"main": {"job_count": jobs, "cpu_limit": cpu, "memory_limit": GIB}}
    }
    if pool is not None:
        spec["pool"] = pool
    spec.update(extra)
    return spec


def scheduler(
    tree_config: dict[str, Any] | None = None, cpu: float = 100.0
) -> tuple[PoolTrees, PoolTree]:
    """A scheduler with one default tree ``physical`` and one node of ``cpu`` cores."""
    trees = PoolTrees()
    tree = trees.create_tree("physical", tree_config)
    trees.set_default_tree("physical")
    trees.register_node(
        "node1",
        tags=["default"],
        resource_limits={"cpu": cpu, "user_slots": int(cpu), "memory": 1000 * GIB},
    )
    return trees, tree


def integral_pools(tree: PoolTree) -> None:
    """Add a burst pool (flow 7 cpu, burst 13 cpu) and a relaxed pool (flow 3 cpu) under the
    root: the integral pools of the tests that read integral results."""
    tree.create_pool(
        "burst",
        config={
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 7},
                "burst_guarantee_resources": {"cpu": 13},
            }
        },
    )
    tree.create_pool(
        "relaxed",
        config={"integral_guarantees": {"guarantee_type": "relaxed", "resource_flow": {"cpu": 3}}},
    )


def counters(tree: PoolTree, pool: str) -> tuple[int, int, int]:
    """(operation_count, running_operation_count, lightweight_running_operation_count)."""
    p = tree.pools[pool]
    return (p.operation_count, p.running_operation_count, p.lightweight_running_operation_count)


def state(tree: PoolTree) -> dict[str, Any]:
    """Everything observable about a tree except the fair-share result (for unchanged checks)."""
    view = tree.orchid()
    return {
        "pools": view["pools"],
        "operations": view["operations"],
        "config": view["config"],
        "ephemeral": view["user_to_ephemeral_pools"],
    }
