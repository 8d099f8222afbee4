"""``transfer_pool_resources``: YTsaurus's semantics, all-or-nothing, subtree totals kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pooltree.helpers import scheduler, state
from ytsched.pooltree import PoolTree, SchedulerError
from ytsched.pooltree.transfer import transfer_pool_resources


def _tree() -> PoolTree:
    """root ── company(cpu 60, ops 30) ┬ ads(cpu 30, ops 15) ─ ads_ml(cpu 10, ops 5)
    │                                  └ search(cpu 20, ops 10)
    └ other(cpu 10)."""
    _, tree = scheduler()
    tree.create_pool(
        "company",
        config={
            "strong_guarantee_resources": {"cpu": 60},
            "max_operation_count": 30,
            "integral_guarantees": {
                "guarantee_type": "none",
                "resource_flow": {"cpu": 10},
                "burst_guarantee_resources": {"cpu": 10},
            },
        },
    )
    tree.create_pool(
        "ads",
        "company",
        {
            "strong_guarantee_resources": {"cpu": 30},
            "max_operation_count": 15,
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 6},
                "burst_guarantee_resources": {"cpu": 8},
            },
        },
    )
    tree.create_pool(
        "ads_ml", "ads", {"strong_guarantee_resources": {"cpu": 10}, "max_operation_count": 5}
    )
    tree.create_pool(
        "search", "company", {"strong_guarantee_resources": {"cpu": 20}, "max_operation_count": 10}
    )
    tree.create_pool("other", config={"strong_guarantee_resources": {"cpu": 10}})
    return tree


def _cpu(tree: PoolTree, pool: str) -> float | None:
    return tree.pool(pool).config.strong_guarantee_resources.cpu


def test_moves_along_the_path_below_the_common_ancestor() -> None:
    tree = _tree()
    transfer_pool_resources(
        tree,
        "ads_ml",
        "search",
        {"strong_guarantee_resources": {"cpu": 4}, "max_operation_count": 2},
    )
    # Source side loses (ads_ml and ads), destination side gains (search); company keeps.
    assert (_cpu(tree, "ads_ml"), _cpu(tree, "ads"), _cpu(tree, "search")) == (6, 26, 24)
    assert _cpu(tree, "company") == 60
    assert tree.pool("ads").config.max_operation_count == 13
    assert tree.pool("search").config.max_operation_count == 12
    assert tree.pool("company").config.max_operation_count == 30


def test_integral_resources_and_missing_values_count_as_zero() -> None:
    tree = _tree()
    transfer_pool_resources(
        tree,
        "ads",
        "search",
        {"resource_flow": {"cpu": 2}, "burst_guarantee_resources": {"cpu": 3}},
    )
    ads = tree.pool("ads").config.integral_guarantees
    search = tree.pool("search").config.integral_guarantees
    assert (ads.resource_flow.cpu, ads.burst_guarantee_resources.cpu) == (4, 5)
    assert (search.resource_flow.cpu, search.burst_guarantee_resources.cpu) == (2, 3)
    # Other options of the destination are kept as they were set.
    assert tree.pool("ads").config.integral_guarantees.guarantee_type == "burst"


def test_up_and_down_one_branch() -> None:
    tree = _tree()
    # The destination is an ancestor: only the source side changes.
    transfer_pool_resources(tree, "ads_ml", "company", {"strong_guarantee_resources": {"cpu": 5}})
    assert (_cpu(tree, "ads_ml"), _cpu(tree, "ads"), _cpu(tree, "company")) == (5, 25, 60)
    # Between two root children: the root is the common ancestor.
    transfer_pool_resources(tree, "other", "company", {"strong_guarantee_resources": {"cpu": 5}})
    assert (_cpu(tree, "other"), _cpu(tree, "company")) == (5, 65)


@pytest.mark.parametrize(
    ("source", "destination", "delta", "code"),
    [
        ("ads_ml", "search", {"strong_guarantee_resources": {"cpu": 11}}, "InvalidConfig"),
        (
            "company",
            "ads_ml",
            {"strong_guarantee_resources": {"cpu": 15}},
            "GuaranteesExceedParent",
        ),
        ("ads", "search", {"max_operation_count": 16}, "InvalidConfig"),
        ("ads", "nowhere", {"max_operation_count": 1}, "NoSuchPool"),
        ("ads", "ads", {"max_operation_count": 1}, "InvalidArgument"),
        ("ads", "search", {"weight": 1}, "InvalidArgument"),
        ("ads", "search", {"strong_guarantee_resources": {"cpu": "many"}}, "InvalidArgument"),
        ("ads", "search", [], "InvalidArgument"),
    ],
)
def test_refusals_change_nothing(source: str, destination: str, delta: Any, code: str) -> None:
    tree = _tree()
    before = state(tree)
    with pytest.raises(SchedulerError) as refused:
        transfer_pool_resources(tree, source, destination, delta)
    assert refused.value.code == code
    assert state(tree) == before


def test_refusal_names_both_pools_and_keeps_the_cause() -> None:
    tree = _tree()
    with pytest.raises(SchedulerError) as refused:
        transfer_pool_resources(
            tree, "ads_ml", "search", {"strong_guarantee_resources": {"cpu": 11}}
        )
    assert "Failed to transfer resources from pool 'ads_ml' to pool 'search'" in str(refused.value)
    (inner,) = refused.value.attributes["inner_errors"]  # type: ignore[misc]
    assert inner["code"] == "InvalidConfig"


@settings(max_examples=60, deadline=None)
@given(
    source=st.sampled_from(["company", "ads", "ads_ml", "search", "other"]),
    destination=st.sampled_from(["company", "ads", "ads_ml", "search", "other"]),
    cpu=st.integers(min_value=0, max_value=40),
    operations=st.integers(min_value=0, max_value=20),
)
def test_ancestors_above_the_common_ancestor_never_change(
    source: str, destination: str, cpu: int, operations: int
) -> None:
    """Whatever a transfer does, pools off the two paths keep their values, a refused transfer
    changes nothing, and the total moved out of the source side equals what the destination
    side receives."""
    tree = _tree()
    before = {name: pool.config for name, pool in tree.pools.items()}
    delta = {"strong_guarantee_resources": {"cpu": cpu}, "max_operation_count": operations}
    try:
        transfer_pool_resources(tree, source, destination, delta)
    except SchedulerError:
        assert {name: pool.config for name, pool in tree.pools.items()} == before
        return
    src, dst = tree.pool(source), tree.pool(destination)
    src_chain = list(src.ancestors())
    dst_chain = list(dst.ancestors())
    lca = next(pool for pool in src_chain if pool in dst_chain)
    for name, pool in tree.pools.items():
        if pool.is_root:
            continue
        on_source = pool in src_chain[: src_chain.index(lca)]
        on_destination = pool in dst_chain[: dst_chain.index(lca)]
        old = before[name].strong_guarantee_resources.cpu or 0
        new = pool.config.strong_guarantee_resources.cpu or 0
        expected = old - cpu if on_source else old + cpu if on_destination else old
        assert new == pytest.approx(expected)
