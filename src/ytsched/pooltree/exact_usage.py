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

import struct
from typing import TYPE_CHECKING

from ytsched.resources import Vector

if TYPE_CHECKING:
    from ytsched.pooltree.operations import Job

LARGEST_EXACT = 2**53
"""The largest total whose every partial sum of non-negative integers is a double."""


FIELD_BITS = 128
"""Width of one resource's field in a packed sum (see :class:`ExactUsage`)."""

_FIELD = 1 << FIELD_BITS
_HALF = _FIELD >> 1
_MASK = _FIELD - 1


_ALL_BYTES = 5 * FIELD_BITS // 8
_ALL_FIELDS = 1 << (5 * FIELD_BITS)
_ABOVE_EXACT = sum(((_FIELD - 1) >> 53 << 53) << (FIELD_BITS * i) for i in range(5))
"""In each field, the bits from 53 up.  A packed value ``p`` with ``0 <= p <`` 2**640 and none
of these bits set has every field in [0, 2**53), as :func:`unpack` gives them: a field ``f``
in [-2**127, 0) would occupy its bits as ``2**128 + f``, which has bit 127 set (so does the
top field of a negative ``p``), so no field borrowed and each is its bits' value (below
2**53, so exact as a double and within :data:`LARGEST_EXACT`)."""

_LOW_WORDS = struct.Struct("<" + "Q8x" * 5)
"""The low 64 bits of each of the five 128-bit fields of a packed value's 80 bytes."""


def pack(values: tuple[int, int, int, int, int]) -> int:
    """Five integers as one: ``sum(values[i] << (FIELD_BITS * i))``.

    Sums and differences of packed values are the packed sums and differences of their
    fields, exactly, as long as every field stays within ``[-2**127, 2**127)``: a field is
    the sum of the resources of running jobs, each at most :data:`LARGEST_EXACT` (2**53),
    so that takes more than 2**74 jobs."""
    return (
        values[0]
        + (values[1] << FIELD_BITS)
        + (values[2] << (2 * FIELD_BITS))
        + (values[3] << (3 * FIELD_BITS))
        + (values[4] << (4 * FIELD_BITS))
    )


def unpack(packed: int) -> list[int]:
    """The five (signed) fields of a packed sum (the inverse of :func:`pack`)."""
    fields = []
    for _ in range(5):
        low = packed & _MASK
        if low >= _HALF:
            low -= _FIELD
        fields.append(low)
        packed = (packed - low) >> FIELD_BITS
    return fields


class ExactUsage:
    """Per job tree (``None``: jobs of no particular tree, counted in every tree), the
    integer sums of the resources of the running jobs whose usage is not released.

    ``Operation`` calls :meth:`started`, :meth:`ended` and :meth:`released` where the jobs
    and their flags change; :attr:`jobs` counts the running jobs it was told of, so that a
    job added to ``running_jobs`` another way (a revived operation) shows as a different
    count and the sums are not used (:meth:`usage`).

    The five sums of a tree are kept as one Python integer (:func:`pack`): a start or an end
    is then one integer addition instead of five list updates (this runs for every job that
    starts or ends), and :meth:`usage` adds the tree's and the shared sums in one step."""

    __slots__ = ("_checked", "_checked_packed", "exact", "jobs", "sums")

    def __init__(self) -> None:
        self.sums: dict[str | None, int] = {}
        """Per tree, the packed sums (:func:`unpack` gives the five integers)."""
        self.jobs = 0
        self.exact = True
        """Every job counted had integral non-negative resources no larger than
        :data:`LARGEST_EXACT` (once false, it stays false)."""
        self._checked: Vector | None = None
        self._checked_packed = 0
        """The last resources vector that passed the integrality test, and its packed
        integers: the jobs of a task share their task's (immutable) vector, so the test
        and the conversions run once per vector instead of once per job start and end."""

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
            packed = self._checked_packed
        else:
            for value in resources:
                if not (value.is_integer() and 0.0 <= value <= LARGEST_EXACT):
                    self.exact = False
                    self.sums.clear()
                    return
            packed = pack(
                (
                    int(resources[0]),
                    int(resources[1]),
                    int(resources[2]),
                    int(resources[3]),
                    int(resources[4]),
                )
            )
            self._checked = resources
            self._checked_packed = packed
        sums = self.sums
        if sign > 0:
            sums[tree] = sums.get(tree, 0) + packed
        else:
            sums[tree] = sums.get(tree, 0) - packed

    def usage(self, tree: str, running: int) -> Vector | None:
        """The usage in ``tree`` (the fold from ``ZERO`` over the jobs of ``tree`` and of no
        tree, bit for bit) of an operation with ``running`` running jobs, or ``None`` when
        the sums cannot give it: a job was not integral, a job was not counted (``running``
        is not :attr:`jobs`), or a total is above :data:`LARGEST_EXACT`."""
        if not self.exact or running != self.jobs:
            return None
        sums = self.sums
        packed = sums.get(tree, 0) + sums.get(None, 0)
        if 0 <= packed < _ALL_FIELDS and not packed & _ABOVE_EXACT:
            # Every field in [0, 2**53) (see :data:`_ABOVE_EXACT`): the fields are the
            # packed value's bytes, read in one call instead of :func:`unpack`'s loop.
            t0, t1, t2, t3, t4 = _LOW_WORDS.unpack(packed.to_bytes(_ALL_BYTES, "little"))
            return (float(t0), float(t1), float(t2), float(t3), float(t4))
        totals = unpack(packed)
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
