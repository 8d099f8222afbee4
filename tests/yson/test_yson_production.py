"""The real production GPU pool-tree snapshot from YTsaurus parses correctly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ytsched.yson import dumps, loads

_RELATIVE = Path("data/ytsaurus/gpu_tree_elements.yson")
_CANDIDATES = [
    Path(__file__).resolve().parents[2].parent / "shared" / _RELATIVE,
    Path("/work/shared") / _RELATIVE,
]
_PATH = next((path for path in _CANDIDATES if path.exists()), None)

pytestmark = pytest.mark.skipif(
    _PATH is None,
    reason=f"shared production snapshot {_RELATIVE} not found (looked in {_CANDIDATES})",
)


@pytest.fixture(scope="module")
def raw() -> bytes:
    assert _PATH is not None
    return _PATH.read_bytes()


@pytest.fixture(scope="module")
def records(raw: bytes) -> list[dict[str, Any]]:
    value = loads(raw.decode("utf-8"))
    assert isinstance(value, list)
    return value


def test_record_counts(records: list[dict[str, Any]]) -> None:
    assert len(records) == 1309
    kinds = Counter(record["type"] for record in records)
    assert kinds == {"pool": 566, "operation": 743}
    names = [record["name"] for record in records]
    assert len(set(names)) == len(names)


def test_root(records: list[dict[str, Any]]) -> None:
    root = records[0]
    assert root["name"] == "<Root>"
    assert root["parent"] is None
    assert root["strong_guarantee_resources"] == {
        "user_slots": 124992,
        "cpu": 93818.4,
        "gpu": 5952,
        "user_memory": 754088408226001,
        "network": 74400,
    }
    assert type(root["total_fair_share"]["network"]) is float
    assert root["weight"] == 975.1344086021506


def test_every_parent_resolves(records: list[dict[str, Any]]) -> None:
    names = {record["name"] for record in records}
    assert all(r["parent"] in names for r in records if r["parent"] is not None)


def test_bytes_input_gives_the_same_value(raw: bytes, records: list[dict[str, Any]]) -> None:
    assert loads(raw) == records


def test_round_trip(records: list[dict[str, Any]]) -> None:
    assert loads(dumps(records)) == records
    assert loads(dumps(records, pretty=True)) == records
