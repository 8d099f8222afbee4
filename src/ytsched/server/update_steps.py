"""The periodic fair-share update as the service runs it: in steps, the engine off the loop.

Everything else in the service runs on one event loop, so a piece of update work that runs
there for 50 ms makes every heartbeat and orchid read that arrives meanwhile wait for up to
50 ms.  YTsaurus computes fair shares on its own thread pool over a snapshot of the tree and
publishes the result, while node shards keep scheduling with the previous one
(``DoFairShareUpdateAt`` in ``yt/yt/server/scheduler/strategy/pool_tree.cpp``, the published
snapshot in ``strategy/pool_tree_snapshot.h``).  The service does the same, in these steps, with the
loop free between any two of them:

1. reconcile allocations of jobs the pool trees ended (loop);
2. take the engine input of every tree (loop: it reads the live model);
3. compute the fair shares in a worker thread (``run_update`` reads nothing but its input;
   the native core releases the GIL, so the loop keeps serving requests on the other core);
   trees smaller than :data:`WORKER_MIN_ELEMENTS` compute on the loop with step 4;
4. keep the results (integral volumes; loop);
5. after a short pause, build the scheduling state from them aside, in slices of
   :data:`~ytsched.scheduling.post_update_aside.OPERATIONS_PER_SLICE` operations and one
   slice per tree-wide pass (``Scheduler.finish_update_aside``; heartbeats keep using the
   previous state, which the slices do not touch), then publish it in one short step that
   brings it up to date with what heartbeats changed meanwhile (usage, pending allocations;
   see :mod:`ytsched.scheduling.post_update_aside`), then free the replaced state in more.
   Under :data:`ASIDE_MIN_OPERATIONS` operations the state is built in one step
   (``Scheduler.finish_update``), which is then as short as publication.  If a pool or tree
   changed, or an operation changed pools, since step 2 (operations arriving or leaving do
   not count: ``scheduler.structure_compatible``), steps 1-4 run again first (at most
   :data:`RETRIES` times, then ``finish_update`` computes and builds once more in one step),
   because the state needs shares computed on the structure it is built on.

Heartbeats served between the steps schedule with the previous state, never a half-built one:
the only step that changes the scheduling state is the publication, which is one
uninterrupted call.  The simulator and ``Cluster.tick`` keep the single-threaded
``Scheduler.update``, which gives the same results for the same inputs.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.scheduling.post_update_aside import OPERATIONS_PER_SLICE
from ytsched.scheduling.scheduler import (
    PendingUpdate,
    Scheduler,
    collector_paused,
    structure_compatible,
)
from ytsched.server import crashpoints

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

RETRIES = 2
"""How often steps 1-4 run again when the structure changed while they ran."""

WORKER_MIN_ELEMENTS = 500
"""Pools and operations from which the engine runs in the worker thread.  Below, it takes a
millisecond or two, and handing it to a thread costs more: on a busy machine the worker
waits for a core and then for the GIL, which stretched a 2 ms update of 30 operations to
100 ms of wall time, so updates came half as often.  Small trees compute on the loop, in the
step that keeps the results."""

ASIDE_MIN_OPERATIONS = 500
"""Operations (all trees) from which the state is built aside in slices.  Below, the one-step
build takes a few milliseconds, about what publication alone costs, and the slices would
only add work (~25% more per update at 30 operations and 2,000 nodes)."""

COLLECT_EVERY = 4
"""Slices of the aside build between two collections of the young generations."""

CLEANUP_PER_SLICE = 2000
"""Elements per slice when the replaced state and result are unlinked after publication."""

_T = TypeVar("_T")


@dataclass(slots=True)
class StepTimes:
    """Seconds spent per step of one update: what requests could wait for (on the loop) and
    what ran beside them (in the worker thread)."""

    loop: list[float] = field(default_factory=list)
    worker: float = 0.0
    publish: float = 0.0
    """The step that put the new scheduling state in place."""
    recomputations: int = 0
    """Steps 1-4 done again because the structure changed meanwhile."""
    fallbacks: list[str] = field(default_factory=list)
    """Why a tree's state was built in one step after all (``AsideBuild.fallback``)."""

    @property
    def total(self) -> float:
        return sum(self.loop) + self.worker

    @property
    def longest_loop_step(self) -> float:
        return max(self.loop, default=0.0)


def _on_loop(times: StepTimes, action: Callable[[], _T]) -> _T:
    started = time.perf_counter()
    with collector_paused():
        result = action()
    times.loop.append(time.perf_counter() - started)
    return result


def compute(snapshots: dict[str, TreeSnapshot]) -> dict[str, UpdateResult]:
    """Step 3: the engine on every tree's input (pure; runs in the worker thread)."""
    return {name: run_update(snapshot) for name, snapshot in snapshots.items()}


async def _begin(
    scheduler: Scheduler, executor: ThreadPoolExecutor, now: float, times: StepTimes
) -> PendingUpdate:
    """Steps 1-4, with the loop free between them."""
    _on_loop(times, scheduler.reconcile)
    await asyncio.sleep(0)
    inputs = _on_loop(times, lambda: scheduler.snapshot_update(now))
    size = sum(len(s.pools) + len(s.operations) for s in inputs.snapshots.values())
    if size < WORKER_MIN_ELEMENTS:
        return _on_loop(times, lambda: scheduler.adopt_results(inputs, compute(inputs.snapshots)))
    started = time.perf_counter()
    results = await asyncio.get_running_loop().run_in_executor(executor, compute, inputs.snapshots)
    times.worker += time.perf_counter() - started
    return _on_loop(times, lambda: scheduler.adopt_results(inputs, results))


async def update_in_steps(
    cluster: Cluster, executor: ThreadPoolExecutor, now: float, pause: float
) -> StepTimes:
    """One fair-share update of ``cluster`` at ``now`` (see the module docstring)."""
    scheduler = cluster.scheduler
    times = StepTimes()
    pending = await _begin(scheduler, executor, now, times)
    if crashpoints.ARMED:
        crashpoints.reach("fair_share_update")
    await asyncio.sleep(pause)
    for attempt in range(RETRIES + 1):
        if pending.structure is not None and not structure_compatible(
            pending.structure, scheduler.trees
        ):
            if attempt == RETRIES:
                times.fallbacks = ["the structure kept changing"]
                break
            again = await _begin(scheduler, executor, now, times)
            again.replaced = [*pending.replaced, *again.replaced]
            pending = again
            times.recomputations += 1
            await asyncio.sleep(0)
        if (
            sum(len(result.operations) for result in pending.results.values())
            < ASIDE_MIN_OPERATIONS
        ):
            break  # small: one step (below)
        aside = scheduler.finish_update_aside(pending, OPERATIONS_PER_SLICE)
        with collector_paused():
            # The cyclic collector is paused over all slices (letting it run in them cost 2-3
            # times as much in all and made longer steps: its young collections walked the
            # growing new state again and again) and the young generations are collected
            # every COLLECT_EVERY slices, each time only what those slices built (one
            # collection at the end walked the whole new state: 5-15 ms at 3,000
            # operations).  Requests served in between run with it paused too.
            for index, _ in enumerate(_timed(times, aside.steps())):
                await asyncio.sleep(0)
                if index % COLLECT_EVERY == COLLECT_EVERY - 1:
                    _timed_call(times, lambda: gc.collect(1), publish=False)
                    await asyncio.sleep(0)
            published = _timed_call(times, aside.publish)
            if published:
                await asyncio.sleep(0)
                for _ in _timed(times, aside.cleanup(CLEANUP_PER_SLICE)):
                    await asyncio.sleep(0)
            await asyncio.sleep(0)
            collecting = time.perf_counter()
        times.loop.append(time.perf_counter() - collecting)
        if published:
            times.fallbacks = [b.fallback for b in aside.builds.values() if b.fallback]
            return times
    # A small tree, or the structure kept changing: build in one step (computing again
    # first if the structure changed), as Scheduler.update does.
    _on_loop(times, lambda: scheduler.finish_update(pending))
    times.publish = times.loop[-1]
    return times


def _timed(times: StepTimes, steps: Iterator[None]) -> Iterator[None]:
    """``steps``, each one's duration recorded as a step on the loop."""
    while True:
        started = time.perf_counter()
        try:
            next(steps)
        except StopIteration:
            times.loop.append(time.perf_counter() - started)
            return
        times.loop.append(time.perf_counter() - started)
        yield


def _timed_call(times: StepTimes, action: Callable[[], _T], *, publish: bool = True) -> _T:
    """``action()`` as one step on the loop (``publish``: the publishing one)."""
    started = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - started
    times.loop.append(elapsed)
    if publish:
        times.publish = elapsed
    return result
