"""Pool validation: every error code, with the tree left exactly as it was."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pooltree.helpers import scheduler, state, vanilla
from ytsched.config import ConfigError
from ytsched.pooltree import PoolTree, SchedulerError


def _tree() -> PoolTree:
    trees, tree = scheduler(
        {"pool_config_presets": {"quiet": {"fair_share_starvation_tolerance": 0.5}}}
    )
    tree.create_pool("prod", config={"strong_guarantee_resources": {"cpu": 50, "memory": 100}})
    tree.create_pool("web", "prod", {"strong_guarantee_resources": {"cpu": 20}})
    tree.create_pool("db", "prod", {"strong_guarantee_resources": {"cpu": 20}})
    tree.create_pool("queue", config={"mode": "fifo"})
    tree.create_pool(
        "flow",
        config={
            "integral_guarantees": {
                "resource_flow": {"cpu": 30},
                "burst_guarantee_resources": {"cpu": 40},
            }
        },
    )
    tree.create_pool(
        "burst",
        "flow",
        {
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 10},
                "burst_guarantee_resources": {"cpu": 20},
            }
        },
    )
    trees.start_operation("op1", user="alice", spec=vanilla("web"), now=1)
    trees.start_operation("op2", user="alice", spec=vanilla(), now=1)
    assert tree.pools["alice"].is_ephemeral
    return tree


CASES: list[tuple[str, str, Any]] = [
    ("InvalidConfig", "update", ("web", {"weight": -3})),
    (
        "InvalidConfig",
        "update",
        ("web", {"max_operation_count": 1, "max_running_operation_count": 5}),
    ),
    ("GuaranteesExceedParent", "update", ("web", {"strong_guarantee_resources": {"cpu": 31}})),
    (
        "GuaranteesExceedParent",
        "create",
        ("cache", "prod", {"strong_guarantee_resources": {"cpu": 11}}),
    ),
    (
        "GuaranteeNotConfiguredAtParent",
        "create",
        ("cache", "prod", {"strong_guarantee_resources": {"cpu": 1, "gpu": 1}}),
    ),
    ("GuaranteesExceedParent", "update", ("prod", {"strong_guarantee_resources": {"cpu": 39}})),
    ("GuaranteeNotConfiguredAtParent", "update", ("prod", {"strong_guarantee_resources": None})),
    (
        "MainResourceNotConfigured",
        "create",
        ("mem", None, {"strong_guarantee_resources": {"memory": 10}}),
    ),
    ("FifoPoolWithSubpools", "create", ("sub", "queue", {})),
    ("FifoPoolWithSubpools", "update", ("prod", {"mode": "fifo"})),
    ("FifoPoolWithSubpools", "move", ("web", "queue")),
    ("NoSuchPoolConfigPreset", "update", ("web", {"config_presets": ["quiet", "loud"]})),
    ("InvalidPoolName", "create", ("bad name", None, {})),
    ("InvalidPoolName", "create", ("a$b", None, {})),
    ("InvalidPoolName", "create", ("<Root>", None, {})),
    ("InvalidPoolName", "create", ("", None, {})),
    ("InvalidPoolName", "rename", ("web", "we/b")),
    ("PoolAlreadyExists", "create", ("web", None, {})),
    ("PoolAlreadyExists", "rename", ("web", "db")),
    ("NoSuchPool", "create", ("x", "missing", {})),
    ("NoSuchPool", "update", ("missing", {"weight": 2})),
    ("InvalidPoolMove", "move", ("prod", "web")),
    ("PoolIsNotEmpty", "remove", ("prod",)),
    ("CannotModifyRootPool", "remove", ("<Root>",)),
    ("CannotModifyRootPool", "update", ("<Root>", {"weight": 2})),
    ("CannotModifyEphemeralPool", "update", ("alice", {"weight": 2})),
    ("CannotModifyEphemeralPool", "create", ("child", "alice", {})),
    ("DuplicateElementName", "create", ("op1", None, {})),
    (
        "InvalidIntegralGuarantees",
        "create",
        (
            "b2",
            "flow",
            {"integral_guarantees": {"guarantee_type": "burst", "resource_flow": {"cpu": 1}}},
        ),
    ),
    (
        "InvalidIntegralGuarantees",
        "create",
        ("r2", None, {"integral_guarantees": {"guarantee_type": "relaxed"}}),
    ),
    (
        "InvalidIntegralGuarantees",
        "create",
        (
            "r3",
            None,
            {"integral_guarantees": {"guarantee_type": "relaxed", "resource_flow": {"memory": 5}}},
        ),
    ),
    (
        "InvalidIntegralGuarantees",
        "create",
        ("inner", "burst", {"integral_guarantees": {"resource_flow": {"cpu": 1}}}),
    ),
    (
        "GuaranteesExceedParent",
        "update",
        (
            "burst",
            {
                "integral_guarantees": {
                    "guarantee_type": "burst",
                    "resource_flow": {"cpu": 31},
                    "burst_guarantee_resources": {"cpu": 20},
                }
            },
        ),
    ),
    (
        "GuaranteeNotConfiguredAtParent",
        "create",
        (
            "r4",
            "prod",
            {"integral_guarantees": {"guarantee_type": "relaxed", "resource_flow": {"cpu": 1}}},
        ),
    ),
    ("MainResourceNotConfigured", "config", ({"main_resource": "memory"},)),
    ("NoSuchPoolConfigPreset", "config", ({"pool_config_presets": {}},)),
    ("InvalidConfig", "config", ({"max_operation_count": -1},)),
]


def _apply(tree: PoolTree, action: str, args: Any) -> None:
    if action == "update":
        tree.update_pool(*args)
    elif action == "create":
        tree.create_pool(*args)
    elif action == "move":
        tree.move_pool(*args)
    elif action == "rename":
        tree.rename_pool(*args)
    elif action == "remove":
        tree.remove_pool(*args)
    else:
        tree.update_config(*args)


@pytest.mark.parametrize(("code", "action", "args"), CASES)
def test_refused_change_leaves_tree_unchanged(code: str, action: str, args: Any) -> None:
    tree = _tree()
    if code == "NoSuchPoolConfigPreset" and action == "config":
        tree.update_pool("db", {"config_presets": ["quiet"]})
    before = state(tree)
    with pytest.raises((SchedulerError, ConfigError)) as caught:
        _apply(tree, action, args)
    assert caught.value.code == code, caught.value.message
    assert "tree 'physical'" in caught.value.message
    assert state(tree) == before
    assert tree.check_invariants() == []


def test_messages_name_pool_and_option() -> None:
    tree = _tree()
    with pytest.raises(SchedulerError) as caught:
        tree.update_pool("web", {"strong_guarantee_resources": {"cpu": 31}})
    message = caught.value.message
    assert "pool 'prod'" in message and "strong_guarantee_resources.cpu" in message
    assert "'web'" in message and "51" in message
    with pytest.raises(SchedulerError) as caught:
        tree.create_pool("cache", "prod", {"strong_guarantee_resources": {"cpu": 1, "gpu": 1}})
    assert caught.value.message == (
        "pool 'cache' in tree 'physical': strong_guarantee_resources.gpu is explicitly configured"
        " at child 'cache' but is not configured at parent 'prod'"
    )
    with pytest.raises(ConfigError) as config_error:
        tree.update_pool("web", {"weight": -3})
    assert config_error.value.message.startswith("pool 'web' in tree 'physical': weight:")


def test_children_guarantee_checked_per_resource_unspecified_count_zero() -> None:
    tree = _tree()
    # memory: parent 100, web sets 60, db unspecified -> fine
    tree.update_pool("web", {"strong_guarantee_resources": {"cpu": 20, "memory": 60}})
    tree.update_pool("db", {"strong_guarantee_resources": {"cpu": 20, "memory": 40}})
    with pytest.raises(SchedulerError, match="memory"):
        tree.update_pool("db", {"strong_guarantee_resources": {"cpu": 20, "memory": 41}})


def test_first_level_pools_are_not_summed_against_the_cluster() -> None:
    _, tree = scheduler(cpu=10)
    tree.create_pool("a", config={"strong_guarantee_resources": {"cpu": 100}})
    tree.create_pool("b", config={"strong_guarantee_resources": {"cpu": 100}})
    assert set(tree.pools) == {"<Root>", "a", "b"}


def test_operation_count_limits_are_not_summed() -> None:
    _, tree = scheduler()
    tree.create_pool("p", config={"max_operation_count": 2, "max_running_operation_count": 1})
    tree.create_pool("c1", "p", {"max_operation_count": 50, "max_running_operation_count": 40})
    tree.create_pool("c2", "p", {"max_operation_count": 50, "max_running_operation_count": 40})
    assert tree.pools["c2"].parent is tree.pools["p"]


def test_presets_must_exist_and_feed_the_effective_config() -> None:
    _, tree = scheduler({"pool_config_presets": {"lw": {"enable_lightweight_operations": True}}})
    pool = tree.create_pool("q", config={"mode": "fifo", "config_presets": ["lw"]})
    assert pool.config.enable_lightweight_operations is False
    assert pool.effective.enable_lightweight_operations is True
    with pytest.raises(SchedulerError) as caught:
        tree.create_pool("r", config={"config_preset": "nope"})
    assert caught.value.code == "NoSuchPoolConfigPreset"
    assert "'nope'" in caught.value.message and "lw" in caught.value.message


def test_rename_keeps_children_and_leaves_operations_in_an_ephemeral_pool() -> None:
    """A rename reaches YTsaurus's scheduler as erase + create: child pools follow the new
    name; operations placed directly in the pool stay in an ephemeral pool of the old name."""
    trees, tree = scheduler()
    tree.create_pool("a")
    tree.create_pool("b", "a")
    trees.start_operation("op", user="u", spec=vanilla("b"), now=1)
    tree.rename_pool("a", "aa")
    assert tree.pools["b"].parent is tree.pools["aa"]
    assert tree.operations["op"].pool.name == "b"  # "a" had no operations of its own
    tree.rename_pool("b", "bb", now=2)
    assert tree.pools["bb"].parent is tree.pools["aa"] and not tree.pools["bb"].is_ephemeral
    old = tree.pools["b"]
    assert old.is_ephemeral and old.parent is tree.root
    assert tree.operations["op"].pool is old
    assert tree.operations["op"].running
    view = tree.orchid()
    assert view["operations"]["op"]["pool"] == "b"
    assert view["pools"]["b"]["is_ephemeral"] is True
    assert tree.check_invariants() == []
    trees.complete_operation("op", now=3)
    assert "b" not in tree.pools and "bb" in tree.pools
    assert tree.check_invariants() == []


def test_remove_empty_pool() -> None:
    _, tree = scheduler()
    tree.create_pool("a")
    tree.remove_pool("a")
    assert "a" not in tree.pools and not tree.root.children
