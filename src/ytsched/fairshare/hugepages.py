"""Large result and input arrays of the native core, backed by transparent huge pages.

On 10k pools / 100k operations the core's arrays are 35 MB (input) and 106 MB (results), new
for every update.  Memory that large never comes from malloc's free lists (glibc maps anything
above 32 MiB afresh), so every 4 KiB page of it is faulted in on first write; on the virtual
machines we run on that cost ~500 ms per update for the results alone.  An anonymous mapping
advised ``MADV_HUGEPAGE`` is faulted in 2 MiB at a time and measured 2-3x cheaper.  The advice
changes nothing else: the array is an ordinary writable ``numpy`` array over that mapping (the
mapping lives as long as any view of it), and where transparent huge pages are off (or on other
systems) the mapping simply uses small pages, or ``numpy`` allocates as usual.

Consecutive updates of one tree ask for the same sizes again, so up to :data:`MAX_POOLED`
mappings are kept and handed out again once no array uses them any more (only this module
still references the mapping): their pages are already faulted in, so a repeated update pays
no page faults at all.  The pool is bounded (the oldest mapping is dropped first), so an idle
process holds at most that many (on 10k pools / 100k operations ~140 MB: the input and result
arrays of the last updates).
"""

from __future__ import annotations

import contextlib
import mmap
import sys
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

# Below this, arrays come from numpy's allocator: malloc reuses freed memory of that size.
HUGE_PAGE_MIN_BYTES = 32 << 20
_HUGE_PAGE = 2 << 20
MAX_POOLED = 4
"""How many mappings are kept for reuse (see the module docstring)."""

_pool: list[mmap.mmap] = []
"""Mappings that may be handed out again, oldest first."""
_lock = threading.Lock()  # updates run on worker threads too (the service)


def _mapping(size: int) -> tuple[mmap.mmap, bool]:
    """A mapping of ``size`` bytes (a multiple of 2 MiB) and whether it is fresh (zero-filled)."""
    with _lock:
        for position in range(len(_pool)):
            # Unused: only the pool references it (``getrefcount`` counts its argument too);
            # every array over a mapping references the mapping itself (numpy's base).
            if len(_pool[position]) == size and sys.getrefcount(_pool[position]) <= 2:
                candidate = _pool.pop(position)
                _pool.append(candidate)  # most recently used last
                return candidate, False
        mapped = mmap.mmap(-1, size)
        with contextlib.suppress(OSError):  # advice only: small pages then
            mapped.madvise(mmap.MADV_HUGEPAGE)
        _pool.append(mapped)
        if len(_pool) > MAX_POOLED:
            del _pool[0]  # arrays still using it keep it alive
        return mapped, True


def _mapped(
    shape: tuple[int, int], dtype: np.dtype[Any], *, zeroed: bool
) -> np.ndarray[Any, Any] | None:
    count = shape[0] * shape[1]
    size = count * dtype.itemsize
    if size < HUGE_PAGE_MIN_BYTES or getattr(mmap, "MADV_HUGEPAGE", None) is None:
        return None
    mapped, fresh = _mapping((size + _HUGE_PAGE - 1) // _HUGE_PAGE * _HUGE_PAGE)
    array = np.frombuffer(mapped, dtype=dtype, count=count).reshape(shape)
    if zeroed and not fresh:
        array.fill(0)
    return array


def empty(shape: tuple[int, int], dtype: npt.DTypeLike) -> np.ndarray[Any, Any]:
    """An uninitialised C-contiguous array, on huge pages if large."""
    kind = np.dtype(dtype)
    array = _mapped(shape, kind, zeroed=False)
    return np.empty(shape, dtype=kind) if array is None else array


def zeros(shape: tuple[int, int], dtype: npt.DTypeLike) -> np.ndarray[Any, Any]:
    """A zeroed C-contiguous array (a fresh mapping is zero-filled), on huge pages if large."""
    kind = np.dtype(dtype)
    array = _mapped(shape, kind, zeroed=True)
    return np.zeros(shape, dtype=kind) if array is None else array


def pooled() -> int:
    """How many mappings the pool holds (for tests)."""
    with _lock:
        return len(_pool)
