// The engine's worker threads: one small persistent pool per process, created on first use,
// shared by every update (see docs/decisions.md, "Native core threads").
//
// Work handed to the pool is always split so that every item's arithmetic is the same on any
// thread (an element's functions, a range of a sum's sample points): which thread runs an
// item never changes a result, so the thread count is a speed setting only.
#pragma once

#include <cstddef>
#include <functional>

namespace ytsched {

// Threads an update may use (the caller's included); 1 runs everything on the caller.
int engine_threads();
// Sets the thread count (clamped to [1, kMaxEngineThreads]); returns the previous one.
int set_engine_threads(int threads);
// min(2, hardware threads): the default.
int default_engine_threads();
constexpr int kMaxEngineThreads = 64;

// Calls ``body(worker, item)`` exactly once for every item in [0, items), on the caller
// (worker 0) and on up to ``threads - 1`` pool helpers (workers 1 ..), each taking the next
// item not yet taken.  The caller takes items until none are left and then waits only for
// the helpers that took one: a helper that wakes late (a busy machine) finds nothing and the
// caller never waits for it.  When the pool is already running a job (a second update on
// another thread, or a sum inside an element built on the pool) or ``threads`` is 1, the caller
// takes every item itself.  ``body`` must not throw.
void parallel_items(std::size_t items, int threads,
                    const std::function<void(int, std::size_t)>& body);

}  // namespace ytsched
