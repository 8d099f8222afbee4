"""An update in two halves (the service serves heartbeats in between) equals the whole one."""

from __future__ import annotations

from tests.scheduling.helpers import Cluster, vanilla


def test_heartbeats_between_the_halves_use_the_previous_state() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=4))
    pending = cluster.scheduler.begin_update(1.0)
    # The computation saw op1, but heartbeats still schedule with the previous state (none).
    assert cluster.heartbeat(now=1.0).start == ()
    cluster.scheduler.finish_update(pending)
    assert len(cluster.heartbeat(now=1.0).start) == 4
    assert cluster.scheduler.last_update_time == 1.0


def test_usage_changes_in_between_need_no_recomputation() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=4))
    cluster.update(1.0)
    assert len(cluster.heartbeat(now=1.0).start) == 4
    pending = cluster.scheduler.begin_update(2.0)
    cluster.finish(cluster.running("op1")[0])
    cluster.heartbeat(now=2.0)
    results = cluster.scheduler.finish_update(pending)
    assert results == pending.results  # the computation was kept
    state = cluster.scheduler.ledger.tree_states["physical"]
    assert state.update_time == 2.0 and "op1" in state.operations


def test_structure_changes_in_between_redo_the_computation() -> None:
    cluster = Cluster()
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=2))
    cluster.update(1.0)
    pending = cluster.scheduler.begin_update(2.0)
    # A new pool with a new operation while the state is pending.
    cluster.pool("b")
    cluster.operation("op2", vanilla("b", jobs=2))
    results = cluster.scheduler.finish_update(pending)
    assert results is not pending.results
    state = cluster.scheduler.ledger.tree_states["physical"]
    assert {"op1", "op2"} <= set(state.operations)
    assert "op2" in results["physical"].operations and "b" in results["physical"].pools
    # Every replaced result was unlinked (no cycles left for the garbage collector).
    for replaced in pending.results.values():
        assert replaced.root.children == []
    started = cluster.heartbeat(now=2.0).start
    assert {s.operation_id for s in started} == {"op1", "op2"}
