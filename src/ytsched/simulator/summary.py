"""What a run amounts to: ``summary.json`` and the rows of ``operations.csv``.

Pure functions of a :class:`~ytsched.simulator.engine.SimulationResult`.  Numbers are rounded
to a fixed number of digits so that the files are stable and readable; nothing depends on the
wall clock.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.resources import RESOURCE_NAMES
from ytsched.simulator.results import SimulationResult
from ytsched.simulator.timeseries import PoolSeries
from ytsched.simulator.workload import OperationRecord

DIGITS = 6

CSV_COLUMNS = (
    "id",
    "user",
    "pool_tree",
    "pool",
    "state",
    "job_count",
    "started_job_count",
    "completed_job_count",
    "interrupted_job_count",
    "preempted_job_count",
    "aborted_job_count",
    "start_time",
    "first_job_time",
    "finish_time",
    "duration",
    "waiting_time",
    "job_seconds",
    "lost_job_seconds",
    "lost_cpu_seconds",
    "error",
)


def _round(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return round(value, DIGITS)


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolation percentile (``q`` in [0, 100]) of a list; ``None`` when empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction


def operation_row(record: OperationRecord) -> dict[str, Any]:
    duration = None
    if record.finish_time is not None and record.state != "refused":
        duration = record.finish_time - record.start_time
    return {
        "id": record.id,
        "user": record.user,
        "pool_tree": record.tree,
        "pool": record.pool,
        "state": record.state,
        "job_count": record.job_count,
        "started_job_count": record.started_job_count,
        "completed_job_count": record.completed_job_count,
        "interrupted_job_count": record.interrupted_job_count,
        "preempted_job_count": record.preempted_job_count,
        "aborted_job_count": record.aborted_job_count,
        "start_time": _round(record.start_time),
        "first_job_time": _round(record.first_job_time),
        "finish_time": _round(record.finish_time),
        "duration": _round(duration),
        "waiting_time": _round(record.waiting_time),
        "job_seconds": _round(record.job_seconds),
        "lost_job_seconds": _round(record.lost_job_seconds),
        "lost_cpu_seconds": _round(record.lost_cpu_seconds),
        "error": record.error,
    }


def _pool_summary(series: PoolSeries, updates: int) -> dict[str, Any]:
    """Averages over every update of the run (a pool absent from an update counts as 0)."""
    n = max(updates, 1)
    summary: dict[str, Any] = {
        "average_usage": _round(series.usage_sum / n),
        "average_demand": _round(series.demand_sum / n),
        "average_fair_share": _round(series.fair_share_sum / n),
        "average_strong_guarantee": _round(series.guarantee_sum / n),
        "average_usage_ratio": _round(series.usage_share_sum / n),
        "average_fair_share_ratio": _round(series.fair_share_ratio_sum / n),
        "average_strong_guarantee_ratio": _round(series.guarantee_ratio_sum / n),
        "is_ephemeral": series.ephemeral,
    }
    if series.integral_type != "none":
        summary["integral_guarantee_type"] = series.integral_type
        if series.volume:
            summary["final_accumulated_volume"] = _round(series.volume[-1])
            summary["min_accumulated_volume"] = _round(min(series.volume))
            summary["max_accumulated_volume"] = _round(max(series.volume))
            summary["integral_pool_capacity"] = _round(series.capacity[-1])
    return summary


def build_summary(result: SimulationResult) -> dict[str, Any]:
    """The content of ``summary.json``."""
    counters = result.counters
    utilization = {
        name: _round(counters.used[i] / counters.capacity[i])
        for i, name in enumerate(RESOURCE_NAMES)
        if counters.capacity[i] > 0
    }
    records = result.operations
    waits = [r.waiting_time for r in records if r.waiting_time is not None]
    by_state: dict[str, int] = defaultdict(int)
    for record in records:
        by_state[record.state] += 1
    per_pool_ops: dict[tuple[str, str], list[OperationRecord]] = defaultdict(list)
    for record in records:
        if record.tree is not None and record.pool is not None:
            per_pool_ops[(record.tree, record.pool)].append(record)
    pools: dict[str, dict[str, Any]] = {}
    for (tree, pool), series in sorted(result.sampler.pools.items()):
        tree_view = pools.setdefault(tree, {})
        tree_series = result.sampler.trees.get(tree)
        entry = _pool_summary(series, tree_series.updates if tree_series else 0)
        own = per_pool_ops.get((tree, pool), [])
        if pool != ROOT_POOL_NAME:
            own_waits = [r.waiting_time for r in own if r.waiting_time is not None]
            entry["operation_count"] = len(own)
            entry["preempted_job_count"] = sum(r.preempted_job_count for r in own)
            entry["lost_job_seconds"] = _round(sum(r.lost_job_seconds for r in own))
            entry["waiting_time_p50"] = _round(percentile(own_waits, 50))
            entry["waiting_time_p90"] = _round(percentile(own_waits, 90))
        tree_view[pool] = entry
    return {
        "seed": result.seed,
        "simulated_seconds": _round(result.end_time),
        "fair_share_updates": counters.fair_share_updates,
        "heartbeats": counters.heartbeats,
        "utilization": utilization,
        "operations": {
            "total": len(records),
            "by_state": dict(sorted(by_state.items())),
            "never_started_a_job": sum(
                1 for r in records if r.first_job_time is None and r.state != "not_started"
            ),
        },
        "waiting_time": {
            "count": len(waits),
            "p50": _round(percentile(waits, 50)),
            "p90": _round(percentile(waits, 90)),
            "p99": _round(percentile(waits, 99)),
            "max": _round(max(waits)) if waits else None,
            "mean": _round(sum(waits) / len(waits)) if waits else None,
        },
        "jobs": {
            "started": counters.jobs_started,
            "completed": counters.jobs_completed,
            "completed_after_interruption": counters.jobs_completed_after_interruption,
            "aborted": counters.jobs_aborted,
            "aborted_by_reason": dict(sorted(counters.aborts.items())),
            "aborted_after_interruption_completed_in_time": (
                counters.aborted_after_interruption_in_time
            ),
        },
        "preemptions": {
            "interruptions_by_reason": dict(sorted(counters.interruptions.items())),
            "preempted_jobs": sum(r.preempted_job_count for r in records),
        },
        "lost_job_seconds": _round(sum(r.lost_job_seconds for r in records)),
        "lost_cpu_seconds": _round(sum(r.lost_cpu_seconds for r in records)),
        "actions": {"applied": counters.actions_applied, "failed": counters.actions_failed},
        "pools": pools,
    }
