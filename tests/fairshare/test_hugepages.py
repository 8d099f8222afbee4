"""The native core's large arrays: ordinary writable numpy arrays, whichever way allocated."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from ytsched.fairshare import hugepages

LARGE_ROWS = hugepages.HUGE_PAGE_MIN_BYTES // (8 * 40) + 1


@pytest.mark.parametrize("rows", [3, LARGE_ROWS])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_zeros_are_zero_and_writable(rows: int, dtype: type) -> None:
    array = hugepages.zeros((rows, 40), dtype)
    assert array.shape == (rows, 40)
    assert array.dtype == np.dtype(dtype)
    assert array.flags.c_contiguous and array.flags.writeable
    assert not array.any()
    array[-1, -1] = 7
    assert array.sum() == 7


def test_large_empty_is_mapped_and_outlives_the_array() -> None:
    array = hugepages.empty((LARGE_ROWS, 40), np.float64)
    assert array.base is not None  # a view of the mapping, not numpy's own memory
    row = array[-1]
    del array
    gc.collect()
    row[:] = 2.5  # the mapping lives as long as any view of it
    assert float(row.sum()) == 100.0


def test_small_empty_is_plain_numpy() -> None:
    array = hugepages.empty((4, 121), np.float64)
    assert array.base is None
    assert array.shape == (4, 121)
