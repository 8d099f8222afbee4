"""A live pool tree: pools, operations, limits, and all-or-nothing configuration changes.

Structure and rules follow ``TPoolTree`` (``yt/yt/server/scheduler/strategy/pool_tree.cpp``)
and the pool objects of the master (``scheduler_pool.cpp``).  Every change to pools or to the
tree config is first checked on the layout it would produce
(:func:`ytsched.pooltree.validation.validate_layout`); a refused change leaves the tree exactly as
it was.  After an accepted change the tree re-accounts lightweight operations, drops stale
``pool$user`` subpools and re-checks pending operations (:mod:`ytsched.pooltree.admission`).

Methods that may start pending operations take ``now``; without it the tree's clock (the latest
time it was given) is used, so nothing here reads a wall clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ytsched.config.base import parse_config, patched
from ytsched.config.pool import PoolConfig
from ytsched.config.strategy import StrategyConfig
from ytsched.config.tree import ROOT_POOL_NAME, TreeConfig
from ytsched.fairshare.model import TreeSnapshot, UpdateOptions
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree import admission, counters, orchid, snapshot
from ytsched.pooltree.ephemeral import (
    default_parent,
    derive_ephemeral_config,
    forget_owned,
    is_user_subpool,
    remove_if_empty,
)
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.input_marks import OperationInputs
from ytsched.pooltree.pool import Pool, TreeOperation, new_root
from ytsched.pooltree.validation import LayoutPool, validate_layout, validate_pool_name, where
from ytsched.resources import Vector


class PoolTree:
    """One pool tree with its pools and the operations placed in it."""

    def __init__(
        self,
        name: str,
        config: TreeConfig | Mapping[str, Any] | None = None,
        *,
        strategy: StrategyConfig | None = None,
    ) -> None:
        self.name = name
        self.config: TreeConfig = parse_config(TreeConfig, config, f"tree {name!r}: config")
        self.strategy = strategy if strategy is not None else StrategyConfig()
        self.root = new_root()
        self.pools: dict[str, Pool] = {ROOT_POOL_NAME: self.root}
        self.operations: dict[str, TreeOperation] = {}
        self.user_ephemeral_pools: dict[str, list[str]] = {}
        """User -> ephemeral pools created for them under default parents."""
        self.user_default_parent_pools: dict[str, str] = {}
        """The scheduler's user -> default parent pool map (used with
        ``use_user_default_parent_pool_map``)."""
        self.clock = 0.0
        self._pending_seq = 0
        self.last_result: UpdateResult | None = None
        self.last_update_time: float | None = None
        self.usage_memo: snapshot.UsageMemo = {}
        """Operations' usages at the last update (``snapshot.to_snapshot`` reuses them)."""
        self.pool_spec_memo: snapshot.PoolSpecMemo = {}
        """Pools' engine inputs derived from their configs at the last update (likewise)."""
        self.operation_spec_memo: snapshot.SpecMemo = {}
        """Operations' engine inputs at the last update, reused when unchanged (likewise)."""
        self.update_options_memo: tuple[TreeConfig, UpdateOptions] | None = None
        """The config of the last update and its engine switches (``snapshot``)."""
        self.operation_inputs = OperationInputs()
        """The operations' specs at the last update and the operations marked changed since
        (``snapshot.to_snapshot`` rebuilds only theirs)."""
        self.tag_filter_resource_limits: Callable[[str], Vector] | None = None
        """Set by :class:`PoolTrees`: the summed limits of this tree's online nodes matching a
        scheduling tag filter (orchid ``scheduling_tag_filter_resource_limits``)."""
        validate_layout(self.name, self._layout(), self.config)

    # --- lookups and effective limits ------------------------------------------------------

    def pool(self, name: str) -> Pool:
        pool = self.pools.get(name)
        if pool is None:
            raise SchedulerError(
                "NoSuchPool", f"pool {name!r} does not exist in tree {self.name!r}", pool=name
            )
        return pool

    def operation(self, operation_id: str) -> TreeOperation:
        entry = self.operations.get(operation_id)
        if entry is None:
            raise SchedulerError(
                "NoSuchOperation",
                f"operation {operation_id!r} is not in tree {self.name!r}",
                operation_id=operation_id,
            )
        return entry

    def max_operation_count(self, pool: Pool) -> int:
        """Own limit, else the tree's per-pool default; the root uses the tree limit."""
        if pool.is_root:
            return self.config.max_operation_count
        own = pool.effective.max_operation_count
        return own if own is not None else self.config.max_operation_count_per_pool

    def max_running_operation_count(self, pool: Pool) -> int:
        if pool.is_root:
            return self.config.max_running_operation_count
        own = pool.effective.max_running_operation_count
        return own if own is not None else self.config.max_running_operation_count_per_pool

    @staticmethod
    def lightweight_enabled(config: PoolConfig) -> bool:
        """``effective_lightweight_operations_enabled``: the flag set on a fifo pool."""
        return config.enable_lightweight_operations and config.mode == "fifo"

    def is_lightweight_in(self, operation_type: str, pool: Pool) -> bool:
        return operation_type == "vanilla" and self.lightweight_enabled(pool.effective)

    def next_pending_seq(self) -> int:
        self._pending_seq += 1
        return self._pending_seq

    def _now(self, now: float | None) -> float:
        if now is not None:
            self.clock = max(self.clock, now)
            return now
        return self.clock

    def alerts(self) -> list[dict[str, object]]:
        """Configuration problems that do not refuse anything (YTsaurus raises alerts)."""
        result: list[dict[str, object]] = []
        parent = self.config.default_parent_pool
        if parent not in self.pools:
            result.append(
                {
                    "code": "DefaultParentPoolMissing",
                    "message": f"tree {self.name!r}: default_parent_pool {parent!r} does not"
                    " exist; ephemeral pools are created in the root",
                }
            )
        if self.last_result is not None:
            for error in self.last_result.errors:
                result.append({"code": error.code, "message": error.message})
        return result

    # --- layouts ---------------------------------------------------------------------------

    def _layout(self) -> dict[str, LayoutPool]:
        return {
            pool.name: LayoutPool(pool.name, pool.parent_name, pool.config, pool.is_ephemeral)
            for pool in self.root.descendants()
        }

    def _refresh_derived(self, layout: dict[str, LayoutPool]) -> None:
        """Ephemeral pools follow their parent's ``ephemeral_subpool_config``."""
        for entry in layout.values():
            if entry.is_ephemeral and entry.parent is not None:
                entry.config = derive_ephemeral_config(layout[entry.parent].config)

    def _validate(
        self, layout: dict[str, LayoutPool], config: TreeConfig | None = None
    ) -> dict[str, PoolConfig]:
        self._refresh_derived(layout)
        return validate_layout(self.name, layout, config or self.config)

    def _install(self, layout: dict[str, LayoutPool], effective: dict[str, PoolConfig]) -> None:
        for name, entry in layout.items():
            pool = self.pools[name]
            pool.config = entry.config
            pool.effective = effective[name]

    def _explicit(self, name: str, action: str) -> Pool:
        pool = self.pool(name)
        if pool.is_root:
            raise SchedulerError(
                "CannotModifyRootPool",
                f"tree {self.name!r}: the root pool cannot be {action}; use the tree config",
                pool=name,
            )
        if pool.is_ephemeral:
            raise SchedulerError(
                "CannotModifyEphemeralPool",
                f"{where(name, self.name)} is ephemeral and cannot be {action}; create an"
                " explicit pool of that name to adopt it",
                pool=name,
            )
        return pool

    def _explicit_parent(self, parent: str | None) -> Pool:
        pool = self.pool(parent if parent is not None else ROOT_POOL_NAME)
        if pool.is_ephemeral:
            raise SchedulerError(
                "CannotModifyEphemeralPool",
                f"{where(pool.name, self.name)} is ephemeral and cannot have child pools",
                pool=pool.name,
            )
        return pool

    # --- pool changes ----------------------------------------------------------------------

    def create_pool(
        self,
        name: str,
        parent: str | None = None,
        config: PoolConfig | Mapping[str, Any] | None = None,
        *,
        now: float | None = None,
    ) -> Pool:
        """Create an explicit pool (``parent=None``: under the root).

        Creating a pool with the name of an ephemeral pool adopts it: it becomes explicit, with
        this config and parent, keeping its operations.
        """
        moment = self._now(now)
        parent_pool = self._explicit_parent(parent)
        parsed = parse_config(PoolConfig, config, where(name, self.name))
        if name == ROOT_POOL_NAME:
            validate_pool_name(name, self.name, self.strategy.ephemeral_pool_name_regex)
        existing = self.pools.get(name)
        if existing is not None and not existing.is_ephemeral:
            raise SchedulerError(
                "PoolAlreadyExists", f"{where(name, self.name)} already exists", pool=name
            )
        if existing is None:
            validate_pool_name(name, self.name, self.strategy.ephemeral_pool_name_regex)
            if name in self.operations:
                raise SchedulerError(
                    "DuplicateElementName",
                    f"tree {self.name!r}: pool {name!r} would have the name of an operation",
                )
        layout = self._layout()
        layout[name] = LayoutPool(name, parent_pool.name, parsed, False)
        effective = self._validate(layout)
        if existing is None:
            pool = Pool(name=name, parent=parent_pool, config=parsed, effective=effective[name])
            parent_pool.children[name] = pool
            self.pools[name] = pool
        else:
            pool = existing
            self._adopt(pool, parent_pool)
        self._install(layout, effective)
        self._reconcile(moment, f"pool {name!r} created")
        return pool

    def _adopt(self, pool: Pool, parent: Pool) -> None:
        forget_owned(self, pool)
        pool.is_ephemeral = False
        pool.ephemeral_user = None
        if pool.parent is not parent:
            self._reparent(pool, parent)

    def set_pool_config(
        self, name: str, config: PoolConfig | Mapping[str, Any], *, now: float | None = None
    ) -> Pool:
        """Replace all attributes of a pool."""
        moment = self._now(now)
        pool = self._explicit(name, "reconfigured")
        parsed = parse_config(PoolConfig, config, where(name, self.name))
        return self._reconfigure(pool, parsed, moment)

    def set_pool_configs(
        self, configs: Mapping[str, PoolConfig], *, now: float | None = None, reason: str
    ) -> None:
        """Replace the configs of several pools at once: one validation, all or nothing.

        For changes that are only valid together (``transfer_pool_resources`` moves guarantees
        between siblings: taken alone, each step could break a parent's bound).
        """
        moment = self._now(now)
        layout = self._layout()
        for name, config in configs.items():
            self._explicit(name, "reconfigured")
            layout[name].config = config
        effective = self._validate(layout)
        self._install(layout, effective)
        self._reconcile(moment, reason)

    def update_pool(self, name: str, patch: Mapping[str, Any], *, now: float | None = None) -> Pool:
        """Set some attributes of a pool (``None`` resets one to its default)."""
        moment = self._now(now)
        pool = self._explicit(name, "reconfigured")
        parsed = patched(PoolConfig, pool.config, patch, where(name, self.name))
        return self._reconfigure(pool, parsed, moment)

    def _reconfigure(self, pool: Pool, config: PoolConfig, now: float) -> Pool:
        layout = self._layout()
        layout[pool.name].config = config
        effective = self._validate(layout)
        self._install(layout, effective)
        self._reconcile(now, f"pool {pool.name!r} reconfigured")
        return pool

    def move_pool(self, name: str, parent: str | None, *, now: float | None = None) -> Pool:
        """Move a pool (with its subtree and operations) under ``parent`` (None: the root)."""
        moment = self._now(now)
        pool = self._explicit(name, "moved")
        new_parent = self._explicit_parent(parent)
        if new_parent is pool.parent:
            return pool
        if new_parent.is_descendant_of(pool):
            raise SchedulerError(
                "InvalidPoolMove",
                f"{where(name, self.name)} cannot be moved under {new_parent.name!r}, which is"
                " inside it",
                pool=name,
            )
        layout = self._layout()
        layout[name].parent = new_parent.name
        effective = self._validate(layout)
        self._reparent(pool, new_parent)
        self._install(layout, effective)
        self._reconcile(moment, f"pool {name!r} moved under {new_parent.name!r}")
        return pool

    def _reparent(self, pool: Pool, parent: Pool) -> None:
        old = pool.parent
        assert old is not None
        counts = (
            pool.operation_count,
            pool.running_operation_count,
            pool.lightweight_running_operation_count,
        )
        for level in old.ancestors():
            level.operation_count -= counts[0]
            level.running_operation_count -= counts[1]
            level.lightweight_running_operation_count -= counts[2]
        del old.children[pool.name]
        pool.parent = parent
        parent.children[pool.name] = pool
        for level in parent.ancestors():
            level.operation_count += counts[0]
            level.running_operation_count += counts[1]
            level.lightweight_running_operation_count += counts[2]
        admission.release(self, old, self.clock)
        remove_if_empty(self, old)

    def rename_pool(self, name: str, new_name: str, *, now: float | None = None) -> Pool:
        """Rename an explicit pool (its child pools follow it).

        As in YTsaurus, where a rename reaches the scheduler as the removal of the old name and
        the creation of the new one: the operations placed directly in the pool stay in an
        ephemeral pool of the old name (see :meth:`remove_pool`), and the renamed pool starts
        without them.
        """
        pool = self._explicit(name, "renamed")
        if new_name == name:
            return pool
        validate_pool_name(new_name, self.name, self.strategy.ephemeral_pool_name_regex)
        if new_name in self.pools:
            raise SchedulerError(
                "PoolAlreadyExists", f"{where(new_name, self.name)} already exists", pool=new_name
            )
        if new_name in self.operations:
            raise SchedulerError(
                "DuplicateElementName",
                f"tree {self.name!r}: pool {new_name!r} would have the name of an operation",
            )
        if pool.operations:
            return self._rename_keeping_operations(pool, new_name, self._now(now))
        layout = {
            (new_name if key == name else key): LayoutPool(
                new_name if key == name else key,
                new_name if entry.parent == name else entry.parent,
                entry.config,
                entry.is_ephemeral,
            )
            for key, entry in self._layout().items()
        }
        effective = self._validate(layout)
        parent = pool.parent
        assert parent is not None
        parent.children = {
            (new_name if key == name else key): child for key, child in parent.children.items()
        }
        del self.pools[name]
        pool.name = new_name
        self.pools[new_name] = pool
        self._install(layout, effective)
        return pool

    def remove_pool(self, name: str, *, now: float | None = None) -> None:
        """Remove an explicit pool that has no explicit child pools.

        A pool that still holds operations (or ephemeral child pools) is not dropped: as in
        YTsaurus (``EUpdatePoolActionType::Erase`` in
        ``yt/yt/server/scheduler/strategy/pool_tree.cpp``) it becomes an ephemeral pool of the
        same name, with the default config plus the ``ephemeral_subpool_config`` of the default
        parent pool for a user of that name, moved under that parent (the root if that parent is
        the pool itself); its operations keep running, and it goes away with its last one.
        """
        pool = self._explicit(name, "removed")
        explicit_children = [c for c in pool.children.values() if not c.is_ephemeral]
        if explicit_children:
            raise SchedulerError(
                "PoolIsNotEmpty",
                f"{where(name, self.name)} cannot be removed: it has child pools"
                f" {', '.join(repr(c.name) for c in explicit_children)}",
                pool=name,
            )
        if pool.operations or pool.children:
            self._orphan(pool, self._now(now))
            return
        parent = pool.parent
        assert parent is not None
        del parent.children[name]
        del self.pools[name]

    def _orphan_parent(self, pool: Pool) -> Pool:
        target = default_parent(self, pool.name)
        if target is pool or target.is_descendant_of(pool):
            return self.root
        return target

    def _orphan(self, pool: Pool, now: float) -> None:
        """Turn a removed explicit pool that still has operations into an ephemeral pool."""
        target = self._orphan_parent(pool)
        layout = self._layout()
        entry = layout[pool.name]
        entry.is_ephemeral = True
        entry.parent = target.name
        effective = self._validate(self._ordered(layout))
        self._settle_orphan(
            pool,
            target,
            layout,
            effective,
            now,
            f"pool {pool.name!r} removed; it keeps its operations as an ephemeral pool",
        )

    def _rename_keeping_operations(self, pool: Pool, new_name: str, now: float) -> Pool:
        """Rename ``pool`` while operations run in it: a new explicit pool ``new_name`` takes
        its config, place and child pools; the operations stay in the old pool, which turns
        ephemeral (:meth:`_orphan`)."""
        parent = pool.parent
        assert parent is not None
        target = self._orphan_parent(pool)
        layout = self._layout()
        old = layout[pool.name]
        layout[new_name] = LayoutPool(new_name, parent.name, pool.config, False)
        for child in pool.children.values():
            layout[child.name].parent = new_name
        old.is_ephemeral = True
        old.parent = target.name
        effective = self._validate(self._ordered(layout))
        fresh = Pool(
            name=new_name, parent=parent, config=pool.config, effective=effective[new_name]
        )
        parent.children[new_name] = fresh
        self.pools[new_name] = fresh
        for child in list(pool.children.values()):
            self._reparent(child, fresh)
        self._settle_orphan(
            pool,
            target,
            layout,
            effective,
            now,
            f"pool {pool.name!r} renamed to {new_name!r}; its operations stay"
            f" in an ephemeral pool {pool.name!r}",
        )
        return fresh

    def _settle_orphan(
        self,
        pool: Pool,
        target: Pool,
        layout: dict[str, LayoutPool],
        effective: dict[str, PoolConfig],
        now: float,
        reason: str,
    ) -> None:
        """The end both :meth:`_orphan` and :meth:`_rename_keeping_operations` share, once
        the new layout validated: ``pool`` turns ephemeral (with no user) under ``target``,
        the layout is installed and the change is reconciled with ``reason``."""
        if pool.parent is not target:
            self._reparent(pool, target)
        pool.is_ephemeral = True
        pool.ephemeral_user = None
        self._install(layout, effective)
        self._reconcile(now, reason)

    def _ordered(self, layout: dict[str, LayoutPool]) -> dict[str, LayoutPool]:
        """``layout`` with parents before children (what :func:`validate_layout` needs)."""
        ordered: dict[str, LayoutPool] = {}
        children: dict[str | None, list[str]] = {}
        for key, entry in layout.items():
            children.setdefault(entry.parent, []).append(key)
        stack = list(reversed(children.get(None, [])))
        while stack:
            key = stack.pop()
            ordered[key] = layout[key]
            stack.extend(reversed(children.get(key, [])))
        return ordered

    def move_user_ephemeral_pools(self, user: str, *, now: float | None = None) -> None:
        """Move the ephemeral pools created for ``user`` under a default parent to the user's
        current default parent (after the user -> default parent pool map changed), as
        YTsaurus does when that map is updated."""
        moment = self._now(now)
        target = default_parent(self, user)
        names = [
            name
            for name in self.user_ephemeral_pools.get(user, [])
            if name in self.pools and self.pools[name].parent is not target
        ]
        if not names:
            return
        layout = self._layout()
        for name in names:
            layout[name].parent = target.name
        effective = self._validate(self._ordered(layout))
        for name in names:
            self._reparent(self.pools[name], target)
        self._install(layout, effective)
        self._reconcile(moment, f"default parent pool of user {user!r} is now {target.name!r}")

    # --- tree config ---------------------------------------------------------------------

    def set_config(
        self, config: TreeConfig | Mapping[str, Any], *, now: float | None = None
    ) -> None:
        """Replace the tree config (checked against every pool first)."""
        moment = self._now(now)
        parsed = parse_config(TreeConfig, config, f"tree {self.name!r}: config")
        self._apply_config(parsed, moment)

    def update_config(self, patch: Mapping[str, Any], *, now: float | None = None) -> None:
        """Set some tree options (``None`` resets one to its default)."""
        moment = self._now(now)
        parsed = patched(TreeConfig, self.config, patch, f"tree {self.name!r}: config")
        self._apply_config(parsed, moment)

    def _apply_config(self, config: TreeConfig, now: float) -> None:
        layout = self._layout()
        effective = self._validate(layout, config)
        self.config = config
        self._install(layout, effective)
        self._reconcile(now, "tree config changed")

    # --- after a change ---------------------------------------------------------------------

    def _reconcile(self, now: float, reason: str) -> None:
        for pool in list(self.root.descendants()):
            parent = pool.parent
            if (
                is_user_subpool(pool)
                and parent is not None
                and not parent.effective.create_ephemeral_subpools
            ):
                admission.force_move_operations(self, pool, parent)
                remove_if_empty(self, pool)
        admission.reaccount_lightweight(self, now, reason)
        admission.scan_pending(self, now, reason)

    def scan_pending_operations(self, now: float | None = None) -> None:
        """The periodic re-check of all pending operations."""
        admission.scan_pending(self, self._now(now), "pending operations re-checked")

    # --- engine input, update, views -----------------------------------------------------

    def to_snapshot(
        self, now: float | None, previous_update_time: float | None, total_resources: Vector
    ) -> TreeSnapshot:
        """The engine input for this tree (pure)."""
        return snapshot.to_snapshot(self, now, previous_update_time, total_resources)

    def update(self, now: float, total_resources: Vector) -> UpdateResult:
        """Run the fair-share update at ``now``; keeps integral volumes and the result."""
        return snapshot.update(self, now, total_resources)

    def orchid(self) -> dict[str, Any]:
        return orchid.tree_orchid(self)

    def check_invariants(self) -> list[str]:
        return counters.check_invariants(self)
