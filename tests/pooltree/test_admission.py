"""Admission: total limits refuse, running limits queue, promotion order, oversubscription."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import counters, scheduler, state, vanilla
from ytsched.config import ConfigError
from ytsched.pooltree import OperationState, PoolTrees, SchedulerError


def test_total_limit_of_pool_refuses_start() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_operation_count": 2, "max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("p"), now=2)
    before = state(tree)
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("c", user="u", spec=vanilla("p"), now=3)
    assert caught.value.code == "TooManyOperations"
    assert caught.value.message == (
        "Limit for the number of concurrent operations 2 for pool 'p' in tree 'physical'"
        " has been reached"
    )
    assert state(tree) == before
    assert "c" not in trees.operations


def test_total_limit_of_ancestor_and_tree_refuse_start() -> None:
    trees, tree = scheduler({"max_operation_count": 3})
    tree.create_pool("parent", config={"max_operation_count": 2})
    tree.create_pool("child", "parent", config={"max_operation_count": 10})
    trees.start_operation("a", user="u", spec=vanilla("child"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("child"), now=1)
    with pytest.raises(SchedulerError, match="pool 'parent'"):
        trees.start_operation("c", user="u", spec=vanilla("child"), now=1)
    tree.create_pool("other")
    trees.start_operation("d", user="u", spec=vanilla("other"), now=1)
    with pytest.raises(SchedulerError, match="pool '<Root>'") as caught:
        trees.start_operation("e", user="u", spec=vanilla("other"), now=1)
    assert caught.value.code == "TooManyOperations"


def test_default_per_pool_total_limit_applies() -> None:
    trees, tree = scheduler({"max_operation_count_per_pool": 1})
    tree.create_pool("p")
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    with pytest.raises(SchedulerError, match="operations 1 for pool 'p'"):
        trees.start_operation("b", user="u", spec=vanilla("p"), now=1)


def test_running_limit_queues_in_lowest_violating_pool() -> None:
    trees, tree = scheduler()
    tree.create_pool("top", config={"max_running_operation_count": 3})
    tree.create_pool("mid", "top", {"max_running_operation_count": 2})
    tree.create_pool("leaf", "mid", {"max_running_operation_count": 5})
    for name in ("a", "b"):
        assert (
            trees.start_operation(name, user="u", spec=vanilla("leaf"), now=1).state
            is OperationState.RUNNING
        )
    waiting = trees.start_operation("c", user="u", spec=vanilla("leaf"), now=2)
    assert waiting.state is OperationState.PENDING
    assert tree.pools["mid"].pending == ["c"]
    assert counters(tree, "leaf") == (3, 2, 0)
    assert counters(tree, "<Root>") == (3, 2, 0)
    assert (
        "limit for the number of running operations (2) of pool 'mid'"
        in waiting.transitions[-1].reason
    )
    # the top pool fills through another branch: c's lowest blocker is still mid
    tree.create_pool("side", "top")
    trees.start_operation("d", user="u", spec=vanilla("side"), now=3)
    trees.start_operation("e", user="u", spec=vanilla("side"), now=3)
    assert tree.pools["top"].pending == ["e"]
    # a finishes: room appears in mid *and* top.  The walk starts at a's own pool and goes up,
    # so c (queued at mid) takes the slot before e (queued at top).
    trees.complete_operation("a", now=4)
    assert tree.pools["mid"].pending == []
    assert trees.operations["c"].state is OperationState.RUNNING
    assert tree.pools["top"].pending == ["e"]
    # d (a sibling branch) finishes: top's queue gets the slot
    trees.complete_operation("d", now=5)
    assert trees.operations["e"].state is OperationState.RUNNING
    assert [t.to_state for t in trees.operations["c"].transitions] == [
        OperationState.PENDING,
        OperationState.RUNNING,
    ]
    assert tree.check_invariants() == []


def test_promotion_is_in_insertion_order() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_running_operation_count": 1})
    trees.start_operation("first", user="u", spec=vanilla("p"), now=1)
    for name in ("w1", "w2", "w3"):
        trees.start_operation(name, user="u", spec=vanilla("p"), now=2)
    assert tree.pools["p"].pending == ["w1", "w2", "w3"]
    trees.abort_operation("w2", now=3)
    trees.complete_operation("first", now=4)
    assert trees.operations["w1"].state is OperationState.RUNNING
    assert tree.pools["p"].pending == ["w3"]


def test_oversubscribed_children_are_blocked_by_parent_below_own_limit() -> None:
    """The documented example: children limits sum above the parent's, which is legal."""
    trees, tree = scheduler()
    tree.create_pool(
        "project-root", config={"max_running_operation_count": 10, "max_operation_count": 50}
    )
    tree.create_pool(
        "adhoc", "project-root", {"max_running_operation_count": 10, "max_operation_count": 50}
    )
    tree.create_pool(
        "batch", "project-root", {"max_running_operation_count": 4, "max_operation_count": 50}
    )
    tree.create_pool(
        "backup", "project-root", {"max_running_operation_count": 2, "max_operation_count": 50}
    )
    for index in range(10):
        trees.start_operation(f"adhoc{index}", user="u", spec=vanilla("adhoc"), now=1)
    blocked = trees.start_operation("batch0", user="u", spec=vanilla("batch"), now=2)
    assert blocked.state is OperationState.PENDING
    assert counters(tree, "batch") == (1, 0, 0)  # batch is far below its own limit of 4
    assert tree.pools["project-root"].pending == ["batch0"]
    with pytest.raises(SchedulerError):
        for index in range(41):
            trees.start_operation(f"more{index}", user="u", spec=vanilla("backup"), now=3)
    assert counters(tree, "project-root")[0] == 50
    trees.complete_operation("adhoc0", now=4)
    assert blocked.state is OperationState.RUNNING


def test_raising_a_limit_promotes_at_once() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("p"), now=1)
    trees.start_operation("c", user="u", spec=vanilla("p"), now=1)
    tree.update_pool("p", {"max_running_operation_count": 2}, now=5)
    assert trees.operations["b"].state is OperationState.RUNNING
    assert trees.operations["b"].transitions[-1].time == 5
    assert trees.operations["c"].state is OperationState.PENDING
    # lowering a limit never stops running operations (overcommit is allowed)
    tree.update_pool("p", {"max_running_operation_count": 0}, now=6)
    assert counters(tree, "p") == (3, 2, 0)
    trees.complete_operation("a", now=7)
    assert trees.operations["c"].state is OperationState.PENDING


def test_tree_running_limit_queues_at_root() -> None:
    trees, tree = scheduler({"max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla(), now=1)
    trees.start_operation("b", user="v", spec=vanilla(), now=1)
    assert tree.root.pending == ["b"]


def test_forbidden_immediate_operations() -> None:
    trees, tree = scheduler()
    tree.create_pool("parent", config={"forbid_immediate_operations": True})
    tree.create_pool("child", "parent")
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("a", user="u", spec=vanilla("parent"), now=1)
    assert caught.value.code == "ImmediateOperationsForbidden"
    assert "'parent'" in caught.value.message
    trees.start_operation("b", user="u", spec=vanilla("child"), now=1)
    with pytest.raises(SchedulerError, match="forbid_immediate_operations_in_root"):
        trees.start_operation("c", user="u", spec=vanilla("<Root>"), now=1)
    tree.update_config({"forbid_immediate_operations_in_root": False})
    trees.start_operation("d", user="u", spec=vanilla("<Root>"), now=1)
    assert tree.operations["d"].pool is tree.root


def test_trees_must_exist_or_default() -> None:
    trees = PoolTrees()
    trees.create_tree("a")
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("x", user="u", spec=vanilla(), now=1)
    assert caught.value.code == "PoolTreesAreUnspecified"
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("x", user="u", spec=vanilla(pool_trees=["a", "b"]), now=1)
    assert caught.value.code == "NoSuchPoolTree"
    assert trees.tree("a").operations == {}


def test_refused_start_in_second_tree_changes_no_tree() -> None:
    trees = PoolTrees()
    first = trees.create_tree("first")
    second = trees.create_tree("second")
    second.create_pool("p", config={"max_operation_count": 0, "max_running_operation_count": 0})
    before = (state(first), state(second))
    spec = vanilla(
        pool_trees=["first", "second"], scheduling_options_per_pool_tree={"second": {"pool": "p"}}
    )
    with pytest.raises(SchedulerError, match="concurrent operations"):
        trees.start_operation("x", user="u", spec=spec, now=1)
    assert (state(first), state(second)) == before
    assert first.pools.keys() == {"<Root>"}  # the ephemeral pool 'u' was not created


def test_erase_trees_with_pool_limit_violations() -> None:
    trees = PoolTrees()
    trees.create_tree("first")
    second = trees.create_tree("second")
    second.create_pool("p", config={"max_operation_count": 0, "max_running_operation_count": 0})
    spec = vanilla(
        pool_trees=["first", "second"],
        scheduling_options_per_pool_tree={"second": {"pool": "p"}},
        erase_trees_with_pool_limit_violations=True,
    )
    operation = trees.start_operation("x", user="u", spec=spec, now=1)
    assert operation.pool_trees == ["first"]
    assert "second" in operation.erased_trees
    only_second = dict(spec, pool_trees=["second"])
    with pytest.raises(SchedulerError, match="concurrent operations 0"):
        trees.start_operation("y", user="u", spec=only_second, now=1)


def test_scheduler_wide_operation_limit() -> None:
    trees = PoolTrees({"max_operation_count": 2})
    trees.create_tree("t")
    trees.set_default_tree("t")
    trees.start_operation("a", user="u", spec=vanilla(), now=1)
    trees.start_operation("b", user="u", spec=vanilla(), now=1)
    with pytest.raises(SchedulerError, match="total number of concurrent operations 2"):
        trees.start_operation("c", user="u", spec=vanilla(), now=1)
    trees.complete_operation("a", now=2)
    trees.start_operation("c", user="u", spec=vanilla(), now=3)


def test_bad_specs_and_duplicates() -> None:
    trees, _ = scheduler()
    with pytest.raises(ConfigError, match="needs a task"):
        trees.start_operation("a", user="u", spec={}, now=1)
    with pytest.raises(ConfigError, match="unknown operation type"):
        trees.start_operation("a", user="u", spec={}, operation_type="teleport", now=1)
    with pytest.raises(ConfigError, match="spec: weight"):
        trees.start_operation("a", user="u", spec=vanilla(weight=0), now=1)
    trees.start_operation("a", user="u", spec=vanilla(), now=1)
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("a", user="u", spec=vanilla(), now=1)
    assert caught.value.code == "OperationAlreadyExists"
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("u", user="v", spec=vanilla(), now=1)
    assert caught.value.code == "DuplicateElementName"
    trees.start_operation("m", user="u", spec={"pool": "u"}, operation_type="map", now=1)


def test_per_tree_pool_weight_and_limits() -> None:
    trees = PoolTrees()
    trees.create_tree("a").create_pool("pa")
    trees.create_tree("b").create_pool("pb")
    spec = vanilla(
        pool="pa",
        pool_trees=["a", "b"],
        weight=3,
        resource_limits={"user_slots": 200},
        scheduling_options_per_pool_tree={
            "b": {"pool": "pb", "weight": 5, "resource_limits": {"cpu": 4}}
        },
    )
    trees.start_operation("x", user="u", spec=spec, now=1)
    in_a, in_b = trees.tree("a").operations["x"], trees.tree("b").operations["x"]
    assert (in_a.pool.name, in_a.weight, in_a.resource_limits.as_map()) == (
        "pa",
        3,
        {"user_slots": 200},
    )
    assert (in_b.pool.name, in_b.weight, in_b.resource_limits.as_map()) == ("pb", 5, {"cpu": 4.0})


def test_operation_limited_in_one_tree_runs_in_the_others() -> None:
    """YTsaurus keeps the pending state per tree: only the limited tree holds it back."""
    trees = PoolTrees()
    trees.create_tree("a")
    trees.create_tree("b", {"max_running_operation_count": 1})
    for name in ("a", "b"):
        trees.register_node(
            f"n-{name}", tags=[], resource_limits={"cpu": 10, "user_slots": 10, "memory": 10}
        )
    trees.update_tree_config("a", {"node_tag_filter": "n-a"})
    trees.update_tree_config("b", {"node_tag_filter": "n-b"})
    both = vanilla(pool="p", pool_trees=["a", "b"], cpu=1.0)
    trees.start_operation("x", user="u", spec=both, now=1)
    second = trees.start_operation("y", user="u", spec=both, now=2)
    assert second.state is OperationState.RUNNING
    assert second.tree_states == {"a": "running", "b": "pending"}
    results = trees.update(3)
    # It demands resources in the tree that admitted it, none in the limited one.
    assert results["a"].operations["y"].resource_demand[1] > 0
    assert results["b"].operations["y"].resource_demand == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert trees.tree("b").operations["y"].running is False
    trees.complete_operation("x", now=3)
    assert second.tree_states == {"a": "running", "b": "running"}
    assert second.state is OperationState.RUNNING


def test_operation_limited_in_every_tree_is_pending() -> None:
    trees = PoolTrees()
    trees.create_tree("a", {"max_running_operation_count": 1})
    both = vanilla(pool="p", pool_trees=["a"])
    trees.start_operation("x", user="u", spec=both, now=1)
    second = trees.start_operation("y", user="u", spec=both, now=2)
    assert second.state is OperationState.PENDING


def test_scheduler_wide_limit_counts_unfinished_operations_only() -> None:
    trees = PoolTrees({"max_operation_count": 2})
    trees.create_tree("physical")
    trees.set_default_tree("physical")
    trees.start_operation("a", user="u", spec=vanilla(), now=1)
    trees.start_operation("b", user="u", spec=vanilla(), now=1)
    with pytest.raises(SchedulerError, match="total number of concurrent operations 2") as caught:
        trees.start_operation("c", user="u", spec=vanilla(), now=2)
    assert caught.value.code == "TooManyOperations"
    assert "c" not in trees.operations
    trees.complete_operation("a", now=3)
    trees.start_operation("c", user="u", spec=vanilla(), now=4)
    trees.abort_operation("b", now=5)
    trees.forget_operation("a")
    trees.start_operation("d", user="u", spec=vanilla(), now=6)
    with pytest.raises(SchedulerError, match="total number"):
        trees.start_operation("e", user="u", spec=vanilla(), now=7)
    assert trees.unfinished_operation_count == 2
