"""Per-pool time series sampled at every fair-share update.

The documentation's figures are about pools over time: usage against fair share and demand,
and the accumulated volume of integral pools.  After each update the sampler reads the update
result of every tree (what the orchid shows) and keeps, in the tree's main resource (absolute
amounts: cores for cpu), usage, demand, fair share, strong guarantee and, for integral pools,
the accumulated volume and its capacity.

Averages use every update; the stored points are thinned to at most ``max_points`` per series
(every k-th update) so that a long run stays small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.fairshare import native
from ytsched.fairshare.elements import Element
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree import PoolTrees
from ytsched.resources import RESOURCE_NAMES


@dataclass(slots=True)
class PoolSeries:
    """A pool's (or a traced operation's) values over time, in the tree's main resource."""

    tree: str
    pool: str
    """The pool name, or the operation id for an operation's series."""
    ephemeral: bool
    integral_type: str = "none"
    times: list[float] = field(default_factory=list)
    usage: list[float] = field(default_factory=list)
    demand: list[float] = field(default_factory=list)
    fair_share: list[float] = field(default_factory=list)
    guarantee: list[float] = field(default_factory=list)
    volume: list[float] = field(default_factory=list)
    capacity: list[float] = field(default_factory=list)
    usage_sum: float = 0.0
    demand_sum: float = 0.0
    fair_share_sum: float = 0.0
    guarantee_sum: float = 0.0
    usage_share_sum: float = 0.0
    fair_share_ratio_sum: float = 0.0
    guarantee_ratio_sum: float = 0.0
    samples: int = 0


@dataclass(slots=True)
class TreeSeries:
    name: str
    main_resource: str
    times: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    usage: list[float] = field(default_factory=list)
    updates: int = 0


class Sampler:
    """Collects :class:`PoolSeries` from the trees' last update results."""

    def __init__(
        self,
        expected_updates: int,
        max_points: int = 4000,
        traced_operations: frozenset[str] = frozenset(),
    ) -> None:
        self.stride = max(1, -(-expected_updates // max_points))
        self.pools: dict[tuple[str, str], PoolSeries] = {}
        self.operations: dict[tuple[str, str], PoolSeries] = {}
        """Series of the scenario's ``trace_operations`` (same fields as a pool's)."""
        self.traced = traced_operations
        self.trees: dict[str, TreeSeries] = {}
        self.updates = 0

    def sample(self, now: float, trees: PoolTrees) -> None:
        keep = self.updates % self.stride == 0
        self.updates += 1
        for name, tree in trees.trees.items():
            result = tree.last_result
            if result is None:
                continue
            index = RESOURCE_NAMES.index(tree.config.main_resource)
            saturation = tree.config.integral_guarantees.pool_capacity_saturation_period / 1000.0
            series = self.trees.get(name)
            if series is None:
                series = self.trees[name] = TreeSeries(name, tree.config.main_resource)
            series.updates += 1
            if keep:
                series.times.append(now)
                series.total.append(result.total_resource_limits[index])
                series.usage.append(result.root.resource_usage[index])
            self._pools(now, name, result, index, saturation, keep, trees)
            if self.traced:
                self._operations(now, name, result, index, keep)

    def _operations(
        self, now: float, tree_name: str, result: UpdateResult, index: int, keep: bool
    ) -> None:
        total = result.total_resource_limits[index]
        for operation_id in self.traced:
            element = result.operations.get(operation_id)
            if element is None:
                continue
            key = (tree_name, operation_id)
            series = self.operations.get(key)
            if series is None:
                series = self.operations[key] = PoolSeries(tree_name, operation_id, False)
            usage = element.resource_usage[index]
            fair_ratio = element.fair_share.total[index]
            series.usage_sum += usage
            series.fair_share_sum += fair_ratio * total
            series.usage_share_sum += usage / total if total > 0 else 0.0
            series.fair_share_ratio_sum += fair_ratio
            series.samples += 1
            if keep:
                series.times.append(now)
                series.usage.append(usage)
                series.demand.append(element.resource_demand[index])
                series.fair_share.append(fair_ratio * total)
                series.guarantee.append(element.strong_guarantee_share[index] * total)
                series.volume.append(0.0)
                series.capacity.append(0.0)

    def _pools(
        self,
        now: float,
        tree_name: str,
        result: UpdateResult,
        index: int,
        saturation: float,
        keep: bool,
        trees: PoolTrees,
    ) -> None:
        total = result.total_resource_limits[index]
        live = trees.trees[tree_name].pools
        for name, usage, demand, fair_ratio, guarantee_ratio, integral in pool_values(
            result, index
        ):
            key = (tree_name, name)
            series = self.pools.get(key)
            if series is None:
                pool = live.get(name)
                series = self.pools[key] = PoolSeries(
                    tree=tree_name,
                    pool=name,
                    ephemeral=pool is not None and pool.is_ephemeral,
                )
            fair = fair_ratio * total
            guarantee = guarantee_ratio * total
            series.usage_sum += usage
            series.demand_sum += demand
            series.fair_share_sum += fair
            series.guarantee_sum += guarantee
            series.usage_share_sum += usage / total if total > 0 else 0.0
            series.fair_share_ratio_sum += fair_ratio
            series.guarantee_ratio_sum += guarantee_ratio
            series.samples += 1
            if integral is not None:
                series.integral_type = integral[0]
            if keep:
                series.times.append(now)
                series.usage.append(usage)
                series.demand.append(demand)
                series.fair_share.append(fair)
                series.guarantee.append(guarantee)
                if integral is not None:
                    series.volume.append(integral[1])
                    series.capacity.append(integral[2] * total * saturation)
                else:
                    series.volume.append(0.0)
                    series.capacity.append(0.0)


PoolValues = tuple[str, float, float, float, float, tuple[str, float, float] | None]
"""A pool's sampled values in one resource: name, usage, demand, fair share ratio (total),
strong guarantee share and, for an integral pool (not the root), its integral type, the
accumulated volume and the resource flow ratio."""


def pool_values(result: UpdateResult, index: int) -> list[PoolValues]:
    """The sampled values of every pool of ``result`` (in ``result.pools`` order), in
    resource ``index``.

    A native result's values are read from its result arrays in one slice (the very doubles
    the elements' lazy attributes would convert), without creating the pool elements: the
    sampler runs after every update, and reading four lazy attributes of each pool cost more
    than the rest of the sampling; a reference result's are read from its elements."""
    arrays = native.result_arrays(result)
    specs = native.result_pool_specs(result)
    if arrays is None or specs is None:
        return [_element_values(name, element, index) for name, element in result.pools.items()]
    rows = cast(native.ElementsByName, result.pools).rows()
    if not rows:
        return []
    first = min(rows.values())
    stop = max(rows.values()) + 1
    columns = [
        native.OUT_RESOURCE_USAGE + index,
        native.OUT_RESOURCE_DEMAND + index,
        native.OUT_FAIR_SHARE_TOTAL + index,
        native.OUT_STRONG_GUARANTEE_SHARE + index,
        native.OUT_INTEGRAL + index,  # ``integral.accumulated_volume``, IntegralState's first
        native.OUT_RESOURCE_FLOW_RATIO,
    ]
    block = arrays[0][first:stop, columns].tolist()
    values: list[PoolValues] = []
    for name, row in rows.items():
        usage, demand, fair_ratio, guarantee_ratio, volume, flow = block[row - first]
        integral_type = specs[row].integral_guarantees.guarantee_type.value
        integral = (
            (integral_type, volume, flow)
            if name != ROOT_POOL_NAME and integral_type != "none"
            else None
        )
        values.append((name, usage, demand, fair_ratio, guarantee_ratio, integral))
    return values


def _element_values(name: str, element: Element, index: int) -> PoolValues:
    """:func:`pool_values` of one pool, from its element (``integral_type`` is the pool's
    ``integral_guarantees.guarantee_type``, as in a native result's specs)."""
    integral_type = element.integral_type.value
    integral = (
        (integral_type, element.integral.accumulated_volume[index], element.resource_flow_ratio)
        if name != ROOT_POOL_NAME and integral_type != "none"
        else None
    )
    return (
        name,
        element.resource_usage[index],
        element.resource_demand[index],
        element.fair_share.total[index],
        element.strong_guarantee_share[index],
        integral,
    )
