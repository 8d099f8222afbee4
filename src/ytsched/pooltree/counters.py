"""Counters recomputed from scratch, to check the incrementally maintained ones.

The property tests compare :func:`recount` with :func:`live_counters` after random sequences
of starts, finishes, moves and config changes; they must always be equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree

Counters = tuple[int, int, int]
"""(operation_count, running_operation_count, lightweight_running_operation_count)."""


def live_counters(tree: PoolTree) -> dict[str, Counters]:
    return {
        name: (
            pool.operation_count,
            pool.running_operation_count,
            pool.lightweight_running_operation_count,
        )
        for name, pool in tree.pools.items()
    }


def recount(tree: PoolTree) -> dict[str, Counters]:
    counts = {name: [0, 0, 0] for name in tree.pools}
    for entry in tree.operations.values():
        for level in entry.pool.ancestors():
            row = counts[level.name]
            row[0] += 1
            if entry.running and entry.lightweight:
                row[2] += 1
            elif entry.running:
                row[1] += 1
    return {name: (row[0], row[1], row[2]) for name, row in counts.items()}


def check_invariants(tree: PoolTree) -> list[str]:
    """Every structural invariant of the tree; an empty list when all hold."""
    problems: list[str] = []
    if live_counters(tree) != recount(tree):
        problems.append("counters differ from a recount")
    queued: dict[str, str] = {}
    for pool in tree.pools.values():
        for operation_id in pool.pending:
            if operation_id in queued:
                problems.append(f"operation {operation_id} queued twice")
            queued[operation_id] = pool.name
        for operation_id in pool.operations:
            if tree.operations[operation_id].pool is not pool:
                problems.append(f"operation {operation_id} listed in the wrong pool")
        if pool.parent is not None and pool.parent.children.get(pool.name) is not pool:
            problems.append(f"pool {pool.name} is not among its parent's children")
    for entry in tree.operations.values():
        expected = queued.get(entry.id)
        if entry.running and expected is not None:
            problems.append(f"running operation {entry.id} is queued")
        if not entry.running:
            if entry.pending_pool is None or expected != entry.pending_pool.name:
                problems.append(f"pending operation {entry.id} is not in its queue")
            elif not entry.pool.is_descendant_of(entry.pending_pool):
                problems.append(f"operation {entry.id} waits at a pool that is not its ancestor")
        if entry.running and entry.lightweight != tree.is_lightweight_in(
            entry.operation.type, entry.pool
        ):
            problems.append(f"operation {entry.id} has a stale lightweight flag")
    for pool in tree.pools.values():
        if pool.is_ephemeral and not pool.operations and not pool.children:
            problems.append(f"empty ephemeral pool {pool.name} was not removed")
    return problems
