"""The bounded history of shares behind the UI's charts."""

from __future__ import annotations

import math

import pytest

from tests.server.conftest import Service
from ytsched.server.history import History


def _start(service: Service, pool: str, jobs: int = 2) -> str:
    spec = {"pool": pool, "tasks": {"t": {"job_count": jobs, "command": "true"}}}
    return str(service.call("start_op", spec=spec)["operation_id"])


def _finish(service: Service, op: str) -> None:
    service.call("abort_op", operation_id=op)


def _history(service: Service, **options: float) -> History:
    assert service.cluster is not None
    return History(service.cluster.trees, **options)  # type: ignore[arg-type]


def test_the_ring_never_holds_more_than_its_capacity(service: Service) -> None:
    history = _history(service, capacity=8, period=0)
    service.heartbeat()
    _start(service, "batch")
    sizes = []
    for step in range(30):
        service.tick()
        assert history.record(1000.0 + step)
        data = history.pool("default", "batch")
        assert data is not None
        assert len(data["times"]) == min(step + 1, 8)
        sizes.append(history.size())
    assert len(set(sizes[8:])) == 1  # memory stops growing once the ring is full
    data = history.pool("default", "batch")
    assert data is not None and data["times"] == [1000.0 + s for s in range(22, 30)]


def test_samples_are_taken_at_most_once_per_period(service: Service) -> None:
    history = _history(service, capacity=8, period=5)
    service.tick()
    assert history.record(100.0)
    assert not history.record(103.0)
    assert history.record(105.0)
    data = history.pool("default", "<Root>")
    assert data is not None and data["times"] == [100.0, 105.0]


def test_values_are_the_orchids_dominant_shares(service: Service) -> None:
    history = _history(service, capacity=4, period=0)
    service.heartbeat()
    op = _start(service, "research", jobs=3)
    service.tick()
    service.heartbeat()
    service.tick()
    history.record(1.0)
    orchid = service.call("get", path="//sys/scheduler/orchid/scheduler/pool_trees/default")[
        "value"
    ]
    pool = history.pool("default", "research")
    assert pool is not None
    assert pool["fair_share"][-1] == orchid["pools"]["research"]["fair_share_ratio"]
    assert pool["usage"][-1] == orchid["pools"]["research"]["usage_ratio"] > 0
    assert pool["demand"][-1] == orchid["pools"]["research"]["demand_ratio"]
    assert pool["volume"] == [None]  # not an integral pool
    operation = history.operation("default", op)
    assert operation is not None
    assert operation["usage"][-1] == orchid["operations"][op]["usage_ratio"]
    assert history.operation_trees(op) == ["default"]


def test_removed_pools_lose_their_series(service: Service) -> None:
    history = _history(service, capacity=4, period=0)
    service.tick()
    history.record(1.0)
    assert history.pool("default", "batch") is not None
    service.call("remove", path="//sys/pools/batch")
    service.tick()
    history.record(2.0)
    assert history.pool("default", "batch") is None
    assert ("default", "batch") not in history.pools


def test_finished_operations_are_frozen_and_bounded(service: Service) -> None:
    history = _history(service, capacity=4, period=0, finished_operations=2)
    ops = [_start(service, "batch", jobs=1) for _ in range(3)]
    service.tick()
    history.record(1.0)
    service.tick()
    history.record(2.0)
    for op in ops:
        _finish(service, op)
    service.tick()
    history.record(3.0)
    assert history.operations == {}
    assert len(history.finished) == 2  # the oldest finished one was dropped
    kept = [op for op in ops if history.operation("default", op) is not None]
    assert len(kept) == 2
    # Frozen series survive the ring wrapping around.
    for moment in range(4, 12):
        service.tick()
        history.record(float(moment))
    data = history.operation("default", kept[0])
    assert data is not None and data["times"] == [1.0, 2.0]


def test_integral_pools_record_volume_and_capacity(service: Service) -> None:
    history = _history(service, capacity=4, period=0)
    service.call(
        "set",
        path="//sys/pools/batch/@integral_guarantees",
        value={"guarantee_type": "relaxed", "resource_flow": {"cpu": 1}},
    )
    service.heartbeat()
    for moment in (1.0, 2.0, 3.0):
        service.tick()
        history.record(moment)
    data = history.pool("default", "batch")
    assert data is not None
    assert all(v is not None and not math.isnan(v) for v in data["volume"])
    assert data["volume"][-1] > data["volume"][0]  # an idle integral pool accumulates
    assert data["capacity"][-1] is not None and data["capacity"][-1] > 0
    orchid = service.call(
        "get",
        path="//sys/scheduler/orchid/scheduler/pool_trees/default/pools/batch"
        "/accumulated_resource_ratio_volume",
    )["value"]
    assert data["volume"][-1] == orchid


def test_the_service_samples_after_each_update(service: Service) -> None:
    assert service.cluster is not None
    history = service.cluster.history
    assert history.capacity == 720 and history.period == 5.0
    before = history.count
    service.tick(5.0)
    service.tick(1.0)  # within the period: skipped
    service.tick(5.0)
    assert history.count == before + 2


def test_bad_options_are_refused() -> None:
    from ytsched.pooltree import PoolTrees

    with pytest.raises(ValueError):
        History(PoolTrees({}), capacity=1)
    with pytest.raises(ValueError):
        History(PoolTrees({}), period=-1)


def test_a_sample_taken_in_slices_equals_one_taken_at_once(service: Service) -> None:
    whole = _history(service, capacity=4, period=0)
    sliced = _history(service, capacity=4, period=0)
    service.heartbeat()
    ops = [_start(service, "batch", jobs=1) for _ in range(5)]
    service.tick()
    service.heartbeat()
    service.tick()
    assert whole.record(1000.0)
    steps = sum(1 for _ in sliced.sample(1000.0, slice_size=2))
    assert steps == 2  # 5 operations in slices of 2: two pauses
    for op in ops:
        assert sliced.operation("default", op) == whole.operation("default", op)
    assert sliced.pool("default", "batch") == whole.pool("default", "batch")
