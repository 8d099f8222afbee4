"""Admission: operation limits, pending queues, lightweight operations, pool changes.

Rules (``RegisterOperation``, ``OnOperationAddedToPool``, ``TryRunAllPendingOperations``,
``CheckOperationsPendingByPool``, ``GetPoolLimitViolations``, ``ValidateOperationCountLimit``,
``ValidateAllOperationCountsOnPoolChange``, ``ChangeOperationPool`` and
``ReaccountLightweightRunningOperationsInPool`` in
``yt/yt/server/scheduler/strategy/pool_tree.cpp``; ``IsLightweight`` in
``pool_tree_element.cpp``):

* **total limits refuse**: a start needs ``operation_count < max_operation_count`` in the pool
  and every ancestor up to the root, else ``TooManyOperations``;
* **running limits queue**: running limits are not checked at start.  The operation runs unless
  some pool on its path has ``running_operation_count >= max_running_operation_count``; then it
  is *pending* in the lowest such pool's queue;
* **lightweight operations** (vanilla, in a fifo pool with ``enable_lightweight_operations``)
  never pend and count in ``lightweight_running_operation_count`` instead of the running count;
* **promotion** when a running operation leaves: from its old pool up to the root, each level
  hands its free running slots to its queue in insertion order; an operation blocked elsewhere
  moves to that pool's queue;
* limits of children may sum above their parent's (oversubscription is legal at every level).

Deterministic order (YTsaurus iterates a hash map in its periodic re-check): our full re-check
(:func:`scan_pending`) visits pending operations in the order they first became pending, tree
wide.  It runs right after any configuration change and on demand; YTsaurus waits for its next
periodic scan (``pending_by_pool_operation_scan_period``, 1 min).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ytsched.config.resources import ResourceAmounts
from ytsched.pooltree import effective
from ytsched.pooltree.ephemeral import (
    Placement,
    check_ephemeral_limit,
    materialize,
    remove_if_empty,
    resolve_placement,
)
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.operations import Operation
from ytsched.pooltree.pool import Pool, TreeOperation

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree


# --- counters ------------------------------------------------------------------------------


def _add(pool: Pool, operations: int = 0, running: int = 0, lightweight: int = 0) -> None:
    for level in pool.ancestors():
        level.operation_count += operations
        level.running_operation_count += running
        level.lightweight_running_operation_count += lightweight


def _mark_running(tree: PoolTree, entry: TreeOperation, now: float, reason: str) -> None:
    if entry.pending_pool is not None:
        entry.pending_pool.pending.remove(entry.id)
        entry.pending_pool = None
    entry.running = True
    entry.lightweight = tree.is_lightweight_in(entry.operation.type, entry.pool)
    if entry.lightweight:
        _add(entry.pool, lightweight=1)
    else:
        _add(entry.pool, running=1)
    entry.operation.set_tree_state(tree.name, "running", now, reason)


def _enqueue(tree: PoolTree, entry: TreeOperation, pool: Pool, now: float) -> None:
    if entry.pending_pool is pool:
        return
    if entry.pending_pool is not None:
        entry.pending_pool.pending.remove(entry.id)
    entry.pending_pool = pool
    pool.pending.append(entry.id)
    if entry.pending_seq is None:
        entry.pending_seq = tree.next_pending_seq()
    limit = tree.max_running_operation_count(pool)
    entry.operation.set_tree_state(
        tree.name,
        "pending",
        now,
        f"pending: limit for the number of running operations ({limit}) of pool {pool.name!r}"
        f" has been reached ({pool.running_operation_count} running)",
    )


def _stop_running(entry: TreeOperation) -> None:
    if entry.lightweight:
        _add(entry.pool, lightweight=-1)
    else:
        _add(entry.pool, running=-1)
    entry.running = False
    entry.lightweight = False


def lowest_violating_pool(tree: PoolTree, pool: Pool) -> Pool | None:
    """The lowest pool on the path to the root whose running limit is reached."""
    for level in pool.ancestors():
        if level.running_operation_count >= tree.max_running_operation_count(level):
            return level
    return None


def _try_run(tree: PoolTree, entry: TreeOperation, now: float, reason: str) -> bool:
    if tree.is_lightweight_in(entry.operation.type, entry.pool):
        _mark_running(tree, entry, now, f"{reason} (lightweight)")
        return True
    blocker = lowest_violating_pool(tree, entry.pool)
    if blocker is None:
        _mark_running(tree, entry, now, reason)
        return True
    _enqueue(tree, entry, blocker, now)
    return False


# --- checks -------------------------------------------------------------------------------


def check_placement(tree: PoolTree, placement: Placement, operation_id: str) -> None:
    """Immediate-operation bans, fifo parents and name clashes (``ValidatePoolCanBeUsed``)."""
    pool = placement.pool
    if pool is not None:
        forbidden = (
            tree.config.forbid_immediate_operations_in_root
            if pool.is_root
            else pool.effective.forbid_immediate_operations
        )
        if forbidden:
            option = (
                "forbid_immediate_operations_in_root"
                if pool.is_root
                else "forbid_immediate_operations"
            )
            raise SchedulerError(
                "ImmediateOperationsForbidden",
                f"Operations are forbidden directly in pool {pool.name!r} of tree {tree.name!r}"
                f" ({option} is set)",
                pool=pool.name,
                tree=tree.name,
            )
    else:
        parent = placement.parent
        assert parent is not None
        if parent.effective.mode == "fifo":
            raise SchedulerError(
                "FifoPoolWithSubpools",
                f"pool {placement.name!r} cannot be created in tree {tree.name!r}: its parent"
                f" {parent.name!r} is a fifo pool, and fifo pools have no child pools",
                pool=placement.name,
                tree=tree.name,
            )
        if placement.name in tree.operations:
            raise SchedulerError(
                "DuplicateElementName",
                f"tree {tree.name!r}: pool {placement.name!r} would have the name of an operation",
            )
    if operation_id in tree.pools:
        raise SchedulerError(
            "DuplicateElementName",
            f"tree {tree.name!r}: operation id {operation_id!r} is the name of a pool",
            operation_id=operation_id,
        )


def check_gang(tree: PoolTree, placement: Placement, operation: Operation) -> None:
    """A gang operation needs a pool that allows gangs (``ValidateOperationPoolsCanBeUsed`` in
    ``yt/yt/server/scheduler/strategy/pool_tree.cpp``); a new ephemeral pool is judged by the
    config it would get."""
    if not operation.spec.is_gang:
        return
    pool = placement.pool
    if pool is not None:
        own = None if pool.is_root else pool.effective
        name = pool.name
    else:
        own = placement.config
        name = placement.name
    if not effective.gang_operations_allowed(tree.config, own):
        raise SchedulerError(
            "GangOperationsAllowedOnlyInFifoPools",
            f"Starting gang operations in pool {name!r} in tree {tree.name!r} is forbidden"
            " since it is not configured in FIFO mode",
            pool=name,
            tree=tree.name,
        )


def check_operation_limits(
    tree: PoolTree, placement: Placement, exclude: frozenset[Pool] = frozenset()
) -> None:
    """Every level below its ``max_operation_count`` (``TooManyOperations``).

    A pool about to be created is checked too (with its ``ephemeral_subpool_config`` limit).
    """
    for level in placement.virtual_pool().ancestors():
        if level in exclude:
            continue
        limit = tree.max_operation_count(level)
        if level.operation_count >= limit:
            raise SchedulerError(
                "TooManyOperations",
                f"Limit for the number of concurrent operations {limit} for pool"
                f" {level.name!r} in tree {tree.name!r} has been reached",
                pool=level.name,
                tree=tree.name,
                limit=limit,
            )


def check_running_limits(
    tree: PoolTree, placement: Placement, exclude: frozenset[Pool] = frozenset()
) -> None:
    """Every level below its running limit (``TooManyRunningOperations``; pool changes only)."""
    for level in placement.virtual_pool().ancestors():
        if level in exclude:
            continue
        limit = tree.max_running_operation_count(level)
        if level.running_operation_count >= limit:
            raise SchedulerError(
                "TooManyRunningOperations",
                f"Limit for the number of running operations {limit} for pool {level.name!r}"
                f" in tree {tree.name!r} has been reached",
                pool=level.name,
                tree=tree.name,
                limit=limit,
            )


def plan_start(tree: PoolTree, operation: Operation, requested: str) -> Placement:
    """All checks of a start in this tree, without changing anything."""
    placement = resolve_placement(tree, requested, operation.user)
    if operation.id in tree.operations:
        raise SchedulerError(
            "OperationAlreadyExists",
            f"operation {operation.id!r} already exists in tree {tree.name!r}",
        )
    check_placement(tree, placement, operation.id)
    check_gang(tree, placement, operation)
    check_operation_limits(tree, placement)
    check_ephemeral_limit(tree, placement, operation.user)
    return placement


# --- registration ---------------------------------------------------------------------------


def register(
    tree: PoolTree,
    operation: Operation,
    placement: Placement,
    *,
    weight: float | None,
    resource_limits: ResourceAmounts | None,
    now: float,
) -> TreeOperation:
    """Attach a planned operation; it runs or waits in a queue."""
    pool = materialize(tree, placement)
    entry = TreeOperation(
        operation=operation,
        pool=pool,
        weight=weight,
        resource_limits=resource_limits,
        slot_index=pool.allocate_slot_index(),
    )
    tree.operations[operation.id] = entry
    pool.operations[operation.id] = None
    _add(pool, operations=1)
    _try_run(tree, entry, now, f"running in pool {pool.name!r}")
    return entry


def _detach(tree: PoolTree, entry: TreeOperation) -> Pool:
    pool = entry.pool
    if entry.pending_pool is not None:
        entry.pending_pool.pending.remove(entry.id)
        entry.pending_pool = None
    if entry.running:
        _stop_running(entry)
    _add(pool, operations=-1)
    del pool.operations[entry.id]
    pool.slot_indices.discard(entry.slot_index)
    return pool


def unregister(tree: PoolTree, operation_id: str, now: float, reason: str) -> None:
    """Remove a finished operation; pending operations may take its running slot."""
    entry = tree.operations.pop(operation_id)
    was_running = entry.running
    pool = _detach(tree, entry)
    entry.operation.forget_tree(tree.name, now, reason)
    if was_running:
        release(tree, pool, now)
    remove_if_empty(tree, pool)


def release(tree: PoolTree, start: Pool, now: float) -> None:
    """Hand freed running slots to queued operations, from ``start`` up to the root."""
    for level in start.ancestors():
        available = max(tree.max_running_operation_count(level) - level.running_operation_count, 0)
        index = 0
        while available > 0 and index < len(level.pending):
            operation_id = level.pending[index]
            entry = tree.operations[operation_id]
            blocker = (
                None
                if tree.is_lightweight_in(entry.operation.type, entry.pool)
                else lowest_violating_pool(tree, entry.pool)
            )
            if blocker is None:
                _mark_running(tree, entry, now, f"promoted: pool {level.name!r} has room")
                available -= 1
            elif blocker is level:
                index += 1
            else:
                _enqueue(tree, entry, blocker, now)


def scan_pending(tree: PoolTree, now: float, reason: str) -> None:
    """Re-check every pending operation (in the order they first became pending)."""
    pending = sorted(
        (entry for entry in tree.operations.values() if not entry.running),
        key=lambda entry: entry.pending_seq if entry.pending_seq is not None else -1,
    )
    for entry in pending:
        _try_run(tree, entry, now, reason)


def reaccount_lightweight(tree: PoolTree, now: float, reason: str) -> None:
    """Follow lightweight eligibility after a config change.

    Running operations that became (in)eligible move between the running and lightweight
    counters (overcommit allowed); pending ones that became eligible run at once.
    """
    for entry in list(tree.operations.values()):
        eligible = tree.is_lightweight_in(entry.operation.type, entry.pool)
        if entry.running:
            if entry.lightweight != eligible:
                _stop_running(entry)
                entry.running = True
                entry.lightweight = eligible
                _add(entry.pool, lightweight=1) if eligible else _add(entry.pool, running=1)
        elif eligible:
            _mark_running(tree, entry, now, f"{reason} (lightweight)")


# --- pool changes ---------------------------------------------------------------------------


def plan_pool_change(tree: PoolTree, entry: TreeOperation, requested: str) -> Placement | None:
    """Checks of moving a registered operation to ``requested`` (None: nothing to do)."""
    operation = entry.operation
    placement = resolve_placement(tree, requested, operation.user)
    if placement.pool is entry.pool:
        return None
    check_placement(tree, placement, operation.id)
    check_gang(tree, placement, operation)
    old_path = frozenset(entry.pool.ancestors())
    check_operation_limits(tree, placement, exclude=old_path)
    target_config = placement.pool.effective if placement.pool is not None else placement.config
    lightweight = operation.type == "vanilla" and tree.lightweight_enabled(target_config)
    if not lightweight:
        common = old_path if entry.running and not entry.lightweight else frozenset()
        check_running_limits(tree, placement, exclude=common)
    check_ephemeral_limit(tree, placement, operation.user)
    return placement


def apply_pool_change(
    tree: PoolTree, entry: TreeOperation, placement: Placement, now: float
) -> None:
    """Move the operation (it runs in the new pool) and promote where it left room."""
    old_pool = _detach(tree, entry)
    pool = materialize(tree, placement)
    entry.pool = pool
    entry.slot_index = pool.allocate_slot_index()
    pool.operations[entry.id] = None
    _add(pool, operations=1)
    _mark_running(tree, entry, now, f"moved to pool {pool.name!r}")
    release(tree, old_pool, now)
    remove_if_empty(tree, old_pool)


def force_move_operations(tree: PoolTree, source: Pool, target: Pool) -> None:
    """Move every operation of ``source`` to ``target`` keeping its state (no limit checks).

    Used for stale ``pool$user`` subpools whose parent stopped creating ephemeral subpools.
    Pending operations are re-queued by the next :func:`scan_pending`.
    """
    for operation_id in list(source.operations):
        entry = tree.operations[operation_id]
        running, lightweight = entry.running, entry.lightweight
        if entry.pending_pool is not None:
            entry.pending_pool.pending.remove(entry.id)
            entry.pending_pool = None
        if running:
            _stop_running(entry)
        _add(source, operations=-1)
        del source.operations[operation_id]
        source.slot_indices.discard(entry.slot_index)
        entry.pool = target
        entry.slot_index = target.allocate_slot_index()
        target.operations[operation_id] = None
        _add(target, operations=1)
        if running:
            entry.running = True
            entry.lightweight = lightweight
            _add(target, lightweight=1) if lightweight else _add(target, running=1)
