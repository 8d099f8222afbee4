"""Buffers one update leaves to the next on the same thread change no result.

The native core keeps an update's heap buffers (every row's chains and child list, the
workers' scratch space) for the calling thread's next update of at most 262,144 elements, row
k's for row k (taken and handed back in the ranges that construct and destroy the rows).  A
reused buffer keeps only its capacity, so an update must give the same bytes whatever ran
before it on that thread: these tests run each tree first on a fresh thread (no spare buffers)
and then in sequences of different sizes, shapes, options and a failing update, on one thread,
and compare the raw result arrays byte for byte.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.test_native_differential import OPTION_SETS
from treegen import generate_tree  # type: ignore[import-not-found]
from ytsched.fairshare import flat, native
from ytsched.snapshot import parse_snapshot

Outcome = tuple[Any, ...]


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """One engine thread: every row of these trees is built on the calling thread."""
    threads = native.set_threads(1)
    try:
        yield
    finally:
        native.set_threads(threads)


def _tree(pools: int, operations: int, seed: int, options: dict[str, Any]) -> flat.FlatTree:
    document = generate_tree(
        pools, operations, depth=3, seed=seed, integral_fraction=0.2, options=options
    )
    return flat.build_flat(parse_snapshot(document))


def _outcome(tree: flat.FlatTree) -> Outcome:
    try:
        out_f, out_i, summary = native.run_flat(tree)
    except native.NativeEngineError as error:
        return ("error", str(error))
    return ("ok", out_f.tobytes(), out_i.tobytes(), repr(summary[:6]))


def _on_fresh_thread(run: Callable[[], Outcome]) -> Outcome:
    """``run()`` on a new thread, which has no spare buffers of an earlier update."""
    result: list[Outcome] = []
    worker = threading.Thread(target=lambda: result.append(run()))
    worker.start()
    worker.join()
    return result[0]


def _broken(tree: flat.FlatTree) -> flat.FlatTree:
    """The tree with its first operation made its own parent: the core rejects it after
    reading (and keeping buffers for) every row."""
    in_i = tree.in_i.copy()
    operation_row = len(tree.pool_names)
    in_i[operation_row, flat.II_PARENT] = operation_row
    return dataclasses.replace(tree, in_i=in_i)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 40), st.integers(0, 300), st.integers(0, 10**6), st.integers(0, 2)
        ),
        min_size=2,
        max_size=5,
    ),
    st.sampled_from(OPTION_SETS),
)
def test_sequences_of_updates_give_fresh_results(
    shapes: list[tuple[int, int, int, int]], options: dict[str, Any]
) -> None:
    trees = []
    for pools, operations, seed, kind in shapes:
        tree = _tree(pools, operations, seed, options)
        trees.append(_broken(tree) if kind == 2 and operations > 0 else tree)
    expected = [_on_fresh_thread(lambda tree=tree: _outcome(tree)) for tree in trees]  # type: ignore[misc]
    # Forwards, backwards and each tree twice in a row, all on this thread.
    order = list(range(len(trees))) + list(reversed(range(len(trees))))
    order += [k for k in range(len(trees)) for _ in (0, 1)]
    for k in order:
        assert _outcome(trees[k]) == expected[k], f"tree {k} after a different update"


def test_larger_tree_between_small_ones() -> None:
    """A tree of more rows than the engine shares out in one range (4,096) takes the small
    trees' buffers for its first rows and leaves its own for theirs; each still matches a
    fresh thread."""
    small = _tree(10, 120, 3, {})
    large = _tree(60, 4500, 4, {})
    expected_small = _on_fresh_thread(lambda: _outcome(small))
    expected_large = _on_fresh_thread(lambda: _outcome(large))
    for tree, expected in ((small, expected_small), (large, expected_large)) * 2:
        assert _outcome(tree) == expected
    assert expected_small[0] == expected_large[0] == "ok"
