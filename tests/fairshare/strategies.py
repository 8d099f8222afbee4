"""Hypothesis strategies for random but valid pool-tree snapshot documents."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TOTAL = {"user_slots": 100, "cpu": 100.0, "gpu": 8, "memory": 1000 * 2**20, "network": 0}
RESOURCES = ("user_slots", "cpu", "gpu", "memory")


@st.composite
def amounts(draw: st.DrawFn, scale: float = 1.0) -> dict[str, float]:
    """Absolute amounts, sometimes above the cluster size."""
    result: dict[str, float] = {}
    for name in RESOURCES:
        if draw(st.booleans()):
            fraction = draw(st.floats(min_value=0.0, max_value=1.5 * scale, allow_nan=False))
            value = TOTAL[name] * fraction
            result[name] = round(value, 2) if name == "cpu" else float(round(value))
    return result


@st.composite
def snapshots(
    draw: st.DrawFn,
    *,
    max_pools: int = 6,
    max_operations: int = 10,
    allow_gangs: bool = True,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A snapshot document (form 2) with a random tree, guarantees, limits and operations."""
    pool_count = draw(st.integers(min_value=0, max_value=max_pools))
    elements: list[dict[str, Any]] = [{"type": "pool", "name": "<Root>", "parent": None}]
    pools = ["<Root>"]
    fifo: set[str] = set()
    guarantee_left: dict[str, float] = {"<Root>": TOTAL["cpu"]}
    for index in range(pool_count):
        parent = draw(st.sampled_from([p for p in pools if p not in fifo]))
        name = f"pool{index}"
        pool: dict[str, Any] = {"type": "pool", "name": name, "parent": parent}
        if draw(st.booleans()):
            pool["weight"] = draw(st.sampled_from([0.5, 1.0, 2.0, 10.0]))
        budget = guarantee_left.get(parent, 0.0)
        if budget > 1 and draw(st.booleans()):
            amount = round(draw(st.floats(min_value=0.0, max_value=budget)), 2)
            pool["strong_guarantee_resources"] = {"cpu": amount}
            guarantee_left[parent] = budget - amount
            guarantee_left[name] = amount
        if draw(st.integers(0, 4)) == 0:
            pool["resource_limits"] = draw(amounts(scale=0.8))
        if draw(st.integers(0, 3)) == 0:
            pool["mode"] = "fifo"
            fifo.add(name)
            pool.pop("strong_guarantee_resources", None)
            guarantee_left.pop(name, None)
        elements.append(pool)
        pools.append(name)
    holders = [p for p in pools if p != "<Root>"] or ["<Root>"]
    operation_count = draw(st.integers(min_value=0, max_value=max_operations))
    for index in range(operation_count):
        parent = draw(st.sampled_from(holders))
        demand = draw(amounts())
        usage = {
            name: (round(value * f, 2) if name == "cpu" else float(int(value * f)))
            for name, value in demand.items()
            for f in [draw(st.floats(min_value=0.0, max_value=1.0))]
        }
        operation: dict[str, Any] = {
            "type": "operation",
            "name": f"op{index}",
            "parent": parent,
            "resource_demand": demand,
            "resource_usage": usage,
            "start_time": float(draw(st.integers(0, 5))),
            "weight": draw(st.sampled_from([1.0, 1.0, 2.0, 3.0])),
        }
        if allow_gangs and draw(st.integers(0, 3)) == 0:
            operation["is_gang"] = True
        if draw(st.integers(0, 5)) == 0:
            operation["resource_limits"] = draw(amounts(scale=0.5))
        elements.append(operation)
    return {"options": dict(options or {}), "total_resource_limits": TOTAL, "elements": elements}
