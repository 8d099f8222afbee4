"""Invariants of the fair-share update on random trees (hypothesis).

These hold for every valid tree, whatever its shape, guarantees, limits and operations:
conservation (a pool's fair share is its children's), feasibility (nobody gets more than its
demand or its limits), guarantees (a pool reaches its guarantee or its demand on some resource),
equivalence of the fast FIFO path, and robustness (the update never raises).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.strategies import snapshots
from ytsched.fairshare.elements import Element
from ytsched.fairshare.update import UpdateResult
from ytsched.snapshot import compute

TOLERANCE = 1e-6
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

OPTION_SETS = st.sampled_from(
    [
        {},
        {"enable_step_function_for_gang_operations": True},
        {
            "enable_step_function_for_gang_operations": True,
            "enable_improved_fair_share_by_fit_factor_computation": True,
        },
        {
            "enable_step_function_for_gang_operations": True,
            "enable_improved_fair_share_by_fit_factor_computation": True,
            "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
            "enable_fifo_children_reordering_for_guarantee_utilization": True,
        },
    ]
)


def _elements(result: UpdateResult) -> list[Element]:
    return [*result.pools.values(), *result.operations.values()]


@SETTINGS
@given(st.data())
def test_pool_fair_share_is_sum_of_children(data: st.DataObject) -> None:
    document = data.draw(snapshots(options=data.draw(OPTION_SETS)))
    result = compute(document)
    for pool in result.pools.values():
        if not pool.children:
            assert max(pool.fair_share.total) <= TOLERANCE
            continue
        for r in range(5):
            children = sum(child.fair_share.total[r] for child in pool.children)
            assert abs(pool.fair_share.total[r] - children) <= TOLERANCE, (pool.name, r)


@SETTINGS
@given(st.data())
def test_nobody_exceeds_demand_or_limits(data: st.DataObject) -> None:
    document = data.draw(snapshots(options=data.draw(OPTION_SETS)))
    result = compute(document)
    for element in _elements(result):
        total = element.fair_share.total
        for r in range(5):
            assert total[r] <= element.demand_share[r] + TOLERANCE, (element.name, r)
            assert total[r] <= element.limits_share[r] + TOLERANCE, (element.name, r)
            assert total[r] >= -TOLERANCE, (element.name, r)


@SETTINGS
@given(snapshots(allow_gangs=False))
def test_guarantees_are_honoured_when_demand_allows(document: dict[str, Any]) -> None:
    """Some resource of every pool reaches min(guarantee, demand it can use)."""
    result = compute(document)
    for pool in result.pools.values():
        if pool.is_root:
            continue
        limited_demand = pool.limited_demand_share
        assert limited_demand is not None
        guarantee = pool.strong_guarantee_share
        if max(guarantee) <= TOLERANCE:
            continue
        total = pool.fair_share.total
        assert any(
            total[r] + TOLERANCE >= min(guarantee[r], limited_demand[r]) for r in range(5)
        ), (pool.name, total, guarantee, limited_demand)


@SETTINGS
@given(snapshots())
def test_fast_fifo_path_gives_identical_results(document: dict[str, Any]) -> None:
    slow = compute(document)
    fast_document = dict(document)
    fast_document["options"] = {
        **document["options"],
        "enable_fast_fifo_fair_share_by_fit_factor_computation": True,
    }
    fast = compute(fast_document)
    for name, element in slow.pools.items():
        assert fast.pools[name].fair_share.total == element.fair_share.total, name
    for name, element in slow.operations.items():
        assert fast.operations[name].fair_share.total == element.fair_share.total, name


@SETTINGS
@given(st.data())
def test_update_never_raises_and_root_fits_the_cluster(data: st.DataObject) -> None:
    document = data.draw(snapshots(max_pools=8, max_operations=14, options=data.draw(OPTION_SETS)))
    result = compute(document)
    assert all(value <= 1.0 + TOLERANCE for value in result.root.fair_share.total)
