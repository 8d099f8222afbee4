"""``ShareKeys`` gives, for every element of a native result, the very bytes the post-update
packed from the element's attributes before issue 15 (and the same FIFO index), so template
reuse decides exactly as before."""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import given, settings

from tests.fairshare.strategies import snapshots
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.native import ElementsByName, ShareKeys
from ytsched.fairshare.update import run_update
from ytsched.scheduling.post_update import _UNPACK_SHARES
from ytsched.snapshot import parse_snapshot

PACK = struct.Struct("25d").pack


@settings(max_examples=60, deadline=None)
@given(snapshots())
def test_keys_are_the_packed_attributes(document: dict[str, Any]) -> None:
    result = run_update(parse_snapshot(document), engine="native")
    total = result.total_resource_limits
    elements = [*result.pools.values(), *result.operations.values()]
    rows = ShareKeys.rows_of(elements[0])
    assert rows is not None
    keys = ShareKeys(rows[0], rows[1], total)
    for element in elements:
        row = ShareKeys.row(element)
        key = keys.blob[row * 200 : (row + 1) * 200]
        fifo = ShareKeys.fifo_index(element)
        assert keys.fifo_indexes[row] == fifo
        # Read after the key: the attributes' first conversion comes from the same row.
        expected = PACK(
            *element.fair_share.total,
            *element.demand_share,
            *element.usage_share,
            *total,
            *element.resource_demand,
        )
        assert key == expected
        assert fifo == element.fifo_index
        values = _UNPACK_SHARES(key)
        assert values[20:25] == element.resource_demand


def test_python_engine_elements_have_no_rows() -> None:
    from ytsched.fairshare.model import OperationSpec, PoolSpec

    snapshot = TreeSnapshot(
        total_resource_limits=(10.0, 10.0, 0.0, 100.0, 0.0),
        pools=[PoolSpec(name="<Root>", parent=None)],
        operations=[
            OperationSpec(
                name="op",
                parent="<Root>",
                resource_demand=(1.0, 1.0, 0.0, 1.0, 0.0),
                resource_usage=(0.0, 0.0, 0.0, 0.0, 0.0),
            )
        ],
    )
    result = run_update(snapshot, engine="python")
    assert ShareKeys.rows_of(result.operations["op"]) is None


def _rows_one_by_one(mapping: ElementsByName, names: list[str]) -> dict[str, int]:
    found = {}
    for name in names:
        if name in mapping:
            found[name] = mapping.row(name)
    return found


@settings(max_examples=60, deadline=None)
@given(snapshots())
def test_rows_are_row_of_every_name(document: dict[str, Any]) -> None:
    """``ElementsByName.rows`` (the post-update's one-pass lookup) is :meth:`row` of each
    name, for the pools and for the operations."""
    result = run_update(parse_snapshot(document), engine="native")
    for mapping in (result.pools, result.operations):
        assert isinstance(mapping, ElementsByName)
        assert mapping.rows() == _rows_one_by_one(mapping, list(mapping))


def test_rows_with_a_name_twice() -> None:
    """Should a name stand for two rows (the engines reject such snapshots), the index keeps
    the later row: ``rows`` then checks each name's row against the mapping's range, as
    :meth:`row` does, instead of numbering the range."""
    from types import SimpleNamespace

    pool_names, operation_names = ["<Root>", "a"], ["x", "a"]
    context = SimpleNamespace(
        index={"<Root>": 0, "a": 3, "x": 2},
        names=(pool_names, operation_names),
        distinct=False,  # an engine result's are (build_flat checks): rows skip the index
    )
    pools = ElementsByName(context, pool_names, 0)  # type: ignore[arg-type]
    operations = ElementsByName(context, operation_names, 2)  # type: ignore[arg-type]
    assert pools.rows() == _rows_one_by_one(pools, pool_names) == {"<Root>": 0}
    assert operations.rows() == _rows_one_by_one(operations, operation_names) == {"x": 2, "a": 3}
