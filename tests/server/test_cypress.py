"""Cypress commands over //sys/pool_trees, //sys/pools, nodes and the orchid."""

from __future__ import annotations

from tests.server.conftest import Service


def test_pool_trees_map_and_attributes(service: Service) -> None:
    assert service.call("get", path="//sys/pool_trees")["value"] == {
        "default": {"research": {"team": {}}, "batch": {}}
    }
    assert service.call("get", path="//sys/pool_trees/@default_tree")["value"] == "default"
    assert service.call("get", path="//sys/pools/research/@weight")["value"] == 2
    assert service.call("list", path="//sys/pools")["value"] == ["research", "batch"]
    assert service.call("exists", path="//sys/pools/research/team")["value"] is True
    assert service.call("exists", path="//sys/pools/research/nope")["value"] is False
    team = service.call("get", path="//sys/pool_trees/default/research/team/@")["value"]
    assert team["parent_name"] == "research" and team["name"] == "team"


def test_set_goes_through_validation_and_a_refusal_changes_nothing(service: Service) -> None:
    service.call("set", path="//sys/pools/research/@weight", value=5)
    assert service.call("get", path="//sys/pools/research/@weight")["value"] == 5
    assert service.error("set", path="//sys/pools/research/@weight", value=-1) == (
        400,
        "InvalidConfig",
    )
    assert service.error("set", path="//sys/pools/research/@mode", value="fifo")[0] == 400
    assert service.call("get", path="//sys/pools/research/@weight")["value"] == 5
    assert service.error("set", path="//sys/pools/research/@no_such_option", value=1)[0] == 400


def test_tree_config_is_replaced_wholesale_and_per_option(service: Service) -> None:
    service.call("set", path="//sys/pool_trees/default/@config", value={"max_operation_count": 9})
    service.call(
        "set", path="//sys/pool_trees/default/@config/max_running_operation_count", value=3
    )
    config = service.call("get", path="//sys/pool_trees/default/@config")["value"]
    assert config == {"max_operation_count": 9, "max_running_operation_count": 3}
    orchid = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/default/config"
    assert service.call("get", path=f"{orchid}/max_running_operation_count")["value"] == 3
    service.call("remove", path="//sys/pool_trees/default/@config")
    assert service.call("get", path="//sys/pool_trees/default/@config")["value"] == {}
    assert service.error("get", path="//sys/pool_trees/default/@weight") == (
        400,
        "InvalidAttribute",
    )


def test_create_move_rename_remove_pools(service: Service) -> None:
    service.call(
        "create",
        type="scheduler_pool",
        attributes={"name": "ml", "pool_tree": "default", "parent_name": "research", "weight": 3},
    )
    assert service.call("get", path="//sys/pools/research/ml/@weight")["value"] == 3
    assert service.error(
        "create", type="scheduler_pool", attributes={"name": "ml", "pool_tree": "default"}
    ) == (409, "PoolAlreadyExists")
    service.call(
        "create",
        type="scheduler_pool",
        attributes={"name": "ml", "pool_tree": "default"},
        ignore_existing=True,
    )
    service.call("set", path="//sys/pools/research/ml/@parent_name", value="<Root>")
    assert "ml" in service.call("list", path="//sys/pools")["value"]
    service.call("set", path="//sys/pools/ml/@name", value="ml2")
    assert service.call("exists", path="//sys/pools/ml2")["value"]
    service.call("create", type="scheduler_pool", path="//sys/pools/ml2/child")
    assert service.error("remove", path="//sys/pools/ml2") == (400, "PoolIsNotEmpty")
    service.call("remove", path="//sys/pools/ml2", recursive=True)
    assert not service.call("exists", path="//sys/pools/ml2")["value"]
    service.call("remove", path="//sys/pools/ml2", force=True)


def test_trees_create_default_and_remove(service: Service) -> None:
    service.call(
        "create", type="scheduler_pool_tree", attributes={"name": "gpu", "config": {}, "owner": "x"}
    )
    assert service.call("get", path="//sys/pool_trees/gpu/@owner")["value"] == "x"
    service.call("set", path="//sys/pool_trees/@default_tree", value="gpu")
    assert service.call("list", path="//sys/pools")["value"] == []
    assert service.error("remove", path="//sys/pool_trees/gpu")[1] == "CannotRemoveDefaultPoolTree"
    service.call("set", path="//sys/pool_trees/@default_tree", value="default")
    service.call("remove", path="//sys/pool_trees/gpu")
    assert service.call("list", path="//sys/pool_trees")["value"] == ["default"]


def test_orchid_layouts_and_fields(service: Service) -> None:
    service.heartbeat()
    service.call("start_op", spec={"pool": "batch", "tasks": {"t": {"job_count": 2}}})
    service.tick()
    new = "//sys/scheduler/orchid/scheduler/pool_trees/default"
    pools = service.call("get", path=f"{new}/pools", fields=["parent", "mode"])["value"]
    assert pools["team"] == {"parent": "research", "mode": "fair_share"}
    old = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/default/fair_share_info"
    assert service.call("get", path=f"{old}/pool_count")["value"] == 3
    by_pool = service.call("get", path=f"{new}/operations_by_pool/batch")["value"]
    assert len(by_pool) == 1
    assert (
        service.call("get", path="//sys/scheduler/orchid/scheduler/default_pool_tree")["value"]
        == "default"
    )
    limits = service.call("get", path="//sys/scheduler/orchid/scheduler/cluster/resource_limits")
    assert limits["value"]["cpu"] == 4
    assert service.error("get", path=f"{new}/pools/nope") == (404, "ResolveError")


def test_cluster_nodes_and_user_tags(service: Service) -> None:
    service.heartbeat("n1")
    assert service.call("list", path="//sys/cluster_nodes")["value"] == ["n1"]
    service.call("set", path="//sys/cluster_nodes/n1/@user_tags", value=["ssd"])
    service.call("set", path="//sys/cluster_nodes/n1/@user_tags/end", value="rack1")
    assert service.call("get", path="//sys/cluster_nodes/n1/@tags")["value"] == ["rack1", "ssd"]
    assert service.call("get", path="//sys/cluster_nodes/n1/@state")["value"] == "online"


def test_bad_paths_are_4xx(service: Service) -> None:
    assert service.error("get", path="relative") == (400, "InvalidPath")
    assert service.error("get", path="//nope") == (404, "ResolveError")
    assert service.error("set", path="//sys/pools/research", value=1) == (400, "NotSupported")
    assert service.error("create", type="table", path="//tmp/t")[0] == 400


def test_instances_lists_the_one_sqlite_instance_as_leader(service: Service) -> None:
    instances = service.call("get", path="//sys/scheduler/instances")["value"]
    assert [(row["role"], row["engine"]) for row in instances.values()] == [("leader", "sqlite")]
    assert "instances" in service.call("get", path="//sys/scheduler")["value"]


def test_set_of_a_boolean_into_an_integer_option_is_refused(service: Service) -> None:
    """YTsaurus's typed pool attributes: ``set //sys/pools/x/@max_operation_count %true`` is a
    validation error and the old value stays."""
    service.call("set", path="//sys/pools/research/@max_operation_count", value=7)
    assert service.error("set", path="//sys/pools/research/@max_operation_count", value=True) == (
        400,
        "InvalidConfig",
    )
    assert (
        service.error("set", path="//sys/pools/research/@weight", value="3")[1] == "InvalidConfig"
    )
    assert service.call("get", path="//sys/pools/research/@max_operation_count")["value"] == 7
    assert service.call("get", path="//sys/pools/research/@weight")["value"] == 2


def test_orchid_child_pools_by_pool_is_a_map(service: Service) -> None:
    new = "//sys/scheduler/orchid/scheduler/pool_trees/default"
    children = service.call(
        "get", path=f"{new}/child_pools_by_pool/research", fields=["full_path", "child_pool_count"]
    )["value"]
    assert children == {"team": {"full_path": "/research/team", "child_pool_count": 0}}


def test_orchid_serves_the_issue_17_pool_and_operation_attributes(service: Service) -> None:
    """``schedulable_operation_count`` (a scheduling attribute) and the configuration-derived
    ones reach the service orchid, whole and through the ``fields`` filter."""
    service.heartbeat()
    service.call(
        "set", path="//sys/pools/research/@waiting_for_resources_on_node_timeout", value=7000
    )
    started = service.call("start_op", spec={"pool": "team", "tasks": {"t": {"job_count": 50}}})
    service.tick()
    new = "//sys/scheduler/orchid/scheduler/pool_trees/default"
    fields = [
        "schedulable_operation_count",
        "effective_waiting_for_resources_on_node_timeout",
        "gang_operations_allowed",
    ]
    pools = service.call("get", path=f"{new}/pools", fields=fields)["value"]
    assert pools["team"] == {
        "schedulable_operation_count": 1,
        "effective_waiting_for_resources_on_node_timeout": 7000,
        "gang_operations_allowed": True,
    }
    assert pools["<Root>"]["schedulable_operation_count"] == 1
    assert pools["batch"]["schedulable_operation_count"] == 0
    assert pools["batch"]["effective_waiting_for_resources_on_node_timeout"] is None
    operation = service.call("get", path=f"{new}/operations/{started['operation_id']}")["value"]
    assert operation["effective_waiting_for_resources_on_node_timeout"] == 7000
    assert operation["scheduling_tag_filter_resource_limits"]["cpu"] == 4
    assert operation["specified_resource_limits_overcommit_tolerance"]["cpu"] == 0
