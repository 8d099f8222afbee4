"""Ephemeral pools: where an operation lands when it names no existing pool.

Rules (``GetOrCreatePool``, ``CreatePoolName``, ``ValidateEphemeralPoolLimit`` in
``yt/yt/server/scheduler/strategy/pool_tree.cpp``):

* the requested pool name is the per-tree pool, else the spec's pool, else the user's name;
* if that pool exists and has ``create_ephemeral_subpools``, the operation goes to the
  ephemeral subpool ``<pool>$<user>`` under it;
* if it does not exist, an ephemeral pool of that name is created under the user's default
  parent: the scheduler's user -> pool map entry (with ``use_user_default_parent_pool_map``),
  else the tree's ``default_parent_pool``, else the root if that pool is missing;
* only pools created under a default parent count toward ``max_ephemeral_pools_per_user``;
* an ephemeral pool has the default pool config, plus ``mode``, operation limits and
  ``resource_limits`` from its parent's ``ephemeral_subpool_config``;
* an ephemeral pool is removed as soon as it holds no operation and no child pool;
* an explicit pool removed while it still has operations becomes an ephemeral pool of the same
  name under the default parent for a user of that name, with that parent's
  ``ephemeral_subpool_config`` (``EUpdatePoolActionType::Erase`` in ``pool_tree.cpp``); it is
  owned by nobody and goes away with its last operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ytsched.config.pool import PoolConfig
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.pool import Pool

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree

EPHEMERAL_SUBPOOL_DELIMITER = "$"


def derive_ephemeral_config(parent: PoolConfig | None) -> PoolConfig:
    """Config of an ephemeral pool under ``parent``."""
    settings = parent.ephemeral_subpool_config if parent is not None else None
    if settings is None:
        return PoolConfig()
    data: dict[str, object] = {"mode": settings.mode}
    if settings.max_operation_count is not None:
        data["max_operation_count"] = settings.max_operation_count
    if settings.max_running_operation_count is not None:
        data["max_running_operation_count"] = settings.max_running_operation_count
    if not settings.resource_limits.is_empty():
        data["resource_limits"] = settings.resource_limits
    return PoolConfig.model_validate(data)


@dataclass(slots=True)
class Placement:
    """Where an operation goes in one tree.

    ``pool`` is the existing pool, or (``pool is None``) ``name`` is created under ``parent``
    as an ephemeral pool with ``config``; ``owner`` is set when the new pool counts toward the
    user's ephemeral-pool limit.
    """

    requested: str
    name: str
    pool: Pool | None
    parent: Pool | None
    config: PoolConfig
    owner: str | None

    def virtual_pool(self) -> Pool:
        """The pool, or a detached stand-in for the pool to be created (for limit checks)."""
        if self.pool is not None:
            return self.pool
        return Pool(
            name=self.name,
            parent=self.parent,
            config=self.config,
            effective=self.config,
            is_ephemeral=True,
            ephemeral_user=self.owner,
        )


def default_parent(tree: PoolTree, user: str) -> Pool:
    if tree.config.use_user_default_parent_pool_map:
        mapped = tree.user_default_parent_pools.get(user)
        if mapped is not None and mapped in tree.pools:
            return tree.pools[mapped]
    return tree.pools.get(tree.config.default_parent_pool, tree.root)


def resolve_placement(tree: PoolTree, requested: str, user: str) -> Placement:
    """Find or plan the pool for an operation of ``user`` asking for ``requested``."""
    pool = tree.pools.get(requested)
    if pool is not None and pool.effective.create_ephemeral_subpools:
        name = f"{requested}{EPHEMERAL_SUBPOOL_DELIMITER}{user}"
        existing = tree.pools.get(name)
        if existing is not None:
            return Placement(requested, name, existing, existing.parent, existing.config, None)
        return Placement(requested, name, None, pool, derive_ephemeral_config(pool.effective), None)
    if pool is not None:
        return Placement(requested, requested, pool, pool.parent, pool.config, None)
    regex = tree.strategy.ephemeral_pool_name_regex
    if re.fullmatch(regex, requested) is None:
        raise SchedulerError(
            "InvalidPoolName",
            f"tree {tree.name!r}: pool {requested!r} does not exist and is not a valid name for"
            f" an ephemeral pool (must match {regex!r})",
            pool=requested,
            tree=tree.name,
        )
    parent = default_parent(tree, user)
    return Placement(
        requested, requested, None, parent, derive_ephemeral_config(parent.effective), user
    )


def check_ephemeral_limit(tree: PoolTree, placement: Placement, user: str) -> None:
    if placement.pool is not None or placement.owner is None:
        return
    owned = tree.user_ephemeral_pools.get(user, [])
    limit = tree.config.max_ephemeral_pools_per_user
    if len(owned) + 1 > limit:
        raise SchedulerError(
            "TooManyEphemeralPools",
            f"Limit for number of ephemeral pools {limit} for user {user!r} in tree"
            f" {tree.name!r} has been reached (owns {', '.join(repr(p) for p in owned)})",
            user=user,
            tree=tree.name,
            limit=limit,
        )


def materialize(tree: PoolTree, placement: Placement) -> Pool:
    """The placement's pool, creating the ephemeral pool if needed."""
    if placement.pool is not None:
        return placement.pool
    parent = placement.parent
    assert parent is not None
    pool = Pool(
        name=placement.name,
        parent=parent,
        config=placement.config,
        effective=placement.config,
        is_ephemeral=True,
        ephemeral_user=placement.owner,
    )
    parent.children[pool.name] = pool
    tree.pools[pool.name] = pool
    if placement.owner is not None:
        tree.user_ephemeral_pools.setdefault(placement.owner, []).append(pool.name)
    placement.pool = pool
    return pool


def forget_owned(tree: PoolTree, pool: Pool) -> None:
    """Drop ``pool`` from its owner's ephemeral pools.

    The owner's entry stays, empty: YTsaurus keeps the user in its user -> ephemeral pools map
    (``user_to_ephemeral_pools/<user>`` then reads ``[]``).
    """
    if pool.ephemeral_user is None:
        return
    owned = tree.user_ephemeral_pools.setdefault(pool.ephemeral_user, [])
    if pool.name in owned:
        owned.remove(pool.name)


def is_user_subpool(pool: Pool) -> bool:
    """An ephemeral ``<pool>$<user>`` subpool (created under a ``create_ephemeral_subpools``
    parent), as opposed to an ephemeral pool under a default parent or a removed explicit pool
    that still has operations."""
    return pool.is_ephemeral and EPHEMERAL_SUBPOOL_DELIMITER in pool.name


def remove_if_empty(tree: PoolTree, pool: Pool | None) -> None:
    """Remove ``pool`` and its ephemeral ancestors while they hold nothing."""
    while (
        pool is not None
        and pool.is_ephemeral
        and not pool.children
        and not pool.operations
        and pool.operation_count == 0
    ):
        parent = pool.parent
        assert parent is not None
        del parent.children[pool.name]
        del tree.pools[pool.name]
        if pool.ephemeral_user is not None:
            forget_owned(tree, pool)
        pool = parent
