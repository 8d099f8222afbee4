"""``//sys/pool_trees`` as Cypress objects: trees, pools and their attributes.

* ``//sys/pool_trees``: map of trees; ``@default_tree``, ``@acl``.
* ``//sys/pool_trees/<T>``: the tree; ``@config`` (``set`` replaces it wholesale, ``remove``
  resets it to ``{}``), ``@config/<option>``, ``@acl``, ``@inherit_acl`` and any other attribute
  (kept verbatim).  Pool attributes (``@weight``, ...) are refused on a tree.
* ``//sys/pool_trees/<T>/<p1>/<p2>``: a pool; its attributes are the pool config, plus
  ``@name`` (rename), ``@parent_name`` (move; ``<Root>`` is the tree root), ``@acl`` and
  ``@inherit_acl`` (kept by the service: the pool config model has no ACL).

Every change goes through the live model's validation first (a refused change changes
nothing), needs ``administer`` on the object (creation: on the parent), and is then stored.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ytsched.config.pool import PoolConfig
from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.pooltree import Pool, PoolTree
from ytsched.server.auth import validate_acl
from ytsched.server.errors import ApiError, resolve_error
from ytsched.server.ypath import YPath

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

ACL_ATTRIBUTES = ("acl", "inherit_acl")
POOL_OPTION_NAMES = frozenset(PoolConfig.model_fields)


@dataclass(frozen=True, slots=True)
class Target:
    """What a path under ``//sys/pool_trees`` names: the map, a tree, or a pool."""

    tree: str | None
    pool: str | None


def resolve(cluster: Cluster, path: YPath, names: tuple[str, ...]) -> Target:
    if not names:
        return Target(None, None)
    tree_name = names[0]
    tree = cluster.trees.trees.get(tree_name)
    if tree is None:
        raise resolve_error(path.text, f"pool tree {tree_name!r} does not exist")
    parent: Pool = tree.root
    for name in names[1:]:
        child = parent.children.get(name)
        if child is None or child.is_ephemeral:
            raise resolve_error(
                path.text, f"pool {name!r} is not a child of {parent.name!r} in tree {tree_name!r}"
            )
        parent = child
    return Target(tree_name, None if parent.is_root else parent.name)


def nested_names(pool: Pool) -> dict[str, Any]:
    return {
        name: nested_names(child) for name, child in pool.children.items() if not child.is_ephemeral
    }


def _navigate(value: Any, inner: tuple[str, ...], path: YPath) -> Any:
    for segment in inner:
        if not isinstance(value, dict) or segment not in value:
            raise resolve_error(path.text, f"attribute has no key {segment!r}")
        value = value[segment]
    return value


def _with_inner(document: Any, inner: tuple[str, ...], value: Any, path: YPath) -> dict[str, Any]:
    """``document`` with ``value`` set at ``inner`` (``value is _REMOVE``: removed)."""
    result = copy.deepcopy(document) if isinstance(document, dict) else {}
    node = result
    for segment in inner[:-1]:
        child = node.get(segment)
        if not isinstance(child, dict):
            if value is _REMOVE:
                raise resolve_error(path.text, f"attribute has no key {segment!r}")
            child = {}
            node[segment] = child
        node = child
    if value is _REMOVE:
        if inner[-1] not in node:
            raise resolve_error(path.text, f"attribute has no key {inner[-1]!r}")
        del node[inner[-1]]
    else:
        node[inner[-1]] = value
    return result


_REMOVE: Any = object()


# --- attributes --------------------------------------------------------------------------------


def _tree_attributes(cluster: Cluster, name: str) -> dict[str, Any]:
    tree = cluster.tree(name)
    return {
        "name": name,
        "config": tree.config.model_dump(mode="json", exclude_unset=True),
        **cluster.tree_attributes.get(name, {}),
    }


def _pool_attributes(cluster: Cluster, tree: PoolTree, name: str) -> dict[str, Any]:
    pool = tree.pool(name)
    parent = pool.parent
    return {
        "name": name,
        "parent_name": ROOT_POOL_NAME if parent is None or parent.is_root else parent.name,
        "pool_tree": tree.name,
        **pool.config.model_dump(mode="json", exclude_unset=True),
        **cluster.pool_acls.get((tree.name, name), {}),
    }


def get(cluster: Cluster, path: YPath, names: tuple[str, ...]) -> Any:
    target = resolve(cluster, path, names)
    if target.tree is None:
        attributes = {"default_tree": cluster.trees.default_tree, "acl": cluster.pool_trees_acl}
        if cluster.trees.default_tree is None:
            del attributes["default_tree"]
        if path.attribute is None:
            return {name: nested_names(t.root) for name, t in cluster.trees.trees.items()}
    elif target.pool is None:
        if path.attribute is None:
            return nested_names(cluster.tree(target.tree).root)
        if path.attribute in POOL_OPTION_NAMES:
            raise ApiError(
                "InvalidAttribute",
                f"pool attribute {path.attribute!r} is not allowed on pool tree {target.tree!r}",
            )
        attributes = _tree_attributes(cluster, target.tree)
    else:
        tree = cluster.tree(target.tree)
        if path.attribute is None:
            return nested_names(tree.pool(target.pool))
        attributes = _pool_attributes(cluster, tree, target.pool)
    if path.attribute == "":
        return attributes
    assert path.attribute is not None
    if path.attribute not in attributes:
        raise ApiError(
            "ResolveError",
            f"Attribute {path.attribute!r} is not found at {path.text}",
            path=path.text,
        )
    return _navigate(attributes[path.attribute], path.inner, path)


def list_children(cluster: Cluster, path: YPath, names: tuple[str, ...]) -> list[str]:
    value = get(cluster, path, names)
    if path.attribute is not None:
        if isinstance(value, dict):
            return list(value)
        raise ApiError("InvalidType", f"{path.text} is not a map")
    return list(value)


# --- changes ---------------------------------------------------------------------------------


def _require_administer(cluster: Cluster, user: str, target: Target) -> None:
    if target.tree is None:
        cluster.auth.require(user, "administer", [_root_acl(cluster)], "//sys/pool_trees")
    else:
        cluster.require_pool_permission(user, "administer", target.tree, target.pool)


def _root_acl(cluster: Cluster) -> Any:
    from ytsched.server.auth import AclNode

    return AclNode(cluster.pool_trees_acl)


def _commit(cluster: Cluster, tree: str | None) -> None:
    with cluster.store.transaction():
        if tree is not None and tree in cluster.trees.trees:
            cluster.persist_tree(tree)
        cluster.persist_meta()
        cluster.sync_operations()


def set_value(cluster: Cluster, user: str, path: YPath, names: tuple[str, ...], value: Any) -> None:
    target = resolve(cluster, path, names)
    _require_administer(cluster, user, target)
    attribute = path.attribute
    if attribute is None or attribute == "":
        raise ApiError(
            "NotSupported", f"{path.text}: set a single attribute (path/@name), not the node"
        )
    if target.tree is None:
        _set_root_attribute(cluster, path, attribute, value)
    elif target.pool is None:
        _set_tree_attribute(cluster, target.tree, path, attribute, value)
    else:
        _set_pool_attribute(cluster, user, target.tree, target.pool, path, attribute, value)


def _set_root_attribute(cluster: Cluster, path: YPath, attribute: str, value: Any) -> None:
    if path.inner:
        raise ApiError("NotSupported", f"{path.text}: cannot set inside this attribute")
    if attribute == "default_tree":
        if not isinstance(value, str):
            raise ApiError("InvalidAttribute", "@default_tree must be a tree name")
        cluster.trees.set_default_tree(value)
    elif attribute == "acl":
        cluster.pool_trees_acl = validate_acl(value, "//sys/pool_trees/@acl")
    else:
        raise ApiError("NotSupported", f"//sys/pool_trees has no settable attribute {attribute!r}")
    _commit(cluster, None)


def _set_tree_attribute(
    cluster: Cluster, tree: str, path: YPath, attribute: str, value: Any
) -> None:
    if attribute == "config":
        if path.inner:
            current = cluster.tree(tree).config.model_dump(mode="json", exclude_unset=True)
            value = _with_inner(current, path.inner, value, path)
        if not isinstance(value, Mapping):
            raise ApiError("InvalidConfig", f"{path.text}: the tree config must be a map")
        cluster.trees.set_tree_config(tree, value, now=cluster.now())
    elif attribute in POOL_OPTION_NAMES:
        raise ApiError(
            "InvalidAttribute",
            f"pool attribute {attribute!r} is not allowed on pool tree {tree!r}",
        )
    elif attribute == "name":
        raise ApiError("NotSupported", "pool trees cannot be renamed")
    else:
        attributes = dict(cluster.tree_attributes.get(tree, {}))
        if path.inner:
            value = _with_inner(attributes.get(attribute), path.inner, value, path)
        if attribute == "acl":
            value = validate_acl(value, f"{path.text}")
        elif attribute == "inherit_acl" and not isinstance(value, bool):
            raise ApiError("InvalidAttribute", "@inherit_acl must be a boolean")
        attributes[attribute] = value
        cluster.tree_attributes[tree] = attributes
    _commit(cluster, tree)


def _set_pool_attribute(
    cluster: Cluster, user: str, tree_name: str, pool: str, path: YPath, attribute: str, value: Any
) -> None:
    tree = cluster.tree(tree_name)
    now = cluster.now()
    if attribute == "name":
        if not isinstance(value, str):
            raise ApiError("InvalidAttribute", "@name must be a string")
        tree.rename_pool(pool, value, now=now)
        acl = cluster.pool_acls.pop((tree_name, pool), None)
        if acl is not None:
            cluster.pool_acls[(tree_name, value)] = acl
        with cluster.store.transaction():
            cluster.store.save_pool_acl(tree_name, pool, None)
            cluster.store.save_pool_acl(tree_name, value, acl)
    elif attribute == "parent_name":
        if not isinstance(value, str):
            raise ApiError("InvalidAttribute", "@parent_name must be a pool name or <Root>")
        parent = None if value == ROOT_POOL_NAME else value
        cluster.require_pool_permission(user, "administer", tree_name, parent)
        tree.move_pool(pool, parent, now=now)
    elif attribute in ACL_ATTRIBUTES:
        attributes = dict(cluster.pool_acls.get((tree_name, pool), {}))
        if path.inner:
            value = _with_inner(attributes.get(attribute), path.inner, value, path)
        if attribute == "acl":
            value = validate_acl(value, path.text)
        elif not isinstance(value, bool):
            raise ApiError("InvalidAttribute", "@inherit_acl must be a boolean")
        attributes[attribute] = value
        cluster.pool_acls[(tree_name, pool)] = attributes
        with cluster.store.transaction():
            cluster.store.save_pool_acl(tree_name, pool, attributes)
    elif attribute == "pool_tree":
        raise ApiError("NotSupported", "a pool cannot change its tree")
    elif path.inner:
        current = tree.pool(pool).config.model_dump(mode="json", exclude_unset=True)
        tree.set_pool_config(
            pool, _with_inner(current, (attribute, *path.inner), value, path), now=now
        )
    else:
        if value is None:
            raise ApiError("InvalidAttribute", f"@{attribute}: use remove to reset an attribute")
        tree.update_pool(pool, {attribute: value}, now=now)
    _commit(cluster, tree_name)


def remove(
    cluster: Cluster, user: str, path: YPath, names: tuple[str, ...], recursive: bool
) -> None:
    target = resolve(cluster, path, names)
    _require_administer(cluster, user, target)
    attribute = path.attribute
    if target.tree is None:
        if attribute == "default_tree" and not path.inner:
            cluster.trees.set_default_tree(None)
        elif attribute == "acl" and not path.inner:
            from ytsched.server.auth import DEFAULT_POOL_TREES_ACL

            cluster.pool_trees_acl = list(DEFAULT_POOL_TREES_ACL)
        else:
            raise ApiError("NotSupported", f"cannot remove {path.text}")
        _commit(cluster, None)
        return
    tree_name = target.tree
    if target.pool is None:
        _remove_from_tree(cluster, tree_name, path, attribute)
        return
    tree = cluster.tree(tree_name)
    if attribute is None:
        _remove_pool(cluster, tree, target.pool, recursive)
    elif attribute in ACL_ATTRIBUTES:
        attributes = dict(cluster.pool_acls.get((tree_name, target.pool), {}))
        if path.inner:
            attributes[attribute] = _with_inner(
                attributes.get(attribute), path.inner, _REMOVE, path
            )
        elif attributes.pop(attribute, None) is None:
            raise resolve_error(path.text, f"attribute {attribute!r} is not set")
        cluster.pool_acls[(tree_name, target.pool)] = attributes
        with cluster.store.transaction():
            cluster.store.save_pool_acl(tree_name, target.pool, attributes)
    elif path.inner:
        current = tree.pool(target.pool).config.model_dump(mode="json", exclude_unset=True)
        updated = _with_inner(current, (attribute, *path.inner), _REMOVE, path)
        tree.set_pool_config(target.pool, updated, now=cluster.now())
    elif attribute in ("name", "parent_name", "pool_tree", ""):
        raise ApiError("NotSupported", f"cannot remove {path.text}")
    else:
        tree.update_pool(target.pool, {attribute: None}, now=cluster.now())
    _commit(cluster, tree_name)


def _remove_from_tree(cluster: Cluster, tree_name: str, path: YPath, attribute: str | None) -> None:
    if attribute is None:
        cluster.trees.remove_tree(tree_name)
        cluster.tree_attributes.pop(tree_name, None)
        for key in [k for k in cluster.pool_acls if k[0] == tree_name]:
            del cluster.pool_acls[key]
        with cluster.store.transaction():
            cluster.store.delete_tree(tree_name)
            cluster.persist_meta()
        return
    if attribute == "config":
        if path.inner:
            current = cluster.tree(tree_name).config.model_dump(mode="json", exclude_unset=True)
            config = _with_inner(current, path.inner, _REMOVE, path)
        else:
            config = {}
        cluster.trees.set_tree_config(tree_name, config, now=cluster.now())
    elif attribute in ("name", ""):
        raise ApiError("NotSupported", f"cannot remove {path.text}")
    else:
        attributes = dict(cluster.tree_attributes.get(tree_name, {}))
        if attribute not in attributes:
            raise resolve_error(path.text, f"attribute {attribute!r} is not set")
        if path.inner:
            attributes[attribute] = _with_inner(attributes[attribute], path.inner, _REMOVE, path)
        else:
            del attributes[attribute]
        cluster.tree_attributes[tree_name] = attributes
    _commit(cluster, tree_name)


def update_pool_attributes(
    cluster: Cluster, user: str, tree_name: str, pool_name: str, patch: Mapping[str, Any]
) -> None:
    """Set several pool attributes at once, all or nothing (``None`` resets one, as ``remove``).

    This is ``set //sys/pool_trees/<tree>/<pool>/@<attribute>`` for a whole edit form (the Web
    UI's): the same ``administer`` check on the pool, the same live-model validation (one
    ``update_pool`` over the whole patch, so a refused value changes nothing), the same commit.
    """
    editable_pool(cluster, tree_name, pool_name)
    cluster.require_pool_permission(user, "administer", tree_name, pool_name)
    unknown = sorted(set(patch) - POOL_OPTION_NAMES)
    if unknown:
        raise ApiError(
            "InvalidAttribute",
            f"//sys/pool_trees/{tree_name}/{pool_name}: not pool attributes: {unknown}",
        )
    cluster.tree(tree_name).update_pool(pool_name, dict(patch), now=cluster.now())
    _commit(cluster, tree_name)


def editable_pool(cluster: Cluster, tree_name: str, pool_name: str) -> Pool:
    """The explicit pool a ``set`` of its attributes targets (``ResolveError`` otherwise)."""
    pool = cluster.tree(tree_name).pools.get(pool_name)
    path = f"//sys/pool_trees/{tree_name}/{pool_name}"
    if pool is None or pool.is_ephemeral:
        raise resolve_error(path, f"pool {pool_name!r} does not exist in tree {tree_name!r}")
    if pool.is_root:
        raise ApiError("NotSupported", f"{path}: the root pool is configured by the tree config")
    return pool


def _remove_pool(cluster: Cluster, tree: PoolTree, name: str, recursive: bool) -> None:
    pool = tree.pool(name)
    subtree = list(pool.descendants())
    if len(subtree) > 1 and not recursive:
        raise ApiError(
            "PoolIsNotEmpty",
            f"pool {name!r} in tree {tree.name!r} has child pools; use recursive removal",
            pool=name,
        )
    # Children first.  A pool that still holds operations (or ephemeral pools) is not dropped:
    # it stays, ephemeral, until its last operation finishes (``PoolTree.remove_pool``).
    explicit = [p for p in subtree if not p.is_ephemeral]
    for child in reversed(explicit):
        tree.remove_pool(child.name)
        cluster.pool_acls.pop((tree.name, child.name), None)
    with cluster.store.transaction():
        for child in explicit:
            cluster.store.save_pool_acl(tree.name, child.name, None)


# --- creation --------------------------------------------------------------------------------


def create_tree(
    cluster: Cluster, user: str, attributes: Mapping[str, Any], ignore_existing: bool
) -> str:
    cluster.auth.require(user, "administer", [_root_acl(cluster)], "//sys/pool_trees")
    name = attributes.get("name")
    if not isinstance(name, str):
        raise ApiError("InvalidAttribute", "a pool tree needs attributes {name = ...}")
    if name in cluster.trees.trees and ignore_existing:
        return name
    extra = {k: v for k, v in attributes.items() if k not in ("name", "config")}
    bad = sorted(POOL_OPTION_NAMES.intersection(extra))
    if bad:
        raise ApiError("InvalidAttribute", f"pool attributes {bad} are not allowed on a pool tree")
    if "acl" in extra:
        extra["acl"] = validate_acl(extra["acl"], f"pool tree {name!r}")
    config = attributes.get("config") or {}
    if not isinstance(config, Mapping):
        raise ApiError("InvalidConfig", f"pool tree {name!r}: config must be a map")
    cluster.trees.create_tree(name, config)
    cluster.tree_attributes[name] = extra
    _commit(cluster, name)
    return name


def create_pool(
    cluster: Cluster,
    user: str,
    path: YPath | None,
    names: tuple[str, ...] | None,
    attributes: Mapping[str, Any],
    ignore_existing: bool,
) -> str:
    attributes = dict(attributes)
    if path is not None and names is not None:
        if len(names) < 2:
            raise ApiError("InvalidArgument", f"{path.text} is not a pool path")
        parent_target = resolve(cluster, path, names[:-1])
        tree_name = parent_target.tree
        parent = parent_target.pool
        attributes.setdefault("name", names[-1])
    else:
        tree_name = attributes.pop("pool_tree", None) or cluster.trees.default_tree
        if tree_name is None:
            raise ApiError("PoolTreesAreUnspecified", "no pool_tree given and no default tree")
        parent = attributes.pop("parent_name", None)
        if parent == ROOT_POOL_NAME:
            parent = None
    attributes.pop("pool_tree", None)
    attributes.pop("parent_name", None)
    name = attributes.pop("name", None)
    for attribute, value in (("name", name), ("pool_tree", tree_name), ("parent_name", parent)):
        if value is not None and not isinstance(value, str):
            raise ApiError(
                "InvalidAttribute",
                f"@{attribute} must be a string, got {type(value).__name__} {value!r:.40}",
                attribute=attribute,
            )
    if not isinstance(name, str) or not isinstance(tree_name, str):
        raise ApiError("InvalidAttribute", "a pool needs attributes {name = ...; pool_tree = ...}")
    if parent is not None and not isinstance(parent, str):
        raise ApiError("InvalidAttribute", "parent_name must be a pool name")
    tree = cluster.tree(tree_name)
    if parent is not None and (parent not in tree.pools or tree.pools[parent].is_ephemeral):
        raise ApiError("NoSuchPool", f"parent pool {parent!r} does not exist in tree {tree_name!r}")
    cluster.require_pool_permission(user, "administer", tree_name, parent)
    existing = tree.pools.get(name)
    if existing is not None and not existing.is_ephemeral and ignore_existing:
        return f"{tree_name}/{name}"
    acl = {k: attributes.pop(k) for k in ACL_ATTRIBUTES if k in attributes}
    if "acl" in acl:
        acl["acl"] = validate_acl(acl["acl"], f"pool {name!r}")
    if "inherit_acl" in acl and not isinstance(acl["inherit_acl"], bool):
        raise ApiError("InvalidAttribute", "inherit_acl must be a boolean")
    tree.create_pool(name, parent, attributes, now=cluster.now())
    if acl:
        cluster.pool_acls[(tree_name, name)] = acl
    with cluster.store.transaction():
        cluster.store.save_pool_acl(tree_name, name, acl or None)
    _commit(cluster, tree_name)
    return f"{tree_name}/{name}"
