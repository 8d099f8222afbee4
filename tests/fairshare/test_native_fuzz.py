"""The boundary of the native core: hostile inputs never crash the process.

Everything the core reads is checked in Python first (:mod:`ytsched.fairshare.flat`), so bad
numbers come back as :class:`~ytsched.errors.SnapshotError` with code ``InvalidValue`` and
structural problems with the codes of ``build_tree``; whatever slips through comes back from the
core as :class:`~ytsched.fairshare.native.NativeEngineError`.  Shapes the reference engine
cannot handle (a chain of 10,000 pools exceeds Python's recursion limit) run natively.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.differential import differences
from ytsched.errors import SnapshotError
from ytsched.fairshare import flat, native
from ytsched.fairshare.model import OperationSpec, PoolSpec, TreeSnapshot, UpdateOptions
from ytsched.fairshare.update import run_update

TOTAL = (100.0, 100.0, 8.0, 1000.0, 0.0)
HOSTILE = [math.nan, math.inf, -math.inf, -1.0, -1e-300]


def _tree(**changes: Any) -> TreeSnapshot:
    pools = [
        PoolSpec(name="<Root>", parent=None),
        PoolSpec(name="a", parent="<Root>", strong_guarantee_resources={1: 30.0}),
    ]
    operations = [
        OperationSpec(
            name="op",
            parent="a",
            resource_demand=(4.0, 40.0, 1.0, 100.0, 0.0),
            resource_usage=(1.0, 10.0, 0.0, 10.0, 0.0),
        )
    ]
    snapshot = TreeSnapshot(total_resource_limits=TOTAL, pools=pools, operations=operations)
    for key, value in changes.items():
        setattr(snapshot, key, value)
    return snapshot


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize(
    "where",
    ["demand", "usage", "total", "limits", "weight", "pool_weight", "volume", "guarantee"],
)
def test_hostile_numbers_are_rejected_before_the_core(where: str, value: float) -> None:
    snapshot = _tree()
    op = snapshot.operations[0]
    pool = snapshot.pools[1]
    if where == "demand":
        op.resource_demand = (value, 40.0, 1.0, 100.0, 0.0)
        op.resource_usage = (0.0, 10.0, 0.0, 10.0, 0.0)
    elif where == "usage":
        op.resource_usage = (1.0, value, 0.0, 10.0, 0.0)
    elif where == "total":
        snapshot.total_resource_limits = (100.0, value, 8.0, 1000.0, 0.0)
    elif where == "limits":
        if value == math.inf:
            return  # an infinite limit means "unlimited" and is accepted
        op.resource_limits = (1.0, value, 1.0, 1.0, 1.0)
    elif where == "weight":
        op.weight = value
    elif where == "pool_weight":
        pool.weight = value
    elif where == "volume":
        pool.accumulated_resource_volume = (0.0, value, 0.0, 0.0, 0.0)
    else:
        pool.strong_guarantee_resources = {1: value}
    with pytest.raises(SnapshotError) as caught:
        run_update(snapshot, engine="native")
    assert caught.value.code in {"InvalidValue", "UsageAboveDemand"}


def test_zero_weight_is_rejected() -> None:
    snapshot = _tree()
    snapshot.operations[0].weight = 0.0
    with pytest.raises(SnapshotError, match="weight"):
        run_update(snapshot, engine="native")


def test_hostile_options_and_times_are_rejected() -> None:
    with pytest.raises(SnapshotError):
        run_update(_tree(now=math.nan, previous_update_time=0.0), engine="native")
    with pytest.raises(SnapshotError):
        run_update(_tree(options=UpdateOptions(integral_smooth_period=0.0)), engine="native")
    with pytest.raises(SnapshotError):
        run_update(_tree(options=UpdateOptions(main_resource="disk")), engine="native")


@pytest.mark.parametrize(
    ("pools", "code"),
    [
        ([], "MissingRoot"),
        ([PoolSpec("r", None), PoolSpec("s", None)], "MultipleRoots"),
        ([PoolSpec("r", None), PoolSpec("a", "b"), PoolSpec("b", "a")], "ParentCycle"),
        ([PoolSpec("r", None), PoolSpec("a", "nowhere")], "UnknownParent"),
        ([PoolSpec("r", None), PoolSpec("r", None)], "DuplicateElementName"),
    ],
)
def test_structural_errors_match_the_reference(pools: list[PoolSpec], code: str) -> None:
    snapshot = TreeSnapshot(total_resource_limits=TOTAL, pools=pools, operations=[])
    for engine in ("python", "native"):
        with pytest.raises(SnapshotError) as caught:
            run_update(snapshot, engine=engine)  # type: ignore[arg-type]
        assert caught.value.code == code


def test_root_only_and_empty_cluster() -> None:
    for total in (TOTAL, (0.0, 0.0, 0.0, 0.0, 0.0)):
        snapshot = TreeSnapshot(
            total_resource_limits=total, pools=[PoolSpec("<Root>", None)], operations=[]
        )
        reference = run_update(snapshot, engine="python")
        result = run_update(snapshot, engine="native")
        assert not differences(reference, result)
        assert result.root.fair_share.total == (0.0, 0.0, 0.0, 0.0, 0.0)


def _chain(depth: int) -> TreeSnapshot:
    pools = [PoolSpec("<Root>", None)]
    for level in range(depth):
        pools.append(PoolSpec(f"p{level}", pools[-1].name))
    operations = [
        OperationSpec(
            name="leaf",
            parent=pools[-1].name,
            resource_demand=(1.0, 10.0, 0.0, 100.0, 0.0),
            resource_usage=(1.0, 5.0, 0.0, 50.0, 0.0),
        )
    ]
    return TreeSnapshot(total_resource_limits=TOTAL, pools=pools, operations=operations)


def test_deep_chain_matches_the_reference_where_it_can_run() -> None:
    snapshot = _chain(150)
    assert not differences(
        run_update(snapshot, engine="python"), run_update(snapshot, engine="native")
    )


def test_chain_of_10000_pools() -> None:
    """Far beyond the reference's recursion limit; the core's traversals are iterative."""
    result = run_update(_chain(10_000), engine="native")
    leaf = result.operations["leaf"]
    assert leaf.fair_share.total == pytest.approx((0.01, 0.1, 0.0, 0.1, 0.0))
    assert result.pools["p9999"].fair_share.total == leaf.fair_share.total
    assert result.root.fair_share.total == leaf.fair_share.total


def test_pool_with_50000_operations() -> None:
    count = 50_000
    operations = [
        OperationSpec(
            name=f"op{index}",
            parent="wide",
            resource_demand=(1.0, 1.0, 0.0, 1.0, 0.0),
            resource_usage=(0.0, 0.0, 0.0, 0.0, 0.0) if index % 2 else (1.0, 0.5, 0.0, 1.0, 0.0),
            weight=1.0 + index % 3,
        )
        for index in range(count)
    ]
    snapshot = TreeSnapshot(
        total_resource_limits=(1e6, 1e4, 0.0, 1e6, 0.0),
        pools=[PoolSpec("<Root>", None), PoolSpec("wide", "<Root>")],
        operations=operations,
    )
    result = run_update(snapshot, engine="native")
    wide = result.pools["wide"].fair_share.total
    children = np.array([op.fair_share.total for op in result.operations.values()])
    # The cluster's cpu (10,000) is the bottleneck for 50,000 cpu of demand.
    assert wide[1] == pytest.approx(1.0)
    assert children[:, 1].sum() == pytest.approx(wide[1], rel=1e-9)
    assert (children[:, 1] <= 1e-4 + 1e-12).all()


# --- the raw arrays ------------------------------------------------------------------------


def _flat(snapshot: TreeSnapshot) -> flat.FlatTree:
    return flat.build_flat(snapshot)


def test_wrong_shapes_raise_value_errors() -> None:
    module = native._load()
    tree = _flat(_tree())
    out_f = np.empty((3, native.OUT_F))
    out_i = np.empty((3, native.OUT_I), dtype=np.int32)
    with pytest.raises(ValueError):
        module.run_update(
            tree.in_f[:, :10].copy(), tree.in_i, tree.opts_f, tree.opts_i, out_f, out_i
        )
    with pytest.raises(ValueError):
        module.run_update(tree.in_f, tree.in_i, tree.opts_f[:3].copy(), tree.opts_i, out_f, out_i)
    with pytest.raises((TypeError, ValueError)):
        module.run_update(tree.in_f, tree.in_i, tree.opts_f, tree.opts_i, out_f, out_i.T)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_flat_structures_never_crash(data: st.DataObject) -> None:
    """Arbitrary parent links and flags with in-range numbers: a result or a clean error."""
    n = data.draw(st.integers(1, 12))
    tree = _flat(_tree())
    in_f = np.abs(
        np.array(
            data.draw(
                st.lists(
                    st.floats(0.0, 1e3, allow_nan=False),
                    min_size=n * flat.IN_F,
                    max_size=n * flat.IN_F,
                )
            )
        ).reshape(n, flat.IN_F)
    )
    in_f[:, flat.IN_WEIGHT] += 0.5
    ints = data.draw(st.lists(st.integers(-1, 3), min_size=n * flat.IN_I, max_size=n * flat.IN_I))
    in_i = np.array(ints, dtype=np.int32).reshape(n, flat.IN_I)
    in_i[:, flat.II_PARENT] = [data.draw(st.integers(-1, n)) for _ in range(n)]
    opts_i = tree.opts_i.copy()
    opts_i[2:9] = [data.draw(st.integers(0, 1)) for _ in range(7)]
    out_f = np.empty((n, native.OUT_F))
    out_i = np.empty((n, native.OUT_I), dtype=np.int32)
    module = native._load()
    try:
        module.run_update(in_f, in_i, tree.opts_f, opts_i, out_f, out_i)
    except module.NativeEngineError:
        return
    # Reaching here without a crash is the point; the fair shares exist for every element.
    assert out_i.shape == (n, native.OUT_I)
