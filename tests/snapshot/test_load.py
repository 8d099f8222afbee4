"""Snapshot loading: both top-level forms, defaults, and a clear error for each bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ytsched.errors import SnapshotError
from ytsched.resources import INFINITE_AMOUNT
from ytsched.snapshot import compute, parse_snapshot, read_document

TOTAL = {"user_slots": 10, "cpu": 10, "gpu": 0, "memory": 1000, "network": 0}


def document(*elements: dict[str, Any], **top: Any) -> dict[str, Any]:
    base: list[dict[str, Any]] = [{"type": "pool", "name": "<Root>", "parent": None}]
    return {"total_resource_limits": TOTAL, "elements": base + list(elements), **top}


def test_bare_list_takes_totals_from_root_limits() -> None:
    elements = [
        {"type": "pool", "name": "<Root>", "parent": None, "resource_limits": TOTAL},
        {"type": "pool", "name": "a", "parent": "<Root>", "weight": 2.0},
    ]
    snapshot = parse_snapshot(elements)
    assert snapshot.total_resource_limits == (10.0, 10.0, 0.0, 1000.0, 0.0)
    assert snapshot.pools[1].weight == 2.0


def test_defaults_of_pools_and_operations() -> None:
    snapshot = parse_snapshot(
        document(
            {"type": "pool", "name": "a", "parent": "<Root>"},
            {"type": "operation", "name": "op", "parent": "a"},
        )
    )
    pool = snapshot.pools[1]
    assert pool.mode.value == "fair_share"
    assert pool.weight is None
    assert pool.resource_limits == (INFINITE_AMOUNT,) * 5
    assert [p.value for p in pool.fifo_sort_parameters] == ["weight", "start_time"]
    operation = snapshot.operations[0]
    assert operation.resource_demand == (0.0,) * 5
    assert operation.weight == 1.0
    assert not operation.is_gang


def test_user_memory_is_an_alias_and_cpu_rounds_to_hundredths() -> None:
    snapshot = parse_snapshot(
        document(
            {
                "type": "operation",
                "name": "op",
                "parent": "<Root>",
                "resource_demand": {"user_memory": 512, "cpu": 1.234},
            }
        )
    )
    assert snapshot.operations[0].resource_demand == (0.0, 1.23, 0.0, 512.0, 0.0)


BAD_INPUTS = [
    ("UnknownField", {"type": "pool", "name": "a", "parent": "<Root>", "colour": "red"}, "colour"),
    ("InvalidElement", {"type": "pool", "name": "a", "parent": "<Root>", "weight": -1}, "weight"),
    ("InvalidElement", {"type": "pool", "name": "a", "parent": "<Root>", "mode": "lifo"}, "mode"),
    ("InvalidElement", {"type": "widget", "name": "a"}, "type"),
    (
        "InvalidResources",
        {"type": "pool", "name": "a", "parent": "<Root>", "resource_limits": {"cpu": -5}},
        "negative",
    ),
    (
        "InvalidResources",
        {"type": "pool", "name": "a", "parent": "<Root>", "resource_limits": {"disk": 5}},
        "disk",
    ),
    ("UnknownParent", {"type": "pool", "name": "a", "parent": "nowhere"}, "nowhere"),
    ("UnknownParent", {"type": "operation", "name": "op", "parent": "nowhere"}, "nowhere"),
    (
        "UsageAboveDemand",
        {
            "type": "operation",
            "name": "op",
            "parent": "<Root>",
            "resource_usage": {"cpu": 2},
            "resource_demand": {"cpu": 1},
        },
        "op",
    ),
    (
        "InvalidElement",
        {
            "type": "pool",
            "name": "a",
            "parent": "<Root>",
            "integral_guarantees": {"guarantee_type": "sometimes"},
        },
        "guarantee_type",
    ),
]


@pytest.mark.parametrize(("code", "element", "mentions"), BAD_INPUTS)
def test_bad_elements_raise_a_named_error(
    code: str, element: dict[str, Any], mentions: str
) -> None:
    with pytest.raises(SnapshotError) as caught:
        compute(document(element))
    assert caught.value.code == code
    assert mentions in caught.value.message


def test_structural_errors() -> None:
    with pytest.raises(SnapshotError, match="defined twice") as caught:
        compute(document({"type": "pool", "name": "<Root>", "parent": "<Root>"}))
    assert caught.value.code == "DuplicateElementName"
    with pytest.raises(SnapshotError) as caught:
        compute(
            document(
                {"type": "pool", "name": "f", "parent": "<Root>", "mode": "fifo"},
                {"type": "pool", "name": "sub", "parent": "f"},
            )
        )
    assert caught.value.code == "FifoPoolWithSubpools"
    with pytest.raises(SnapshotError) as caught:
        compute(
            document(
                {"type": "pool", "name": "a", "parent": "b"},
                {"type": "pool", "name": "b", "parent": "a"},
            )
        )
    assert caught.value.code == "ParentCycle"
    with pytest.raises(SnapshotError) as caught:
        compute({"elements": [{"type": "pool", "name": "a", "parent": "b"}]})
    assert caught.value.code in {"MissingRoot", "InvalidSnapshot"}


def test_bad_options_and_top_level() -> None:
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(document(options={"main_resource": "disk"}))
    assert caught.value.code == "InvalidOption"
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(document(options={"no_such_option": True}))
    assert caught.value.code == "UnknownField"
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(document(now=10.0, previous_update_time=20.0))
    assert "previous_update_time" in caught.value.message
    with pytest.raises(SnapshotError):
        parse_snapshot("not a snapshot")


def test_parsing_does_not_modify_the_document() -> None:
    doc = document({"type": "operation", "name": "op", "parent": "<Root>"})
    before = copy.deepcopy(doc)
    compute(doc)
    assert doc == before


def test_read_document_by_extension_and_sniffing(tmp_path: Path) -> None:
    doc = document({"type": "pool", "name": "a", "parent": "<Root>"})
    as_json = tmp_path / "tree.json"
    as_json.write_text(json.dumps(doc))
    as_yson = tmp_path / "tree.yson"
    as_yson.write_text(
        "{total_resource_limits = {cpu = 10};"
        ' elements = [{type = pool; name = "<Root>"; parent = #}]}'
    )
    sniffed = tmp_path / "tree.txt"
    sniffed.write_text(json.dumps(doc))
    assert read_document(as_json) == doc
    assert read_document(sniffed) == doc
    assert read_document(as_yson)["elements"][0]["name"] == "<Root>"


def test_syntax_errors_name_file_line_and_column(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yson"
    broken.write_text("{elements = [\n  {type = pool;; }\n]}")
    with pytest.raises(SnapshotError) as caught:
        read_document(broken)
    assert caught.value.code == "SyntaxError"
    assert "broken.yson" in caught.value.message and "line 2" in caught.value.message
    broken_json = tmp_path / "broken.json"
    broken_json.write_text('{"elements": [}')
    with pytest.raises(SnapshotError, match="line 1, column 15"):
        read_document(broken_json)
    with pytest.raises(SnapshotError) as caught:
        read_document(tmp_path / "missing.yson")
    assert caught.value.code == "UnreadableFile"


INTEGRAL_ERRORS = [
    ({"guarantee_type": "burst", "resource_flow": {"cpu": 1}}, "burst_guarantee_resources"),
    ({"guarantee_type": "burst", "burst_guarantee_resources": {"cpu": 1}}, "resource_flow"),
    (
        {
            "guarantee_type": "relaxed",
            "resource_flow": {"cpu": 1},
            "burst_guarantee_resources": {"cpu": 2},
        },
        "relaxed pool cannot",
    ),
    ({"guarantee_type": "relaxed", "resource_flow": {"memory": 100}}, "main resource"),
    (
        {
            "guarantee_type": "burst",
            "resource_flow": {"cpu": 1},
            "burst_guarantee_resources": {"user_slots": 5},
        },
        "main resource",
    ),
    ({"guarantee_type": "relaxed", "resource_flow": {"cpu": -1}}, "negative"),
]


@pytest.mark.parametrize(("integral", "mentions"), INTEGRAL_ERRORS)
def test_integral_guarantees_are_validated(integral: dict[str, Any], mentions: str) -> None:
    pool = {"type": "pool", "name": "p", "parent": "<Root>", "integral_guarantees": integral}
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(document(pool))
    assert caught.value.code in {"InvalidIntegralGuarantees", "InvalidResources"}
    assert mentions in caught.value.message
    assert "'p'" in caught.value.message


def test_integral_pools_cannot_nest() -> None:
    relaxed = {"guarantee_type": "relaxed", "resource_flow": {"cpu": 1}}
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(
            document(
                {
                    "type": "pool",
                    "name": "outer",
                    "parent": "<Root>",
                    "integral_guarantees": relaxed,
                },
                {
                    "type": "pool",
                    "name": "inner",
                    "parent": "outer",
                    "integral_guarantees": relaxed,
                },
            )
        )
    assert caught.value.code == "InvalidIntegralGuarantees"
    assert "inner" in caught.value.message and "outer" in caught.value.message


def test_valid_integral_pools_load() -> None:
    snapshot = parse_snapshot(
        document(
            {
                "type": "pool",
                "name": "b",
                "parent": "<Root>",
                "integral_guarantees": {
                    "guarantee_type": "burst",
                    "resource_flow": {"cpu": 1},
                    "burst_guarantee_resources": {"cpu": 2},
                },
            },
        )
    )
    assert snapshot.pools[1].integral_guarantees.guarantee_type.value == "burst"


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ("mode", "mode"),
        ("fifo_sort_parameters", "fifo_sort_parameters"),
        ("integral_guarantees", "guarantee_type"),
        ("weight", "weight"),
    ],
)
def test_deeply_nested_values_get_a_short_error(field: str, where: str) -> None:
    """A value nested deeper than ``repr`` can go (the hostile-file fuzz found this for
    ``mode``: the enum's own ValueError raised RecursionError while quoting it) gets the
    field's ordinary error with a bounded quote of the value."""
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    value: Any = deep
    if field == "fifo_sort_parameters":
        value = [deep]
    elif field == "integral_guarantees":
        value = {"guarantee_type": deep}
    document = {
        "total_resource_limits": {"cpu": 10},
        "elements": [
            {"type": "pool", "name": "<Root>", "parent": None},
            {"type": "pool", "name": "a", "parent": "<Root>", field: value},
        ],
    }
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(document)
    assert caught.value.code == "InvalidElement"
    assert where in str(caught.value)
    assert len(str(caught.value)) < 300
