"""Orchid attributes YTsaurus builds in ``DoBuildElementYson`` / ``BuildCompositeElementInfo``
(``yt/yt/server/scheduler/strategy/pool_tree.cpp``) that are plain functions of what we model:
``effective_waiting_for_resources_on_node_timeout``, ``gang_operations_allowed``,
``specified_resource_limits_overcommit_tolerance``, ``scheduling_tag_filter_resource_limits``,
``grouped_needed_resources`` and its list form; plus the gang admission check behind
``gang_operations_allowed``."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import GIB, scheduler, state, vanilla
from ytsched.pooltree import SchedulerError
from ytsched.resources import RESOURCE_NAMES


def test_effective_waiting_timeout_is_inherited_from_the_nearest_setting() -> None:
    trees, tree = scheduler({"waiting_for_resources_on_node_timeout": 30_000})
    tree.create_pool("parent", config={"waiting_for_resources_on_node_timeout": 5_000})
    tree.create_pool("child", "parent")
    tree.create_pool("other")
    trees.start_operation("op", user="u", spec=vanilla("child"), now=1)
    pools = tree.orchid()["pools"]
    timeouts = {
        name: pools[name]["effective_waiting_for_resources_on_node_timeout"]
        for name in ("<Root>", "parent", "child", "other")
    }
    assert timeouts == {"<Root>": 30_000, "parent": 5_000, "child": 5_000, "other": 30_000}
    operation = tree.orchid()["operations"]["op"]
    assert operation["effective_waiting_for_resources_on_node_timeout"] == 5_000
    _, bare = scheduler()
    assert bare.orchid()["pools"]["<Root>"]["effective_waiting_for_resources_on_node_timeout"] is (
        None
    )


def test_no_element_has_an_overcommit_tolerance() -> None:
    trees, tree = scheduler()
    tree.create_pool("pool", config={"resource_limits": {"cpu": 3}})
    trees.start_operation("op", user="u", spec=vanilla("pool"), now=1)
    view = tree.orchid()
    zero = dict.fromkeys(RESOURCE_NAMES, 0.0)
    assert view["pools"]["pool"]["specified_resource_limits_overcommit_tolerance"] == zero
    assert view["operations"]["op"]["specified_resource_limits_overcommit_tolerance"] == zero


def test_scheduling_tag_filter_resource_limits_sum_the_matching_nodes() -> None:
    trees, tree = scheduler(cpu=100)
    trees.register_node(
        "gpu-node", tags=["gpu"], resource_limits={"cpu": 8, "user_slots": 8, "memory": 64 * GIB}
    )
    trees.register_node(
        "ssd-node", tags=["ssd"], resource_limits={"cpu": 4, "user_slots": 4, "memory": 32 * GIB}
    )
    tree.create_pool("gpu", config={"scheduling_tag_filter": "gpu"})
    tree.create_pool("fast", config={"scheduling_tag_filter": "gpu | ssd"})
    tree.create_pool("any")
    trees.start_operation("op", user="u", spec=vanilla("any", scheduling_tag_filter="ssd"), now=1)
    view = tree.orchid()
    assert view["pools"]["any"]["scheduling_tag_filter_resource_limits"] is None  # no update yet
    trees.update(2)
    view = tree.orchid()
    pools = view["pools"]
    assert pools["gpu"]["scheduling_tag_filter_resource_limits"]["cpu"] == 8.0
    assert pools["fast"]["scheduling_tag_filter_resource_limits"]["cpu"] == 12.0
    assert pools["fast"]["scheduling_tag_filter_resource_limits"]["memory"] == 96.0 * GIB
    # no filter: the tree's total at the update, like the root's
    assert pools["any"]["scheduling_tag_filter_resource_limits"]["cpu"] == 112.0
    assert pools["<Root>"]["scheduling_tag_filter_resource_limits"]["cpu"] == 112.0
    assert view["operations"]["op"]["scheduling_tag_filter_resource_limits"]["cpu"] == 4.0


def test_tag_filter_limits_count_only_the_trees_online_nodes() -> None:
    trees, tree = scheduler({"node_tag_filter": "default | gpu"}, cpu=10)
    trees.create_tree("other", {"node_tag_filter": "other"})
    trees.register_node("elsewhere", tags=["other"], resource_limits={"cpu": 50})
    trees.register_node("both", tags=["other", "gpu"], resource_limits={"cpu": 20})
    trees.register_node("mine", tags=["gpu", "x"], resource_limits={"cpu": 7})
    assert trees.nodes["both"].state == "error"  # it matches both trees
    tree.create_pool("gpu", config={"scheduling_tag_filter": "gpu"})
    tree.create_pool("wide", config={"scheduling_tag_filter": "gpu | other"})
    pools = tree.orchid()["pools"]
    assert pools["gpu"]["scheduling_tag_filter_resource_limits"]["cpu"] == 7.0
    assert pools["wide"]["scheduling_tag_filter_resource_limits"]["cpu"] == 7.0


# --- gang operations -------------------------------------------------------------------------


def gang(pool: str) -> dict[str, object]:
    return vanilla(pool, jobs=4, is_gang=True)


def test_gangs_are_allowed_everywhere_by_default() -> None:
    trees, tree = scheduler()
    tree.create_pool("fair")
    trees.start_operation("op", user="u", spec=gang("fair"), now=1)
    pools = tree.orchid()["pools"]
    assert pools["fair"]["gang_operations_allowed"] is True
    assert pools["<Root>"]["gang_operations_allowed"] is True


def test_a_tree_can_keep_gangs_to_fifo_pools() -> None:
    trees, tree = scheduler({"allow_gang_operations_only_in_fifo_pools": True})
    tree.create_pool("fair")
    tree.create_pool("fifo", config={"mode": "fifo"})
    tree.create_pool("exempt", config={"always_allow_gang_operations": True})
    tree.create_pool(
        "hub",
        config={"create_ephemeral_subpools": True, "ephemeral_subpool_config": {"mode": "fifo"}},
    )
    pools = tree.orchid()["pools"]
    allowed = {
        name: pools[name]["gang_operations_allowed"]
        for name in ("<Root>", "fair", "fifo", "exempt", "hub")
    }
    assert allowed == {
        "<Root>": False,
        "fair": False,
        "fifo": True,
        "exempt": True,
        "hub": True,
    }
    before = state(tree)
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("op", user="u", spec=gang("fair"), now=1)
    assert caught.value.code == "GangOperationsAllowedOnlyInFifoPools"
    assert "is forbidden since it is not configured in FIFO mode" in caught.value.message
    assert state(tree) == before
    trees.start_operation("op1", user="u", spec=gang("fifo"), now=1)
    trees.start_operation("op2", user="u", spec=gang("exempt"), now=1)
    trees.start_operation("op3", user="u", spec=vanilla("fair"), now=1)  # not a gang
    # a new ephemeral pool under the hub is fifo: allowed
    trees.start_operation("op4", user="alice", spec=gang("hub"), now=1)
    assert tree.operations["op4"].pool.name == "hub$alice"


def test_moving_a_gang_to_a_pool_that_refuses_gangs_is_refused() -> None:
    trees, tree = scheduler({"allow_gang_operations_only_in_fifo_pools": True})
    tree.create_pool("fifo", config={"mode": "fifo"})
    tree.create_pool("fair")
    trees.start_operation("op", user="u", spec=gang("fifo"), now=1)
    with pytest.raises(SchedulerError) as caught:
        trees.update_operation_parameters("op", {"pool": "fair"}, now=2)
    assert caught.value.code == "GangOperationsAllowedOnlyInFifoPools"
    assert tree.operations["op"].pool.name == "fifo"


def test_needed_resources_per_task_with_waiting_jobs() -> None:
    trees, tree = scheduler()
    spec = {
        "pool_trees": ["physical"],
        "tasks": {
            "map": {"job_count": 3, "cpu_limit": 2, "memory_limit": GIB},
            "reduce": {"job_count": 1, "cpu_limit": 1, "memory_limit": 2 * GIB, "gpu_limit": 0},
        },
    }
    trees.start_operation("op", user="u", spec=spec, now=1)
    view = tree.orchid()["operations"]["op"]
    grouped = view["grouped_needed_resources"]
    assert grouped["map"] == {
        "min_needed_resources": {
            "user_slots": 1.0,
            "cpu": 2.0,
            "gpu": 0.0,
            "memory": float(GIB),
            "network": 0.0,
        },
        "allocation_count": 3,
    }
    assert grouped["reduce"]["allocation_count"] == 1
    assert view["detailed_min_needed_job_resources"] == [
        grouped["map"]["min_needed_resources"],
        grouped["reduce"]["min_needed_resources"],
    ]
    assert (view["probing"], view["offloading"], view["disk_request_media"]) == (False, False, [])
    trees.start_job("op", "reduce", node="node1", now=2)
    view = tree.orchid()["operations"]["op"]
    assert list(view["grouped_needed_resources"]) == ["map"]  # no reduce job waits any more
