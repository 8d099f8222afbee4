"""Ephemeral pools and lightweight operations."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import counters, scheduler, vanilla
from ytsched.pooltree import OperationState, SchedulerError

# --- ephemeral pools ------------------------------------------------------------------------


def test_operation_without_pool_gets_user_pool_under_default_parent() -> None:
    trees, tree = scheduler({"default_parent_pool": "research"})
    tree.create_pool("research")
    trees.start_operation("a", user="alice", spec=vanilla(), now=1)
    pool = tree.pools["alice"]
    assert pool.is_ephemeral and pool.parent is tree.pools["research"]
    assert pool.full_path == "/research/alice"
    assert tree.orchid()["user_to_ephemeral_pools"] == {"alice": ["alice"]}
    assert tree.orchid()["pools"]["alice"]["is_ephemeral"] is True
    # a second operation of the same user shares it
    trees.start_operation("b", user="alice", spec=vanilla(), now=1)
    assert counters(tree, "alice") == (2, 2, 0)
    trees.complete_operation("a", now=2)
    assert "alice" in tree.pools
    trees.complete_operation("b", now=3)
    assert "alice" not in tree.pools
    # YTsaurus keeps the user in the map: user_to_ephemeral_pools/alice reads [].
    assert tree.orchid()["user_to_ephemeral_pools"] == {"alice": []}


def test_missing_default_parent_falls_back_to_root_with_alert() -> None:
    trees, tree = scheduler({"default_parent_pool": "nowhere"})
    trees.start_operation("a", user="bob", spec=vanilla(), now=1)
    assert tree.pools["bob"].parent is tree.root
    assert any(alert["code"] == "DefaultParentPoolMissing" for alert in trees.alerts())


def test_named_missing_pool_is_ephemeral_and_counts_for_user() -> None:
    trees, tree = scheduler()
    trees.start_operation("a", user="alice", spec=vanilla("adhoc-x"), now=1)
    assert tree.pools["adhoc-x"].is_ephemeral
    assert tree.pools["adhoc-x"].ephemeral_user == "alice"
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("b", user="alice", spec=vanilla(), now=1)
    assert caught.value.code == "TooManyEphemeralPools"
    assert "user 'alice'" in caught.value.message
    assert "alice" not in tree.pools
    # another user's ephemeral pool can be used by anyone; only creation counts
    trees.start_operation("c", user="bob", spec=vanilla("adhoc-x"), now=1)
    tree.update_config({"max_ephemeral_pools_per_user": 2})
    trees.start_operation("b", user="alice", spec=vanilla(), now=1)


def test_invalid_ephemeral_name() -> None:
    trees, _ = scheduler()
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("a", user="u", spec=vanilla("no spaces"), now=1)
    assert caught.value.code == "InvalidPoolName"


def test_ephemeral_subpools_per_user_with_config() -> None:
    trees, tree = scheduler({"max_ephemeral_pools_per_user": 1})
    tree.create_pool(
        "shared",
        config={
            "create_ephemeral_subpools": True,
            "ephemeral_subpool_config": {
                "mode": "fifo",
                "max_running_operation_count": 1,
                "max_operation_count": 2,
                "resource_limits": {"cpu": 5},
            },
        },
    )
    trees.start_operation("a", user="alice", spec=vanilla("shared"), now=1)
    trees.start_operation("b", user="bob", spec=vanilla("shared"), now=1)
    sub = tree.pools["shared$alice"]
    assert sub.is_ephemeral and sub.parent is tree.pools["shared"]
    assert sub.effective.mode == "fifo"
    assert sub.effective.resource_limits.as_map() == {"cpu": 5.0}
    assert tree.max_running_operation_count(sub) == 1
    # subpools do not count toward max_ephemeral_pools_per_user
    trees.start_operation("c", user="alice", spec=vanilla(), now=1)
    second = trees.start_operation("d", user="alice", spec=vanilla("shared"), now=1)
    assert second.state is OperationState.PENDING
    assert sub.pending == ["d"]
    with pytest.raises(SchedulerError, match="pool 'shared\\$alice'"):
        trees.start_operation("e", user="alice", spec=vanilla("shared"), now=1)
    # a changed ephemeral_subpool_config is re-applied to existing subpools
    tree.update_pool(
        "shared",
        {"ephemeral_subpool_config": {"max_running_operation_count": 2, "max_operation_count": 3}},
    )
    assert sub.effective.mode == "fair_share"
    assert second.state is OperationState.RUNNING
    assert tree.check_invariants() == []


def test_stale_subpools_move_operations_to_parent() -> None:
    trees, tree = scheduler()
    tree.create_pool("shared", config={"create_ephemeral_subpools": True})
    trees.start_operation("a", user="alice", spec=vanilla("shared"), now=1)
    tree.update_pool("shared", {"create_ephemeral_subpools": False})
    assert "shared$alice" not in tree.pools
    assert tree.operations["a"].pool is tree.pools["shared"]
    assert counters(tree, "shared") == (1, 1, 0)
    assert tree.check_invariants() == []


def test_fifo_parent_cannot_take_ephemeral_pools() -> None:
    trees, tree = scheduler({"default_parent_pool": "queue"})
    tree.create_pool("queue", config={"mode": "fifo"})
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("a", user="u", spec=vanilla(), now=1)
    assert caught.value.code == "FifoPoolWithSubpools"


def test_explicit_pool_adopts_ephemeral_pool() -> None:
    trees, tree = scheduler()
    tree.create_pool("team")
    trees.start_operation("a", user="alice", spec=vanilla(), now=1)
    adopted = tree.create_pool("alice", "team", {"weight": 3})
    assert not adopted.is_ephemeral and adopted.parent is tree.pools["team"]
    assert counters(tree, "team") == (1, 1, 0)
    assert tree.user_ephemeral_pools == {"alice": []}
    trees.complete_operation("a", now=2)
    assert "alice" in tree.pools  # explicit pools are not removed when empty
    assert tree.check_invariants() == []


def test_user_default_parent_pool_map() -> None:
    trees, tree = scheduler({"use_user_default_parent_pool_map": True})
    tree.create_pool("analytics")
    trees.set_user_default_parent_pool("alice", "analytics")
    trees.start_operation("a", user="alice", spec=vanilla(), now=1)
    trees.start_operation("b", user="bob", spec=vanilla(), now=1)
    assert tree.pools["alice"].parent is tree.pools["analytics"]
    assert tree.pools["bob"].parent is tree.root


# --- lightweight operations -------------------------------------------------------------------


def test_lightweight_operations_do_not_count_as_running() -> None:
    trees, tree = scheduler()
    tree.create_pool(
        "quick",
        config={
            "mode": "fifo",
            "enable_lightweight_operations": True,
            "max_running_operation_count": 1,
        },
    )
    for index in range(5):
        operation = trees.start_operation(
            f"v{index}", user="u", spec=vanilla("quick", jobs=1), now=1
        )
        assert operation.state is OperationState.RUNNING
    assert counters(tree, "quick") == (5, 0, 5)
    assert counters(tree, "<Root>") == (5, 0, 5)
    # non-vanilla operations are not lightweight and obey the running limit
    trees.start_operation("m1", user="u", spec={"pool": "quick"}, operation_type="map", now=1)
    waiting = trees.start_operation(
        "m2", user="u", spec={"pool": "quick"}, operation_type="map", now=1
    )
    assert waiting.state is OperationState.PENDING
    assert counters(tree, "quick") == (7, 1, 5)
    view = tree.orchid()
    assert view["pools"]["quick"]["lightweight_running_operation_count"] == 5
    assert view["pools"]["quick"]["effective_lightweight_operations_enabled"] is True
    assert view["operations"]["v0"]["lightweight"] is True
    assert view["operations"]["m1"]["lightweight"] is False


def test_lightweight_needs_fifo_mode() -> None:
    trees, tree = scheduler()
    tree.create_pool(
        "p", config={"enable_lightweight_operations": True, "max_running_operation_count": 1}
    )
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    assert (
        trees.start_operation("b", user="u", spec=vanilla("p"), now=1).state
        is OperationState.PENDING
    )
    assert tree.orchid()["pools"]["p"]["effective_lightweight_operations_enabled"] is False


def test_toggling_lightweight_reaccounts_counters() -> None:
    trees, tree = scheduler()
    tree.create_pool("q", config={"mode": "fifo", "max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla("q"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("q"), now=1)
    trees.start_operation("m", user="u", spec={"pool": "q"}, operation_type="map", now=1)
    assert counters(tree, "q") == (3, 1, 0)
    tree.update_pool("q", {"enable_lightweight_operations": True}, now=2)
    # a moves to the lightweight counter, b (pending, eligible) runs at once, then m fits
    assert counters(tree, "q") == (3, 1, 2)
    assert trees.operations["b"].state is OperationState.RUNNING
    assert trees.operations["m"].state is OperationState.RUNNING
    tree.update_pool("q", {"enable_lightweight_operations": False}, now=3)
    assert counters(tree, "q") == (3, 3, 0)  # overcommit is allowed
    assert tree.check_invariants() == []


def test_lightweight_through_preset() -> None:
    trees, tree = scheduler(
        {"pool_config_presets": {"lw": {"enable_lightweight_operations": True}}}
    )
    tree.create_pool(
        "q", config={"mode": "fifo", "config_presets": ["lw"], "max_running_operation_count": 0}
    )
    assert (
        trees.start_operation("a", user="u", spec=vanilla("q"), now=1).state
        is OperationState.RUNNING
    )
    assert counters(tree, "q") == (1, 0, 1)


def test_new_ephemeral_pool_own_limit_is_checked() -> None:
    trees, tree = scheduler()
    tree.create_pool(
        "closed",
        config={
            "create_ephemeral_subpools": True,
            "ephemeral_subpool_config": {
                "max_operation_count": 0,
                "max_running_operation_count": 0,
            },
        },
    )
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("a", user="alice", spec=vanilla("closed"), now=1)
    assert caught.value.code == "TooManyOperations"
    assert "closed$alice" not in tree.pools
