"""An operation's usage as exact integer sums, kept as its jobs start, end and release usage.

The engine input reads each operation's usage in a tree: the left fold, in job order from
``ZERO``, of the resources of its running jobs there whose usage is not released
(``Operation.resource_usage``).  When a job ends that fold must be done again over every
running job, in floating point, because removing a term from a rounded sum is not exact in
general.  It is when every term is a non-negative integer: if the exact total is at most
2**53, every partial sum of the fold, in any order, is an integer no larger than the total,
hence a double, so every addition is exact and the fold *is* the exact total.  Resources are
integral in practice (slots, bytes, whole cores), so keeping the total as Python integers,
updated per job, gives the fold bit for bit without visiting the jobs
(``ytsched.pooltree.snapshot._memoized_usage``).  One job with another resource makes the
operation's sums unusable for good (the fold is then done as before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ytsched.resources import Vector

if TYPE_CHECKING:
    from ytsched.pooltree.operations import Job

LARGEST_EXACT = 2**53
"""The largest total whose every partial sum of non-negative integers is a double."""


class ExactUsage:
    """Per job tree (``None``: jobs of no particular tree, counted in every tree), the
    integer sums of the resources of the running jobs whose usage is not released.

    ``Operation`` calls :meth:`started`, :meth:`ended` and :meth:`released` where the jobs
    and their flags change; :attr:`jobs` counts the running jobs it was told of, so that a
    job added to ``running_jobs`` another way (a revived operation) shows as a different
    count and the sums are not used (:meth:`usage`)."""

    __slots__ = ("_checked", "_checked_ints", "exact", "jobs", "sums")

    def __init__(self) -> None:
        self.sums: dict[str | None, list[int]] = {}
        self.jobs = 0
        self.exact = True
        """Every job counted had integral non-negative resources no larger than
        :data:`LARGEST_EXACT` (once false, it stays false)."""
        self._checked: Vector | None = None
        self._checked_ints: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
        """The last resources vector that passed the integrality test, and its integers:
        the jobs of a task share their task's (immutable) vector, so the test and the
        conversions run once per vector instead of once per job start and end."""

    def started(self, job: Job) -> None:
        """A new running job (its usage counts)."""
        self.jobs += 1
        if self.exact:
            self._add(job.tree, job.resources, 1)

    def ended(self, job: Job) -> None:
        """A running job ended (counted, unless its usage was released before)."""
        self.jobs -= 1
        if self.exact and not job.usage_released:
            self._add(job.tree, job.resources, -1)

    def released(self, job: Job) -> None:
        """A running job's usage stopped counting (called once, when the flag turns true)."""
        if self.exact:
            self._add(job.tree, job.resources, -1)

    def _add(self, tree: str | None, resources: Vector, sign: int) -> None:
        if resources is self._checked:
            ints = self._checked_ints
        else:
            for value in resources:
                if not (value.is_integer() and 0.0 <= value <= LARGEST_EXACT):
                    self.exact = False
                    self.sums.clear()
                    return
            ints = (
                int(resources[0]),
                int(resources[1]),
                int(resources[2]),
                int(resources[3]),
                int(resources[4]),
            )
            self._checked = resources
            self._checked_ints = ints
        sums = self.sums.get(tree)
        if sums is None:
            sums = self.sums[tree] = [0, 0, 0, 0, 0]
        if sign > 0:
            sums[0] += ints[0]
            sums[1] += ints[1]
            sums[2] += ints[2]
            sums[3] += ints[3]
            sums[4] += ints[4]
        else:
            sums[0] -= ints[0]
            sums[1] -= ints[1]
            sums[2] -= ints[2]
            sums[3] -= ints[3]
            sums[4] -= ints[4]

    def usage(self, tree: str, running: int) -> Vector | None:
        """The usage in ``tree`` (the fold from ``ZERO`` over the jobs of ``tree`` and of no
        tree, bit for bit) of an operation with ``running`` running jobs, or ``None`` when
        the sums cannot give it: a job was not integral, a job was not counted (``running``
        is not :attr:`jobs`), or a total is above :data:`LARGEST_EXACT`."""
        if not self.exact or running != self.jobs:
            return None
        own = self.sums.get(tree)
        shared = self.sums.get(None)
        totals = [0, 0, 0, 0, 0]
        for sums in (own, shared):
            if sums is not None:
                for index in range(5):
                    totals[index] += sums[index]
        for total in totals:
            if total > LARGEST_EXACT:
                return None
        return (
            float(totals[0]),
            float(totals[1]),
            float(totals[2]),
            float(totals[3]),
            float(totals[4]),
        )
