"""What-if studies: the same workload under two pool configurations, side by side.

Both runs use the same scenario and seed, so the operations, their start times and every job's
work are identical (durations are drawn per operation and task, not in scheduling order, see
:mod:`ytsched.simulator.workload`); only the pool trees differ.  Heartbeat phases are drawn
from the same seed as well.  The report lines up, per pool and for the whole cluster, the
differences that matter when changing a configuration: fair share, usage, waiting time,
preemptions, lost work and integral volume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ytsched.simulator.engine import ProgressCallback, simulate
from ytsched.simulator.results import SimulationResult
from ytsched.simulator.scenario import Scenario
from ytsched.simulator.summary import build_summary

POOL_METRICS = (
    "average_fair_share",
    "average_usage",
    "average_demand",
    "average_strong_guarantee",
    "waiting_time_p50",
    "waiting_time_p90",
    "preempted_job_count",
    "lost_job_seconds",
    "min_accumulated_volume",
    "final_accumulated_volume",
)

CLUSTER_METRICS = (
    ("utilization", "cpu"),
    ("waiting_time", "p50"),
    ("waiting_time", "p90"),
    ("waiting_time", "p99"),
    ("preemptions", "preempted_jobs"),
    ("jobs", "aborted"),
    ("lost_job_seconds", None),
)


@dataclass(slots=True)
class WhatIf:
    a: SimulationResult
    b: SimulationResult
    report: dict[str, Any]


def _difference(a: Any, b: Any) -> Any:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return round(b - a, 6)
    return None


def compare(a: SimulationResult, b: SimulationResult, labels: tuple[str, str]) -> dict[str, Any]:
    """The side-by-side report (JSON-ready)."""
    summary_a = build_summary(a)
    summary_b = build_summary(b)
    cluster: dict[str, Any] = {}
    for section, key in CLUSTER_METRICS:
        name = section if key is None else f"{section}.{key}"
        value_a = summary_a[section] if key is None else summary_a[section].get(key)
        value_b = summary_b[section] if key is None else summary_b[section].get(key)
        cluster[name] = {"a": value_a, "b": value_b, "difference": _difference(value_a, value_b)}
    pools: dict[str, dict[str, Any]] = {}
    trees = sorted(set(summary_a["pools"]) | set(summary_b["pools"]))
    for tree in trees:
        pools_a = summary_a["pools"].get(tree, {})
        pools_b = summary_b["pools"].get(tree, {})
        names = sorted(set(pools_a) | set(pools_b))
        for name in names:
            entry_a = pools_a.get(name)
            entry_b = pools_b.get(name)
            if (entry_a or {}).get("is_ephemeral") and (entry_b or {}).get("is_ephemeral", True):
                continue
            metrics: dict[str, Any] = {}
            for metric in POOL_METRICS:
                value_a = (entry_a or {}).get(metric)
                value_b = (entry_b or {}).get(metric)
                if value_a is None and value_b is None:
                    continue
                metrics[metric] = {
                    "a": value_a,
                    "b": value_b,
                    "difference": _difference(value_a, value_b),
                }
            pools[f"{tree}/{name}"] = {
                "in_a": entry_a is not None,
                "in_b": entry_b is not None,
                **metrics,
            }
    return {"labels": {"a": labels[0], "b": labels[1]}, "cluster": cluster, "pools": pools}


def run_what_if(
    scenario: Scenario,
    pools_a: Any,
    pools_b: Any,
    *,
    labels: tuple[str, str] = ("A", "B"),
    sources: tuple[str, str] = ("pools A", "pools B"),
    seed: int | None = None,
    until: float | None = None,
    progress: ProgressCallback | None = None,
) -> WhatIf:
    """Run the scenario under ``pools_a`` and ``pools_b`` (two ``//sys/pool_trees`` exports;
    ``sources`` name them in errors)."""
    scenario_a = scenario.with_pool_trees(pools_a, sources[0])
    scenario_b = scenario.with_pool_trees(pools_b, sources[1])
    a = simulate(scenario_a, seed=seed, until=until, progress=progress)
    b = simulate(scenario_b, seed=seed, until=until, progress=progress)
    return WhatIf(a, b, compare(a, b, labels))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.0f}"
    return str(value)


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people: one table for the cluster, one per metric group for pools."""
    a, b = report["labels"]["a"], report["labels"]["b"]
    lines = [
        f"# What-if: {a} vs {b}",
        "",
        "## Cluster",
        "",
        f"| metric | {a} | {b} | B - A |",
        "|---|---|---|---|",
    ]
    for name, values in report["cluster"].items():
        lines.append(
            f"| {name} | {_cell(values['a'])} | {_cell(values['b'])} |"
            f" {_cell(values['difference'])} |"
        )
    lines += ["", "## Pools", "", "Averages over the run, in the tree's main resource.", ""]
    lines.append(f"| pool | metric | {a} | {b} | B - A |")
    lines.append("|---|---|---|---|---|")
    for pool, entry in report["pools"].items():
        for metric in POOL_METRICS:
            values = entry.get(metric)
            if values is None:
                continue
            lines.append(
                f"| {pool} | {metric} | {_cell(values['a'])} | {_cell(values['b'])} |"
                f" {_cell(values['difference'])} |"
            )
    return "\n".join(lines) + "\n"
