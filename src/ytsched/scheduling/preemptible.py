"""Which allocations of an operation may be preempted: the prefix rule.

Follows ``TOperationSharedState::DoUpdatePreemptibleAllocationsList`` in
``yt/yt/server/scheduler/strategy/policy/operation_shared_state.cpp`` and
``PublishFairShareAtOperation`` / ``SortAllocationsWithPreemptionInfo`` in
``strategy/policy/scheduling_policy_detail.cpp``.

An operation's allocations form one sequence in start order, cut into three consecutive classes:
``[non_preemptible | aggressively_preemptible | preemptible]``.  With ``cum(a)`` the usage of
all allocations *before* ``a``:

* ``a`` is non-preemptible iff ``cum(a)`` is *below* ``fair_share x
  aggressive_preemption_satisfaction_threshold``;
* otherwise aggressively preemptible iff ``cum(a)`` is below ``fair_share x
  preemption_satisfaction_threshold``;
* otherwise preemptible.

"Below a bound" means the bound strictly dominates the usage share on non-blocked resources,
*or* the usage is strictly below ``non_preemptible_resource_usage_threshold`` in every resource
(unnamed resources unlimited; an empty threshold never protects anything).  Because only the
usage *before* an allocation counts, the allocation that crosses a boundary stays in the lower
class, and an operation at or below its fair share has no preemptible allocation at all.  An
operation whose fair share equals its (non-zero) demand within 1e-9 is fully satisfied: its
second bound is infinite, so none of its allocations is preemptible.

YTsaurus keeps three linked lists and moves allocations across the boundaries after every
change; since "below" is monotone in the usage, that is the same as the prefix rule above.  We
keep one list with two boundary indices and the usage before each boundary: appending and
releasing usage move the boundaries in amortised constant time, a fair-share publication
recomputes the list once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from ytsched.resources import CPU_INDEX, EPSILON, ZERO, Vector
from ytsched.scheduling.satisfaction import ShareView, strictly_below
from ytsched.scheduling.selector import restart as native_restart
from ytsched.scheduling.selector import restart_setup as native_restart_setup
from ytsched.scheduling.selector import scan as native_scan
from ytsched.scheduling.selector import vadd as native_vadd
from ytsched.scheduling.selector import vneg

if TYPE_CHECKING:
    from ytsched.scheduling.nodes import Allocation


class PreemptionStatus(IntEnum):
    """``EAllocationPreemptionStatus``, ordered from least to most preemptible."""

    NON_PREEMPTIBLE = 0
    AGGRESSIVELY_PREEMPTIBLE = 1
    PREEMPTIBLE = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class PreemptionLevel(IntEnum):
    """``EAllocationPreemptionLevel`` (without the SSD levels): the status, except that an
    aggressively preemptible allocation of an operation that does not allow aggressive
    preemption is not preemptible at all."""

    NON_PREEMPTIBLE = 0
    AGGRESSIVELY_PREEMPTIBLE = 1
    PREEMPTIBLE = 2

    @property
    def label(self) -> str:
        return self.name.lower()


def preemption_level(status: PreemptionStatus, aggressive_allowed: bool) -> PreemptionLevel:
    """``GetAllocationPreemptionLevel``."""
    if status is PreemptionStatus.PREEMPTIBLE:
        return PreemptionLevel.PREEMPTIBLE
    if status is PreemptionStatus.AGGRESSIVELY_PREEMPTIBLE and aggressive_allowed:
        return PreemptionLevel.AGGRESSIVELY_PREEMPTIBLE
    return PreemptionLevel.NON_PREEMPTIBLE


_NON_PREEMPTIBLE = (PreemptionStatus.NON_PREEMPTIBLE, PreemptionLevel.NON_PREEMPTIBLE)
_AGGRESSIVE_ALLOWED = (
    PreemptionStatus.AGGRESSIVELY_PREEMPTIBLE,
    PreemptionLevel.AGGRESSIVELY_PREEMPTIBLE,
)
_AGGRESSIVE_NOT_ALLOWED = (
    PreemptionStatus.AGGRESSIVELY_PREEMPTIBLE,
    PreemptionLevel.NON_PREEMPTIBLE,
)
_PREEMPTIBLE = (PreemptionStatus.PREEMPTIBLE, PreemptionLevel.PREEMPTIBLE)
"""The (status, level) pairs :meth:`PreemptibleList.classify` returns (shared, immutable)."""


@dataclass(frozen=True, slots=True)
class CompiledBound:
    """``bound > usage / total + 1e-9`` on the relevant resources, on absolute usage.

    ``checks`` are ``(resource, limit)`` pairs meaning ``usage[resource] < limit``; resources
    with a zero total have share 0 and give the constant ``constant``.  With every resource
    blocked one passing check suffices, otherwise all must pass
    (:meth:`~ytsched.scheduling.satisfaction.ShareView.strictly_dominates_non_blocked`).
    """

    checks: tuple[tuple[int, float], ...]
    any_of: bool
    constant: bool

    @staticmethod
    def create(view: ShareView, bound: Vector) -> CompiledBound:
        relevant = range(5) if view.all_blocked else [i for i in range(5) if not view.blocked[i]]
        checks: list[tuple[int, float]] = []
        constant = not view.all_blocked
        for index in relevant:
            total = view.total[index]
            if total:
                checks.append((index, (bound[index] - EPSILON) * total))
                continue
            holds = bound[index] > EPSILON
            if view.all_blocked and holds:
                constant = True
            if not view.all_blocked and not holds:
                constant = False
        return CompiledBound(tuple(checks), view.all_blocked, constant)

    def holds(self, usage: Vector) -> bool:
        # Plain loops: this runs on every start and finish, and beats any()/all() generators.
        if self.any_of:
            if self.constant:
                return True
            for index, limit in self.checks:  # noqa: SIM110
                if usage[index] < limit:
                    return True
            return False
        if not self.constant:
            return False
        for index, limit in self.checks:  # noqa: SIM110
            if not usage[index] < limit:
                return False
        return True


@dataclass(frozen=True, slots=True)
class PreemptionBounds:
    """The boundaries of one operation's classes, published at a fair-share update.

    They depend on the view's fair share, demand share and total (and the thresholds) but
    not on its usage share: an update may publish the same object again while the
    operation's usage moved (see :meth:`PreemptibleList.publish`).
    """

    aggressive_bound: CompiledBound
    """``fair_share x aggressive_preemption_satisfaction_threshold``."""
    bound: CompiledBound | None
    """``fair_share x preemption_satisfaction_threshold``; ``None`` is infinite (the operation
    is fully satisfied and has no preemptible allocations)."""
    threshold: Vector | None
    """Absolute ``non_preemptible_resource_usage_threshold`` (unnamed resources infinite), or
    ``None`` when the threshold is empty."""

    @staticmethod
    def create(
        view: ShareView,
        *,
        preemption_satisfaction_threshold: float,
        aggressive_preemption_satisfaction_threshold: float,
        threshold: Vector | None,
    ) -> PreemptionBounds:
        # Written out (an update builds these for every operation whose shares moved): the
        # same comparisons as ``all(abs(fair[i] - demand[i]) <= EPSILON ...)`` and
        # ``all(d <= EPSILON ...)``, and both bounds' checks in one pass with
        # :meth:`CompiledBound.create`'s arithmetic (``compiled_bound`` is that function;
        # tests compare the two).
        f0, f1, f2, f3, f4 = view.fair_share
        d0, d1, d2, d3, d4 = view.demand_share
        fully_satisfied = (
            abs(f0 - d0) <= EPSILON
            and abs(f1 - d1) <= EPSILON
            and abs(f2 - d2) <= EPSILON
            and abs(f3 - d3) <= EPSILON
            and abs(f4 - d4) <= EPSILON
        )
        demand_is_zero = (
            d0 <= EPSILON and d1 <= EPSILON and d2 <= EPSILON and d3 <= EPSILON and d4 <= EPSILON
        )
        preemptible = not fully_satisfied or demand_is_zero
        aggressive = aggressive_preemption_satisfaction_threshold
        normal = preemption_satisfaction_threshold
        fair = (f0, f1, f2, f3, f4)
        all_blocked = view.all_blocked
        blocked = view.blocked
        total = view.total
        aggressive_checks: list[tuple[int, float]] = []
        normal_checks: list[tuple[int, float]] = []
        aggressive_constant = normal_constant = not all_blocked
        for index in range(5):
            if not all_blocked and blocked[index]:
                continue
            amount = total[index]
            share = fair[index]
            if amount:
                aggressive_checks.append((index, (share * aggressive - EPSILON) * amount))
                if preemptible:
                    normal_checks.append((index, (share * normal - EPSILON) * amount))
                continue
            if all_blocked:
                if share * aggressive > EPSILON:
                    aggressive_constant = True
                if share * normal > EPSILON:
                    normal_constant = True
            else:
                if not share * aggressive > EPSILON:
                    aggressive_constant = False
                if not share * normal > EPSILON:
                    normal_constant = False
        return PreemptionBounds(
            aggressive_bound=CompiledBound(
                tuple(aggressive_checks), all_blocked, aggressive_constant
            ),
            bound=(
                CompiledBound(tuple(normal_checks), all_blocked, normal_constant)
                if preemptible
                else None
            ),
            threshold=threshold,
        )

    @staticmethod
    def compiled(
        view: ShareView,
        *,
        preemption_satisfaction_threshold: float,
        aggressive_preemption_satisfaction_threshold: float,
        threshold: Vector | None,
    ) -> PreemptionBounds:
        """:meth:`create` from its definition (two :meth:`CompiledBound.create` calls): the
        reference the tests compare it with."""
        fair = view.fair_share
        demand = view.demand_share
        fully_satisfied = all(abs(fair[i] - demand[i]) <= EPSILON for i in range(5))
        demand_is_zero = all(d <= EPSILON for d in demand)
        preemptible = not fully_satisfied or demand_is_zero
        aggressive = aggressive_preemption_satisfaction_threshold
        normal = preemption_satisfaction_threshold
        return PreemptionBounds(
            aggressive_bound=CompiledBound.create(view, tuple(x * aggressive for x in fair)),  # type: ignore[arg-type]
            bound=(
                CompiledBound.create(view, tuple(x * normal for x in fair))  # type: ignore[arg-type]
                if preemptible
                else None
            ),
            threshold=threshold,
        )

    def below(self, usage: Vector, bound: CompiledBound | None) -> bool:
        """Is cumulative ``usage`` below ``bound`` (``isUsageBelowBounds``)?"""
        threshold = self.threshold
        if threshold is not None and strictly_below(usage, threshold):
            return True
        if bound is None:
            return True
        return bound.holds(usage)


class PreemptibleList:
    """One operation's allocations in start order, with the two class boundaries.

    Allocations ``[0, b1)`` are non-preemptible, ``[b1, b2)`` aggressively preemptible, the
    rest preemptible.  Removed allocations leave a ``None`` hole (usage 0) until the list is
    compacted.  Without bounds (before the operation's first update, or when it is disabled),
    every allocation reads as non-preemptible.
    """

    __slots__ = (
        "_b1",
        "_b2",
        "_changed",
        "_cum1",
        "_cum2",
        "_dead",
        "_exact",
        "_items",
        "_whole_usage",
        "bounds",
        "total",
    )

    def __init__(self) -> None:
        self._items: list[Allocation | None] = []
        self._b1 = 0
        self._b2 = 0
        self._cum1: Vector = ZERO
        self._cum2: Vector = ZERO
        self._dead = 0
        self.total: Vector = ZERO
        """Usage of all allocations in the list (preempted ones count 0)."""
        self.bounds: PreemptionBounds | None = None
        self._changed = True
        """Whether the boundaries or prefix sums may differ from what a publication of
        :attr:`bounds` computes from scratch (see :meth:`publish`)."""
        self._exact = True
        """Whether every usage appended was a vector of non-negative integers and every
        total (sum of the list's usages) stayed below 2**53: every prefix sum, and every
        prefix sum less some of its terms, is then an integer below 2**53, computed exactly
        in any order (see :meth:`_decreased_at` and :meth:`publish`).  Once off, it stays
        off."""
        self._whole_usage: Vector | None = None
        """The last usage :func:`_whole` accepted (held, so its identity stays its own): the
        allocations of a task share their task's immutable resources vector, so the test
        runs once per vector rather than once per allocation appended."""

    def _is_whole(self, usage: Vector) -> bool:
        """:func:`_whole`, remembering a vector that passes (see :attr:`_whole_usage`)."""
        if not _whole(usage):
            return False
        self._whole_usage = usage
        return True

    def __len__(self) -> int:
        return len(self._items) - self._dead

    def __iter__(self) -> Iterator[Allocation]:
        for item in self._items:
            if item is not None:
                yield item

    # --- classification -------------------------------------------------------------------

    def publish(self, bounds: PreemptionBounds | None) -> None:
        """New fair share (or none): reclassify everything.

        Publishing the very bounds object already published, when the list is not
        ``_changed``, does nothing: the list then holds exactly what a reclassification
        from scratch computes.  That reclassification is a function of the allocations'
        usages in order and of the bounds alone: ``b1`` is the first index whose prefix sum
        (a left fold from ``ZERO``, holes skipped) is not below the aggressive bound, ``cum1``
        that prefix sum, and likewise ``b2``/``cum2`` from ``b1`` on.  The incremental
        changes keep that: :meth:`append` continues the same folds from where they stopped
        (it only looks further when a loop stopped at the old end of the list, and ``below``
        is a pure function of the sum), and a removal or usage decrease at or after ``b2``
        touches neither boundary nor prefix sum (their loops stopped before it on a
        condition of the prefix alone).  Only a decrease before ``b2`` adjusts prefix sums by
        subtraction, which need not give the folded sum bit for bit: that sets
        ``_changed``.  Allocations' usages change only through :meth:`append`,
        :meth:`remove` and :meth:`usage_decreased` (the
        :class:`~ytsched.scheduling.ledger.Ledger` calls them; the incremental
        classification relies on that already).  While the list is :attr:`_exact`, that
        subtraction is exact too and sets nothing, and a publication of other bounds starts
        from the boundaries it has (:meth:`_restart`) instead of from the first allocation.

        A publication leaves the holes of removed allocations where they are (only
        :meth:`remove` compacts, once they are more than half of the list): a hole adds
        nothing to a prefix sum, so the first index whose prefix sum is not below a bound
        is never one just after a hole (the sum there was already not below one index
        earlier), except the end of the list; the boundaries are therefore the same
        positions among the live allocations with or without the holes, and every status
        is the same.  Holes stay between publications anyway (every rule above holds with
        them, ``tests/scheduling/test_preemptible_restart.py`` checks after every step); a
        compaction at each publication renumbered every allocation after the first hole,
        for each list that lost one since the last update.
        """
        if bounds is self.bounds and not self._changed:
            return
        if self._exact and not self._changed and bounds is not None and self.bounds is not None:
            self._restart(bounds)
            return
        self.bounds = bounds
        self._b1 = self._b2 = 0
        self._cum1 = self._cum2 = ZERO
        self._advance()
        self._changed = False

    def _restart(self, bounds: PreemptionBounds) -> None:
        """Publish ``bounds`` (other than :attr:`bounds`, on an exact list that is not
        ``_changed``), with the result of a publication from scratch, found from the
        boundaries and prefix sums the list has.

        The prefix sums are then exact left folds (an :attr:`_exact` list's subtractions
        are exact), and they are non-decreasing along the list in every resource (the
        usages are non-negative, and adding a non-negative double never decreases a sum).
        "Below" a bound is antitone in the sum (every test is ``sum < limit``), so along
        the list it holds on a prefix and fails from some index on: where it holds at a
        known prefix sum, it holds at every earlier index, and the scan from scratch would
        reach that index with that very sum.  The new non-preemptible boundary is
        therefore scanned for from the furthest known boundary whose sum is below the new
        aggressive bound, and the new aggressively preemptible boundary from the furthest of
        that boundary and the old one whose sum is below the new bound.  Holes add nothing to
        the sums, so the list need not be compacted first (see :meth:`publish`).

        When the old non-preemptible boundary's sum is not below the new aggressive bound
        (the common case: that sum is the first one not below the old bound, and a bound
        that moved a little still has it above), no later sum is below either, and the new
        boundary is at or before the old one: it is walked back to, each earlier prefix sum
        being the later one less the allocation's usage, while that sum is not below.  On an
        exact list every such difference is the left fold of the allocations before it, bit
        for bit (whole numbers below 2**53 subtract exactly, ``x - x`` is ``+0.0`` as the
        fold of zeros is, and a hole or a ``-0.0`` usage leaves the sum as it is); at the
        first allocation the sum is ``ZERO`` itself.  The walk stops at an index whose sum
        is not below with every earlier sum below, where the scan from scratch stops too.
        It visits the allocations between the two boundaries instead of all those before the
        new one (the restarts of the default day's first two hours: 11k instead of 355k).

        In code (:data:`_restart`, natively: "below" is :meth:`PreemptionBounds.below`)::

            if below(cum1, aggressive):
                if b2 > b1 and below(cum2, aggressive):
                    b1, cum1 = b2, cum2
                if b1 < len(items):
                    b1, cum1 = _scan(items, b1, cum1, threshold, aggressive)
            else:
                start = b1
                while b1 > 0:
                    item = items[b1 - 1]
                    earlier = cum1 if item is None else vsub(cum1, item.usage)
                    if below(earlier, aggressive):
                        break
                    b1, cum1 = b1 - 1, earlier
                if b1 == 0 and start > 0:
                    cum1 = ZERO
            if b2 <= b1 or not below(cum2, bound):
                b2, cum2 = b1, cum1
            if b2 < len(items):
                b2, cum2 = _scan(items, b2, cum2, threshold, bound)
        """
        self.bounds = bounds
        self._b1, self._cum1, self._b2, self._cum2 = _restart(
            self._items, self._b1, self._cum1, self._b2, self._cum2, bounds
        )

    def _advance(self, b1_may_move: bool = True) -> None:
        """Move the boundaries on as far as the prefix rule allows.

        Runs after every append and every decrease before ``b2``: a boundary already at the
        end of the list skips its :func:`_scan` call (the scan's loop would not run and would
        return its arguments unchanged), which is the common case of an operation below its
        fair share, all of whose allocations are non-preemptible.

        ``b1_may_move`` false (a decrease at or after ``b1``, which leaves ``cum1`` as it was)
        skips ``b1``'s scan as well: a ``b1`` before the end stopped where ``cum1`` is not
        below the aggressive bound (every scan, walk back and restart leaves it so, and the
        bounds change only by a publication), so with the same sum and bounds that scan
        would stop at once and return its arguments."""
        bounds = self.bounds
        if bounds is None:
            return
        items = self._items
        count = len(items)
        threshold = bounds.threshold
        b1 = self._b1
        cum1 = self._cum1
        if b1_may_move and b1 < count:
            b1, cum1 = _scan(items, b1, cum1, threshold, bounds.aggressive_bound)
            self._b1 = b1
            self._cum1 = cum1
        b2 = self._b2
        cum2 = self._cum2
        if b2 < b1:
            b2 = b1
            cum2 = cum1
        if b2 < count:
            b2, cum2 = _scan(items, b2, cum2, threshold, bounds.bound)
        self._b2 = b2
        self._cum2 = cum2

    def status(self, allocation: Allocation) -> PreemptionStatus:
        if self.bounds is None:
            return PreemptionStatus.NON_PREEMPTIBLE
        index = allocation.list_index
        if index < self._b1:
            return PreemptionStatus.NON_PREEMPTIBLE
        if index < self._b2:
            return PreemptionStatus.AGGRESSIVELY_PREEMPTIBLE
        return PreemptionStatus.PREEMPTIBLE

    def classify(
        self, allocation: Allocation, aggressive_allowed: bool
    ) -> tuple[PreemptionStatus, PreemptionLevel]:
        """``(status(allocation), preemption_level(status, aggressive_allowed))`` in one call
        (the preemptive stages ask it for every allocation of the node on each pass)."""
        if self.bounds is None:
            return _NON_PREEMPTIBLE
        index = allocation.list_index
        if index < self._b1:
            return _NON_PREEMPTIBLE
        if index < self._b2:
            return _AGGRESSIVE_ALLOWED if aggressive_allowed else _AGGRESSIVE_NOT_ALLOWED
        return _PREEMPTIBLE

    def counts(self) -> tuple[int, int, int]:
        """(non-preemptible, aggressively preemptible, preemptible) allocation counts."""
        result = [0, 0, 0]
        for item in self._items:
            if item is not None:
                result[self.status(item)] += 1
        return result[0], result[1], result[2]

    # --- changes --------------------------------------------------------------------------

    def append(self, allocation: Allocation) -> None:
        """A new allocation goes to the end of the sequence."""
        index = len(self._items)
        allocation.list_index = index
        self._items.append(allocation)
        u = allocation.usage
        t = self.total = native_vadd(self.total, u)
        if self._exact and not (
            t[0] < _LARGEST_EXACT
            and t[1] < _LARGEST_EXACT
            and t[2] < _LARGEST_EXACT
            and t[3] < _LARGEST_EXACT
            and t[4] < _LARGEST_EXACT
            and (u is self._whole_usage or self._is_whole(u))
        ):
            self._exact = False
        if self._b2 < index:
            return  # preemptible allocations exist already: the new one is one of them
        # :meth:`_advance` for a list whose ``b2`` stands at the new item, written out (runs
        # for most starts).  A scan stops either at the end of the list or where its prefix
        # sum is not below the bound, a pure function of that sum: a ``b1`` before the new
        # item stopped on its sum, which has not changed since (a decrease re-runs
        # ``_advance``, a publication starts over), so its scan would stop at once and is
        # skipped; the scans that remain get the same arguments.
        bounds = self.bounds
        if bounds is None:
            return
        items = self._items
        if self._b1 == index:
            b1, cum1 = _scan(items, index, self._cum1, bounds.threshold, bounds.aggressive_bound)
            if b1 > index:
                self._b1 = self._b2 = b1
                self._cum1 = self._cum2 = cum1
                return
        self._b2, self._cum2 = _scan(items, index, self._cum2, bounds.threshold, bounds.bound)

    def usage_decreased(self, allocation: Allocation, delta: Vector) -> None:
        """``allocation``'s usage went down by ``delta`` (a negative vector): later allocations
        may move to a lower class."""
        self._decreased_at(allocation.list_index, delta)

    def remove(self, allocation: Allocation, negated: Vector | None = None) -> None:
        """The allocation leaves the sequence (its place becomes a hole).

        ``negated``, when given, is ``vneg(allocation.usage)`` for a non-zero usage, which
        the caller (:meth:`Ledger.remove`, for every allocation that ends) computes for its
        own sums anyway: passed in, the negation runs once per end instead of twice."""
        index = allocation.list_index
        if index < 0 or index >= len(self._items) or self._items[index] is not allocation:
            return
        self._items[index] = None
        self._dead += 1
        allocation.list_index = -1
        if negated is not None:
            self._decreased_at(index, negated)
        else:
            usage = allocation.usage
            if usage != ZERO:
                self._decreased_at(index, vneg(usage))
        if self._dead > 32 and self._dead * 2 > len(self._items):
            self._compact()

    def _decreased_at(self, index: int, delta: Vector) -> None:
        # The sums as :func:`~ytsched.resources.vadd` computes them, natively (this runs for
        # every allocation that ends).
        self.total = native_vadd(self.total, delta)
        if index >= self._b2:
            return
        # Prefix sums adjusted by subtraction: exact on an exact list (integers below
        # 2**53, see _exact), else only a publication recomputes them exactly.
        if not self._exact:
            self._changed = True
        before_b1 = index < self._b1
        if before_b1:
            self._cum1 = native_vadd(self._cum1, delta)
        self._cum2 = native_vadd(self._cum2, delta)
        # ``_advance`` changes nothing when both boundaries stand at the end (``b1 <= b2 <=
        # len``: no scan runs and ``b2`` is not behind ``b1``), the common case of a list
        # with no preemptible allocation.
        count = len(self._items)
        if self._b1 < count or self._b2 < count:
            self._advance(before_b1)

    def _compact(self) -> None:
        """Drop the holes: every allocation's index becomes its position among the live
        ones, and each boundary the number of live allocations before it (the prefix sums
        stay: holes add nothing to them).

        Written with list primitives (the first hole found by ``index``, the holes before a
        boundary counted by ``count``): the indexes before the first hole stay as they are,
        and only the allocations after it are renumbered."""
        if not self._dead:
            return
        items = self._items
        first = items.index(None)
        b1 = self._b1
        b2 = self._b2
        if b1 > first:
            b1 -= items[first:b1].count(None)
        if b2 > first:
            b2 -= items[first:b2].count(None)
        alive = items[:first]
        alive.extend([item for item in items[first:] if item is not None])
        for index in range(first, len(alive)):
            alive[index].list_index = index  # type: ignore[union-attr]
        self._items = alive
        self._b1 = b1
        self._b2 = b2
        self._dead = 0


_LARGEST_EXACT = 2.0**53
"""Sums of non-negative integers (as doubles) strictly below this are exact; a sum that
would reach it is at least this after rounding, so the strict test catches it."""


def _whole(usage: Vector) -> bool:
    """Every component a non-negative integer (``-0.0`` counts: adding it changes no sum;
    ``x % 1.0`` is ``nan``, which is true, for an infinity or ``nan``)."""
    u0, u1, u2, u3, u4 = usage
    return (
        u0 >= 0.0
        and u1 >= 0.0
        and u2 >= 0.0
        and u3 >= 0.0
        and u4 >= 0.0
        and not (u0 % 1.0 or u1 % 1.0 or u2 % 1.0 or u3 % 1.0 or u4 % 1.0)
    )


_scan: Callable[
    [list[Allocation | None], int, Vector, Vector | None, CompiledBound | None],
    tuple[int, Vector],
] = native_scan
"""``_scan(items, index, cum, threshold, bound)``: ``while index < len(items) and
below(cum, bound): cum += items[index].usage; index += 1`` (a hole adds nothing), returning
``(index, cum)``.

Native (``scan`` in ``src/native/usage_sums.cpp``; this loop runs over every allocation of
every republished list and for most starts): :meth:`PreemptionBounds.below` and
:meth:`CompiledBound.holds` on the same prefix sums with the same comparisons in the same
order, each sum a left fold of the same additions (``tests/scheduling/test_update_reuse.py``
checks it against that loop)."""


native_restart_setup(ZERO)
_restart: Callable[
    [list[Allocation | None], int, Vector, int, Vector, PreemptionBounds],
    tuple[int, Vector, int, Vector],
] = native_restart
"""``_restart(items, b1, cum1, b2, cum2, bounds) -> (b1, cum1, b2, cum2)``: the boundaries
and prefix sums :meth:`PreemptibleList._restart` publishes (the loop in its docstring).

Native (``restart`` in ``src/native/preempt.cpp``; runs for each list republished with other
bounds, ~17 per update): its "below" test is :func:`_scan` over a list of one hole, which moves
on exactly when the sum is below (a hole adds nothing), so every test is ``_scan``'s, which are
:meth:`PreemptionBounds.below`'s, and its differences are ``vsub``'s
(``tests/scheduling/test_preemptible_restart.py`` checks every publication against one from
scratch, ``tests/scheduling/test_native_preempt.py`` the restart on lists with holes)."""


def preemption_sort_key(
    allocation: Allocation, status: PreemptionStatus
) -> tuple[int, int, int, float, int]:
    """``SortAllocationsWithPreemptionInfo``, ascending (preemption walks it reversed).

    By status; for statuses below preemptible, allocations using all of their cpu first
    (preempted allocations have a cpu gap); then by the start of preemptible progress, oldest
    first, unknown last.  Ties (unspecified in YTsaurus) go by start order.
    """
    gap = 0
    if status is not PreemptionStatus.PREEMPTIBLE:
        gap = 1 if allocation.usage[CPU_INDEX] < allocation.resources[CPU_INDEX] else 0
    start = allocation.preemptible_progress_start_time
    return (int(status), gap, 0 if start is not None else 1, start or 0.0, allocation.sequence)
