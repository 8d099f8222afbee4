"""The native core against the Python reference: every double of every element, bit for bit.

The native core (``src/native/``) must compute exactly what the reference engine
(:func:`ytsched.fairshare.update.run_reference_update`, the straightforward port of YTsaurus)
computes: the same floating-point operations in the same order.  These tests run both on

* every re-expressed YTsaurus scenario (``tests/data/fair_share_scenarios``) and every integral
  scenario (``tests/data/integral_scenarios``), each step's snapshot;
* the inputs of the golden files (generated trees of 1,100 elements with every option set, and
  the production GPU tree when ``shared/`` has it);
* hypothesis-generated random trees (``strategies.snapshots``) and generated trees
  (``benchmarks/treegen``) under every option set: FIFO and fair-share pools, gangs with and
  without the step function, the improved construction, fast FIFO, FIFO reordering, integral
  pools, promised-guarantee pools, inferred weights, free-volume distribution;

and compare with :func:`tests.fairshare.differential.differences` (``==`` on every double, the
structure, the FIFO order and the errors).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fairshare.differential import differences
from tests.fairshare.scenario_runner import load_scenario
from tests.fairshare.strategies import snapshots
from tests.fairshare.test_golden import GOLDEN_DIR, GPU_DUMP, golden_document
from treegen import generate_tree  # type: ignore[import-not-found]
from ytsched.fairshare.native import set_parallel_sum_pairs, use_wide_vector_kernels
from ytsched.fairshare.update import run_update
from ytsched.snapshot import parse_snapshot

DATA = Path(__file__).resolve().parents[1] / "data"
SCENARIOS = sorted((DATA / "fair_share_scenarios").glob("*.json")) + sorted(
    (DATA / "integral_scenarios").glob("*.json")
)

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"enable_fast_fifo_fair_share_by_fit_factor_computation": True},
    {"enable_step_function_for_gang_operations": True},
    {
        "enable_step_function_for_gang_operations": True,
        "enable_improved_fair_share_by_fit_factor_computation": True,
        "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
        "enable_fifo_children_reordering_for_guarantee_utilization": True,
    },
    {
        "enable_improved_fair_share_by_fit_factor_computation": True,
        "enable_fast_fifo_fair_share_by_fit_factor_computation": True,
        "infer_weight_from_guarantees_share_multiplier": 2.0,
        "should_distribute_free_volume_among_children": True,
    },
]
RANDOM_TREE_OPTION_SETS = [*OPTION_SETS, {"main_resource": "gpu"}, {"main_resource": "memory"}]


def assert_identical(document: Any) -> None:
    snapshot = parse_snapshot(document)
    reference = run_update(snapshot, engine="python")
    native = run_update(snapshot, engine="native")
    found = differences(reference, native)
    assert not found, "\n".join(found)


def _scenario_snapshots(path: Path) -> list[Any]:
    scenario = load_scenario(path)
    if "steps" in scenario:
        return [step["snapshot"] for step in scenario["steps"]]
    return [scenario["snapshot"]]


def test_scenarios_exist() -> None:
    assert len(SCENARIOS) >= 90


@pytest.mark.parametrize("path", SCENARIOS, ids=[path.stem for path in SCENARIOS])
def test_scenario(path: Path) -> None:
    for document in _scenario_snapshots(path):
        assert_identical(document)


GOLDEN = sorted(GOLDEN_DIR.glob("*.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[path.stem for path in GOLDEN])
def test_golden_inputs(path: Path) -> None:
    source = json.loads(path.read_text(encoding="utf-8"))["source"]
    if source["kind"] == "gpu_dump" and GPU_DUMP is None:
        pytest.skip("production GPU dump not available")
    assert_identical(golden_document(source))


@settings(max_examples=60, deadline=None)
@given(snapshots(), st.sampled_from(RANDOM_TREE_OPTION_SETS))
def test_random_trees(document: dict[str, Any], options: dict[str, Any]) -> None:
    assert_identical({**document, "options": {**document.get("options", {}), **options}})


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(OPTION_SETS),
    st.sampled_from([0.0, 0.3]),
    st.integers(2, 6),
)
def test_generated_trees(
    seed: int, options: dict[str, Any], integral_fraction: float, depth: int
) -> None:
    document = generate_tree(
        12, 60, depth=depth, seed=seed, integral_fraction=integral_fraction, options=options
    )
    assert_identical(document)


@pytest.fixture
def threaded_sums() -> Iterator[None]:
    """Every pool sum of two or more points on two threads (the default needs ~0.5M pairs)."""
    previous = set_parallel_sum_pairs(0)
    try:
        yield
    finally:
        set_parallel_sum_pairs(previous)


@pytest.mark.parametrize("path", GOLDEN, ids=[path.stem for path in GOLDEN])
def test_golden_inputs_threaded_sums(path: Path, threaded_sums: None) -> None:
    source = json.loads(path.read_text(encoding="utf-8"))["source"]
    if source["kind"] == "gpu_dump" and GPU_DUMP is None:
        pytest.skip("production GPU dump not available")
    assert_identical(golden_document(source))


@pytest.mark.parametrize("path", SCENARIOS[::4], ids=[path.stem for path in SCENARIOS[::4]])
def test_scenario_threaded_sums(path: Path, threaded_sums: None) -> None:
    for document in _scenario_snapshots(path):
        assert_identical(document)


def test_parallel_sum_threshold_refuses_negative() -> None:
    with pytest.raises(ValueError, match="threshold"):
        set_parallel_sum_pairs(-1)


@pytest.fixture
def baseline_kernels() -> Iterator[None]:
    """Pool sums and compression on their SSE2 / scalar kernels (the AVX2 ones are the default
    where the CPU has AVX2)."""
    previous = use_wide_vector_kernels(False)
    try:
        yield
    finally:
        use_wide_vector_kernels(previous)


def test_wide_vector_kernels_switch(baseline_kernels: None) -> None:
    assert use_wide_vector_kernels(False) is False


@pytest.mark.parametrize("path", SCENARIOS[1::4], ids=[path.stem for path in SCENARIOS[1::4]])
def test_scenario_baseline_kernels(path: Path, baseline_kernels: None) -> None:
    for document in _scenario_snapshots(path):
        assert_identical(document)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(OPTION_SETS), st.integers(2, 6))
def test_generated_trees_baseline_kernels(seed: int, options: dict[str, Any], depth: int) -> None:
    previous = use_wide_vector_kernels(False)
    try:
        assert_identical(generate_tree(12, 60, depth=depth, seed=seed, options=options))
    finally:
        use_wide_vector_kernels(previous)
