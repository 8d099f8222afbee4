"""Runtime changes: operation pool/weight/limits, pool moves, tree config changes."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import counters, scheduler, state, vanilla
from ytsched.config import ConfigError
from ytsched.pooltree import OperationState, SchedulerError


def test_change_pool_reaccounts_both_chains() -> None:
    trees, tree = scheduler()
    tree.create_pool("a", config={"max_running_operation_count": 1})
    tree.create_pool("a1", "a")
    tree.create_pool("b")
    tree.create_pool("b1", "b")
    trees.start_operation("x", user="u", spec=vanilla("a1"), now=1)
    trees.start_operation("y", user="u", spec=vanilla("a1"), now=1)
    assert tree.pools["a"].pending == ["y"]
    trees.update_operation_parameters("x", {"pool": "b1"}, now=2)
    assert counters(tree, "a1") == (1, 1, 0)  # y was promoted into x's slot
    assert counters(tree, "a") == (1, 1, 0)
    assert counters(tree, "b1") == (1, 1, 0)
    assert counters(tree, "b") == (1, 1, 0)
    assert counters(tree, "<Root>") == (2, 2, 0)
    assert trees.operations["y"].state is OperationState.RUNNING
    assert tree.orchid()["operations"]["x"]["pool"] == "b1"
    assert tree.check_invariants() == []


def test_change_pool_checks_limits_on_new_path_only() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_running_operation_count": 1, "max_operation_count": 2})
    tree.create_pool("c1", "p")
    tree.create_pool("c2", "p", {"max_operation_count": 1})
    tree.create_pool("full", config={"max_operation_count": 1})
    trees.start_operation("x", user="u", spec=vanilla("c1"), now=1)
    trees.start_operation("f", user="u", spec=vanilla("full"), now=1)
    # moving within p: p is a common ancestor and x already runs -> p's limits are skipped
    trees.update_operation_parameters("x", {"pool": "c2"}, now=2)
    assert tree.operations["x"].pool.name == "c2"
    before = state(tree)
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters("x", {"pool": "full"}, now=3)
    assert caught.value.code == "TooManyOperations"
    assert state(tree) == before
    # a pending operation must be able to run in the new pool, common ancestors included
    trees.start_operation("w", user="u", spec=vanilla("c1"), now=4)
    assert trees.operations["w"].state is OperationState.PENDING
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters("w", {"pool": "c2"}, now=5)
    assert caught.value.code in {"TooManyOperations", "TooManyRunningOperations"}
    tree.create_pool("free")
    trees.update_operation_parameters("w", {"pool": "free"}, now=6)
    assert trees.operations["w"].state is OperationState.RUNNING
    assert tree.check_invariants() == []


def test_change_pool_into_running_limit() -> None:
    trees, tree = scheduler()
    tree.create_pool("busy", config={"max_running_operation_count": 1})
    tree.create_pool("other")
    trees.start_operation("a", user="u", spec=vanilla("busy"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("other"), now=1)
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters("b", {"pool": "busy"}, now=2)
    assert caught.value.code == "TooManyRunningOperations"
    assert "pool 'busy'" in caught.value.message


def test_change_pool_to_ephemeral_and_back_removes_it() -> None:
    trees, tree = scheduler()
    tree.create_pool("team")
    trees.start_operation("a", user="alice", spec=vanilla("team"), now=1)
    trees.update_operation_parameters("a", {"pool": "scratch"}, now=2)
    assert tree.pools["scratch"].is_ephemeral
    trees.update_operation_parameters("a", {"pool": "team"}, now=3)
    assert "scratch" not in tree.pools
    assert tree.check_invariants() == []


def test_weight_and_limits_per_tree() -> None:
    trees, tree = scheduler()
    tree.create_pool("p")
    trees.start_operation("a", user="u", spec=vanilla("p", weight=2), now=1)
    trees.update_operation_parameters(
        "a",
        {
            "scheduling_options_per_pool_tree": {
                "physical": {"weight": 4, "resource_limits": {"cpu": 3}}
            }
        },
        now=2,
    )
    entry = tree.operations["a"]
    assert entry.weight == 4 and entry.resource_limits is not None
    assert entry.resource_limits.as_map() == {"cpu": 3.0}
    trees.update_operation_parameters(
        "a", {"weight": 7, "scheduling_options_per_pool_tree": {"physical": {"weight": 4}}}, now=3
    )
    assert entry.weight == 7  # a top-level weight overrides per-tree values
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters(
            "a", {"scheduling_options_per_pool_tree": {"gpu": {"weight": 1}}}
        )
    assert caught.value.code == "NoSuchPoolTree"
    with pytest.raises(ConfigError):
        trees.update_operation_parameters("a", {"wieght": 1})
    trees.complete_operation("a", now=4)
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters("a", {"weight": 1})
    assert caught.value.code == "InvalidOperationState"


def test_move_pool_reaccounts_subtree_counters() -> None:
    trees, tree = scheduler()
    tree.create_pool("a", config={"max_running_operation_count": 10})
    tree.create_pool("b", config={"max_running_operation_count": 1})
    tree.create_pool("team", "a")
    trees.start_operation("x", user="u", spec=vanilla("team"), now=1)
    trees.start_operation("y", user="u", spec=vanilla("team"), now=1)
    assert counters(tree, "a") == (2, 2, 0)
    tree.move_pool("team", "b", now=2)
    assert counters(tree, "a") == (0, 0, 0)
    assert counters(tree, "b") == (2, 2, 0)  # overcommitted: running operations stay running
    assert tree.pools["team"].full_path == "/b/team"
    trees.start_operation("z", user="u", spec=vanilla("team"), now=3)
    assert tree.pools["b"].pending == ["z"]
    tree.move_pool("team", None, now=4)
    assert counters(tree, "b") == (0, 0, 0)
    assert trees.operations["z"].state is OperationState.RUNNING
    assert tree.check_invariants() == []


def test_move_requeues_operations_whose_blocker_left_their_path() -> None:
    trees, tree = scheduler()
    tree.create_pool("top", config={"max_running_operation_count": 1})
    tree.create_pool("p", "top")
    tree.create_pool("free")
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("p"), now=1)
    assert tree.pools["top"].pending == ["b"]
    tree.move_pool("p", "free", now=2)
    assert tree.pools["top"].pending == []
    assert trees.operations["b"].state is OperationState.RUNNING


def test_lowered_ancestor_limit_moves_waiting_operation_up() -> None:
    trees, tree = scheduler()
    tree.create_pool("top", config={"max_running_operation_count": 5})
    tree.create_pool("mid", "top", {"max_running_operation_count": 1})
    tree.create_pool("side", "top")
    trees.start_operation("a", user="u", spec=vanilla("mid"), now=1)
    trees.start_operation("s", user="u", spec=vanilla("side"), now=1)
    trees.start_operation("c", user="u", spec=vanilla("mid"), now=1)
    assert tree.pools["mid"].pending == ["c"]
    tree.update_pool("top", {"max_running_operation_count": 1}, now=2)
    trees.complete_operation("a", now=3)
    # mid has room now, top does not: c moves to top's queue
    assert tree.pools["mid"].pending == []
    assert tree.pools["top"].pending == ["c"]
    trees.complete_operation("s", now=4)
    assert trees.operations["c"].state is OperationState.RUNNING


def test_tree_config_change_applies_and_rejects_atomically() -> None:
    trees, tree = scheduler({"max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla(), now=1)
    trees.start_operation("b", user="v", spec=vanilla(), now=1)
    trees.update_tree_config("physical", {"max_running_operation_count": 5}, now=2)
    assert trees.operations["b"].state is OperationState.RUNNING
    before = state(tree)
    with pytest.raises(ConfigError) as caught:
        trees.update_tree_config("physical", {"fair_share_starvation_tolerance": 2})
    assert caught.value.message.startswith(
        "tree 'physical': config: fair_share_starvation_tolerance"
    )
    assert state(tree) == before
    trees.update_tree_config("physical", {"max_running_operation_count": None})
    assert tree.config.max_running_operation_count == 2000
