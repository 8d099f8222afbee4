"""YTsaurus behaviours of pools, operations and the tree orchid (issue 17).

Each test mirrors an expectation of YTsaurus's integration tests
(``yt/yt/tests/integration/scheduler/``) or of the master's pool validation
(``yt/yt/server/master/scheduler_pool_server/scheduler_pool-inl.h``).
"""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import scheduler, state, vanilla
from ytsched.config.base import ConfigError
from ytsched.pooltree import SchedulerError

# --- orchid names and shapes ----------------------------------------------------------------


def test_child_pools_by_pool_is_a_map_of_pool_attributes() -> None:
    """``test_child_pools_by_pool`` (test_scheduler_orchid.py)."""
    _, tree = scheduler()
    tree.create_pool("pool1")
    tree.create_pool("pool2")
    tree.create_pool("pool3", "pool1")
    tree.create_pool("pool4", "pool1")
    tree.create_pool("pool5", "pool2")
    view = tree.orchid()
    by_pool = view["child_pools_by_pool"]
    assert set(by_pool) == {"<Root>", "pool1", "pool2", "pool3", "pool4", "pool5"}
    shape = {
        name: {"full_path": attrs["full_path"], "child_pool_count": attrs["child_pool_count"]}
        for name, attrs in by_pool["<Root>"].items()
    }
    assert shape == {
        "pool1": {"full_path": "/pool1", "child_pool_count": 2},
        "pool2": {"full_path": "/pool2", "child_pool_count": 1},
    }
    assert sorted(by_pool["pool1"]) == ["pool3", "pool4"]
    assert by_pool["pool1"]["pool3"]["full_path"] == "/pool1/pool3"
    assert by_pool["pool5"] == {}


def test_operations_by_pool_entries_equal_the_operation_entries() -> None:
    """``test_operations`` (test_scheduler_orchid.py): ``operations_by_pool/<pool>/<op>`` is
    ``operations/<op>``; a pool without operations has an empty map."""
    trees, tree = scheduler()
    tree.create_pool("pool")
    tree.create_pool("empty")
    trees.start_operation("op1", user="u", spec=vanilla("pool"), now=1)
    trees.start_operation("op2", user="u", spec=vanilla("pool"), now=1)
    trees.update(2)
    view = tree.orchid()
    assert set(view["operations_by_pool"]["pool"]) == {"op1", "op2"}
    assert view["operations_by_pool"]["pool"]["op1"] == view["operations"]["op1"]
    assert view["operations_by_pool"]["empty"] == {}


def test_pool_and_operation_carry_ytsaurus_attribute_names() -> None:
    trees, tree = scheduler({"main_resource": "cpu"}, cpu=10)
    tree.create_pool("pool", config={"strong_guarantee_resources": {"cpu": 4}})
    tree.create_pool("limited", config={"resource_limits": {"user_slots": 1}})
    trees.start_operation("op", user="u", spec=vanilla("limited", jobs=3), now=1)
    trees.update(2)
    view = tree.orchid()
    pool = view["pools"]["pool"]
    assert pool["effective_strong_guarantee_resources"]["cpu"] == 4.0
    # 4 of 10 cores: 4 of the 10 user slots, an integer.
    assert pool["effective_strong_guarantee_resources"]["user_slots"] == 4.0
    assert (
        pool["inferred_strong_guarantee_resources"] == pool["effective_strong_guarantee_resources"]
    )
    limited = view["pools"]["limited"]
    assert limited["resource_limits"]["user_slots"] == 1.0
    assert limited["specified_resource_limits"] == {"user_slots": 1.0}
    # ``test_limited_resource_demand``: demand 3 slots and 3 cpu, limited demand 1 and 1.
    assert limited["resource_demand"]["user_slots"] == 3.0
    assert limited["limited_resource_demand"]["user_slots"] == 1.0
    assert limited["limited_resource_demand"]["cpu"] == 1.0
    operation = view["operations"]["op"]
    for name in (
        "promised_fair_share_resources",
        "promised_dominant_fair_share",
        "detailed_promised_guarantee_fair_share",
        "resource_limits",
        "effective_strong_guarantee_resources",
    ):
        assert name in operation, name


def test_fifo_pools_show_effective_fifo_pool_scheduling_order() -> None:
    _, tree = scheduler({"fifo_pool_scheduling_order": "fifo"})
    tree.create_pool("queue", config={"mode": "fifo"})
    tree.create_pool("own", config={"mode": "fifo", "fifo_pool_scheduling_order": "satisfaction"})
    tree.create_pool("fair")
    pools = tree.orchid()["pools"]
    assert pools["queue"]["effective_fifo_pool_scheduling_order"] == "fifo"
    assert pools["own"]["effective_fifo_pool_scheduling_order"] == "satisfaction"
    assert "effective_fifo_pool_scheduling_order" not in pools["fair"]


def test_orchid_config_is_postprocessed() -> None:
    """``test_config_postprocessor`` (test_scheduler_preemption.py)."""
    trees, tree = scheduler()
    assert tree.orchid()["config"]["non_preemptible_resource_usage_threshold"] == {}
    trees.update_tree_config("physical", {"max_unpreemptible_running_allocation_count": 0})
    assert tree.orchid()["config"]["non_preemptible_resource_usage_threshold"] == {"user_slots": 0}
    trees.update_tree_config("physical", {"max_unpreemptible_running_allocation_count": 7})
    trees.update_tree_config("physical", {"non_preemptible_resource_usage_threshold": {"cpu": 1}})
    assert tree.orchid()["config"]["non_preemptible_resource_usage_threshold"] == {
        "cpu": 1.0,
        "user_slots": 7,
    }
    trees.update_tree_config(
        "physical", {"non_preemptible_resource_usage_threshold": {"cpu": 1, "user_slots": 5}}
    )
    assert tree.orchid()["config"]["non_preemptible_resource_usage_threshold"] == {
        "cpu": 1.0,
        "user_slots": 5,
    }


# --- values -----------------------------------------------------------------------------------


def test_operation_max_unpreemptible_job_count_is_min_with_tree_threshold() -> None:
    """``test_operation_max_unpreemptible_running_allocation_count``."""
    trees, tree = scheduler()
    trees.start_operation("op", user="u", spec=vanilla(max_unpreemptible_job_count=7), now=1)

    def threshold() -> float:
        attrs = tree.orchid()["operations"]["op"]
        return float(attrs["effective_non_preemptible_resource_usage_threshold"]["user_slots"])

    assert threshold() == 7
    trees.update_tree_config(
        "physical", {"non_preemptible_resource_usage_threshold": {"user_slots": 1}}
    )
    assert threshold() == 1
    trees.update_tree_config(
        "physical", {"non_preemptible_resource_usage_threshold": {"user_slots": 10}}
    )
    assert threshold() == 7


# --- typed attributes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "patch",
    [
        {"max_operation_count": True},
        {"max_running_operation_count": "5"},
        {"weight": False},
        {"enable_aggressive_starvation": 1},
        {"strong_guarantee_resources": {"cpu": True}},
        {"fair_share_starvation_tolerance": "0.5"},
    ],
)
def test_set_of_a_wrong_scalar_type_is_refused_and_old_value_stays(
    patch: dict[str, object],
) -> None:
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool("p", config={"max_operation_count": 10, "weight": 2})
    before = state(tree)
    with pytest.raises(ConfigError) as caught:
        tree.update_pool("p", patch)
    assert caught.value.code == "InvalidConfig"
    assert next(iter(patch)) in str(caught.value)
    assert state(tree) == before


# --- pools and operations --------------------------------------------------------------------


def test_changing_default_parent_map_moves_ephemeral_pools() -> None:
    trees, tree = scheduler({"use_user_default_parent_pool_map": True})
    tree.create_pool("first")
    tree.create_pool("second")
    trees.set_user_default_parent_pool("alice", "first")
    trees.start_operation("a", user="alice", spec=vanilla(), now=1)
    assert tree.pools["alice"].parent is tree.pools["first"]
    trees.set_user_default_parent_pool("alice", "second", now=2)
    assert tree.pools["alice"].parent is tree.pools["second"]
    assert tree.pools["first"].operation_count == 0
    assert tree.pools["second"].operation_count == 1
    assert tree.orchid()["pools"]["alice"]["full_path"] == "/second/alice"
    assert tree.check_invariants() == []


def test_removing_a_pool_with_operations_makes_it_ephemeral() -> None:
    trees, tree = scheduler({"default_parent_pool": "research"})
    tree.create_pool("research", config={"ephemeral_subpool_config": {"max_operation_count": 3}})
    tree.create_pool("team", config={"weight": 5, "max_operation_count": 20})
    trees.start_operation("op", user="u", spec=vanilla("team"), now=1)
    tree.remove_pool("team", now=2)
    pool = tree.pools["team"]
    assert pool.is_ephemeral and pool.parent is tree.pools["research"]
    assert pool.effective.weight is None and pool.effective.max_operation_count == 3
    assert trees.operations["op"].state.value == "running"
    assert tree.orchid()["pools"]["team"]["is_ephemeral"] is True
    assert tree.orchid()["user_to_ephemeral_pools"] == {}
    assert tree.check_invariants() == []
    trees.complete_operation("op", now=3)
    assert "team" not in tree.pools
    assert tree.check_invariants() == []


def test_removing_a_pool_with_child_pools_is_refused() -> None:
    _, tree = scheduler()
    tree.create_pool("a")
    tree.create_pool("b", "a")
    before = state(tree)
    with pytest.raises(SchedulerError) as caught:
        tree.remove_pool("a")
    assert caught.value.code == "PoolIsNotEmpty"
    assert state(tree) == before


def test_explicit_pool_of_removed_name_adopts_the_ephemeral_pool() -> None:
    trees, tree = scheduler()
    tree.create_pool("team")
    trees.start_operation("op", user="u", spec=vanilla("team"), now=1)
    tree.remove_pool("team", now=2)
    tree.create_pool("team", config={"weight": 2}, now=3)
    assert not tree.pools["team"].is_ephemeral
    assert tree.operations["op"].pool is tree.pools["team"]


# --- missing options -------------------------------------------------------------------------


def test_children_guarantees_can_be_forbidden() -> None:
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool(
        "parent",
        config={"strong_guarantee_resources": {"cpu": 10}, "allow_children_guarantees": False},
    )
    tree.create_pool("free", "parent")
    before = state(tree)
    with pytest.raises(SchedulerError) as caught:
        tree.create_pool("child", "parent", {"strong_guarantee_resources": {"cpu": 1}})
    assert caught.value.code == "ChildrenGuaranteesNotAllowed"
    assert "does not allow children guarantees" in caught.value.message
    assert state(tree) == before
    with pytest.raises(SchedulerError):
        tree.update_pool("free", {"strong_guarantee_resources": {"cpu": 1}})
    tree.update_pool("parent", {"allow_children_guarantees": True})
    tree.update_pool("free", {"strong_guarantee_resources": {"cpu": 1}})


def test_apply_specified_resource_limits_to_demand() -> None:
    """``test_apply_specified_resource_limits_to_demand`` (test_scheduler_strategy.py)."""
    trees, tree = scheduler()
    tree.create_pool("pool", config={"resource_limits": {"cpu": 0}})
    spec = vanilla("pool", jobs=3, apply_specified_resource_limits_to_demand=True)
    trees.start_operation("op", user="u", spec=spec, now=1)

    def demand() -> tuple[float, float]:
        result = trees.update(2)["physical"]
        vector = result.operations["op"].resource_demand
        return vector[0], vector[1]  # user_slots, cpu

    assert demand() == (3.0, 3.0)  # the pool's limits are not applied
    trees.update_operation_parameters(
        "op",
        {
            "scheduling_options_per_pool_tree": {
                "physical": {"resource_limits": {"cpu": 3, "user_slots": 2}}
            }
        },
    )
    assert demand() == (2.0, 3.0)
    trees.update_operation_parameters(
        "op",
        {
            "scheduling_options_per_pool_tree": {
                "physical": {"resource_limits": {"cpu": 1, "user_slots": 2}}
            }
        },
    )
    assert demand() == (2.0, 1.0)
    # Never below the usage: two running one-core jobs keep a demand of 2.
    tree.update_pool("pool", {"resource_limits": {"cpu": 2}})
    trees.start_job("op", "main", node="node1", now=3)
    trees.start_job("op", "main", node="node1", now=3)
    trees.update_operation_parameters(
        "op",
        {
            "scheduling_options_per_pool_tree": {
                "physical": {"resource_limits": {"cpu": 1, "user_slots": 0}}
            }
        },
    )
    assert demand() == (2.0, 2.0)


def test_resource_distribution_info() -> None:
    """``test_resource_distribution_info`` (test_scheduler_orchid.py) reads this map."""
    trees, tree = scheduler({"main_resource": "cpu"}, cpu=100)
    assert tree.orchid()["resource_distribution_info"] is None  # before the first update
    tree.create_pool("pool", config={"strong_guarantee_resources": {"cpu": 72}})
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
    trees.update(1)
    info = tree.orchid()["resource_distribution_info"]
    assert info["distributed_strong_guarantee_resources"]["cpu"] == 72.0
    assert info["distributed_resource_flow"]["cpu"] == 10.0
    assert info["distributed_burst_guarantee_resources"]["cpu"] == 20.0
    assert info["distributed_resources"]["cpu"] == 92.0
    assert info["undistributed_resources"]["cpu"] == 8.0
    assert info["undistributed_resource_flow"]["cpu"] == 10.0
    assert info["undistributed_burst_guarantee_resources"]["cpu"] == 0.0
