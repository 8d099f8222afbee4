"""The service side of ``transfer_pool_resources``: permissions, the transfer, the commit.

YTsaurus asks for ``write`` on every pool whose values change (the source and its ancestors,
the destination and its ancestors, up to but not including their common ancestor;
``scheduler_pool_manager.cpp``).  The transfer itself is :mod:`ytsched.pooltree.transfer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ytsched.pooltree.transfer import transfer_path, transfer_pool_resources
from ytsched.server.errors import ApiError

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster


def transfer(
    cluster: Cluster,
    user: str,
    pool_tree: object,
    source_pool: object,
    destination_pool: object,
    resource_delta: object,
) -> None:
    for name, value in (
        ("pool_tree", pool_tree),
        ("source_pool", source_pool),
        ("destination_pool", destination_pool),
    ):
        if not isinstance(value, str) or not value:
            raise ApiError("InvalidArgument", f"{name} must be a non-empty string")
    assert isinstance(pool_tree, str) and isinstance(source_pool, str)
    assert isinstance(destination_pool, str)
    tree = cluster.tree(pool_tree)
    losing, gaining = transfer_path(tree, source_pool, destination_pool)
    for pool in losing + gaining:
        cluster.require_pool_permission(user, "write", pool_tree, pool.name)
    transfer_pool_resources(tree, source_pool, destination_pool, resource_delta, now=cluster.now())
    with cluster.store.transaction():
        cluster.persist_tree(pool_tree)
        cluster.sync_operations()
