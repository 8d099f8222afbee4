"""When the service lets Python's cyclic garbage collector pause it.

The service answers every heartbeat from one event loop, so a collection pauses all of them.
A full (generation 2) collection walks every tracked object: the framework, the revived model,
every operation and job.  Left to its defaults CPython runs one whenever the long-lived heap
grew by a quarter, which on a busy cluster means every few seconds and hundreds of
milliseconds each time: the tail of heartbeat latency (docs/performance.md, "Service").

The policy here:

* at start-up, one collection, then ``gc.freeze()``: what exists now (modules, framework,
  revived model) is kept out of every later collection;
* automatic collections of the older generations are switched off (generations 1 and 2's
  thresholds are raised out of reach); the youngest generation is collected as usual, and
  right after each young collection what survived it is moved to the permanent generation
  (``gc.freeze``, which moves lists and walks nothing).  At 2,000 heartbeats a second the
  collections of generation 1 walked every survivor a second time (~4-7 ms each, 8-10 a
  second, ~4% of a core, and the update's own ``gc.collect(1)`` after each step walked up
  to a second's survivors) and freed almost nothing: the service makes next to no cyclic
  garbage (5 objects in 350 collections of generation 1, 29 in 1,444 of generation 0; the
  ``ytsched_gc_collected_objects`` metric keeps counting).  So each object is walked once;
  a cycle that becomes garbage after it survived a young collection waits for the next
  full collection (below) instead of the next freeze step;
* every ``freeze_period`` seconds the objects created since the last freeze are collected
  (cheap: only those are walked) and frozen in turn;
* every ``full_period`` seconds everything is unfrozen and collected once, so that cycles
  which became garbage after being frozen are reclaimed: one known pause per period instead
  of many unplanned ones.

Frozen objects are still freed by reference counting the moment they are unreachable; only
garbage held in reference cycles waits for the next full period.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ytsched.server")

UNREACHABLE_THRESHOLD = 1_000_000_000
"""Generation 2's threshold while the policy is installed: never reached in practice."""
SLOW_PAUSE = 0.1
"""Seconds; longer collections are logged."""


class CollectorPolicy:
    """Installs the policy above and runs its periodic steps (``maintain`` after each tick)."""

    def __init__(
        self,
        *,
        freeze_period: float = 60.0,
        full_period: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        observe: Callable[[int, float, int], None] | None = None,
    ) -> None:
        self.freeze_period = freeze_period
        self.full_period = full_period
        self.clock = clock
        self.observe = observe
        self.installed = False
        self._saved_thresholds: tuple[int, int, int] | None = None
        self._started = 0.0
        self._last_freeze = 0.0
        self._last_full = 0.0

    def install(self) -> None:
        """Collect and freeze what exists, and take over generation 2 (idempotent)."""
        if self.installed:
            return
        gc.callbacks.append(self._callback)
        gc.collect()
        gc.freeze()
        self._saved_thresholds = gc.get_threshold()
        young = self._saved_thresholds[0]
        gc.set_threshold(young, UNREACHABLE_THRESHOLD, UNREACHABLE_THRESHOLD)
        self._last_freeze = self._last_full = self.clock()
        self.installed = True

    def uninstall(self) -> None:
        """Give the collector back its defaults (used by tests and on shutdown)."""
        if not self.installed:
            return
        gc.callbacks.remove(self._callback)
        if self._saved_thresholds is not None:
            gc.set_threshold(*self._saved_thresholds)
        gc.unfreeze()
        self.installed = False

    def maintain(self) -> str | None:
        """Run whichever periodic step is due; returns ``"full"``, ``"freeze"`` or None."""
        if not self.installed:
            return None
        now = self.clock()
        if now - self._last_full >= self.full_period:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._last_full = self._last_freeze = now
            return "full"
        if now - self._last_freeze >= self.freeze_period:
            gc.collect()
            gc.freeze()
            self._last_freeze = now
            return "freeze"
        return None

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        seconds = time.perf_counter() - self._started
        generation = int(info.get("generation", 0))
        if generation < 2:
            gc.freeze()  # the survivors of a young collection: see the module's docstring
        if self.observe is not None:
            self.observe(generation, seconds, int(info.get("collected", 0)))
        if seconds >= SLOW_PAUSE:
            log.info(
                "garbage collection of generation %d took %.0f ms (%d objects frozen)",
                generation,
                1000 * seconds,
                gc.get_freeze_count(),
            )
