"""Serving orchid reads without rebuilding the orchid: versioned, per subtree, built once.

Every ``get`` under ``//sys/scheduler/orchid/scheduler`` used to build the whole orchid (every
pool and operation of every tree) on the event loop: ~200 ms at 2,000 operations, so a few
clients polling one attribute each stalled node heartbeats for seconds.  Now:

* The orchid has a *version*, bumped when a fair-share update ends and when a command changed
  the model (``Cluster.orchid_changed``).  Between two bumps every value served is built at
  most once and then shared (callers must treat values as immutable), exactly as YTsaurus
  serves its orchid from the tree snapshot of the last update.  Counters that heartbeats move
  (running jobs, usage) are therefore as of the first read after the last update: at most one
  update period old.
* A read builds only what its path needs.  ``pool_trees/<T>/pools/<P>/...``,
  ``pool_trees/<T>/operations/<O>/...``, ``operations_by_pool/<P>``, the same entries in the
  old layout (``scheduling_info_per_pool_tree/<T>/fair_share_info/...``) and
  ``operations/<O>/...`` build one entry (or one tree's map) with the same builders the full
  orchid uses; anything else is read from the full orchid, built once per version, and
  when that build is slow (over 50 ms) at most once per five build times (``full``).

The entries are equal to the full orchid's (a test compares every path of both).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ytsched.pooltree.orchid import operation_attributes, pool_attributes
from ytsched.scheduling.orchid import (
    operation_scheduling_attributes,
    pool_job_counts,
    pool_scheduling_attributes,
)
from ytsched.server.orchid import build_orchid, navigate

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

_MISSING = object()
SLOW_BUILD = 0.05
"""Seconds: a whole-orchid build slower than this is not repeated at every version."""
STALE_FACTOR = 5.0
"""A slow whole orchid is served for this many build times (the loop spends <= 1/5 on it)."""


class OrchidCache:
    """The orchid of the current version, built lazily, one subtree at a time."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.version = 0
        self._full: dict[str, Any] | None = None
        self._parts: dict[tuple[str, ...], Any] = {}
        self.builds = 0
        """Subtrees built so far (tests)."""
        self.full_builds = 0
        """Whole orchids built so far (tests): polling single entries must not build one."""
        self.full_build_seconds = 0.0
        """How long the last whole orchid took to build."""
        self._stale: dict[str, Any] | None = None
        self._stale_built_at = 0.0

    def invalidate(self) -> None:
        """The model changed: the next reads build from it again."""
        self.version += 1
        if self._full is not None:
            self._stale = self._full
        self._full = None
        self._parts.clear()

    def full(self) -> dict[str, Any]:
        """The whole orchid; an expensive one is rebuilt at most every few build times.

        At thousands of operations the whole orchid takes a second or more to build, all of it
        on the event loop; a client polling the orchid's root must not keep the loop busy with
        it.  So when the last build took longer than ``SLOW_BUILD`` seconds, the previous one
        is served for ``STALE_FACTOR`` times that long after it was built (then rebuilt).
        Routed subtrees (pools, operations) are always current.
        """
        if self._full is not None:
            return self._full
        now = time.monotonic()
        slow = self.full_build_seconds > SLOW_BUILD
        if (
            self._stale is not None
            and slow
            and now - self._stale_built_at < STALE_FACTOR * self.full_build_seconds
        ):
            return self._stale
        self.full_builds += 1
        self._full = build_orchid(self.cluster)
        self.full_build_seconds = time.monotonic() - now
        self._stale, self._stale_built_at = None, now
        return self._full

    def get(self, segments: tuple[str, ...], path: str) -> Any:
        """The value at ``segments`` below ``orchid/scheduler`` (ResolveError if absent)."""
        if self._full is None:
            routed = self._route(segments)
            if routed is not None:
                value, consumed = routed
                if value is not _MISSING:
                    return navigate(value, segments[consumed:], path)
        return navigate(self.full(), segments, path)

    def memo(self, key: tuple[str, ...], build: Callable[[], Any]) -> Any:
        """Another view of the model (a Web UI page's tree), built at most once per version."""
        return self._cached(("memo", *key), build)

    def operation_per_tree(self, operation_id: str) -> dict[str, dict[str, Any]]:
        """The operation's entry in each tree it is in (``explain`` reads only these)."""
        result = {}
        for name in self.cluster.trees.trees:
            entry = self._tree_entry(name, operation_id)
            if entry is not _MISSING:
                result[name] = entry
        return result

    # --- routes -------------------------------------------------------------------------

    def _route(self, segments: tuple[str, ...]) -> tuple[Any, int] | None:
        """(subtree, how many segments it stands for), or None for the full orchid."""
        size = len(segments)
        if size >= 3 and segments[0] == "pool_trees":
            tree, kind = segments[1], segments[2]
            return self._tree_route(tree, kind, segments[3:], 3)
        if (
            size >= 4
            and segments[0] == "scheduling_info_per_pool_tree"
            and segments[2] == "fair_share_info"
        ):
            return self._tree_route(segments[1], segments[3], segments[4:], 4)
        if size >= 2 and segments[0] == "operations":
            return self._cached(("operation", segments[1]), lambda: self._operation(segments[1])), 2
        return None

    def _tree_route(
        self, tree: str, kind: str, rest: tuple[str, ...], consumed: int
    ) -> tuple[Any, int] | None:
        if self.cluster.trees.trees.get(tree) is None:
            return None
        if kind == "pools":
            if rest:
                return self._pool_entry(tree, rest[0]), consumed + 1
            return self._cached(("pools", tree), lambda: self._pools(tree)), consumed
        if kind == "operations":
            if rest:
                return self._tree_entry(tree, rest[0]), consumed + 1
            return self._cached(("tree_operations", tree), lambda: self._tree_ops(tree)), consumed
        if kind == "operations_by_pool" and rest:
            key = ("operations_by_pool", tree, rest[0])
            return self._cached(key, lambda: self._by_pool(tree, rest[0])), consumed + 1
        return None

    def _cached(self, key: tuple[str, ...], build: Callable[[], Any]) -> Any:
        value = self._parts.get(key, _MISSING)
        if value is _MISSING:
            self.builds += 1
            value = build()
            self._parts[key] = value
        return value

    # --- builders (the same functions the full orchid is made of) -----------------------

    def _counts(self, tree: str) -> dict[str, list[int]]:
        state = self.cluster.scheduler.ledger.tree_states.get(tree)
        if state is None:
            return {}
        counts: dict[str, list[int]] = self._cached(
            ("counts", tree), lambda: pool_job_counts(state)
        )
        return counts

    def _pool(self, tree_name: str, name: str) -> Any:
        tree = self.cluster.trees.trees[tree_name]
        pool = tree.pools.get(name)
        if pool is None:
            return _MISSING
        attributes = pool_attributes(tree, pool)
        state = self.cluster.scheduler.ledger.tree_states.get(tree_name)
        element = state.elements.get(name) if state is not None else None
        if state is not None and element is not None and not element.is_operation:
            attributes.update(pool_scheduling_attributes(state, element, self._counts(tree_name)))
        return attributes

    def _pools(self, tree_name: str) -> dict[str, Any]:
        tree = self.cluster.trees.trees[tree_name]
        return {
            pool.name: self._pool_entry(tree_name, pool.name) for pool in tree.root.descendants()
        }

    def _pool_entry(self, tree_name: str, name: str) -> Any:
        return self._cached(("pool", tree_name, name), lambda: self._pool(tree_name, name))

    def _tree_operation(self, tree_name: str, operation_id: str) -> Any:
        tree = self.cluster.trees.trees[tree_name]
        entry = tree.operations.get(operation_id)
        if entry is None:
            return _MISSING
        attributes = operation_attributes(tree, entry)
        state = self.cluster.scheduler.ledger.tree_states.get(tree_name)
        scheduled = state.operations.get(operation_id) if state is not None else None
        if state is not None and scheduled is not None:
            attributes.update(operation_scheduling_attributes(state, scheduled))
        return attributes

    def _tree_entry(self, tree_name: str, operation_id: str) -> Any:
        key = ("tree_operation", tree_name, operation_id)
        return self._cached(key, lambda: self._tree_operation(tree_name, operation_id))

    def _tree_ops(self, tree_name: str) -> dict[str, Any]:
        tree = self.cluster.trees.trees[tree_name]
        return {op_id: self._tree_entry(tree_name, op_id) for op_id in tree.operations}

    def _by_pool(self, tree_name: str, pool_name: str) -> Any:
        pool = self.cluster.trees.trees[tree_name].pools.get(pool_name)
        if pool is None:
            return _MISSING
        result = {}
        for op_id in pool.operations:
            entry = self._tree_entry(tree_name, op_id)
            result[op_id] = {} if entry is _MISSING else entry
        return result

    def _operation(self, operation_id: str) -> Any:
        trees = self.cluster.trees
        if operation_id not in trees.operations:
            return _MISSING
        view = trees.operation_orchid(operation_id)
        record = self.cluster.operations.get(operation_id)
        if record is not None:
            view["suspended"] = record.row.suspended
        per_tree = {}
        for name in trees.trees:
            entry = self._tree_entry(name, operation_id)
            if entry is not _MISSING:
                per_tree[name] = entry
        view["progress"] = {"scheduling_info_per_pool_tree": per_tree}
        return view
