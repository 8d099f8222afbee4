"""Stepping the fair-share update through time.

A single update is pure; what links one update to the next is the integral-guarantee state of
every burst and relaxed pool: its accumulated volume and the integral share it was granted (the
next update charges the volume by that share).  YTsaurus keeps this state in memory between
updates and persists the volumes (``TPool::IntegralResourcesState``); here it travels in the
snapshot, so the simulator, the service and offline tools step the very same code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ytsched.fairshare.model import OperationSpec, TreeSnapshot
from ytsched.fairshare.update import UpdateResult, run_update


def carry_state(snapshot: TreeSnapshot, result: UpdateResult, now: float) -> TreeSnapshot:
    """The snapshot of the next update at ``now``: same tree, integral state carried forward."""
    if snapshot.now is not None and now < snapshot.now:
        raise ValueError(f"time goes backwards: next update at {now} after {snapshot.now}")
    pools = []
    for spec in snapshot.pools:
        element = result.pools[spec.name]
        pools.append(
            dataclasses.replace(
                spec,
                accumulated_resource_volume=element.integral.accumulated_volume,
                last_integral_share_ratio=element.integral.last_share_ratio,
            )
        )
    return dataclasses.replace(snapshot, pools=pools, previous_update_time=snapshot.now, now=now)


def run_timeline(
    first: TreeSnapshot,
    times: list[float],
    operations_at: Callable[[float, UpdateResult | None], list[OperationSpec]],
) -> list[UpdateResult]:
    """Run one update at each of ``times``.

    ``operations_at(t, previous_result)`` gives the operations (with their usage and demand) at
    time ``t``; the previous result lets usage follow the fair share of the previous update.
    """
    results: list[UpdateResult] = []
    snapshot = first
    previous: UpdateResult | None = None
    for index, moment in enumerate(times):
        if index == 0:
            snapshot = dataclasses.replace(snapshot, now=moment)
        else:
            assert previous is not None
            snapshot = carry_state(snapshot, previous, moment)
        snapshot = dataclasses.replace(snapshot, operations=operations_at(moment, previous))
        previous = run_update(snapshot)
        results.append(previous)
    return results
