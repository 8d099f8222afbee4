"""Deterministic generator of large synthetic pool trees for benchmarks.

Trees mimic production shapes: a few levels of pools with strong guarantees on some of them,
mixed ``fair_share`` and ``fifo`` leaf pools, operations with usage below demand in all five
resources, some gang operations, and (optionally) burst and relaxed integral pools.  The same
seed always gives the same snapshot document (the format of ``docs/snapshot-format.md``).
"""

from __future__ import annotations

import random
from typing import Any

TOTAL = {
    "user_slots": 200_000,
    "cpu": 100_000.0,
    "gpu": 4_000,
    "memory": 400 * 2**40,
    "network": 100_000,
}


def generate_tree(
    pool_count: int,
    operation_count: int,
    *,
    depth: int = 4,
    seed: int = 1,
    fifo_fraction: float = 0.3,
    integral_fraction: float = 0.0,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A snapshot document with ``pool_count`` pools and ``operation_count`` operations."""
    rng = random.Random(seed)
    elements: list[dict[str, Any]] = [{"type": "pool", "name": "<Root>", "parent": None}]
    levels: list[list[str]] = [["<Root>"]]
    remaining = pool_count
    # Spread pools over the levels, geometrically more at deeper levels.
    weights = [2.0**level for level in range(1, depth + 1)]
    per_level = [max(1, int(pool_count * w / sum(weights))) for w in weights]
    per_level[-1] += pool_count - sum(per_level)
    guarantee_budget = {"root": TOTAL["cpu"] * 0.8}
    guarantees: dict[str, float] = {"<Root>": TOTAL["cpu"]}
    counter = 0
    for count in per_level:
        count = min(count, remaining)
        if count <= 0:
            break
        names: list[str] = []
        parents = levels[-1]
        children_guarantee: dict[str, float] = {}
        for _ in range(count):
            parent = rng.choice(parents)
            name = f"pool{counter}"
            counter += 1
            pool: dict[str, Any] = {
                "type": "pool",
                "name": name,
                "parent": parent,
                "weight": rng.choice([1.0, 1.0, 2.0, 5.0, 10.0]),
            }
            parent_guarantee = guarantees.get(parent, 0.0)
            if parent_guarantee > 0 and rng.random() < 0.5:
                share = rng.uniform(0.0, 0.3)
                used = children_guarantee.get(parent, 0.0)
                amount = round(min(parent_guarantee * share, parent_guarantee * 0.9 - used), 2)
                if amount > 0:
                    pool["strong_guarantee_resources"] = {"cpu": amount}
                    children_guarantee[parent] = used + amount
                    guarantees[name] = amount
            if rng.random() < 0.1:
                pool["resource_limits"] = {"cpu": round(TOTAL["cpu"] * rng.uniform(0.05, 0.5), 2)}
            elements.append(pool)
            names.append(name)
        remaining -= count
        levels.append(names)
    del guarantee_budget

    leaves = levels[-1]
    fifo = set(rng.sample(leaves, int(len(leaves) * fifo_fraction)))
    for element in elements:
        if element["name"] in fifo:
            element["mode"] = "fifo"
            element.pop("strong_guarantee_resources", None)

    if integral_fraction > 0:
        candidates = [e for e in elements if e["name"] in set(levels[1])]
        for element in rng.sample(candidates, max(1, int(len(candidates) * integral_fraction))):
            element.pop("strong_guarantee_resources", None)
            flow = round(TOTAL["cpu"] * rng.uniform(0.001, 0.01), 2)
            if rng.random() < 0.5:
                element["integral_guarantees"] = {
                    "guarantee_type": "burst",
                    "resource_flow": {"cpu": flow},
                    "burst_guarantee_resources": {"cpu": round(flow * 3, 2)},
                }
            else:
                element["integral_guarantees"] = {
                    "guarantee_type": "relaxed",
                    "resource_flow": {"cpu": flow},
                }
            # Volume accrues in every resource in proportion to the cluster (the ratio volume
            # is a minimum over resources, so a cpu-only volume would count as empty).
            banked = flow / TOTAL["cpu"] * 86400 * rng.random()
            element["accumulated_resource_volume"] = {
                name: amount * banked for name, amount in TOTAL.items()
            }

    for index in range(operation_count):
        parent = rng.choice(leaves)
        jobs = rng.randint(1, 400)
        cpu_per_job = rng.choice([1.0, 2.0, 4.0, 8.0])
        running = rng.randint(0, jobs)
        gpu_per_job = rng.choice([0, 0, 0, 1, 8])
        memory_per_job = rng.choice([2, 4, 8, 16]) * 2**30
        net = rng.choice([0, 1, 10])

        per_job = {
            "user_slots": 1,
            "cpu": cpu_per_job,
            "gpu": gpu_per_job,
            "memory": memory_per_job,
            "network": net,
        }

        def amounts(n: int, per_job: dict[str, float] = per_job) -> dict[str, float]:
            return {name: n * amount for name, amount in per_job.items()}

        operation: dict[str, Any] = {
            "type": "operation",
            "name": f"op{index}",
            "parent": parent,
            "resource_demand": amounts(jobs),
            "resource_usage": amounts(running),
            "start_time": float(index),
            "weight": rng.choice([1.0, 1.0, 1.0, 2.0]),
        }
        if gpu_per_job and rng.random() < 0.5:
            operation["is_gang"] = True
        elements.append(operation)

    return {
        "options": dict(options or {}),
        "total_resource_limits": TOTAL,
        "now": 86400.0,
        "previous_update_time": 86399.0,
        "elements": elements,
    }
