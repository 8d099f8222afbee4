"""The element table one large update leaves to the next changes no result.

The native core keeps the last freed element table of at least 2 MiB (about 1,500 rows) and
hands it to the next update whose table fits it (at most twice the size it needs), so that
update's pages are already faulted in.  A kept table holds the previous tree's rows, and every
row is constructed afresh on it, so an update must give the same bytes whatever ran before it:
these tests run trees of different sizes (smaller after larger, which reuses the table; larger
after smaller, which maps a new one; a failing update in between) and compare the raw result
arrays byte for byte with each tree's first run, on one thread and on two.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fairshare.test_native_reuse import _broken, _on_fresh_thread, _outcome, _tree
from ytsched.fairshare import native


@pytest.fixture(params=[1, 2], ids=["one thread", "two threads"])
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """The engine's thread count for the test (rows are constructed in ranges on them)."""
    previous = native.set_threads(request.param)
    try:
        yield request.param
    finally:
        native.set_threads(previous)


def test_tables_of_different_sizes_in_turn(threads: int) -> None:
    # Rows: ~2,100 (a 4 MiB table), ~3,100 (6 MiB), ~6,100 (10 MiB): each pair within and
    # beyond the factor of two a kept table may exceed the one needed.
    trees = [
        _tree(40, 2060, 11, {}),
        _tree(60, 3040, 12, {"main_resource": "cpu"}),
        _tree(100, 6000, 13, {}),
    ]
    broken = _broken(trees[1])
    expected = [_on_fresh_thread(lambda tree=tree: _outcome(tree)) for tree in trees]  # type: ignore[misc]
    assert all(outcome[0] == "ok" for outcome in expected)
    expected_broken = _outcome(broken)
    assert expected_broken[0] == "error"
    for k in (2, 1, 0, 0, 2, 0, 1, 1, 2, 2, 1):
        assert _outcome(trees[k]) == expected[k], f"tree {k} after a different update"
        assert _outcome(broken) == expected_broken
