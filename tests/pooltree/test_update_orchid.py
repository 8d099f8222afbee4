"""Engine input, the fair-share update and the orchid view; the pool-settings docs example."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import GIB, scheduler, vanilla
from ytsched.fairshare.model import FifoSortParameter, IntegralGuaranteeType, SchedulingMode
from ytsched.pooltree import PoolTrees, snapshot
from ytsched.resources import INFINITE_AMOUNT


def _project_root() -> PoolTrees:
    """The pool settings page: project-root (100 cpu) with adhoc, batch and backup."""
    trees, tree = scheduler(cpu=100)
    tree.create_pool(
        "project-root",
        config={
            "strong_guarantee_resources": {"cpu": 100},
            "weight": 1,
            "max_running_operation_count": 10,
            "max_operation_count": 50,
        },
    )
    children = {
        "adhoc": ({"cpu": 80}, 1, 10),
        "batch": (None, 10, 4),
        "backup": ({"cpu": 20}, 1, 2),
    }
    for name, (guarantee, weight, running) in children.items():
        config: dict[str, object] = {
            "weight": weight,
            "max_running_operation_count": running,
            "max_operation_count": 50,
        }
        if guarantee is not None:
            config["strong_guarantee_resources"] = guarantee
        tree.create_pool(name, "project-root", config)
    return trees


def _cpu_share(trees: PoolTrees, pool: str) -> float:
    value = trees.orchid()["pool_trees"]["physical"]["pools"][pool]["detailed_fair_share"]["total"][
        "cpu"
    ]
    assert isinstance(value, float)
    return value


def test_pool_settings_example_full_load() -> None:
    trees = _project_root()
    for pool in ("adhoc", "batch", "backup"):
        trees.start_operation(f"op-{pool}", user="u", spec=vanilla(pool, jobs=200), now=1)
    trees.update(now=2)
    assert _cpu_share(trees, "adhoc") == pytest.approx(0.8)
    assert _cpu_share(trees, "backup") == pytest.approx(0.2)
    assert _cpu_share(trees, "batch") == pytest.approx(0.0)
    pools = trees.orchid()["pool_trees"]["physical"]["pools"]
    assert pools["adhoc"]["detailed_fair_share"]["strong_guarantee"]["cpu"] == pytest.approx(0.8)
    assert pools["project-root"]["running_operation_count"] == 3


def test_pool_settings_example_unused_guarantee_goes_to_batch_first() -> None:
    trees = _project_root()
    trees.start_operation("small-adhoc", user="u", spec=vanilla("adhoc", jobs=30), now=1)
    trees.start_operation("op-batch", user="u", spec=vanilla("batch", jobs=200), now=1)
    trees.start_operation("op-backup", user="u", spec=vanilla("backup", jobs=200), now=1)
    trees.update(now=2)
    assert _cpu_share(trees, "adhoc") == pytest.approx(0.3)
    # backup keeps its 0.2 guarantee; the 0.5 adhoc leaves is split 10:1 on top of guarantees
    assert _cpu_share(trees, "batch") + _cpu_share(trees, "backup") == pytest.approx(0.7)
    assert _cpu_share(trees, "batch") > 0.4
    assert _cpu_share(trees, "backup") >= 0.2


def test_snapshot_carries_config_and_operations() -> None:
    trees, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool(
        "q",
        config={
            "mode": "fifo",
            "fifo_sort_parameters": ["pending_job_count"],
            "resource_limits": {"cpu": 7},
        },
    )
    tree.create_pool(
        "burst",
        config={
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 10},
                "burst_guarantee_resources": {"cpu": 20},
            }
        },
    )
    trees.start_operation(
        "a",
        user="u",
        spec=vanilla("q", jobs=4, cpu=2, weight=3, resource_limits={"user_slots": 2}),
        now=5,
    )
    trees.start_job("a", "main", node="node1", now=6)
    snapshot = tree.to_snapshot(10.0, 5.0, trees.tree_resource_limits("physical"))
    assert [p.name for p in snapshot.pools] == ["<Root>", "q", "burst"]
    q = snapshot.pools[1]
    assert q.mode is SchedulingMode.FIFO and q.fifo_sort_parameters == (
        FifoSortParameter.PENDING_JOB_COUNT,
    )
    assert q.resource_limits[1] == 7 and q.resource_limits[0] == INFINITE_AMOUNT
    burst = snapshot.pools[2].integral_guarantees
    assert burst.guarantee_type is IntegralGuaranteeType.BURST and burst.resource_flow[1] == 10
    (op,) = snapshot.operations
    assert op.parent == "q" and op.weight == 3 and op.start_time == 5
    assert op.resource_usage == (1.0, 2.0, 0.0, GIB, 0.0)
    assert op.resource_demand == (4.0, 8.0, 0.0, 4 * GIB, 0.0)
    assert op.pending_job_count == 3 and op.resource_limits[0] == 2
    assert snapshot.now == 10.0 and snapshot.previous_update_time == 5.0
    assert snapshot.total_resource_limits[1] == 100


def test_update_carries_integral_volume_between_periods() -> None:
    trees, tree = scheduler()
    tree.create_pool(
        "burst",
        config={
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 10},
                "burst_guarantee_resources": {"cpu": 20},
            }
        },
    )
    trees.update(now=0)
    trees.update(now=60)
    volume = tree.pools["burst"].accumulated_resource_volume
    assert volume[1] == pytest.approx(600.0)  # 10 cpu x 60 s, nothing spent
    view = tree.orchid()["pools"]["burst"]
    assert view["integral_guarantee_type"] == "burst"
    assert view["accumulated_resource_volume"]["cpu"] == pytest.approx(600.0)
    assert tree.last_update_time == 60


def test_orchid_attributes_of_pools_and_operations() -> None:
    trees, tree = scheduler({"fair_share_starvation_tolerance": 0.7})
    tree.create_pool(
        "p", config={"max_running_operation_count": 1, "fair_share_starvation_timeout": 5000}
    )
    tree.create_pool("c", "p", {"fair_share_starvation_tolerance": 0.9})
    trees.start_operation(
        "a",
        user="u",
        spec=vanilla("c", fair_share_starvation_tolerance=0.5, fair_share_starvation_timeout=1000),
        now=1,
    )
    trees.start_operation("b", user="u", spec=vanilla("c", preemption_mode="graceful"), now=2)
    before_update = tree.orchid()
    assert "fair_share_ratio" not in before_update["pools"]["p"]
    trees.update(now=3)
    view = trees.orchid()["pool_trees"]["physical"]
    p, c, root = view["pools"]["p"], view["pools"]["c"], view["pools"]["<Root>"]
    assert (p["operation_count"], p["running_operation_count"], p["pending_operation_count"]) == (
        2,
        1,
        1,
    )
    assert p["pending_operations"] == ["b"]
    assert p["max_running_operation_count"] == 1 and p["max_operation_count"] == 50
    assert c["max_running_operation_count"] == 50
    assert c["parent"] == "p" and c["full_path"] == "/p/c" and c["is_ephemeral"] is False
    assert root["forbid_immediate_operations"] is True and root["parent"] is None
    assert view["pool_count"] == 2
    assert c["effective_fair_share_starvation_tolerance"] == 0.9
    assert c["effective_fair_share_starvation_timeout"] == 5000
    assert p["effective_fair_share_starvation_tolerance"] == 0.7
    assert c["pool_operation_count"] == 2 and p["pool_operation_count"] == 0
    a, b = view["operations"]["a"], view["operations"]["b"]
    assert a["effective_fair_share_starvation_tolerance"] == 0.5
    assert a["effective_fair_share_starvation_timeout"] == 5000  # max(pool, spec)
    assert a["slot_index"] == 0 and b["slot_index"] == 1
    assert b["state"] == "pending" and b["pending_in_pool"] == "p"
    assert b["preemption_mode"] == "graceful"
    assert a["allocation_preemption_timeout"] == 10_000
    assert a["fair_share_ratio"] > 0 and b["fair_share_ratio"] == 0
    assert a["pool"] == "c" and a["dominant_resource"] in {"cpu", "user_slots"}
    assert list(view["operations_by_pool"]["c"]) == ["a", "b"]
    assert view["operations_by_pool"]["c"]["a"] is view["operations"]["a"]
    assert view["operations_by_pool"]["p"] == {}
    assert list(view["child_pools_by_pool"]["<Root>"]) == ["p"]
    assert view["child_pools_by_pool"]["p"]["c"]["full_path"] == "/p/c"
    assert view["child_pools_by_pool"]["c"] == {}
    assert view["config"]["fair_share_starvation_tolerance"] == 0.7


def test_fifo_pool_orders_operations_by_sort_parameters() -> None:
    trees, tree = scheduler(cpu=10)
    tree.create_pool("q", config={"mode": "fifo"})
    trees.start_operation("early", user="u", spec=vanilla("q", jobs=10), now=1)
    trees.start_operation("heavy", user="u", spec=vanilla("q", jobs=10, weight=5), now=2)
    trees.start_operation("late", user="u", spec=vanilla("q", jobs=10), now=3)
    trees.update(now=4)
    ops = tree.orchid()["operations"]
    assert [ops[name]["fifo_index"] for name in ("heavy", "early", "late")] == [0, 1, 2]
    assert ops["heavy"]["fair_share_ratio"] == pytest.approx(1.0)
    assert ops["late"]["fair_share_ratio"] == 0
    assert tree.orchid()["pools"]["q"]["fifo_sort_parameters"] == ["weight", "start_time"]
    tree.update_pool("q", {"fifo_sort_parameters": ["start_time"]})
    trees.update(now=5)
    assert tree.orchid()["operations"]["early"]["fifo_index"] == 0


def test_pool_inputs_memo_follows_config_changes() -> None:
    """Pools' config-derived engine inputs are reused between updates only while the config
    object is the same: after a reconfiguration the engine reads the new settings, exactly
    what a snapshot without the memo gives."""
    trees = _project_root()
    tree = trees.tree("physical")
    trees.start_operation("op", user="u", spec=vanilla("batch", jobs=20), now=1)
    trees.update(now=2)
    assert "batch" in tree.pool_spec_memo
    kept = tree.pool_spec_memo["batch"][1]
    trees.update(now=3)
    assert tree.pool_spec_memo["batch"][1] is kept
    tree.update_pool("batch", {"weight": 7, "resource_limits": {"cpu": 30}}, now=4)
    total = trees.tree_resource_limits("physical")
    memo = dict(tree.pool_spec_memo)
    with_memo = snapshot.to_snapshot(tree, 5.0, 4.0, total, None, memo)
    without = snapshot.to_snapshot(tree, 5.0, 4.0, total)
    assert repr(with_memo.pools) == repr(without.pools)
    batch = next(p for p in with_memo.pools if p.name == "batch")
    assert batch.weight == 7 and batch.resource_limits[1] == 30
    assert memo["batch"][1] is not kept
