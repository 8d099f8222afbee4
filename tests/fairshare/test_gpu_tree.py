"""The production GPU tree YTsaurus ships with its unit tests, computed the way that test loads it.

`docs/conformance.md` explains the elements that differ from the recorded production values;
these tests keep the numbers there true and guard against regressions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ytsched import yson
from ytsched.snapshot import compute
from ytsched.snapshot.compare import compare_with_recorded, recorded_shares, subtree_of

DUMP = (
    Path(__file__).resolve().parents[3] / "shared" / "data" / "ytsaurus" / "gpu_tree_elements.yson"
)
UNIT_TEST_OPTIONS = {
    "main_resource": "cpu",
    "use_only_gpu_strong_guarantees": True,
    "consider_vanilla_operations_as_gang": True,
    "enable_step_function_for_gang_operations": True,
    "enable_improved_fair_share_by_fit_factor_computation": True,
    "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
}

pytestmark = pytest.mark.skipif(not DUMP.exists(), reason=f"production dump not found at {DUMP}")


@pytest.fixture(scope="module")
def elements() -> list[dict[str, Any]]:
    document = yson.loads(DUMP.read_bytes())
    assert isinstance(document, list)
    return document


def test_bit_exact_for_1190_elements_and_differences_located(
    elements: list[dict[str, Any]],
) -> None:
    document = {"options": UNIT_TEST_OPTIONS, "elements": elements}
    result = compute(document)
    assert not result.errors
    reference = compute(document, engine="python")
    report = compare_with_recorded(result, recorded_shares(elements), reference)
    assert len(report.elements) == 1309
    assert report.count_within(1e-12) >= 1190
    # Every element off by more than 1e-4 lies below a pool whose recorded share the algorithm
    # splits differently among its children (the documented places where production differs).
    located = subtree_of(result, report.split_differs)
    off = {e.name for e in report.elements if e.error > 1e-4}
    assert off <= located
    assert "<Root>" in report.split_differs


def test_root_split_cannot_come_from_the_dump_inputs_alone(elements: list[dict[str, Any]]) -> None:
    """Production left ~1% of GPUs idle while an unlimited pool wanted 31x the cluster."""
    recorded = recorded_shares(elements)
    result = compute({"options": UNIT_TEST_OPTIONS, "elements": elements})
    pool0 = result.pools["pool0"]
    assert pool0.limits_share[2] == 1.0
    assert pool0.demand_share[2] > 30
    assert recorded["<Root>"][2] < 0.991
    assert result.root.fair_share.total[2] == pytest.approx(1.0)


def test_default_options_also_run(elements: list[dict[str, Any]]) -> None:
    result = compute(elements)
    assert max(result.root.fair_share.total) <= 1.0 + 1e-9
