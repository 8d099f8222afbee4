"""The sampler reads a native result's pool values from its result arrays
(``timeseries.pool_values``): the very doubles the elements' attributes give, in the same
order, and the same integral type, volume and flow ratio, as read from a reference result."""

from __future__ import annotations

import struct

import pytest

from tests.pooltree.helpers import integral_pools, scheduler, vanilla
from ytsched.fairshare import native
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.pooltree import PoolTree, snapshot
from ytsched.resources import RESOURCE_NAMES
from ytsched.simulator.timeseries import PoolValues, _element_values, pool_values


def _tree() -> PoolTree:
    """Burst and relaxed integral pools beside plain ones, with usage and demand."""
    trees, tree = scheduler({"main_resource": "cpu"}, cpu=50.0)
    integral_pools(tree)
    tree.create_pool("plain", config={"weight": 2, "strong_guarantee_resources": {"cpu": 9}})
    tree.create_pool("child", parent="plain")
    trees.start_operation("op-plain", user="u", spec=vanilla("child", jobs=100), now=1)
    trees.start_operation("op-burst", user="u", spec=vanilla("burst", jobs=30), now=1)
    operation = trees.operations["op-plain"]
    for _ in range(7):
        operation.start_job("main", 2.0, "node1", "physical")
    return tree


def _bits(values: list[PoolValues]) -> list[object]:
    """Every float as its bit pattern (``==`` would equate ``0.0`` and ``-0.0``)."""
    return [
        (
            name,
            struct.pack("4d", usage, demand, fair, guarantee),
            None
            if integral is None
            else (integral[0], struct.pack("2d", integral[1], integral[2])),
        )
        for name, usage, demand, fair, guarantee, integral in values
    ]


def _results(tree: PoolTree, now: float) -> tuple[UpdateResult, UpdateResult]:
    total = (50.0, 50.0, 1000.0 * 2**30, 0.0, 0.0)
    state = snapshot.update_snapshot(tree, now, total)
    reference = run_update(state, engine="python")
    result = run_update(state, engine="native")
    snapshot.apply_result(tree, now, result)
    return result, reference


@pytest.mark.skipif(not native.native_available(), reason="the native core is not built")
@pytest.mark.parametrize("index", range(len(RESOURCE_NAMES)))
def test_native_columns_match_the_elements(index: int) -> None:
    tree = _tree()
    for step in range(1, 6):
        result, reference = _results(tree, 10.0 * step + 0.37)
        assert native.result_arrays(result) is not None
        by_rows = pool_values(result, index)
        assert [name for name, *_ in by_rows] == list(result.pools)
        by_elements = [
            _element_values(name, element, index) for name, element in result.pools.items()
        ]
        assert _bits(by_rows) == _bits(by_elements)
        assert _bits(by_rows) == _bits(pool_values(reference, index))
    integral = {values[0]: values[5] for values in by_rows}
    assert integral["burst"] is not None and integral["burst"][0] == "burst"
    assert integral["relaxed"] is not None and integral["plain"] is None
    assert integral["<Root>"] is None
