"""Large result and input arrays of the native core, backed by transparent huge pages.

On 10k pools / 100k operations the core's arrays are 35 MB (input) and 106 MB (results), new
for every update.  Memory that large never comes from malloc's free lists (glibc maps anything
above 32 MiB afresh), so every 4 KiB page of it is faulted in on first write; on the virtual
machines we run on that cost ~500 ms per update for the results alone.  An anonymous mapping
advised ``MADV_HUGEPAGE`` is faulted in 2 MiB at a time and measured 2-3x cheaper.  The advice
changes nothing else: the array is an ordinary writable ``numpy`` array over that mapping (the
mapping lives as long as any view of it), and where transparent huge pages are off (or on other
systems) the mapping simply uses small pages, or ``numpy`` allocates as usual.
"""

from __future__ import annotations

import contextlib
import mmap
from typing import Any

import numpy as np
import numpy.typing as npt

# Below this, arrays come from numpy's allocator: malloc reuses freed memory of that size.
HUGE_PAGE_MIN_BYTES = 32 << 20
_HUGE_PAGE = 2 << 20


def _mapped(shape: tuple[int, int], dtype: np.dtype[Any]) -> np.ndarray[Any, Any] | None:
    count = shape[0] * shape[1]
    size = count * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if size < HUGE_PAGE_MIN_BYTES or advice is None:
        return None
    mapped = mmap.mmap(-1, (size + _HUGE_PAGE - 1) // _HUGE_PAGE * _HUGE_PAGE)
    with contextlib.suppress(OSError):  # advice only: small pages then
        mapped.madvise(advice)
    return np.frombuffer(mapped, dtype=dtype, count=count).reshape(shape)


def empty(shape: tuple[int, int], dtype: npt.DTypeLike) -> np.ndarray[Any, Any]:
    """An uninitialised C-contiguous array, on huge pages if large."""
    kind = np.dtype(dtype)
    array = _mapped(shape, kind)
    return np.empty(shape, dtype=kind) if array is None else array


def zeros(shape: tuple[int, int], dtype: npt.DTypeLike) -> np.ndarray[Any, Any]:
    """A zeroed C-contiguous array (a fresh mapping is zero-filled), on huge pages if large."""
    kind = np.dtype(dtype)
    array = _mapped(shape, kind)
    return np.zeros(shape, dtype=kind) if array is None else array
