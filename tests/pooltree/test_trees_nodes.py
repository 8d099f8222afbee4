"""Several trees, the default tree, and node membership by node_tag_filter."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import vanilla
from ytsched.pooltree import PoolTrees, SchedulerError


def _cluster() -> PoolTrees:
    trees = PoolTrees()
    trees.create_tree("physical", {"node_tag_filter": "!gpu"})
    trees.create_tree("gpu", {"node_tag_filter": "gpu & !broken"})
    trees.set_default_tree("physical")
    trees.register_node("c1", ["dc1"], {"cpu": 10, "user_slots": 10})
    trees.register_node("c2", ["dc2"], {"cpu": 20, "user_slots": 20, "user_memory": 100})
    trees.register_node("g1", ["gpu"], {"cpu": 8, "gpu": 8, "user_slots": 8})
    return trees


def test_nodes_join_the_matching_tree_and_sum_up() -> None:
    trees = _cluster()
    assert [trees.nodes[a].tree for a in ("c1", "c2", "g1")] == ["physical", "physical", "gpu"]
    assert trees.tree_resource_limits("physical") == (30.0, 30.0, 0.0, 100.0, 0.0)
    assert trees.tree_resource_limits("gpu") == (8.0, 8.0, 8.0, 0.0, 0.0)
    view = trees.orchid()
    assert view["default_pool_tree"] == "physical"
    assert view["pool_trees"]["physical"]["node_addresses"] == ["c1", "c2"]
    assert view["pool_trees"]["gpu"]["node_count"] == 1
    assert view["pool_trees"]["physical"]["resource_limits"]["cpu"] == 30.0


def test_node_address_is_a_tag() -> None:
    trees = PoolTrees()
    trees.create_tree("one", {"node_tag_filter": "127.0.0.1:9012"})
    node = trees.register_node("127.0.0.1:9012")
    assert node.tree == "one"
    assert trees.register_node("other").tree is None
    assert trees.alerts()[0]["code"] == "NodesWithoutPoolTree"


def test_node_matching_two_trees_is_in_error_state() -> None:
    trees = _cluster()
    trees.create_tree("broken", {"node_tag_filter": "broken & gpu"})
    assert trees.register_node("g2", ["gpu", "broken"]).tree == "broken"
    node = trees.register_node("z", ["broken", "gpu", "dc1"], {"cpu": 5})
    assert node.tree == "broken"
    trees.update_tree_config("broken", {"node_tag_filter": "broken"})
    both = trees.register_node("y", ["broken", "dc1"], {"cpu": 5})  # !gpu and broken
    assert both.state == "error" and both.tree is None
    assert "'physical'" in (both.error or "") and "'broken'" in (both.error or "")
    assert trees.tree_resource_limits("physical") == (30.0, 30.0, 0.0, 100.0, 0.0)
    assert any(a["code"] == "NodeMatchesSeveralPoolTrees" for a in trees.alerts())
    trees.set_node_tags("y", ["broken", "gpu"])
    assert both.state == "online" and both.tree == "broken"


def test_tree_change_making_a_node_match_two_trees_is_refused() -> None:
    trees = _cluster()
    before = trees.tree("gpu").config
    with pytest.raises(SchedulerError) as caught:
        trees.update_tree_config("gpu", {"node_tag_filter": "gpu | dc1"})
    assert caught.value.code == "NodeMatchesSeveralPoolTrees"
    assert "'c1'" in caught.value.message
    assert trees.tree("gpu").config == before
    with pytest.raises(SchedulerError):
        trees.create_tree("all")
    assert "all" not in trees.trees
    # moving a node to another tree aborts its jobs
    trees.update_tree_config("physical", {"node_tag_filter": "dc1"})
    trees.update_tree_config("gpu", {"node_tag_filter": "gpu | dc2"})
    assert trees.nodes["c2"].tree == "gpu"


def test_node_changing_tree_loses_its_jobs() -> None:
    trees = _cluster()
    operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=2), now=1)
    job = trees.start_job("op", "main", node="c1", now=2)
    assert operation.resource_usage("physical")[1] == 1.0
    with pytest.raises(SchedulerError) as caught:
        trees.start_job("op", "main", node="g1", now=2)
    assert caught.value.code == "NodeNotInOperationPoolTrees"
    trees.set_node_tags("c1", ["gpu"])
    assert job.state.value == "aborted" and "moved" in (job.reason or "")
    assert operation.pending_job_count == 2


def test_tree_lifecycle_errors() -> None:
    trees = _cluster()
    for bad in ("", "a b", "x/y"):
        with pytest.raises(SchedulerError) as caught:
            trees.create_tree(bad)
        assert caught.value.code == "InvalidPoolTreeName"
    with pytest.raises(SchedulerError) as caught:
        trees.create_tree("gpu")
    assert caught.value.code == "PoolTreeAlreadyExists"
    with pytest.raises(SchedulerError) as caught:
        trees.set_default_tree("nope")
    assert caught.value.code == "NoSuchPoolTree"
    with pytest.raises(SchedulerError) as caught:
        trees.remove_tree("physical")
    assert caught.value.code == "CannotRemoveDefaultPoolTree"
    trees.start_operation("op", user="u", spec=vanilla(pool_trees=["gpu"]), now=1)
    with pytest.raises(SchedulerError) as caught:
        trees.remove_tree("gpu")
    assert caught.value.code == "PoolTreeHasOperations"
    trees.abort_operation("op", now=2)
    trees.remove_tree("gpu")
    assert trees.nodes["g1"].tree is None
    trees.set_default_tree(None)
    with pytest.raises(SchedulerError) as caught:
        trees.register_node("c1")
    assert caught.value.code == "NodeAlreadyExists"
    with pytest.raises(SchedulerError) as caught:
        trees.unregister_node("nope")
    assert caught.value.code == "NoSuchNode"
    trees.unregister_node("c1")
    assert "c1" not in trees.nodes
