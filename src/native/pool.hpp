// The engine's worker threads: one small persistent pool per process, created on first use,
// shared by every update (see docs/decisions.md, "Native core threads").
//
// Work handed to the pool is always split so that every item's arithmetic is the same on any
// thread (an element's functions, a range of a sum's sample points): which thread runs an
// item never changes a result, so the thread count is a speed setting only.
#pragma once

#include <functional>

namespace ytsched {

// Threads an update may use (the caller's included); 1 runs everything on the caller.
int engine_threads();
// Sets the thread count (clamped to [1, kMaxEngineThreads]); returns the previous one.
int set_engine_threads(int threads);
// min(2, hardware threads): the default.
int default_engine_threads();
constexpr int kMaxEngineThreads = 64;

// Runs ``job(worker)`` for worker = 0 .. workers - 1 at the same time, worker 0 on the caller,
// the others on pool threads, and returns when all have returned.  ``job`` must not throw.
// When the pool is already running a job (a second update on another thread, or a sum inside
// an element being built on a pool thread) or ``workers`` is 1, every worker runs on the
// caller, one after the other, so callers must not wait on each other inside ``job``.
// Returns the number of workers that ran concurrently (1 when run inline).
int run_workers(int workers, const std::function<void(int)>& job);

}  // namespace ytsched
