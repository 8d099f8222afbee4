"""The flat input's shortcuts (issue 13, item 5) change nothing a caller can see.

``build_flat`` checks operations in bulk (and runs the per-row checks only to name the first
problem), reuses the checked pool structure of the previous tree when names, parents and FIFO
modes are equal, and gathers columns through flat lists.  These tests hold it to the reference
``build_tree``: the same first error for snapshots with several problems, no stale structure
after a tree changes in place, and the same arrays with and without the structure cache.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.strategies import snapshots
from ytsched.errors import SnapshotError
from ytsched.fairshare import flat
from ytsched.fairshare.model import (
    OperationSpec,
    PoolSpec,
    SchedulingMode,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.fairshare.tree import build_tree
from ytsched.snapshot import parse_snapshot

TOTAL = (100.0, 100.0, 8.0, 1000.0, 0.0)
DEMAND = (4.0, 40.0, 1.0, 100.0, 0.0)
USAGE = (1.0, 10.0, 0.0, 10.0, 0.0)


def _op(name: str, parent: str = "a", usage: tuple[float, ...] = USAGE) -> OperationSpec:
    return OperationSpec(name=name, parent=parent, resource_demand=DEMAND, resource_usage=usage)


def _snapshot(operations: list[OperationSpec], pools: list[PoolSpec] | None = None) -> TreeSnapshot:
    if pools is None:
        pools = [PoolSpec("<Root>", None), PoolSpec("a", "<Root>")]
    return TreeSnapshot(total_resource_limits=TOTAL, pools=pools, operations=operations)


def _code(call: object, snapshot: TreeSnapshot) -> str:
    with pytest.raises(SnapshotError) as caught:
        call(snapshot)  # type: ignore[operator]
    return caught.value.code


ABOVE = (9.0, 10.0, 0.0, 10.0, 0.0)  # usage above DEMAND in the first resource


@pytest.mark.parametrize(
    ("operations", "code"),
    [
        ([_op("x", usage=ABOVE), _op("x")], "UsageAboveDemand"),
        ([_op("x"), _op("x", usage=ABOVE)], "DuplicateElementName"),
        ([_op("x", parent="nowhere"), _op("y", usage=ABOVE)], "UnknownParent"),
        ([_op("y", usage=ABOVE), _op("x", parent="nowhere")], "UsageAboveDemand"),
        ([_op("a")], "DuplicateElementName"),  # an operation named like a pool
        ([_op("x", usage=(float("nan"), 0.0, 0.0, 0.0, 0.0))], "UsageAboveDemand"),
    ],
)
def test_first_operation_error_is_the_references(
    operations: list[OperationSpec], code: str
) -> None:
    snapshot = _snapshot(operations)
    assert _code(build_tree, snapshot) == code
    assert _code(flat.build_flat, snapshot) == code


def test_pool_structure_is_rechecked_after_an_in_place_change() -> None:
    pools = [PoolSpec("<Root>", None), PoolSpec("a", "<Root>"), PoolSpec("b", "a")]
    snapshot = _snapshot([_op("x", parent="b")], pools)
    flat.build_flat(snapshot)  # caches this structure
    for change, code in (
        (lambda: setattr(pools[1], "parent", "b"), "ParentCycle"),
        (lambda: setattr(pools[1], "parent", "nowhere"), "UnknownParent"),
        (lambda: setattr(pools[1], "mode", SchedulingMode.FIFO), "FifoPoolWithSubpools"),
        (lambda: setattr(pools[2], "name", "a"), "DuplicateElementName"),
        (lambda: setattr(pools[2], "parent", None), "MultipleRoots"),
    ):
        saved = [(spec.name, spec.parent, spec.mode) for spec in pools]
        change()
        assert _code(build_tree, snapshot) == code
        assert _code(flat.build_flat, snapshot) == code
        for spec, (name, parent, mode) in zip(pools, saved, strict=True):
            spec.name, spec.parent, spec.mode = name, parent, mode
        flat.build_flat(snapshot)  # valid again, and cached again


def test_renamed_pool_is_not_served_from_the_cache() -> None:
    first = _snapshot([_op("x")])
    flat.build_flat(first)
    second = _snapshot([_op("x", parent="c")], [PoolSpec("<Root>", None), PoolSpec("c", "<Root>")])
    tree = flat.build_flat(second)
    assert tree.pool_names == ["<Root>", "c"]
    assert tree.in_i[2, flat.II_PARENT] == 1


def test_unknown_guarantee_resource_is_rejected() -> None:
    pools = [PoolSpec("<Root>", None), PoolSpec("a", "<Root>", strong_guarantee_resources={7: 1.0})]
    assert _code(flat.build_flat, _snapshot([], pools)) == "InvalidValue"


def test_gpu_only_guarantees_keep_only_the_gpu_column() -> None:
    pools = [
        PoolSpec("<Root>", None),
        PoolSpec("a", "<Root>", strong_guarantee_resources={1: 30.0, 2: 4.0}),
    ]
    snapshot = _snapshot([], pools)
    snapshot.options = UpdateOptions(use_only_gpu_strong_guarantees=True)
    tree = flat.build_flat(snapshot)
    assert tree.in_f[1, flat.IN_EXPLICIT_SG : flat.IN_EXPLICIT_SG + 5].tolist() == [
        0.0,
        0.0,
        4.0,
        0.0,
        0.0,
    ]
    assert tree.in_i[1, flat.II_SG_MASK] == 1 << 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(), st.booleans())
def test_cached_structure_gives_the_same_arrays(document: dict[str, Any], warm: bool) -> None:
    """Building twice (the second time from the cached structure) or after another tree gives
    byte-identical arrays."""
    snapshot = parse_snapshot(document)
    other = _snapshot([_op("x")])
    flat.build_flat(other)
    cold = flat.build_flat(snapshot)
    if warm:
        flat.build_flat(other)
    again = flat.build_flat(snapshot)
    assert cold.in_f.tobytes() == again.in_f.tobytes()
    assert cold.in_i.tobytes() == again.in_i.tobytes()
    assert cold.pool_names == again.pool_names
    assert cold.root_index == again.root_index
