"""A tree's operations' engine inputs from its last snapshot, and which may have changed since.

At every update ``ytsched.pooltree.snapshot.to_snapshot`` produces one
:class:`~ytsched.fairshare.model.OperationSpec` per operation of the tree; between two updates
most operations (~92% in the simulator's default day) had no job start or end, no usage
released, no state, pool, weight or limits change.  Checking each one's inputs is ~0.4 µs per
operation per update; this record lets the snapshot visit only the operations marked changed.

What a spec is computed from (``snapshot._spec_inputs``), and how each reaches the marks:

* the operation's jobs, tasks and usage flags: ``Operation.start_job``, ``_end_job`` and
  ``release_job_usage``, the only changes of them (the same argument as the memos':
  ``snapshot._memoized_usage``), mark the operation; so does a state change
  (``Operation._transition``, the only assignment of ``state`` after construction).  The spec
  object, type and start time of an operation are never replaced after construction;
* the tree's entry (pool, weight, limits, running): ``TreeOperation.__setattr__`` marks on
  every assignment of these fields;
* the pool's name: the snapshot compares its pools (objects and names, in order) with the
  last ones and rebuilds every operation's spec when they differ (a rename or a new pool);
* which operations the tree holds, in which order: compared with the last entries (by
  identity); an entry not seen before gets its spec built, registers :attr:`marks` in its
  operation, and the others keep theirs.

Each of these adds the operation's id to its ``change_marks``, which the snapshot sets to
:attr:`marks` (or to a set forwarding to several trees' marks) when it first builds the
operation's spec in this tree.
An operation not marked since the last snapshot therefore has the very inputs it had then,
and its spec from then is equal, field by field and bit for bit, to a fresh one
(``snapshot._spec_inputs``).  Marks are a superset (a mark for a change that was undone, or for
another tree's entry, only costs one rebuild, which reuses the memoized spec when its inputs
turn out equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ytsched.pooltree.operations import NO_MARKS

if TYPE_CHECKING:
    from ytsched.fairshare.model import OperationSpec
    from ytsched.pooltree.pool import Pool, TreeOperation


class OperationInputs:
    """One tree's operations' specs at its last snapshot and the marks set since.

    :attr:`entries` is ``None`` until a snapshot completed (and while one runs: a snapshot
    interrupted by an exception leaves it ``None``, so the next one rebuilds everything)."""

    __slots__ = ("by_entry", "entries", "marks", "pool_names", "pools", "positions", "specs")

    def __init__(self) -> None:
        self.marks: set[str] = set()
        """Ids of the operations whose inputs may have changed since the last snapshot."""
        self.entries: list[TreeOperation] | None = None
        """The tree's entries at the last snapshot, in order."""
        self.specs: list[OperationSpec] = []
        """Their specs, in the same order (the last snapshot's operations)."""
        self.positions: dict[str, int] = {}
        """Operation id to its position in :attr:`entries`."""
        self.by_entry: dict[TreeOperation, OperationSpec] = {}
        """Entry (by identity) to its spec."""
        self.pools: list[Pool] = []
        """The tree's pools at the last snapshot, in pre-order."""
        self.pool_names: list[str] = []
        """Their names then."""

    def register(self, entry: TreeOperation) -> None:
        """Have the entry's operation mark :attr:`marks` from now on (idempotent): its
        ``change_marks`` become :attr:`marks` (the operation is in no other tree's), or a
        :class:`FanOutMarks` over the trees' marks."""
        operation = entry.operation
        current = operation.change_marks
        marks = self.marks
        if current is marks:
            return
        if current is NO_MARKS:
            operation.change_marks = marks
        elif isinstance(current, FanOutMarks):
            if not any(target is marks for target in current.targets):
                current.targets.append(marks)
        else:
            operation.change_marks = FanOutMarks([current, marks])


class FanOutMarks(set[str]):
    """The change marks of an operation in several trees: ``add`` adds to each tree's marks
    (the set itself stays empty)."""

    __slots__ = ("targets",)

    def __init__(self, targets: list[set[str]]) -> None:
        super().__init__()
        self.targets = targets

    def add(self, element: str) -> None:
        for target in self.targets:
            target.add(element)
