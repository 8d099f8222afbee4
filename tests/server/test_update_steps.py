"""The service's update in steps: heartbeats are answered while the engine computes in its
worker thread, they never see a half-built state, and the outcome equals ``Cluster.tick``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import UpdateResult
from ytsched.scheduling.scheduler import AsideUpdate
from ytsched.server import heartbeats, operations, update_steps
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.models import HeartbeatRequest

from .conftest import NODE_LIMITS, TREES

ROOT = "root"


def _cluster(directory: Path, now: list[float]) -> Cluster:
    config = ServiceConfig(data_dir=directory, admin_token="t", initial_pool_trees=TREES)
    return Cluster(config, clock=lambda: now[0])


def _start(cluster: Cluster, pool: str, jobs: int = 1) -> str:
    spec = {"pool": pool, "tasks": {"t": {"job_count": jobs, "command": "true"}}}
    return operations.start_operation(cluster, ROOT, "vanilla", spec)


def _beat(cluster: Cluster, address: str) -> set[str]:
    request = HeartbeatRequest(address=address, resource_limits=NODE_LIMITS)
    return {start["operation_id"] for start in heartbeats.process(cluster, request)["start"]}


class HeldEngine:
    """Replaces the worker thread's computation with one that waits until released, so a
    test can act on the loop while the engine is (still) computing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.computing = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        real: Callable[[dict[str, TreeSnapshot]], dict[str, UpdateResult]] = update_steps.compute

        def held(snapshots: dict[str, TreeSnapshot]) -> dict[str, UpdateResult]:
            self.calls += 1
            self.computing.set()
            assert self.release.wait(60), "the test never released the engine"
            return real(snapshots)

        monkeypatch.setattr(update_steps, "compute", held)
        monkeypatch.setattr(update_steps, "WORKER_MIN_ELEMENTS", 0)  # small trees too

    async def started(self) -> None:
        for _ in range(60_000):  # bounded: at most about a minute
            if self.computing.is_set():
                return
            await asyncio.sleep(0.001)
        raise AssertionError("the engine never started")


def test_heartbeats_are_answered_while_the_engine_computes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    cluster = _cluster(tmp_path, now)
    first = _start(cluster, "batch")
    cluster.tick()
    second = _start(cluster, "research")
    engine = HeldEngine(monkeypatch)

    async def scenario() -> tuple[set[str], set[str]]:
        now[0] += 1.0
        update = asyncio.create_task(cluster.tick_concurrently(pause=0.0))
        await engine.started()
        # The engine is computing in its thread: this heartbeat is answered now, with the
        # previous scheduling state (which does not know the second operation yet).
        during = _beat(cluster, "n1")
        assert not update.done()
        engine.release.set()
        await update
        return during, _beat(cluster, "n2")

    during, after = asyncio.run(scenario())
    assert during == {first}
    assert after == {second}
    assert engine.calls == 1
    assert cluster.last_update_time == now[0]
    cluster.close()


def test_a_structure_change_while_computing_is_computed_again_in_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    cluster = _cluster(tmp_path, now)
    _start(cluster, "batch")
    cluster.tick()
    engine = HeldEngine(monkeypatch)

    async def scenario() -> None:
        now[0] += 1.0
        update = asyncio.create_task(cluster.tick_concurrently(pause=0.0))
        await engine.started()
        # A new pool: the shares must be computed on the new structure.
        cluster.scheduler.trees.trees["default"].create_pool("extra", None, {})
        engine.release.set()
        await update

    asyncio.run(scenario())
    assert engine.calls == 2  # computed again in the worker, not on the loop
    state = cluster.scheduler.ledger.tree_states["default"]
    assert "extra" in state.elements
    assert "extra" in state.result.pools
    cluster.close()


def test_operations_arriving_while_computing_join_at_the_next_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operation that arrives during an update is scheduled from the next one on, as one
    arriving just after it would be (``scheduler.structure_compatible``): no recomputation."""
    monkeypatch.setattr(update_steps, "ASIDE_MIN_OPERATIONS", 0)
    now = [1000.0]
    cluster = _cluster(tmp_path, now)
    first = _start(cluster, "batch")
    cluster.tick()
    engine = HeldEngine(monkeypatch)
    late: list[str] = []

    async def scenario() -> None:
        now[0] += 1.0
        update = asyncio.create_task(cluster.tick_concurrently(pause=0.0))
        await engine.started()
        late.append(_start(cluster, "research"))
        engine.release.set()
        await update

    asyncio.run(scenario())
    assert engine.calls == 1
    state = cluster.scheduler.ledger.tree_states["default"]
    assert first in state.operations and late[0] not in state.operations
    engine.release.set()
    now[0] += 1.0
    asyncio.run(cluster.tick_concurrently(pause=0.0))
    assert late[0] in cluster.scheduler.ledger.tree_states["default"].operations
    cluster.close()


def _shares(cluster: Cluster, ids: list[str]) -> dict[str, Any]:
    """Fair shares by pool name and by operation start order (operation ids are random)."""
    result = cluster.scheduler.ledger.tree_states["default"].result
    shares = {name: element.fair_share for name, element in result.pools.items()}
    shares.update({f"op{ids.index(n)}": e.fair_share for n, e in result.operations.items()})
    return shares


@pytest.mark.parametrize("in_worker", [True, False])
def test_the_update_in_steps_equals_the_synchronous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_worker: bool
) -> None:
    """Same inputs, same clock: ``tick_concurrently`` (engine in the worker thread and the
    state built aside, or, for a small tree, both in one step on the loop) and ``tick`` give
    the same shares and placements (the simulator keeps ``Scheduler.update``)."""
    monkeypatch.setattr(update_steps, "WORKER_MIN_ELEMENTS", 0 if in_worker else 10**9)
    monkeypatch.setattr(update_steps, "ASIDE_MIN_OPERATIONS", 0 if in_worker else 10**9)
    outcomes = []
    for index, concurrent in enumerate((False, True)):
        now = [1000.0]
        cluster = _cluster(tmp_path / str(index), now)
        ids = [
            _start(cluster, pool, jobs)
            for pool, jobs in (("batch", 3), ("research", 5), ("team", 2), ("batch", 1))
        ]
        beats = []
        for _ in range(3):
            now[0] += 1.0
            if concurrent:
                asyncio.run(cluster.tick_concurrently(pause=0.0))
            else:
                cluster.tick()
            beats.append(sorted(ids.index(op) for op in _beat(cluster, f"n{len(beats)}")))
        cluster.store.commit()
        outcomes.append((_shares(cluster, ids), beats, cluster.last_update_time))
        cluster.close()
    assert outcomes[0] == outcomes[1]


def test_operations_past_their_time_limit_fail_before_the_update(tmp_path: Path) -> None:
    now = [1000.0]
    cluster = _cluster(tmp_path, now)
    spec = {"pool": "batch", "time_limit": 5000, "tasks": {"t": {"job_count": 1, "command": "x"}}}
    limited = operations.start_operation(cluster, ROOT, "vanilla", spec)
    unlimited = _start(cluster, "batch")
    now[0] += 4.0
    asyncio.run(cluster.tick_concurrently(pause=0.0))
    assert cluster.record(limited).row.state == "running"
    now[0] += 2.0
    asyncio.run(cluster.tick_concurrently(pause=0.0))
    row = cluster.record(limited).row
    assert row.state == "failed"
    assert "time_limit 5000 ms" in str(row.result)
    assert cluster.record(unlimited).row.state == "running"
    cluster.close()


def test_heartbeats_between_the_slices_of_the_state_see_the_previous_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheduling state is built aside in slices of one operation here: heartbeats are
    answered between the slices, with the previous state, intact (never a half-built or
    half-disposed one), and the new state appears at once at publication."""
    monkeypatch.setattr(update_steps, "OPERATIONS_PER_SLICE", 1)
    monkeypatch.setattr(update_steps, "ASIDE_MIN_OPERATIONS", 0)
    monkeypatch.setattr(update_steps, "WORKER_MIN_ELEMENTS", 10**9)
    now = [1000.0]
    cluster = _cluster(tmp_path, now)
    first = [_start(cluster, pool, jobs=3) for pool in ("batch", "research", "team", "batch")]
    cluster.tick()
    late = _start(cluster, "team")
    slicing = [False]
    real_steps = AsideUpdate.steps

    def steps(self: AsideUpdate) -> Iterator[None]:
        slicing[0] = True
        try:
            yield from real_steps(self)
        finally:
            slicing[0] = False

    monkeypatch.setattr(AsideUpdate, "steps", steps)

    async def scenario() -> tuple[int, set[str]]:
        previous = cluster.scheduler.ledger.tree_states["default"]
        elements = {name: element.parent for name, element in previous.elements.items()}
        now[0] += 1.0
        update = asyncio.create_task(cluster.tick_concurrently(pause=0.0))
        between = 0
        started: set[str] = set()
        for _ in range(100_000):  # bounded; the update takes a few dozen loop turns
            if update.done():
                break
            await asyncio.sleep(0)
            if not slicing[0]:
                continue
            state = cluster.scheduler.ledger.tree_states["default"]
            assert state is previous
            assert {n: e.parent for n, e in state.elements.items()} == elements
            assert set(state.operations) == set(first)
            started |= _beat(cluster, f"n{between % 3}")
            between += 1
        await update
        return between, started

    between, started = asyncio.run(scenario())
    assert between >= 5  # slices of one operation: a heartbeat between each two
    assert started and started <= set(first)
    state = cluster.scheduler.ledger.tree_states["default"]
    assert set(state.operations) == {*first, late}
    assert all(e.parent is not None for e in state.elements.values() if e is not state.root)
    assert cluster.last_update_time == now[0]
    cluster.close()
