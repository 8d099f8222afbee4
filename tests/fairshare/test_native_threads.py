"""The native core's thread count changes no result: one thread and several give ``==`` results.

The core shares out per-element function building (level by level), wide sums, the top-down
distribution and the bottom-up attributes (by subtrees) and the element table's rows among its
threads (``ytsched.fairshare.native.set_threads``).  Every shared item is computed with the same
operations whichever thread runs it, so these tests force the threaded paths on small trees
(``set_parallel_build_min(0)``, ``set_parallel_sum_pairs(0)``) and compare one thread with two
and three, and the threaded core with the Python reference, on random trees, generated trees
with integral pools, the production GPU tree, hostile flat inputs (same error, same message) and
updates running on two Python threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.differential import differences
from tests.fairshare.strategies import snapshots
from tests.fairshare.test_golden import GPU_DUMP
from tests.fairshare.test_gpu_tree import UNIT_TEST_OPTIONS
from tests.fairshare.test_native_differential import OPTION_SETS, RANDOM_TREE_OPTION_SETS
from treegen import generate_tree  # type: ignore[import-not-found]
from ytsched import yson
from ytsched.fairshare import flat, native
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.snapshot import parse_snapshot


@pytest.fixture(autouse=True)
def forced_threading() -> Iterator[None]:
    """Every level of two or more elements and every sum of two or more points is shared out."""
    build = native.set_parallel_build_min(0)
    pairs = native.set_parallel_sum_pairs(0)
    threads = native.threads()
    try:
        yield
    finally:
        native.set_parallel_build_min(build)
        native.set_parallel_sum_pairs(pairs)
        native.set_threads(threads)


def _native(snapshot: TreeSnapshot, threads: int) -> UpdateResult:
    native.set_threads(threads)
    return run_update(snapshot, engine="native")


def assert_same_for_thread_counts(document: Any, counts: tuple[int, ...] = (2, 3)) -> None:
    snapshot = parse_snapshot(document)
    single = _native(snapshot, 1)
    for count in counts:
        found = differences(single, _native(snapshot, count))
        assert not found, f"threads={count}:\n" + "\n".join(found)


def test_default_is_at_most_two_threads() -> None:
    assert 1 <= native.default_threads() <= 2


def test_set_threads_returns_previous_and_validates() -> None:
    native.set_threads(2)
    assert native.set_threads(1) == 2
    assert native.threads() == 1
    for bad in (0, -1, 65):
        with pytest.raises(ValueError, match="thread count"):
            native.set_threads(bad)
    with pytest.raises(TypeError):
        native.set_threads(True)
    with pytest.raises(TypeError):
        native.set_threads(2.0)  # type: ignore[arg-type]
    assert native.threads() == 1
    with pytest.raises(ValueError, match="threshold"):
        native.set_parallel_build_min(-1)


@settings(max_examples=40, deadline=None)
@given(snapshots(), st.sampled_from(RANDOM_TREE_OPTION_SETS))
def test_random_trees(document: dict[str, Any], options: dict[str, Any]) -> None:
    assert_same_for_thread_counts(
        {**document, "options": {**document.get("options", {}), **options}}
    )


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(OPTION_SETS),
    st.sampled_from([0.0, 0.3]),
    st.integers(2, 6),
)
def test_generated_trees_against_reference(
    seed: int, options: dict[str, Any], integral_fraction: float, depth: int
) -> None:
    """Two threads against the Python reference too (integral pools build subtrees again)."""
    document = generate_tree(
        12, 60, depth=depth, seed=seed, integral_fraction=integral_fraction, options=options
    )
    snapshot = parse_snapshot(document)
    found = differences(run_update(snapshot, engine="python"), _native(snapshot, 2))
    assert not found, "\n".join(found)
    assert_same_for_thread_counts(document, counts=(3,))


def test_larger_generated_tree_default_thresholds() -> None:
    """The default thresholds on a tree big enough to use them (1,100 elements)."""
    native.set_parallel_build_min(64)
    native.set_parallel_sum_pairs(1 << 19)
    document = generate_tree(100, 1000, depth=4, seed=7, integral_fraction=0.2)
    assert_same_for_thread_counts(document)


def test_tree_above_the_row_range_threshold() -> None:
    """More rows than one range (4,096): the element table is constructed and read in ranges
    on both threads, and the distribution and attribute steps split the tree into subtrees."""
    native.set_parallel_build_min(64)
    native.set_parallel_sum_pairs(1 << 19)
    document = generate_tree(300, 4500, depth=4, seed=11, integral_fraction=0.2)
    assert_same_for_thread_counts(document, counts=(2,))


@pytest.mark.skipif(GPU_DUMP is None, reason="production GPU dump not available")
def test_gpu_tree() -> None:
    assert GPU_DUMP is not None
    elements = yson.loads(GPU_DUMP.read_bytes())
    assert_same_for_thread_counts({"options": UNIT_TEST_OPTIONS, "elements": elements})


def test_concurrent_updates_on_two_python_threads() -> None:
    """A second update finding the pool busy runs on its own thread: same results."""
    native.set_threads(2)
    snapshots_ = [
        parse_snapshot(generate_tree(20, 200, depth=3, seed=seed, integral_fraction=0.2))
        for seed in (1, 2)
    ]
    expected = [_native(s, 1) for s in snapshots_]
    native.set_threads(2)
    results: dict[int, list[UpdateResult]] = {0: [], 1: []}

    def work(k: int) -> None:
        for _ in range(5):
            results[k].append(run_update(snapshots_[k], engine="native"))

    workers = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for k in (0, 1):
        assert len(results[k]) == 5
        for result in results[k]:
            assert not differences(expected[k], result)


def _outcome(module: Any, arrays: tuple[np.ndarray[Any, Any], ...]) -> tuple[Any, ...]:
    in_f, in_i, opts_f, opts_i = arrays
    n = in_f.shape[0]
    out_f = np.zeros((n, native.OUT_F))
    out_i = np.zeros((n, native.OUT_I), dtype=np.int32)
    try:
        module.run_update(in_f, in_i, opts_f, opts_i, out_f, out_i)
    except module.NativeEngineError as error:
        return ("error", str(error))
    return ("ok", out_f.tobytes(), out_i.tobytes())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hostile_flat_inputs_same_outcome(data: st.DataObject) -> None:
    """Random parent links and flags: the same results, or the same error message."""
    document = generate_tree(3, 10, depth=2, seed=data.draw(st.integers(0, 1000)))
    tree = flat.build_flat(parse_snapshot(document))
    n = data.draw(st.integers(1, 16))
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
    module = native._load()
    arrays = (in_f, in_i, tree.opts_f, opts_i)
    native.set_threads(1)
    single = _outcome(module, arrays)
    native.set_threads(2)
    assert _outcome(module, arrays) == single
