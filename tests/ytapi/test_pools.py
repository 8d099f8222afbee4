"""Pool trees and pools through ``yt.wrapper.YtClient`` and the ``yt`` command."""

from __future__ import annotations

from typing import Any

import pytest
import yt.wrapper as yt_wrapper
import yt.yson as yt_yson

from tests.ytapi.conftest import Cli

pytestmark = pytest.mark.ytapi


def test_pool_tree_with_nested_pools_guarantees_and_integral_settings(yt: Any) -> None:
    yt.create(
        "scheduler_pool_tree",
        attributes={
            "name": "physics",
            "config": {"nodes_filter": "physics", "max_operation_count": 50},
        },
    )
    yt.create(
        "scheduler_pool",
        attributes={
            "name": "lab",
            "pool_tree": "physics",
            "strong_guarantee_resources": {"cpu": 4},
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 1},
                "burst_guarantee_resources": {"cpu": 2},
            },
        },
    )
    yt.create(
        "scheduler_pool",
        attributes={
            "name": "theory",
            "pool_tree": "physics",
            "parent_name": "lab",
            "strong_guarantee_resources": {"cpu": 1},
        },
    )
    assert yt.get("//sys/pool_trees/physics") == {"lab": {"theory": {}}}
    assert yt.exists("//sys/pool_trees/physics/lab/theory")
    assert not yt.exists("//sys/pool_trees/physics/lab/nothing")
    assert yt.get("//sys/pool_trees/physics/lab/@strong_guarantee_resources") == {"cpu": 4.0}
    assert yt.get("//sys/pool_trees/physics/lab/@integral_guarantees/guarantee_type") == "burst"
    assert yt.get("//sys/pool_trees/physics/@config/max_operation_count") == 50
    assert yt.list("//sys/pool_trees/physics/lab") == ["theory"]

    yt.set("//sys/pool_trees/physics/lab/theory/@weight", 2.5)
    assert yt.get("//sys/pool_trees/physics/lab/theory/@weight") == 2.5
    # Attributes with a value, the shape YTsaurus returns (a YSON value with attributes).
    listed = yt.list("//sys/pool_trees/physics/lab", attributes=["weight"])
    assert [str(item) for item in listed] == ["theory"]
    assert listed[0].attributes == {"weight": 2.5}

    yt.move("//sys/pool_trees/physics/lab/theory", "//sys/pool_trees/physics/theory")
    assert yt.get("//sys/pool_trees/physics") == {"lab": {}, "theory": {}}
    yt.remove("//sys/pool_trees/physics/theory")
    assert not yt.exists("//sys/pool_trees/physics/theory")
    yt.remove("//sys/pool_trees/physics", recursive=True)
    assert not yt.exists("//sys/pool_trees/physics")


def test_refused_pool_change_is_a_yt_error_and_changes_nothing(yt: Any) -> None:
    yt.create(
        "scheduler_pool",
        attributes={
            "name": "bounded",
            "pool_tree": "default",
            "strong_guarantee_resources": {"cpu": 2},
        },
    )
    yt.create(
        "scheduler_pool",
        attributes={"name": "bounded_child", "pool_tree": "default", "parent_name": "bounded"},
    )
    with pytest.raises(yt_wrapper.YtResponseError) as raised:
        yt.set(
            "//sys/pool_trees/default/bounded/bounded_child/@strong_guarantee_resources", {"cpu": 3}
        )
    assert raised.value.contains_code(1)
    assert "bounded" in str(raised.value)
    assert not yt.exists(
        "//sys/pool_trees/default/bounded/bounded_child/@strong_guarantee_resources"
    )
    with pytest.raises(yt_wrapper.YtResponseError) as missing:
        yt.get("//sys/pool_trees/default/no_such_pool/@weight")
    assert missing.value.is_resolve_error()
    with pytest.raises(yt_wrapper.YtResponseError) as exists:
        yt.create("scheduler_pool", attributes={"name": "bounded", "pool_tree": "default"})
    assert exists.value.is_already_exists()


def test_cli_manages_pools(cli: Cli) -> None:
    cli.run("create", "scheduler_pool", "--attributes", "{name=cli_pool; pool_tree=default}")
    cli.run("set", "//sys/pool_trees/default/cli_pool/@max_running_operation_count", "3")
    shown = cli.run("get", "//sys/pool_trees/default/cli_pool/@", "--format", "json").stdout
    assert '"max_running_operation_count":3' in shown.replace(" ", "")
    assert "cli_pool" in cli.run("list", "//sys/pool_trees/default").stdout
    yson_text = cli.run("get", "//sys/pool_trees/default/cli_pool/@max_running_operation_count")
    assert yt_yson.loads(yson_text.stdout.encode()) == 3
    cli.run("remove", "//sys/pool_trees/default/cli_pool")
    assert cli.run("exists", "//sys/pool_trees/default/cli_pool").stdout.strip() == "false"
    missing = cli.run("get", "//sys/pool_trees/default/cli_pool/@weight", check=False)
    assert missing.returncode != 0
    assert "500" in missing.stderr  # the resolve error's code, printed by the CLI


def test_check_permission_and_transfer_pool_resources(yt: Any, cli: Cli) -> None:
    for name in ("donor", "taker"):
        yt.create(
            "scheduler_pool",
            attributes={
                "name": name,
                "pool_tree": "default",
                "strong_guarantee_resources": {"cpu": 2},
                "max_operation_count": 10,
            },
        )
    assert yt.check_permission("root", "use", "//sys/pool_trees/default/donor")["action"] == "allow"
    yt.transfer_pool_resources(
        "donor",
        "taker",
        "default",
        {"strong_guarantee_resources": {"cpu": 1}, "max_operation_count": 4},
    )
    assert yt.get("//sys/pool_trees/default/donor/@strong_guarantee_resources") == {"cpu": 1.0}
    assert yt.get("//sys/pool_trees/default/taker/@strong_guarantee_resources") == {"cpu": 3.0}
    assert yt.get("//sys/pool_trees/default/taker/@max_operation_count") == 14
    cli.run(
        "transfer-pool-resources",
        "--source-pool",
        "taker",
        "--destination-pool",
        "donor",
        "--pool-tree",
        "default",
        "--resource-delta",
        "{strong_guarantee_resources={cpu=3}}",
    )
    assert yt.get("//sys/pool_trees/default/donor/@strong_guarantee_resources") == {"cpu": 4.0}
    with pytest.raises(yt_wrapper.YtResponseError) as refused:
        yt.transfer_pool_resources(
            "taker", "donor", "default", {"strong_guarantee_resources": {"cpu": 1}}
        )
    assert "Failed to transfer resources" in str(refused.value)
    assert yt.get("//sys/pool_trees/default/taker/@strong_guarantee_resources") == {"cpu": 0.0}
