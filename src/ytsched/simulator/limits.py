"""Bounds on a simulation, checked before it starts.

A scenario with 10^9 nodes or jobs, a 10^8-day duration or a 1 ms orchid period over hours is
a typo, not a study: without bounds it is discovered after minutes and gigabytes.  Each limit is
checked up front and refused with its name, so the fix is obvious.  Per operation the service's
own limits apply (``max_task_count``, ``max_total_job_count`` of YTsaurus's
``vanilla_operation_options``, see :mod:`ytsched.server.limits`); the others are ours
(docs/simulator.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ytsched.simulator.scenario import ScenarioDocument

MAX_NODES = 100_000
"""Nodes in the cluster at any time (every group plus every ``add_nodes``)."""
MAX_OPERATIONS = 1_000_000
"""Operations in the workload, ``repeat`` copies included."""
MAX_TOTAL_JOBS = 10_000_000
"""Jobs over the whole workload."""
MAX_DURATION = 366 * 86_400.0
"""Seconds of simulated time (a year)."""
MAX_ORCHID_SNAPSHOTS = 100_000
"""Orchid snapshots a run may take (duration / orchid period)."""
MAX_TASK_COUNT = 100
MAX_TOTAL_JOB_COUNT = 100_000


def _refuse(path: str, message: str) -> Exception:
    from ytsched.simulator.scenario import scenario_error

    return scenario_error(path, message)


def check_scenario(document: ScenarioDocument) -> None:
    """The limits a scenario document can break by itself (before anything is expanded)."""
    nodes = sum(group.count for group in document.cluster.node_groups)
    for action in document.actions:
        group = getattr(action, "group", None)
        count = getattr(group, "count", None)
        if isinstance(count, int):
            nodes += count
    if nodes > MAX_NODES:
        raise _refuse("cluster.node_groups", f"{nodes} nodes exceed the limit of {MAX_NODES}")
    operations = sum(e.repeat.count if e.repeat is not None else 1 for e in document.operations)
    if operations > MAX_OPERATIONS:
        raise _refuse("operations", f"{operations} operations exceed the limit of {MAX_OPERATIONS}")
    total = 0
    for index, entry in enumerate(document.operations):
        tasks = entry.spec.tasks
        if len(tasks) > MAX_TASK_COUNT:
            raise _refuse(
                f"operations[{index}].spec.tasks",
                f"Maximum number of tasks exceeded: {len(tasks)} > {MAX_TASK_COUNT}",
            )
        jobs = sum(task.job_count for task in tasks.values())
        if jobs > MAX_TOTAL_JOB_COUNT:
            raise _refuse(
                f"operations[{index}].spec.tasks",
                f"Maximum total job count exceeded: {jobs} > {MAX_TOTAL_JOB_COUNT}",
            )
        total += jobs * (entry.repeat.count if entry.repeat is not None else 1)
    if total > MAX_TOTAL_JOBS:
        raise _refuse("operations", f"{total} jobs in all exceed the limit of {MAX_TOTAL_JOBS}")


def check_run(end_time: float, orchid_period: float, what: str = "duration") -> None:
    """The limits of one run: its simulated time and how many orchid snapshots it takes."""
    if not math.isfinite(end_time) or end_time < 0:
        raise _refuse(what, f"{end_time!r} is not a finite, non-negative time")
    if end_time > MAX_DURATION:
        raise _refuse(
            what,
            f"{end_time:g} s of simulated time exceed the limit of {MAX_DURATION:g} s (366 days)",
        )
    if not math.isfinite(orchid_period) or orchid_period < 0:
        raise _refuse("orchid_period", f"{orchid_period!r} is not a finite, non-negative period")
    if orchid_period > 0 and end_time / orchid_period > MAX_ORCHID_SNAPSHOTS:
        raise _refuse(
            "orchid_period",
            f"{end_time:g} s at one orchid snapshot per {orchid_period:g} s would take"
            f" {end_time / orchid_period:.0f} snapshots, more than the limit of"
            f" {MAX_ORCHID_SNAPSHOTS}",
        )
