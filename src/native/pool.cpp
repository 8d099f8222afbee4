// The persistent worker pool of pool.hpp.
#include "pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace ytsched {

namespace {

int hardware_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

std::atomic<int> g_threads{std::min(2, hardware_threads())};

// Helper threads wait on a condition variable for the next job (a generation number); the
// caller runs worker 0 itself and waits until the helpers it asked for are done.  The pool
// object is never destroyed: helpers are detached and may still be waiting at exit.
class Pool {
public:
    explicit Pool(pid_t owner) : owner_(owner) {}

    pid_t owner() const { return owner_; }

    // Only one job at a time: a caller that finds the pool busy runs its workers inline.
    bool try_acquire() {
        bool expected = false;
        return busy_.compare_exchange_strong(expected, true, std::memory_order_acquire);
    }
    void release() { busy_.store(false, std::memory_order_release); }

    // With the pool acquired: runs ``job(0)`` on the caller and offers ``job(w)`` to helpers
    // 1 .. ``helpers``; once the caller's returns, helpers that have not started are skipped.
    void run(int helpers, const std::function<void(int)>& job) {
        helpers = grow(helpers);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            helpers_ = helpers;
            closed_ = false;
            ++generation_;
        }
        wake_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lock(mutex_);
        closed_ = true;
        done_.wait(lock, [&] { return running_ == 0; });
        job_ = nullptr;
    }

private:
    // Starts helpers up to ``helpers``; returns how many there are (fewer if the system
    // refuses a thread: the job then runs with those, or on the caller alone).
    int grow(int helpers) {
        while (static_cast<int>(started_) < helpers) {
            const int index = static_cast<int>(started_) + 1;
            uint64_t seen;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                seen = generation_;
            }
            try {
                std::thread([this, index, seen] { loop(index, seen); }).detach();
            } catch (...) {
                break;
            }
            ++started_;
        }
        return std::min(helpers, static_cast<int>(started_));
    }

    void loop(int index, uint64_t seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        while (true) {
            wake_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            if (closed_ || index > helpers_) continue;
            const std::function<void(int)>* job = job_;
            ++running_;
            lock.unlock();
            (*job)(index);
            lock.lock();
            if (--running_ == 0) done_.notify_all();
        }
    }

    const pid_t owner_;
    std::atomic<bool> busy_{false};
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)>* job_ = nullptr;
    uint64_t generation_ = 0;
    int helpers_ = 0;
    int running_ = 0;      // helpers inside the current job
    bool closed_ = true;   // the caller is done taking items: late helpers skip the job
    unsigned started_ = 0;  // helper threads started (only the acquirer grows the pool)
};

std::mutex g_pool_mutex;
Pool* g_pool = nullptr;

// The process's pool; a forked child (whose copy has no threads) gets a fresh one and leaves
// the parent's copy alone.
Pool* pool() {
    const pid_t pid = getpid();
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (g_pool == nullptr || g_pool->owner() != pid) g_pool = new Pool(pid);
    return g_pool;
}

}  // namespace

int engine_threads() { return g_threads.load(std::memory_order_relaxed); }

int set_engine_threads(int threads) {
    return g_threads.exchange(std::clamp(threads, 1, kMaxEngineThreads), std::memory_order_relaxed);
}

int default_engine_threads() { return std::min(2, hardware_threads()); }

void parallel_items(std::size_t items, int threads,
                    const std::function<void(int, std::size_t)>& body) {
    const int workers = static_cast<int>(
        std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), items));
    if (workers > 1) {
        Pool* p = pool();
        if (p->try_acquire()) {
            std::atomic<std::size_t> next{0};
            const std::function<void(int)> job = [&](int worker) {
                for (std::size_t item = next.fetch_add(1); item < items;
                     item = next.fetch_add(1))
                    body(worker, item);
            };
            p->run(workers - 1, job);
            p->release();
            return;
        }
    }
    for (std::size_t item = 0; item < items; ++item) body(0, item);
}

}  // namespace ytsched
