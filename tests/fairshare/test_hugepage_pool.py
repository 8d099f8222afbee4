"""Large arrays reuse their mappings once nothing uses them, never while a view lives, and the
pool stays bounded (``hugepages.MAX_POOLED``)."""

from __future__ import annotations

import numpy as np

from ytsched.fairshare import hugepages

ROWS = hugepages.HUGE_PAGE_MIN_BYTES // (8 * 40) + 1


def _mapping_of(array: np.ndarray) -> object:
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    return base


def test_released_mapping_is_reused_and_zeroed() -> None:
    first = hugepages.zeros((ROWS, 40), np.float64)
    first[:] = 3.0
    mapping = id(_mapping_of(first))
    del first
    again = hugepages.zeros((ROWS, 40), np.float64)
    assert id(_mapping_of(again)) == mapping
    assert not again.any()


def test_mapping_in_use_is_not_handed_out() -> None:
    first = hugepages.empty((ROWS, 40), np.float64)
    view = first[1:]
    del first
    second = hugepages.empty((ROWS, 40), np.float64)
    assert _mapping_of(second) is not _mapping_of(view)
    view[:] = 1.0
    second[:] = 2.0
    assert float(view[0, 0]) == 1.0


def test_pool_is_bounded() -> None:
    alive = [hugepages.empty((ROWS + k * 70_000, 40), np.float64) for k in range(6)]
    assert hugepages.pooled() <= hugepages.MAX_POOLED
    for array in alive:
        array[-1, -1] = 1.0  # still valid after leaving the pool
    assert all(float(array[-1, -1]) == 1.0 for array in alive)
