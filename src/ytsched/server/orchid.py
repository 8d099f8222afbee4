"""``//sys/scheduler/orchid/scheduler``: the live scheduler state in both YTsaurus layouts.

The scheduling layer (or, without it, the pool trees) gives the new layout
(``pool_trees/<T>/{pools, operations, ...}``); this module adds the old per-tree layout
(``scheduling_info_per_pool_tree/<T>/fair_share_info/{pools, operations, pool_count}``), cluster
totals, the service's view of nodes, operation progress, the effective config, and the
``fields`` filter of ``get``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ytsched.resources import RESOURCE_NAMES, ZERO, vadd
from ytsched.server.cluster import iso
from ytsched.server.errors import ApiError, resolve_error

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster


def _resources(vector: tuple[float, ...]) -> dict[str, float]:
    return dict(zip(RESOURCE_NAMES, vector, strict=True))


def build_orchid(cluster: Cluster) -> dict[str, Any]:
    base = cluster.scheduler.orchid()
    orchid = copy.deepcopy(base)
    trees: dict[str, Any] = orchid.setdefault("pool_trees", {})
    old_style: dict[str, Any] = {}
    for name, view in trees.items():
        operations = view.get("operations", {})
        usage = ZERO
        live = cluster.trees.trees.get(name)
        if live is not None:
            for entry in live.operations.values():
                usage = vadd(usage, entry.operation.resource_usage(name))
        view["resource_usage"] = _resources(usage)
        old_style[name] = {
            "fair_share_info": {
                "pools": view.get("pools", {}),
                "operations": operations,
                "pool_count": view.get("pool_count", 0),
            },
            "config": view.get("config", {}),
            "resource_limits": view.get("resource_limits", {}),
            "resource_usage": view["resource_usage"],
            "node_count": view.get("node_count", 0),
            "node_addresses": view.get("node_addresses", []),
            "user_to_ephemeral_pools": view.get("user_to_ephemeral_pools", {}),
        }
    orchid["scheduling_info_per_pool_tree"] = old_style
    default = cluster.trees.default_tree
    if default is None:
        orchid.pop("default_pool_tree", None)
    else:
        orchid["default_pool_tree"] = default
        orchid["default_fair_share_tree"] = default
    _add_nodes(cluster, orchid)
    _add_operations(cluster, orchid)
    orchid["config"] = {
        **cluster.trees.strategy.model_dump(mode="json"),
        "node_heartbeat_timeout": round(cluster.config.node_heartbeat_timeout * 1000),
        "heartbeat_period": round(cluster.config.heartbeat_period * 1000),
    }
    orchid["service"] = {
        "connected": True,
        "last_connection_time": iso(cluster.started_at),
        "last_fair_share_update_time": iso(cluster.last_update_time),
    }
    orchid["alerts"] = list(orchid.get("alerts", [])) + cluster.alerts
    return orchid


def _add_nodes(cluster: Cluster, orchid: dict[str, Any]) -> None:
    nodes: dict[str, Any] = orchid.setdefault("nodes", {})
    limits = ZERO
    usage = ZERO
    for address, info in cluster.nodes.nodes.items():
        view = nodes.setdefault(address, {})
        view["scheduler_state"] = info.state
        view["master_state"] = info.state
        view["last_heartbeat_time"] = iso(info.last_seen)
        view["user_tags"] = cluster.nodes.user_tags.get(address, [])
        view["running_job_count"] = len(cluster.jobs.running_on(address))
        live = cluster.trees.nodes.get(address)
        if live is not None and info.state == "online":
            limits = vadd(limits, live.resource_limits)
        node_usage = ZERO
        for job_id in cluster.jobs.running_on(address):
            job = cluster.jobs.live_job(job_id)
            if job is not None:
                node_usage = vadd(node_usage, job.resources)
        view["resource_usage"] = _resources(node_usage)
        usage = vadd(usage, node_usage)
    orchid["cluster"] = {
        "resource_limits": _resources(limits),
        "resource_usage": _resources(usage),
        "node_count": sum(1 for n in cluster.nodes.nodes.values() if n.state == "online"),
    }


def _add_operations(cluster: Cluster, orchid: dict[str, Any]) -> None:
    operations: dict[str, Any] = orchid.setdefault("operations", {})
    trees = orchid.get("pool_trees", {})
    for op_id, view in operations.items():
        record = cluster.operations.get(op_id)
        if record is not None:
            view["suspended"] = record.row.suspended
        per_tree = {
            name: tree.get("operations", {})[op_id]
            for name, tree in trees.items()
            if op_id in tree.get("operations", {})
        }
        view["progress"] = {"scheduling_info_per_pool_tree": per_tree}


def navigate(document: Any, segments: tuple[str, ...], path: str) -> Any:
    node = document
    for index, segment in enumerate(segments):
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.lstrip("-").isdigit():
            position = int(segment)
            if not -len(node) <= position < len(node):
                raise resolve_error(path, f"index {segment} out of range")
            node = node[position]
        else:
            where = "/".join(segments[:index]) or "<root>"
            raise resolve_error(path, f"no child {segment!r} at {where}")
    return node


def apply_fields(value: Any, fields: object) -> Any:
    """``get ... fields=[...]``: keep only these keys (of each child, for a map of maps)."""
    if fields is None:
        return value
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ApiError("InvalidArgument", "fields must be a list of names")
    if not isinstance(value, dict):
        return value
    wanted = set(fields)
    children_are_maps = value and all(isinstance(v, dict) for v in value.values())
    if children_are_maps and not wanted.intersection(value):
        return {key: {f: v[f] for f in fields if f in v} for key, v in value.items()}
    return {f: value[f] for f in fields if f in value}
