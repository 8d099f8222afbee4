"""A live pool of a tree: configuration, place in the hierarchy, counters and pending queue.

Counters follow ``TSchedulerCompositeElement`` in
``yt/yt/server/scheduler/strategy/pool_tree_element.cpp``; every counter covers the whole
subtree (an operation counts in its pool and in every ancestor up to the root):

* ``operation_count``: started operations, running or pending;
* ``running_operation_count``: running operations that are not lightweight;
* ``lightweight_running_operation_count``: running lightweight operations.

``pending`` lists the operations waiting *at this pool*, i.e. for which this pool was the lowest
one whose running limit was reached, in insertion order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ytsched.config.pool import PoolConfig
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.pooltree.operations import Operation
from ytsched.resources import ZERO, Vector


@dataclass(eq=False, slots=True)
class Pool:
    name: str
    parent: Pool | None
    config: PoolConfig
    """The pool's own attributes (for an ephemeral pool: derived from its parent)."""
    effective: PoolConfig
    """``config`` with presets applied: what every rule reads."""
    is_ephemeral: bool = False
    ephemeral_user: str | None = None
    """Owner of an ephemeral pool created under a default parent (counts toward the limit)."""
    children: dict[str, Pool] = field(default_factory=dict)
    operations: dict[str, None] = field(default_factory=dict)
    """Operations placed directly in this pool, in attach order."""
    pending: list[str] = field(default_factory=list)
    operation_count: int = 0
    running_operation_count: int = 0
    lightweight_running_operation_count: int = 0
    slot_indices: set[int] = field(default_factory=set)
    accumulated_resource_volume: Vector = ZERO
    last_integral_share_ratio: float = 0.0

    @property
    def is_root(self) -> bool:
        return self.parent is None

    def ancestors(self) -> Iterator[Pool]:
        """This pool, its parent, ..., the root."""
        pool: Pool | None = self
        while pool is not None:
            yield pool
            pool = pool.parent

    def is_descendant_of(self, other: Pool) -> bool:
        return any(pool is other for pool in self.ancestors())

    @property
    def full_path(self) -> str:
        """``/parent/child`` as in YTsaurus orchid (the root is ``/``)."""
        names = [pool.name for pool in self.ancestors() if not pool.is_root]
        return "/" + "/".join(reversed(names))

    @property
    def parent_name(self) -> str | None:
        return self.parent.name if self.parent is not None else None

    def allocate_slot_index(self) -> int:
        """The smallest index not used by an operation of this pool."""
        index = 0
        while index in self.slot_indices:
            index += 1
        self.slot_indices.add(index)
        return index

    def descendants(self) -> Iterator[Pool]:
        """Pre-order: this pool, then its subtrees in child insertion order."""
        stack = [self]
        while stack:
            pool = stack.pop()
            yield pool
            stack.extend(reversed(list(pool.children.values())))


def new_root() -> Pool:
    config = PoolConfig()
    return Pool(name=ROOT_POOL_NAME, parent=None, config=config, effective=config)


_INPUT_FIELDS = frozenset(("pool", "weight", "resource_limits", "running"))
"""The fields of :class:`TreeOperation` that ``ytsched.pooltree.snapshot`` reads."""


@dataclass(eq=False, slots=True)
class TreeOperation:
    """An operation as one tree sees it: its pool there, weight, limits and running state.

    ``running`` is false while the operation waits for a running-operation limit; it then sits
    in ``pending_pool.pending`` (the lowest pool whose limit was reached).  ``lightweight`` is
    meaningful only while running.  ``pending_seq`` orders pending operations tree-wide.
    """

    operation: Operation
    pool: Pool
    weight: float | None
    resource_limits: ResourceAmounts | None
    slot_index: int
    running: bool = False
    lightweight: bool = False
    pending_pool: Pool | None = None
    pending_seq: int | None = None

    def __setattr__(self, name: str, value: object) -> None:
        """Set a field; a field the operation's engine input reads (pool, weight, limits,
        running) marks the operation changed (``Operation.change_marks``), so that the next
        snapshot rebuilds its input (``ytsched.pooltree.input_marks``)."""
        object.__setattr__(self, name, value)
        if name in _INPUT_FIELDS:
            operation = self.operation
            operation.change_marks.add(operation.id)

    @property
    def id(self) -> str:
        return self.operation.id
