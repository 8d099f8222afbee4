"""Cypress-style commands (``get``, ``set``, ``list``, ``exists``, ``create``, ``remove``).

The service has no general Cypress; it serves the paths YTsaurus users and tests touch:

* ``//sys/pool_trees/...`` and ``//sys/pools/...`` (the default tree): :mod:`pool_objects`;
* ``//sys/cluster_nodes/<address>/@...`` (``@user_tags`` is settable);
* ``//sys/scheduler/orchid/scheduler/...`` (both orchid layouts, ``fields`` filter),
  ``//sys/scheduler/config``, ``//sys/scheduler/user_to_default_pool``,
  ``//sys/scheduler/@alerts``, ``//sys/scheduler/instances`` (each instance and its role);
* ``//sys/operations/<id>/@...`` (and ``//sys/operations/<xx>/<id>``): operation attributes.

``attributes=[...]`` on ``get``/``list`` returns ``{"$attributes": ..., "$value": ...}``, the
JSON form YTsaurus uses for values with attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ytsched.server import pool_objects
from ytsched.server.errors import ApiError, resolve_error
from ytsched.server.orchid import apply_fields, navigate
from ytsched.server.ypath import YPath, parse

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

SYS_CHILDREN = ("pool_trees", "pools", "cluster_nodes", "scheduler", "operations")
NOT_FOUND_CODES = frozenset(
    {"ResolveError", "NoSuchPoolTree", "NoSuchPool", "NoSuchOperation", "NoSuchNode"}
)


def _pool_tree_names(cluster: Cluster, path: YPath) -> tuple[str, ...] | None:
    """Names below ``//sys/pool_trees`` for pool-tree paths (``//sys/pools`` resolved)."""
    nodes = path.nodes
    if len(nodes) >= 2 and nodes[0] == "sys" and nodes[1] == "pool_trees":
        return nodes[2:]
    if len(nodes) >= 2 and nodes[0] == "sys" and nodes[1] == "pools":
        default = cluster.trees.default_tree
        if default is None:
            raise resolve_error(path.text, "//sys/pools needs a default pool tree")
        return (default, *nodes[2:])
    return None


def _check_root(path: YPath) -> None:
    if path.nodes and path.nodes[0] != "sys":
        raise resolve_error(path.text, f"no such node {path.nodes[0]!r}")


def get(
    cluster: Cluster, user: str, path_text: object, attributes: object = None, fields: object = None
) -> Any:
    path = parse(path_text)
    value = _get(cluster, path)
    if path.nodes and path.nodes[:3] == ("sys", "scheduler", "orchid"):
        value = apply_fields(value, fields)
    if attributes is not None and path.attribute is None:
        if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
            raise ApiError("InvalidArgument", "attributes must be a list of names")
        found = {}
        for name in attributes:
            try:
                found[name] = _get(cluster, parse(f"{path.text.rstrip('/')}/@{name}"))
            except ApiError as error:
                if error.code not in NOT_FOUND_CODES:
                    raise
        return {"$attributes": found, "$value": value}
    return value


def _get(cluster: Cluster, path: YPath) -> Any:
    _check_root(path)
    names = _pool_tree_names(cluster, path)
    if names is not None:
        return pool_objects.get(cluster, path, names)
    nodes = path.nodes
    if len(nodes) <= 1:
        if path.attribute is not None:
            raise resolve_error(path.text, "no such attribute")
        return (
            {"sys": {name: {} for name in SYS_CHILDREN}}
            if not nodes
            else {name: {} for name in SYS_CHILDREN}
        )
    section = nodes[1]
    if section == "cluster_nodes":
        return _get_node(cluster, path, nodes[2:])
    if section == "scheduler":
        return _get_scheduler(cluster, path, nodes[2:])
    if section == "operations":
        return _get_operation(cluster, path, nodes[2:])
    raise resolve_error(path.text, f"no such node {section!r} in //sys")


def _get_node(cluster: Cluster, path: YPath, rest: tuple[str, ...]) -> Any:
    tracker = cluster.nodes
    if not rest:
        if path.attribute is not None:
            raise resolve_error(path.text, "//sys/cluster_nodes has no attributes")
        return {address: {} for address in sorted(tracker.nodes)}
    if len(rest) > 1:
        raise resolve_error(path.text, "cluster nodes have no children")
    info = tracker.nodes.get(rest[0])
    if info is None:
        raise resolve_error(path.text, f"node {rest[0]!r} is not known")
    if path.attribute is None:
        return {}
    live = cluster.trees.nodes.get(info.address)
    attributes = {
        "address": info.address,
        "state": info.state,
        "tags": cluster.nodes.all_tags(info),
        "user_tags": tracker.user_tags.get(info.address, []),
        "resource_limits": info.resource_limits,
        "pool_tree": live.tree if live is not None else None,
        "last_seen_time": info.last_seen,
        "job_count": len(cluster.jobs.running_on(info.address)),
    }
    if path.attribute == "":
        return attributes
    if path.attribute not in attributes:
        raise resolve_error(path.text, f"attribute {path.attribute!r} is not found")
    return navigate(attributes[path.attribute], path.inner, path.text)


def _get_scheduler(cluster: Cluster, path: YPath, rest: tuple[str, ...]) -> Any:
    if not rest:
        if path.attribute == "alerts":
            return navigate(_alerts(cluster), path.inner, path.text)
        if path.attribute == "":
            return {"alerts": _alerts(cluster)}
        if path.attribute is not None:
            raise resolve_error(path.text, f"attribute {path.attribute!r} is not found")
        return {"orchid": {}, "config": {}, "user_to_default_pool": {}, "instances": {}}
    if path.attribute is not None and rest[0] != "orchid":
        raise resolve_error(path.text, "no such attribute")
    if rest[0] == "orchid":
        if path.attribute is not None:
            raise resolve_error(path.text, "orchid has no attributes")
        if len(rest) == 1:
            return {"scheduler": {}}
        if rest[1] != "scheduler":
            raise resolve_error(path.text, f"no such node {rest[1]!r} in orchid")
        return cluster.orchid_cache.get(rest[2:], path.text)
    if rest[0] == "config":
        return navigate(cluster.trees.strategy.model_dump(mode="json"), rest[1:], path.text)
    if rest[0] == "user_to_default_pool":
        return navigate(dict(cluster.trees.user_to_default_pool), rest[1:], path.text)
    if rest[0] == "instances":
        return navigate(cluster.instances(), rest[1:], path.text)
    raise resolve_error(path.text, f"no such node {rest[0]!r} in //sys/scheduler")


def _alerts(cluster: Cluster) -> list[dict[str, Any]]:
    result = []
    for alert in cluster.trees.alerts() + cluster.alerts:
        extra = {k: v for k, v in alert.items() if k not in ("code", "message")}
        attributes = dict(extra.pop("attributes", {}) or {})
        attributes.setdefault("alert_type", "update_pools")
        attributes.update(extra)
        result.append(
            {"code": alert.get("code"), "message": alert.get("message"), "attributes": attributes}
        )
    return result


def _get_operation(cluster: Cluster, path: YPath, rest: tuple[str, ...]) -> Any:
    from ytsched.server.operations import get_operation

    if len(rest) == 2 and len(rest[0]) <= 2:
        rest = rest[1:]
    if not rest:
        if path.attribute is not None:
            raise resolve_error(path.text, "//sys/operations has no attributes")
        return {op_id: {} for op_id in cluster.operations}
    if len(rest) != 1 or rest[0] not in cluster.operations:
        raise resolve_error(path.text, "no such operation")
    if path.attribute is None:
        return {}
    view = get_operation(cluster, rest[0], None)
    if path.attribute == "":
        return view
    if path.attribute not in view:
        raise resolve_error(path.text, f"attribute {path.attribute!r} is not found")
    return navigate(view[path.attribute], path.inner, path.text)


def list_(cluster: Cluster, user: str, path_text: object, attributes: object = None) -> Any:
    path = parse(path_text)
    _check_root(path)
    value = _get(cluster, path)
    if not isinstance(value, dict):
        raise ApiError("InvalidType", f"{path.text} is not a map node", path=path.text)
    names = list(value)
    if attributes is None:
        return names
    if not isinstance(attributes, list):
        raise ApiError("InvalidArgument", "attributes must be a list of names")
    base = path.text.rstrip("/")
    return [
        {
            "$value": name,
            "$attributes": get(cluster, user, f"{base}/{_escape(name)}", attributes)["$attributes"],
        }
        for name in names
    ]


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace("/", "\\/").replace("@", "\\@")


def exists(cluster: Cluster, user: str, path_text: object) -> bool:
    path = parse(path_text)
    try:
        _get(cluster, path)
    except ApiError as error:
        if error.code in NOT_FOUND_CODES:
            return False
        raise
    return True


def set_(cluster: Cluster, user: str, path_text: object, value: Any) -> None:
    path = parse(path_text)
    _check_root(path)
    names = _pool_tree_names(cluster, path)
    if names is not None:
        pool_objects.set_value(cluster, user, path, names, value)
        return
    nodes = path.nodes
    if nodes[1:3] == ("scheduler", "user_to_default_pool") and len(nodes) == 3:
        _set_user_to_default_pool(cluster, user, path, value)
        return
    if nodes[1:2] == ("cluster_nodes",) and len(nodes) == 3 and path.attribute == "user_tags":
        cluster.auth.require_superuser(user, "setting node tags")
        info = cluster.nodes.node(nodes[2])
        if path.inner == ("end",):
            value = [*cluster.nodes.user_tags.get(info.address, []), value]
        elif path.inner:
            raise ApiError("NotSupported", f"cannot set {path.text}")
        cluster.nodes.set_user_tags(info.address, value)
        return
    raise ApiError("NotSupported", f"{path.text} cannot be set", path=path.text)


def _set_user_to_default_pool(cluster: Cluster, user: str, path: YPath, value: Any) -> None:
    cluster.auth.require_superuser(user, "setting user_to_default_pool")
    if path.attribute is not None:
        raise ApiError("NotSupported", f"{path.text} has no settable attributes")
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ApiError("InvalidAttribute", "user_to_default_pool must map users to pool names")
    for name in list(cluster.trees.user_to_default_pool):
        cluster.trees.set_user_default_parent_pool(name, None)
    for name, pool in value.items():
        cluster.trees.set_user_default_parent_pool(name, pool)
    with cluster.store.transaction():
        cluster.persist_meta()


def remove(
    cluster: Cluster, user: str, path_text: object, recursive: bool = False, force: bool = False
) -> None:
    path = parse(path_text)
    _check_root(path)
    names = _pool_tree_names(cluster, path)
    try:
        if names is None:
            raise ApiError("NotSupported", f"{path.text} cannot be removed", path=path.text)
        pool_objects.remove(cluster, user, path, names, recursive)
    except ApiError as error:
        if force and error.code in NOT_FOUND_CODES:
            return
        raise


def create(
    cluster: Cluster,
    user: str,
    object_type: object,
    path_text: object,
    attributes: object,
    ignore_existing: bool,
) -> str:
    if attributes is None:
        attributes = {}
    if not isinstance(attributes, Mapping):
        raise ApiError("InvalidArgument", "attributes must be a map")
    path = parse(path_text) if path_text is not None else None
    if object_type == "scheduler_pool_tree":
        attrs = dict(attributes)
        if path is not None:
            names = _pool_tree_names(cluster, path)
            if names is None or len(names) != 1:
                raise ApiError("InvalidArgument", f"{path.text} is not a pool tree path")
            attrs.setdefault("name", names[0])
        return pool_objects.create_tree(cluster, user, attrs, ignore_existing)
    if object_type == "scheduler_pool":
        names = _pool_tree_names(cluster, path) if path is not None else None
        if path is not None and names is None:
            raise ApiError("InvalidArgument", f"{path.text} is not under //sys/pool_trees")
        return pool_objects.create_pool(cluster, user, path, names, attributes, ignore_existing)
    if object_type == "user":
        cluster.auth.require_superuser(user, "creating users")
        name = attributes.get("name")
        if ignore_existing and isinstance(name, str) and name in cluster.auth.users:
            return name
        cluster.auth.create_user(name, bool(attributes.get("superuser", False)))
        return str(name)
    raise ApiError(
        "NotSupported",
        f"cannot create objects of type {object_type!r}"
        " (supported: scheduler_pool_tree, scheduler_pool, user)",
    )


def check_permission(cluster: Cluster, user: object, permission: object, path_text: object) -> str:
    """``allow`` or ``deny``: may ``user`` do ``permission`` on a ``//sys/pool_trees`` object."""
    path = parse(path_text)
    names = _pool_tree_names(cluster, path)
    if names is None:
        raise ApiError("NotSupported", "permissions are checked on //sys/pool_trees paths")
    target = pool_objects.resolve(cluster, path, names)
    if target.tree is None:
        chain = [pool_objects._root_acl(cluster)]
    else:
        chain = cluster.acl_chain(target.tree, target.pool)
    if not isinstance(user, str) or user not in cluster.auth.users:
        raise ApiError("NoSuchUser", f"user {user!r} does not exist")
    if not isinstance(permission, str):
        raise ApiError("InvalidArgument", "permission must be a string")
    return "allow" if cluster.auth.allowed(user, permission, chain) else "deny"
