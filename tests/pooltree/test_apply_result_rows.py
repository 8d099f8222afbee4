"""``snapshot.apply_result`` reads a native result's integral volumes by row: the pools then
hold the very doubles the elements' ``integral`` attributes give, as with the reference."""

from __future__ import annotations

import struct

import pytest

from tests.pooltree.helpers import integral_pools, scheduler, vanilla
from ytsched.fairshare import native
from ytsched.fairshare.update import run_update
from ytsched.pooltree import PoolTree, snapshot


def _bits(values: tuple[float, ...]) -> bytes:
    return struct.pack(f"{len(values)}d", *values)


def _integral_tree() -> PoolTree:
    """Burst and relaxed integral pools that accumulate volume over a few updates."""
    trees, tree = scheduler({"main_resource": "cpu"}, cpu=50.0)
    integral_pools(tree)
    tree.create_pool("plain", config={"weight": 2})
    trees.start_operation("op-plain", user="u", spec=vanilla("plain", jobs=100), now=1)
    return tree


@pytest.mark.skipif(not native.native_available(), reason="the native core is not built")
def test_native_volumes_by_row_match_the_elements() -> None:
    tree = _integral_tree()
    total = (50.0, 50.0, 1000.0 * 2**30, 0.0, 0.0)
    for step in range(1, 6):
        now = 10.0 * step + 0.37
        result = run_update(snapshot.update_snapshot(tree, now, total), engine="native")
        assert native.result_arrays(result) is not None
        snapshot.apply_result(tree, now, result)
        for name, pool in tree.pools.items():
            if pool.is_root:
                continue
            integral = result.pools[name].integral
            assert _bits(pool.accumulated_resource_volume) == _bits(integral.accumulated_volume)
            assert _bits((pool.last_integral_share_ratio,)) == _bits((integral.last_share_ratio,))
    assert any(tree.pools[name].accumulated_resource_volume[0] for name in ("burst", "relaxed"))
