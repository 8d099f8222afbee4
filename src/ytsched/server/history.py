"""A bounded history of fair shares, usage and demand, for the Web UI's charts over time.

The orchid only shows the present; people want to see how a pool's usage follows its fair share,
how an integral pool's volume drains, how an operation climbed to its share.  So after a
fair-share update the service samples, at most once per ``period`` seconds, every pool's and
operation's dominant shares from the update's result (the numbers the orchid shows as
``fair_share_ratio``, ``usage_ratio``, ``demand_ratio``, ``accumulated_resource_ratio_volume``).

Memory is bounded whatever the cluster does:

* all series share one ring of ``capacity`` sample times; each series is a flat ``array('d')``
  of ``capacity x width`` doubles written in place (8 bytes a value, no per-sample objects), so a
  500-pool tree with the default 720 samples costs ~12 MB;
* a pool's series is dropped when the pool disappears from its tree;
* an operation's series is frozen when the operation leaves the update (finished), trimmed to its
  valid samples, and kept among at most ``finished_operations`` frozen ones (oldest evicted).

Values missing at a sample (an element absent from one update) are NaN and come out as ``null``,
which the chart draws as a gap.
"""

from __future__ import annotations

import math
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ytsched.fairshare.model import IntegralGuaranteeType
from ytsched.resources import min_resource_ratio, scale_amounts, vscale

if TYPE_CHECKING:
    from ytsched.fairshare.elements import Element
    from ytsched.fairshare.update import UpdateResult
    from ytsched.pooltree import PoolTrees

POOL_FIELDS = ("fair_share", "usage", "demand", "volume", "capacity")
"""Per pool: dominant fair share, usage and demand shares; for integral pools the accumulated
ratio volume and the pool's capacity (both in cluster-share x seconds, NaN otherwise)."""
OPERATION_FIELDS = ("fair_share", "usage", "demand")

NAN = math.nan


def _clean(value: float) -> float | None:
    """JSON has no NaN: a missing sample is ``null``."""
    return None if math.isnan(value) else value


class Series:
    """``width`` values per sample in a ring aligned with :class:`History`'s sample ring."""

    __slots__ = ("first", "last", "values", "width")

    def __init__(self, capacity: int, width: int, first: int) -> None:
        self.width = width
        self.values = array("d", [NAN]) * (capacity * width)
        self.first = first
        """Global index of the first sample written (earlier slots are not this series')."""
        self.last = first - 1

    def write(self, index: int, capacity: int, row: tuple[float, ...]) -> None:
        start = (index % capacity) * self.width
        self.values[start : start + self.width] = array("d", row)
        self.last = index


@dataclass(slots=True)
class Frozen:
    """A finished operation's samples, copied out of the ring (oldest first, flat rows)."""

    times: array[float]
    values: array[float]
    width: int

    def rows(self) -> list[tuple[float, ...]]:
        width = self.width
        return [tuple(self.values[i * width : (i + 1) * width]) for i in range(len(self.times))]


class History:
    """Samples of pools and operations of every tree, bounded in size (see the module doc)."""

    def __init__(
        self,
        trees: PoolTrees,
        *,
        capacity: int = 720,
        period: float = 5.0,
        finished_operations: int = 100,
    ) -> None:
        if capacity < 2:
            raise ValueError("history capacity must be at least 2 samples")
        if period < 0 or finished_operations < 0:
            raise ValueError("history period and finished-operation count must be >= 0")
        self.trees = trees
        self.capacity = capacity
        self.period = period
        self.finished_limit = finished_operations
        self.times = array("d", [NAN]) * capacity
        self.count = 0
        """Samples taken so far (the next sample's global index)."""
        self.last_time: float | None = None
        self.pools: dict[tuple[str, str], Series] = {}
        self.operations: dict[tuple[str, str], Series] = {}
        self.finished: OrderedDict[tuple[str, str], Frozen] = OrderedDict()

    # --- recording ------------------------------------------------------------------------

    def due(self, now: float) -> bool:
        """Whether a sample is due at ``now`` (none was taken less than ``period`` ago)."""
        return self.last_time is None or now - self.last_time >= self.period

    def record(self, now: float) -> bool:
        """Take a sample from every tree's last update, unless one was taken < period ago."""
        if not self.due(now):
            return False
        for _ in self.sample(now):
            pass
        return True

    def sample(self, now: float, slice_size: int = 0) -> Iterator[None]:
        """Take a sample (when :meth:`due`), yielding after every ``slice_size`` elements (0:
        never), so that the service can serve requests in between: at thousands of
        operations a sample takes tens of milliseconds.  Between slices the sample is partly
        written: a reader sees the elements not yet written end one sample earlier."""
        index = self.count
        self.times[index % self.capacity] = now
        self.count += 1
        self.last_time = now
        seen_pools: set[tuple[str, str]] = set()
        seen_operations: set[tuple[str, str]] = set()
        written = 0
        for tree_name, tree in list(self.trees.trees.items()):
            result = tree.last_result
            if result is None:
                continue
            for name, element in result.pools.items():
                key = (tree_name, name)
                seen_pools.add(key)
                self._series(self.pools, key, len(POOL_FIELDS), index).write(
                    index, self.capacity, _pool_row(element, result)
                )
            for op_id, element in result.operations.items():
                key = (tree_name, op_id)
                seen_operations.add(key)
                self._series(self.operations, key, len(OPERATION_FIELDS), index).write(
                    index, self.capacity, _shares(element)
                )
                written += 1
                if slice_size and written % slice_size == 0:
                    yield
        for key in [k for k in self.pools if k not in seen_pools]:
            del self.pools[key]
        for key in [k for k in self.operations if k not in seen_operations]:
            self._freeze(key)

    def _series(
        self, table: dict[tuple[str, str], Series], key: tuple[str, str], width: int, index: int
    ) -> Series:
        series = table.get(key)
        if series is None:
            series = table[key] = Series(self.capacity, width, index)
        return series

    def _freeze(self, key: tuple[str, str]) -> None:
        """An operation left the update: keep its samples outside the ring, bounded in number."""
        series = self.operations.pop(key)
        if self.finished_limit == 0:
            return
        times, rows = self._read(series)
        values = array("d", [value for row in rows for value in row])
        self.finished[key] = Frozen(array("d", times), values, series.width)
        self.finished.move_to_end(key)
        while len(self.finished) > self.finished_limit:
            self.finished.popitem(last=False)

    # --- reading --------------------------------------------------------------------------

    def _read(self, series: Series) -> tuple[list[float], list[tuple[float, ...]]]:
        """The series' samples still in the ring, oldest first."""
        start = max(series.first, self.count - self.capacity)
        times: list[float] = []
        rows: list[tuple[float, ...]] = []
        width = series.width
        for index in range(start, series.last + 1):
            slot = index % self.capacity
            times.append(self.times[slot])
            base = slot * width
            rows.append(tuple(series.values[base : base + width]))
        return times, rows

    def pool(self, tree: str, pool: str) -> dict[str, Any] | None:
        """``{times, fair_share, usage, demand, volume, capacity}`` or None if never sampled."""
        series = self.pools.get((tree, pool))
        if series is None:
            return None
        times, rows = self._read(series)
        return _columns(times, rows, POOL_FIELDS)

    def operation(self, tree: str, operation_id: str) -> dict[str, Any] | None:
        key = (tree, operation_id)
        series = self.operations.get(key)
        if series is not None:
            times, rows = self._read(series)
        elif key in self.finished:
            frozen = self.finished[key]
            times, rows = list(frozen.times), frozen.rows()
        else:
            return None
        return _columns(times, rows, OPERATION_FIELDS)

    def operation_trees(self, operation_id: str) -> list[str]:
        """Trees in which an operation has (live or frozen) samples."""
        names = {t for t, op in self.operations if op == operation_id}
        names.update(t for t, op in self.finished if op == operation_id)
        return sorted(names)

    def size(self) -> int:
        """Values held (for tests and the docs' memory estimate)."""
        live = sum(len(s.values) for s in (*self.pools.values(), *self.operations.values()))
        frozen = sum(len(f.times) + len(f.values) for f in self.finished.values())
        return live + frozen + len(self.times)


def _shares(element: Element) -> tuple[float, float, float]:
    return (
        max(element.fair_share.total),
        max(element.usage_share),
        max(element.demand_share),
    )


def _pool_row(element: Element, result: UpdateResult) -> tuple[float, ...]:
    """The orchid's dominant shares, and for integral pools its ratio volume and capacity."""
    fair, usage, demand = _shares(element)
    if element.pool is None or element.integral_type is IntegralGuaranteeType.NONE:
        return (fair, usage, demand, NAN, NAN)
    total = result.total_resource_limits
    capacity = vscale(
        scale_amounts(total, element.resource_flow_ratio),
        result.options.integral_pool_capacity_saturation_period,
    )
    return (
        fair,
        usage,
        demand,
        min_resource_ratio(element.integral.accumulated_volume, total),
        min_resource_ratio(capacity, total),
    )


def _columns(
    times: list[float], rows: list[tuple[float, ...]], fields: tuple[str, ...]
) -> dict[str, Any]:
    data: dict[str, Any] = {"times": times}
    for position, name in enumerate(fields):
        data[name] = [_clean(row[position]) for row in rows]
    return data
