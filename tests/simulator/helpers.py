"""Small scenario documents for the simulator tests (short runs, coarse heartbeats)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ytsched.simulator import ListRecorder, SimulationResult, load_scenario, simulate
from ytsched.snapshot.files import read_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
GIB = 2**30


def node_group(
    count: int, cpu: float, *, name: str = "node", memory_gib: int = 64
) -> dict[str, Any]:
    return {
        "name": name,
        "count": count,
        "resource_limits": {"cpu": cpu, "user_slots": int(cpu), "memory": memory_gib * GIB},
    }


def tree(pools: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    """A one-tree ``//sys/pool_trees`` export in the JSON form."""
    return {"physical": {"$attributes": {"config": config or {}}, "$value": pools}}


def pool(attributes: dict[str, Any] | None = None, children: dict[str, Any] | None = None) -> Any:
    return {"$attributes": attributes or {}, "$value": children or {}}


def operation(
    op_id: str,
    pool_name: str,
    *,
    jobs: int,
    cpu: float = 1,
    duration: Any = "1m",
    start: Any = 0,
    **spec: Any,
) -> dict[str, Any]:
    task: dict[str, Any] = {"job_count": jobs, "cpu_limit": cpu, "job_duration": duration}
    task.update(spec.pop("task", {}))
    return {
        "id": op_id,
        "user": spec.pop("user", "alice"),
        "start_time": start,
        "spec": {"pool": pool_name, "tasks": {"main": task}, **spec},
    }


def document(**overrides: Any) -> dict[str, Any]:
    """A small valid scenario: 4 nodes x 10 cpu, pools a and b, one operation."""
    base: dict[str, Any] = {
        "duration": "20m",
        "seed": 1,
        "orchid_period": "5m",
        "cluster": {"heartbeat_period": "5s", "node_groups": [node_group(4, 10)]},
        "scheduler": {"fair_share_update_period": "5s"},
        "pool_trees": tree({"a": pool({"weight": 1}), "b": pool({"weight": 1})}),
        "operations": [operation("op", "a", jobs=20, duration="2m")],
    }
    base.update(copy.deepcopy(overrides))
    return base


def run(doc: dict[str, Any], **options: Any) -> tuple[SimulationResult, ListRecorder]:
    recorder = ListRecorder()
    return simulate(load_scenario(doc), recorder=recorder, **options), recorder


def example(name: str) -> Any:
    return read_document(EXAMPLES / f"{name}.yson")


def series_at(result: SimulationResult, pool_name: str, start: float, end: float) -> list[int]:
    """Indices of the samples of a pool within [start, end)."""
    series = result.sampler.pools[("physical", pool_name)]
    return [i for i, t in enumerate(series.times) if start <= t < end]
