// The fair-share update on the flat tree: every step of src/ytsched/fairshare/update.py (and of
// guarantees.py, integral.py, functions.py) with the same floating-point operations in the same
// order.  YTsaurus source of the steps: yt/yt/library/vector_hdrf/fair_share_update.cpp.
//
// Every traversal is iterative (explicit stacks), so a chain of 10,000 pools needs no deep C++
// stack.
#include "update.hpp"

#include "op_memo.hpp"
#include "pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <new>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#endif

namespace ytsched {

namespace {

// Subtrees per engine thread before a top-down distribution is shared out: enough that the
// threads' last subtrees end close together on uneven trees.
constexpr std::size_t kDistributeSubtreesPerThread = 16;
constexpr double kDoubleMax = std::numeric_limits<double>::max();
constexpr double kInfiniteAmount = static_cast<double>(INT64_MAX) / 4;  // float(2**63 - 1) / 4

struct Element {
    int parent = -1;
    bool is_op = false;
    bool is_root = false;
    bool fifo = false;
    std::vector<int> children;
    std::vector<int> sorted;

    double weight = 1.0;
    bool weight_explicit = false;
    Vec demand{}, usage{}, limits{};
    uint8_t sg_mask = 0;
    Vec explicit_sg{};
    int itype = 0;
    Vec flow{}, burst{};
    double relaxed_mult = 0.0;
    bool relaxed_mult_set = false;
    bool can_accept = true;
    int should_distribute = -1;
    int params[3] = {-1, -1, -1};
    double start_time = 0.0, pending = 0.0;
    bool promised_flag = false, fifo_reorder = false, step_enabled = true, gang = false;

    Vec inferred{};
    Vec limits_share = kOnes;
    Vec sg{}, proposed{}, usage_share{}, demand_share{}, estimated{};
    int dominant = 1;
    double burst_ratio = 0.0, total_burst = 0.0, flow_ratio = 0.0, total_flow = 0.0;
    Vec fs[4] = {};
    Vec pfs[4] = {};
    int fifo_index = -1, effective_fifo = -1;
    Vec volume{}, overflow{}, acceptable{}, children_overflow{}, accepted_free{};
    double last_ratio = 0.0;

    double fsbff_right_bound = 0.0;  // FSBFF itself lives only while the element is built
    int32_t fsbff_size = 0;
    int32_t mffbs_size = 0;
    SChain mffbs;
    VChain fsbs;
    ImprovedParts parts;
    bool has_parts = false;
    bool prepared = false;
    bool has_functions = false;
    // prepare_recursively: children still to build; the thread whose child brings it to zero
    // builds this element next.
    std::atomic<int> unbuilt_children{0};

    Vec guarantee_share() const { return vadd(sg, proposed); }
};

// The element table of a large tree is hundreds of megabytes written once: on Linux it is
// asked for transparent huge pages, so the kernel faults it in 2 MiB at a time instead of 4 KiB
// (10k pools / 100k operations: ~40,000 page faults fewer per update).  Same memory either way.
//
// Blocks that large are mapped afresh by malloc and unmapped when freed, so every update
// faulted its whole table in again: the kernel zeroes each huge page (1k pools / 10k
// operations: 8 huge pages, up to ~4 ms of system time an update on our VMs).  The last freed table is kept instead
// (``KeptTable``) and handed to the next update whose table fits it: consecutive updates of
// one tree ask for the same size, and its pages are already faulted in.  A process holds at
// most one kept table (the last one freed, if at most kMaxKeptTableBytes); see
// docs/decisions.md ("The element table kept between updates").
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kMaxKeptTableBytes = std::size_t{1} << 30;

class KeptTable {
public:
    // A kept block of at least ``bytes`` (a multiple of kHugePage) and at most twice that, or
    // nullptr (the caller maps a fresh one).  A kept block too small or too large is freed:
    // the tree has changed size, and the next free keeps the new table instead.
    void* take(std::size_t bytes) noexcept {
        void* stale = nullptr;
        void* taken = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (block_ != nullptr) {
                if (bytes_ >= bytes && bytes_ / 2 <= bytes) {
                    taken = block_;
                } else {
                    stale = block_;
                }
                block_ = nullptr;
                bytes_ = 0;
            }
        }
        std::free(stale);
        return taken;
    }

    // Keeps ``block`` (``bytes`` long) if no block is kept yet and it is not too large, else
    // frees it.
    void give(void* block, std::size_t bytes) noexcept {
        if (bytes <= kMaxKeptTableBytes) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (block_ == nullptr) {
                block_ = block;
                bytes_ = bytes;
                return;
            }
        }
        std::free(block);
    }

private:
    std::mutex mutex_;
    void* block_ = nullptr;
    std::size_t bytes_ = 0;
};

KeptTable g_kept_table;

template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}
    static std::size_t huge_bytes(std::size_t count) {
        return (count * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    }
    T* allocate(std::size_t count) {
        const std::size_t bytes = count * sizeof(T);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (bytes >= kHugePage) {
            const std::size_t rounded = huge_bytes(count);
            if (void* kept = g_kept_table.take(rounded)) return static_cast<T*>(kept);
            void* p = std::aligned_alloc(kHugePage, rounded);
            if (p == nullptr) throw std::bad_alloc();
            madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
            return static_cast<T*>(p);
        }
#endif
        void* p = std::malloc(bytes == 0 ? 1 : bytes);
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t count) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (count * sizeof(T) >= kHugePage) {
            g_kept_table.give(p, huge_bytes(count));
            return;
        }
#endif
        std::free(p);
    }
    // Default construction and destruction are left to the owner: the engine constructs the
    // element table's rows on its threads (``Engine::Engine``), so the table's pages are first
    // written (and faulted in) in parallel instead of on the caller, and destroys them there
    // too (``Engine::~Engine``: freeing every row's chains was ~0.5 ms on the caller at 1k
    // pools / 10k operations).  Other constructions as usual.
    template <class U>
    void construct(U*) noexcept {}
    template <class U>
    void destroy(U*) noexcept {}
    template <class U, class A, class... Args>
    void construct(U* p, A&& a, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a), std::forward<Args>(args)...);
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const {
        return true;
    }
    template <class U>
    bool operator!=(const HugePageAllocator<U>&) const {
        return false;
    }
};

constexpr int kCpuIndex = 1;

// Subtrees with fewer unbuilt elements than this are built on the caller alone: waking a
// helper costs more than a few elements.  Tests set 0 to share out every subtree of three or
// more.
std::atomic<std::size_t> g_parallel_build_min{64};

// Whole trees with fewer elements than this many times the subtree threshold (512 by default)
// run every step on the caller alone: each of an update's four hand-outs wakes the helper (a
// futex wake, a context switch on each side), which on the simulator's ~300-element tree
// (~0.35 ms of work) cost ~15% more process CPU for no shorter wall time (round ten).  Larger
// trees keep the subtree threshold for their subtrees (an integral pool's subtree built again
// is often below 512 elements, and worth sharing out).  One knob for tests: 0 forces both.
constexpr std::size_t kParallelTreeFactor = 8;

std::size_t parallel_tree_min() { return parallel_build_min() * kParallelTreeFactor; }

// Reading the flat input and writing the results share rows out from this many elements on.
constexpr std::size_t kMinParallelRows = 4096;

// Runs ``body(from, to)`` over [0, n) in ranges of kMinParallelRows rows shared out among the
// engine's threads (on the caller alone for small n or one thread).  ``body`` must not throw.
template <class Body>
void for_row_ranges(int64_t n, Body&& body) {
    const int threads = engine_threads();
    const auto rows = static_cast<int64_t>(kMinParallelRows);
    if (threads <= 1 || n < rows) {
        body(0, n);
        return;
    }
    const auto ranges = static_cast<std::size_t>((n + rows - 1) / rows);
    parallel_items(ranges, threads, [&](int, std::size_t range) {
        const int64_t from = static_cast<int64_t>(range) * rows;
        body(from, std::min(n, from + rows));
    });
}

// ``round_amount`` (cpu on a 0.01 grid, the rest integers; round half to even like Python).
double round_amount(int index, double value) {
    if (value >= kInfiniteAmount) return kInfiniteAmount;
    if (index == 1) return std::nearbyint(value * 100.0) / 100.0;
    return std::nearbyint(value);
}

Vec scale_amounts(const Vec& a, double factor) {
    Vec r;
    for (int i = 0; i < 5; ++i) r[i] = round_amount(i, a[i] * factor);
    return r;
}

Vec share_of(const Vec& a, const Vec& total) {
    Vec r;
    for (int i = 0; i < 5; ++i) r[i] = total[i] != 0.0 ? a[i] / total[i] : 0.0;
    return r;
}

double max_resource_ratio(const Vec& a, const Vec& total) {
    double result = 0.0;
    for (int i = 0; i < 5; ++i)
        if (total[i] > 0) result = pymax(result, a[i] / total[i]);
    return result;
}

double min_resource_ratio(const Vec& a, const Vec& total) {
    bool have = false;
    double result = 0.0;
    for (int i = 0; i < 5; ++i) {
        if (total[i] > 0) {
            const double ratio = a[i] / total[i];
            result = have ? pymin(result, ratio) : ratio;
            have = true;
        }
    }
    return have ? result : 0.0;
}

int dominant_resource(const Vec& a, const Vec& total) {
    int best = 1;
    double best_ratio = 0.0;
    for (int i = 0; i < 5; ++i) {
        if (total[i] > 0) {
            const double ratio = a[i] / total[i];
            if (ratio > best_ratio) {
                best_ratio = ratio;
                best = i;
            }
        }
    }
    return best;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Adds the time from construction to destruction to one step's total.
class StepTimer {
public:
    StepTimer(Errors& errors, Step step)
        : total_(errors.step_seconds[step]), start_(std::chrono::steady_clock::now()) {}
    ~StepTimer() { total_ += seconds_since(start_); }
    StepTimer(const StepTimer&) = delete;
    StepTimer& operator=(const StepTimer&) = delete;

private:
    double& total_;
    std::chrono::steady_clock::time_point start_;
};

Vec get(const double* row, int col) { return {row[col], row[col + 1], row[col + 2], row[col + 3], row[col + 4]}; }
void put(double* row, int col, const Vec& v) {
    for (int i = 0; i < 5; ++i) row[col + i] = v[i];
}

// The per-element step profile reads a clock five times per element: ``steady_clock::now``
// (a vDSO call, ~25-50 ns here) was ~3% of the 1k-pool / 10k-operation core.  On x86 the
// time-stamp counter is read instead (invariant on every machine we run on), and the ticks are
// converted to seconds by the ratio of the steady clock to the counter over the same build
// (``ProfileClock``); elsewhere the ticks are the steady clock's nanoseconds.
inline uint64_t profile_ticks() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
#endif
}

// Both clocks at construction; ``seconds_per_tick`` is their ratio up to the call.
class ProfileClock {
public:
    ProfileClock() : wall_(std::chrono::steady_clock::now()), ticks_(profile_ticks()) {}
    double seconds_per_tick() const {
        const uint64_t ticks = profile_ticks() - ticks_;
        if (ticks == 0) return 0.0;
        return seconds_since(wall_) / static_cast<double>(ticks);
    }

private:
    std::chrono::steady_clock::time_point wall_;
    uint64_t ticks_;
};

// What one thread building functions owns: its scratch buffers, its share of the per-step
// profile, and the first error it met.  Aligned to its own cache lines: one thread's profile
// writes must not evict the line holding another thread's buffer pointers.
struct alignas(128) WorkerContext {
    Workspace workspace;
    OperationMemo memo;  // this update's operation functions by their inputs (op_memo.hpp)
    double steps[kStepCount] = {};
    std::exception_ptr error;
};

// An update's heap buffers, kept by the calling thread for its next update: the simulator runs
// ~17,000 updates a day on a ~300-element tree, where allocating and freeing every row's
// chains, child lists and the workers' scratch buffers was ~8% of an update; at 1k pools / 10k
// operations malloc and free of the 11,001 rows' buffers were ~5% of the CPU time (round
// eleven).  Row k's buffers go to row k of the next update (a tree changes little from one
// update to the next, so most fit without growing); they are taken and handed back in the
// ranges that construct and destroy the rows.  Only updates of at most kReuseRows elements keep
// or take them, so a thread holds at most the buffers of its largest such tree; buffers are
// cleared when taken, so a reused one holds no values, only capacity.
constexpr std::size_t kReuseRows = std::size_t{1} << 18;

struct SpareRow {
    VChain fsbs;
    SChain mffbs;
    std::vector<int> children;
};

struct SpareBuffers {
    std::vector<SpareRow> rows;
    std::vector<WorkerContext> workers;
};

thread_local SpareBuffers t_spare;

// Exchange a row's reusable buffers with a spare row's (taking them and handing them back are
// the same swaps).
void swap_row_buffers(Element& el, SpareRow& spare) noexcept {
    el.fsbs.x.swap(spare.fsbs.x);
    el.fsbs.y.swap(spare.fsbs.y);
    el.mffbs.x.swap(spare.mffbs.x);
    el.mffbs.y.swap(spare.mffbs.y);
    el.children.swap(spare.children);
}

// A fresh row takes a spare row's buffers, emptied (their capacity is all that is reused).
void take_row_buffers(Element& el, SpareRow& spare) noexcept {
    swap_row_buffers(el, spare);
    el.fsbs.x.clear();
    el.fsbs.y.clear();
    el.mffbs.x.clear();
    el.mffbs.y.clear();
    el.children.clear();
}

// Row ``k`` of the flat input into its element (the engine's constructor calls it for each row
// it constructs).
void read_row(Element& el, const double* in_f, const int32_t* in_i, int64_t k) {
    const double* f = in_f + k * kInF;
    const int32_t* i = in_i + k * kInI;
    el.parent = i[kInParent];
    el.is_op = i[kInIsOp] != 0;
    el.fifo = i[kInFifo] != 0;
    el.weight = f[kInWeight];
    el.weight_explicit = i[kInWeightExplicit] != 0;
    el.demand = get(f, kInDemand);
    el.usage = get(f, kInUsage);
    el.limits = get(f, kInLimits);
    el.sg_mask = static_cast<uint8_t>(i[kInSgMask]);
    el.explicit_sg = get(f, kInExplicitSg);
    el.itype = i[kInIntegralType];
    el.flow = get(f, kInFlow);
    el.burst = get(f, kInBurst);
    el.relaxed_mult = f[kInRelaxedMult];
    el.relaxed_mult_set = i[kInRelaxedMultSet] != 0;
    el.can_accept = i[kInCanAccept] != 0;
    el.should_distribute = i[kInShouldDistribute];
    for (int p = 0; p < 3; ++p) el.params[p] = i[kInFifoParam0 + p];
    el.start_time = f[kInStartTime];
    el.pending = f[kInPendingJobs];
    el.promised_flag = i[kInPromised] != 0;
    el.fifo_reorder = i[kInFifoReorder] != 0;
    el.step_enabled = i[kInStepEnabled] != 0;
    el.gang = i[kInGang] != 0;
    el.volume = get(f, kInVolume);
    el.last_ratio = f[kInLastRatio];
}

class Engine {
public:
    // The table's rows are constructed here, in ranges on the engine's threads (its allocator
    // leaves default construction to us), and each row is read from the flat input
    // (``read_row``) right after it is constructed, while it is in the cache (a second pass over
    // the table's 16 MiB at 1k pools / 10k operations read it back from memory), before
    // anything else can throw.  Should the thread pool itself fail (it allocates), the ranges
    // not marked done are constructed on the caller, so every row is constructed exactly once
    // before the table can be destroyed.
    Engine(int64_t n, const Options& options, const double* in_f, const int32_t* in_i)
        : e_(static_cast<std::size_t>(n)), o_(options), reuse_(static_cast<std::size_t>(n) <= kReuseRows) {
        Element* rows = e_.data();
        const auto range_rows = static_cast<int64_t>(kMinParallelRows);
        auto construct = [rows](int64_t from, int64_t to) {
            for (int64_t k = from; k < to; ++k) ::new (static_cast<void*>(rows + k)) Element();
        };
        // The calling thread's spare rows (``SpareBuffers``), taken by the fresh rows as they
        // are constructed (rows past the spare ones allocate as usual).
        SpareRow* spare = reuse_ ? t_spare.rows.data() : nullptr;
        const auto spare_rows = reuse_ ? std::min(n, static_cast<int64_t>(t_spare.rows.size())) : 0;
        std::vector<std::atomic<bool>> done;
        try {
            done = std::vector<std::atomic<bool>>(static_cast<std::size_t>((n + range_rows - 1) / range_rows));
            for_row_ranges(n, [&](int64_t from, int64_t to) {
                for (int64_t k = from; k < to; ++k) {
                    ::new (static_cast<void*>(rows + k)) Element();
                    read_row(rows[k], in_f, in_i, k);
                    if (k < spare_rows) take_row_buffers(rows[k], spare[k]);
                }
                done[static_cast<std::size_t>(from / range_rows)].store(true, std::memory_order_release);
            });
        } catch (...) {
            for (int64_t from = 0; from < n; from += range_rows) {
                const auto r = static_cast<std::size_t>(from / range_rows);
                if (done.empty() || !done[r].load(std::memory_order_acquire))
                    construct(from, std::min(n, from + range_rows));
            }
            destroy_rows(nullptr);
            throw;
        }
        if (reuse_) take_spare_workers();
        if (workers_.empty()) workers_.resize(1);
    }

    // The table's allocator leaves destruction to us (see ``HugePageAllocator``).  The rows'
    // and workers' buffers go back to the calling thread for its next update first.
    ~Engine() {
        SpareRow* spare = nullptr;
        if (reuse_) {
            SpareBuffers& kept = t_spare;
            try {
                if (kept.rows.size() < e_.size()) kept.rows.resize(e_.size());
                spare = kept.rows.data();
            } catch (...) {
                // nothing kept: the next update allocates as usual
            }
            kept.workers.swap(workers_);
        }
        destroy_rows(spare);
    }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Destroys every row exactly once: in ranges on the engine's threads (each row's chains
    // are freed where its range runs; nothing is read), and should the pool fail (it
    // allocates), the ranges not marked done on the caller.  With ``spare`` (room for every
    // row), each row first hands its buffers to its spare row.
    void destroy_rows(SpareRow* spare) noexcept {
        Element* rows = e_.data();
        const auto n = static_cast<int64_t>(e_.size());
        const auto range_rows = static_cast<int64_t>(kMinParallelRows);
        auto destroy = [rows, spare](int64_t from, int64_t to) {
            for (int64_t k = from; k < to; ++k) {
                if (spare != nullptr) swap_row_buffers(rows[k], spare[k]);
                rows[k].~Element();
            }
        };
        std::vector<std::atomic<bool>> done;
        try {
            done = std::vector<std::atomic<bool>>(static_cast<std::size_t>((n + range_rows - 1) / range_rows));
            for_row_ranges(n, [&](int64_t from, int64_t to) {
                destroy(from, to);
                done[static_cast<std::size_t>(from / range_rows)].store(true, std::memory_order_release);
            });
        } catch (...) {
            for (int64_t from = 0; from < n; from += range_rows) {
                const auto r = static_cast<std::size_t>(from / range_rows);
                if (done.empty() || !done[r].load(std::memory_order_acquire))
                    destroy(from, std::min(n, from + range_rows));
            }
        }
    }

    // The calling thread's spare workers' buffers (``SpareBuffers``) into this update's.
    void take_spare_workers() noexcept {
        workers_.swap(t_spare.workers);
        for (WorkerContext& ctx : workers_) {
            for (double& step : ctx.steps) step = 0.0;
            ctx.error = nullptr;
            ctx.memo.clear();
        }
    }

    std::vector<Element, HugePageAllocator<Element>> e_;
    const Options& o_;
    // This update keeps and takes the calling thread's spare buffers (up to kReuseRows rows).
    const bool reuse_;
    int root_ = -1;
    Errors* errors_ = nullptr;
    std::vector<int> burst_pools_, relaxed_pools_, fifo_pools_;
    std::vector<WorkerContext> workers_;  // [0]: the caller's

    // -- traversals --

    // Pre-order of the subtree of ``start``; ``descend(i)`` says whether to visit i's children.
    template <class Descend>
    std::vector<int> preorder(int start, Descend&& descend) const {
        std::vector<int> out;
        std::vector<int> stack{start};
        while (!stack.empty()) {
            const int i = stack.back();
            stack.pop_back();
            out.push_back(i);
            if (!descend(i)) continue;
            const auto& ch = e_[i].children;
            for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
        }
        return out;
    }

    // Post-order (children in order before their parent) of the subtree of ``start``, skipping
    // (with their subtrees) the children for which ``enter`` is false.
    template <class Enter>
    std::vector<int> postorder(int start, Enter&& enter) const {
        std::vector<int> out;
        std::vector<std::pair<int, std::size_t>> stack{{start, 0}};
        while (!stack.empty()) {
            auto& top = stack.back();
            const auto& ch = e_[top.first].children;
            if (top.second < ch.size()) {
                const int c = ch[top.second++];
                if (enter(c)) stack.emplace_back(c, 0);
            } else {
                out.push_back(top.first);
                stack.pop_back();
            }
        }
        return out;
    }

    // -- steps --

    void validate_pool_configs() {
        std::vector<std::pair<int, bool>> stack{{root_, false}};
        while (!stack.empty()) {
            auto [i, inside] = stack.back();
            stack.pop_back();
            const Element& el = e_[i];
            if (el.is_op) continue;
            const bool flag = el.promised_flag;
            if (flag && inside) errors_->nested_promised.push_back(i);
            for (auto it = el.children.rbegin(); it != el.children.rend(); ++it)
                stack.emplace_back(*it, inside || flag);
        }
    }

    // The inferred value of one resource of one child as YTsaurus stores it in a
    // ``TJobResources`` field (``yt/yt/library/vector_hdrf/job_resources.{h,cpp}``): cpu is a
    // fixed point number with two decimals (``value * 100`` rounded half away from zero), the
    // other resources are integers (truncated toward zero). Mirrors ``assign_job_resource`` in
    // ``fairshare/guarantees.py`` operation for operation; ``+ 0.0`` turns a -0.0 into the 0.0
    // that Python's integer ``floor`` / ``trunc`` produce.
    static double finalize_inferred(int resource, double value) {
        if (!std::isfinite(value)) return value;
        if (resource == kCpuIndex) {
            const double scaled = value * 100.0;
            double whole = std::floor(scaled);
            if (scaled - whole >= 0.5) whole += 1.0;
            return whole / 100.0 + 0.0;
        }
        return std::trunc(value) + 0.0;
    }

    void infer_children(int index, int main) {
        Element& el = e_[index];
        const Vec parent = el.inferred;
        Vec total_explicit = kZero;
        for (int c : el.children) {
            Element& child = e_[c];
            Vec inferred = kZero;
            for (int r = 0; r < 5; ++r)
                if (child.sg_mask & (1u << r)) inferred[r] = child.explicit_sg[r];
            child.inferred = inferred;
            for (int r = 0; r < 5; ++r) total_explicit[r] += inferred[r];
        }
        const double parent_main = parent[main];
        std::vector<std::pair<int, double>> implicit;
        for (int r = 0; r < 5; ++r) {
            if (r == main) continue;
            const double residual = pymax(parent[r] - total_explicit[r], 0.0);
            implicit.clear();
            double total_implicit = 0.0;
            for (int c : el.children) {
                const Element& child = e_[c];
                if (child.sg_mask & (1u << r)) continue;
                const double child_main = child.inferred[main];
                const double ratio = parent_main > 0 ? child_main / parent_main : 0.0;
                const double value = ratio * parent[r];
                implicit.emplace_back(c, value);
                total_implicit += value;
            }
            if (!el.is_root && total_implicit > residual) {
                const double factor = residual / total_implicit;
                for (auto& item : implicit) item.second = item.second * factor;
            }
            for (const auto& item : implicit)
                e_[item.first].inferred[r] = finalize_inferred(r, item.second);
        }
    }

    void determine_inferred_strong_guarantees() {
        // A pool's children's values depend only on the pool's own inferred value (set by its
        // parent) and on the children's configs: subtrees are independent.
        e_[root_].inferred = o_.total;
        distribute_subtrees(root_, [&](int i, std::vector<int>& out) {
            const Element& el = e_[i];
            if (el.is_op) return;
            infer_children(i, o_.main_resource);
            out.insert(out.end(), el.children.begin(), el.children.end());
        });
    }

    void collect_integral_pools() {
        for (int i : preorder(root_, [&](int) { return true; })) {
            const Element& el = e_[i];
            if (el.is_op) continue;
            if (el.itype == 1) burst_pools_.push_back(i);
            if (el.itype == 2) relaxed_pools_.push_back(i);
        }
    }

    bool fifo_less(const Element& a, const Element& b, const int* params) const {
        for (int k = 0; k < 3; ++k) {
            double ka, kb;
            switch (params[k]) {
                case 0:
                    ka = -a.weight;
                    kb = -b.weight;
                    break;
                case 1:
                    ka = a.start_time;
                    kb = b.start_time;
                    break;
                case 2:
                    ka = a.pending;
                    kb = b.pending;
                    break;
                default:
                    return false;
            }
            if (ka != kb) return ka < kb;
        }
        return false;
    }

    void prepare_fifo_pool(int index) {
        Element& pool = e_[index];
        pool.sorted = pool.children;
        std::stable_sort(pool.sorted.begin(), pool.sorted.end(), [&](int a, int b) {
            return fifo_less(e_[a], e_[b], pool.params);
        });
        for (std::size_t k = 0; k < pool.sorted.size(); ++k) {
            e_[pool.sorted[k]].fifo_index = static_cast<int>(k);
            e_[pool.sorted[k]].effective_fifo = -1;
        }
    }

    // Bottom-up attributes of every element (ratios, usage and demand sums, shares, the FIFO
    // order of a FIFO pool's children): an element reads only its own record and its
    // children's finished attributes, so subtrees are shared out (``bottom_up_by_subtrees``).
    // ``fifo_pools_`` keeps the post-order of the whole tree.
    void update_cumulative_attributes() {
        bottom_up_by_subtrees([&](int i) { cumulative_attributes_one(i); });
        for (int i : postorder(root_, [&](int j) { return !e_[j].is_op; }))
            if (!e_[i].is_op && e_[i].fifo) fifo_pools_.push_back(i);
    }

    void cumulative_attributes_one(int i) {
        const Vec& total = o_.total;
        Element& el = e_[i];
        if (!el.is_op) {
            if (el.itype != 0) {
                el.burst_ratio = max_resource_ratio(el.burst, total);
                el.flow_ratio = max_resource_ratio(el.flow, total);
            } else {
                el.burst_ratio = 0.0;
                el.flow_ratio = 0.0;
            }
            el.total_burst = el.burst_ratio;
            el.total_flow = el.flow_ratio;
            Vec usage = kZero, demand = kZero;
            for (int c : el.children) {
                const Element& child = e_[c];
                el.total_flow += child.total_flow;
                el.total_burst += child.total_burst;
                usage = vadd(usage, child.usage);
                demand = vadd(demand, child.demand);
            }
            el.usage = usage;
            el.demand = demand;
        }
        el.limits_share = share_of(vmin(el.limits, total), total);
        el.sg = share_of(el.inferred, total);
        el.dominant = el.usage == kZero ? dominant_resource(el.demand, total)
                                        : dominant_resource(el.usage, total);
        el.usage_share = share_of(el.usage, total);
        el.demand_share = share_of(el.demand, total);
        if (!el.is_op && el.fifo) prepare_fifo_pool(i);
        if (el.is_root) {
            Vec strong = kZero;
            for (int c : el.children) strong = vadd(strong, e_[c].sg);
            el.sg = strong;
        }
    }

    // Calls ``visit(i)`` on every element, children before their parent.  One thread: the
    // tree's post-order.  More: the caller splits the top levels off until there are enough
    // subtrees below them, the subtrees are walked (each in post-order) on the engine's
    // threads, then the caller visits the top levels in post-order.  ``visit(i)`` must write
    // only i's record (and its children's, below the split) and read only i's subtree, which
    // then has every child finished before its parent as in the single walk: same doubles.
    template <class Visit>
    void bottom_up_by_subtrees(Visit&& visit) {
        const int threads = engine_threads();
        auto all = [](int) { return true; };
        if (threads <= 1 || e_.size() < parallel_tree_min()) {
            for (int i : postorder(root_, all)) visit(i);
            return;
        }
        const std::size_t wanted = static_cast<std::size_t>(threads) * kDistributeSubtreesPerThread;
        std::vector<char> top(e_.size(), 0);
        std::vector<int> level{root_}, next;
        while (level.size() < wanted) {
            next.clear();
            bool split = false;
            for (int i : level) {
                const Element& el = e_[i];
                if (el.is_op || el.children.empty()) {
                    next.push_back(i);
                    continue;
                }
                top[static_cast<std::size_t>(i)] = 1;
                split = true;
                next.insert(next.end(), el.children.begin(), el.children.end());
            }
            level.swap(next);
            if (!split) break;
        }
        std::vector<std::exception_ptr> errors(level.size());
        parallel_items(level.size(), threads, [&](int, std::size_t k) {
            try {
                for (int i : postorder(level[k], all)) visit(i);
            } catch (...) {
                errors[k] = std::current_exception();
            }
        });
        for (const auto& error : errors)
            if (error) std::rethrow_exception(error);
        if (top[static_cast<std::size_t>(root_)])
            for (int i : postorder(root_, [&](int j) { return top[static_cast<std::size_t>(j)] != 0; }))
                visit(i);
    }

    // -- integral volumes --

    void update_accumulated_volume(int index) {
        const Vec& total = o_.total;
        if (total == kZero || !o_.has_times) return;
        Element& pool = e_[index];
        const double period = o_.now - o_.previous_update_time;
        const Vec old = pool.volume;
        const Vec capacity = vscale(scale_amounts(total, pool.flow_ratio), o_.saturation_period);
        Vec volume = vadd(old, vscale(vscale(total, period), pool.flow_ratio));
        volume = vsub(volume, vscale(vscale(total, period), pool.last_ratio));
        volume = vmax(volume, kZero);
        const Vec upper = vmax(old, capacity);
        pool.overflow = vmax(vsub(volume, upper), kZero);
        if (pool.can_accept) pool.acceptable = vmax(vsub(capacity, volume), kZero);
        pool.volume = vmin(volume, upper);
    }

    void update_overflow_and_acceptable() {
        auto plain_pool = [&](int j) { return !e_[j].is_op && e_[j].itype == 0; };
        if (!plain_pool(root_)) return;
        for (int i : postorder(root_, plain_pool)) {
            Element& el = e_[i];
            Vec overflow = kZero, acceptable = kZero;
            for (int c : el.children) {
                const Element& child = e_[c];
                if (child.is_op) continue;
                overflow = vadd(overflow, child.overflow);
                acceptable = vadd(acceptable, child.acceptable);
            }
            el.children_overflow = overflow;
            Vec own_overflow = kZero, own_acceptable = kZero;
            for (int r = 0; r < 5; ++r) {
                const double diff = overflow[r] - acceptable[r];
                if (diff > 0) {
                    own_overflow[r] = diff;
                } else if (el.can_accept) {
                    own_acceptable[r] = -diff;
                }
            }
            el.overflow = own_overflow;
            el.acceptable = own_acceptable;
        }
    }

    void distribute_free_volume() {
        auto descend = [&](int j) { return !e_[j].is_op && e_[j].itype == 0; };
        std::vector<std::pair<double, std::pair<double, int>>> hungry;
        for (int i : preorder(root_, descend)) {
            Element& el = e_[i];
            if (el.is_op) continue;
            const Vec free = el.accepted_free;
            if (el.itype != 0) {
                if (!(free == kZero)) el.volume = vadd(el.volume, free);
                continue;
            }
            const bool distribute = el.should_distribute >= 0 ? el.should_distribute == 1
                                                              : o_.should_distribute_free_volume;
            if (!distribute || (free == kZero && el.children_overflow == kZero)) continue;
            Vec free_list = vadd(free, el.children_overflow);
            std::vector<Vec> accepted(el.children.size(), kZero);
            for (int r = 0; r < 5; ++r) {
                if (free_list[r] == 0) continue;
                hungry.clear();
                double weight_sum = 0.0;
                for (std::size_t k = 0; k < el.children.size(); ++k) {
                    const Element& child = e_[el.children[k]];
                    if (child.is_op) continue;
                    const double acceptable = child.acceptable[r];
                    const double weight = child.total_flow;
                    if (acceptable > kEpsilon && weight > kEpsilon) {
                        hungry.push_back({acceptable / weight, {weight, static_cast<int>(k)}});
                        weight_sum += weight;
                    }
                }
                std::stable_sort(hungry.begin(), hungry.end(),
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
                std::size_t index = 0;
                while (index < hungry.size()) {
                    const double weight = hungry[index].second.first;
                    const int k = hungry[index].second.second;
                    const double suggested = free_list[r] * (weight / weight_sum);
                    const double acceptable = e_[el.children[k]].acceptable[r];
                    if (suggested < acceptable) break;
                    accepted[k][r] = acceptable;
                    free_list[r] -= acceptable;
                    weight_sum -= weight;
                    ++index;
                }
                for (; index < hungry.size(); ++index) {
                    const double weight = hungry[index].second.first;
                    const int k = hungry[index].second.second;
                    accepted[k][r] = free_list[r] * (weight / weight_sum);
                }
            }
            for (std::size_t k = 0; k < el.children.size(); ++k)
                if (!e_[el.children[k]].is_op) e_[el.children[k]].accepted_free = accepted[k];
        }
    }

    void consume_and_refill() {
        for (int p : burst_pools_) update_accumulated_volume(p);
        for (int p : relaxed_pools_) update_accumulated_volume(p);
        update_overflow_and_acceptable();
        distribute_free_volume();
    }

    // -- guarantees --

    void adjust_strong_guarantees() {
        for (int i : preorder(root_, [&](int j) { return !e_[j].is_op; })) {
            Element& el = e_[i];
            if (el.is_op) continue;
            el.sg = vmin(el.sg, el.limits_share);
            const Vec available = vmax(el.sg, kZero);
            Vec children_sum = kZero;
            for (int c : el.children) children_sum = vadd(children_sum, e_[c].sg);
            if (dominates(available, children_sum)) continue;
            std::vector<Vec> shares;
            shares.reserve(el.children.size());
            for (int c : el.children) shares.push_back(e_[c].sg);
            auto fits = [&](double factor) {
                Vec acc = kZero;
                for (const Vec& s : shares) acc = vadd(acc, vscale(s, factor));
                return dominates(available, acc);
            };
            const double factor = fits(0.0) ? inverse_lower_bound(0.0, 1.0, fits) : 0.0;
            for (std::size_t k = 0; k < shares.size(); ++k)
                e_[el.children[k]].sg = vscale(shares[k], factor);
        }
    }

    void infer_weights() {
        if (!o_.has_weight_multiplier) return;
        const double multiplier = o_.weight_multiplier;
        for (int i : preorder(root_, [&](int j) { return !e_[j].is_op; })) {
            const Element& el = e_[i];
            if (el.is_op) continue;
            for (int c : el.children) {
                Element& child = e_[c];
                if (child.is_op || child.weight_explicit) continue;
                const double own = vmaxcomp(child.sg) + child.total_flow;
                const double parent = vmaxcomp(el.sg) + el.total_flow;
                child.weight =
                    (own < kEpsilon || parent < kEpsilon) ? 1.0 : own * multiplier / parent;
            }
        }
    }

    void compute_estimated_guarantee_share() {
        for (int i : preorder(root_, [&](int j) { return !e_[j].is_op; })) {
            Element& el = e_[i];
            if (el.children.empty()) continue;
            double weight_sum = 0.0;
            Vec undistributed = el.estimated;
            for (int c : el.children) {
                Element& child = e_[c];
                weight_sum += child.weight;
                const Vec estimate = vmin(child.sg, undistributed);
                child.estimated = estimate;
                undistributed = vsub(undistributed, estimate);
            }
            for (int c : el.children) {
                Element& child = e_[c];
                for (int r = 0; r < 5; ++r)
                    child.estimated[r] += undistributed[r] * child.weight / weight_sum;
            }
        }
    }

    void validate_and_adjust() {
        const Vec& total = o_.total;
        Element& root = e_[root_];
        const Vec total_flow = scale_amounts(total, root.total_flow);
        const Vec total_burst = scale_amounts(total, root.total_burst);
        Vec total_strong = kZero;
        for (int c : root.children) total_strong = vadd(total_strong, e_[c].inferred);
        errors_->total_strong = total_strong;
        errors_->total_flow = total_flow;
        errors_->total_burst = total_burst;
        if (!dominates(total, vadd(total_strong, total_flow))) errors_->flow_overcommit = true;
        if (!dominates(total, vadd(total_strong, total_burst))) {
            errors_->burst_overcommit = true;
            auto fits = [&](double factor) {
                Vec acc = vscale(root.sg, factor);
                for (int p : burst_pools_) acc = vadd(acc, vscale(vconst(e_[p].burst_ratio), factor));
                return dominates(kOnes, acc);
            };
            const double factor = inverse_lower_bound(0.0, 1.0, fits);
            root.sg = vscale(root.sg, factor);
            for (int p : burst_pools_) e_[p].burst_ratio *= factor;
        }
        adjust_strong_guarantees();
        infer_weights();
        root.estimated = root.sg;
        compute_estimated_guarantee_share();
    }

    // -- FIFO reordering --

    void reorder_fifo_children(int index) {
        Element& pool = e_[index];
        if (!(o_.step_function_for_gangs && pool.step_enabled && o_.fifo_reordering &&
              pool.fifo_reorder))
            return;
        const Vec guarantee = pool.sg;
        if (dominates(kEpsilonVec, guarantee)) return;
        std::vector<int> reordered, deferred;
        Vec accepted = kZero;
        bool stopped = false;
        const Vec bound = vadd(guarantee, kEpsilonVec);
        for (int c : pool.sorted) {
            const Element& child = e_[c];
            Vec limited_demand;
            if (child.gang && !dominates(child.limits_share, child.demand_share)) {
                limited_demand = kZero;
            } else {
                limited_demand = vmin(child.demand_share, child.limits_share);
            }
            const bool running = !(child.usage == kZero);
            const bool fits = dominates(bound, vadd(accepted, limited_demand));
            if (stopped || (child.gang && !running && !fits)) {
                deferred.push_back(c);
                continue;
            }
            if (!fits && !child.gang) stopped = true;
            reordered.push_back(c);
            accepted = vadd(accepted, limited_demand);
        }
        reordered.insert(reordered.end(), deferred.begin(), deferred.end());
        if (reordered == pool.sorted) return;
        pool.sorted = std::move(reordered);
        for (std::size_t k = 0; k < pool.sorted.size(); ++k)
            e_[pool.sorted[k]].effective_fifo = static_cast<int>(k);
    }

    // -- functions --

    double min_child_weight(const Element& pool) const {
        double result = kDoubleMax;
        for (int c : pool.children) {
            const double w = e_[c].weight;
            if (w > kEpsilon && w < result) result = w;
        }
        return result;
    }

    bool uses_step_function(const Element& el) const {
        return o_.step_function_for_gangs && el.parent >= 0 && e_[el.parent].step_enabled &&
               el.gang;
    }

    void build_functions(int index, WorkerContext& ctx) {
        Element& el = e_[index];
        el.has_parts = false;
        uint64_t start = profile_ticks();
        VChain& fsbff = ctx.workspace.fsbff;
        OperationMemo::Key key{};
        const bool memo = el.is_op && ctx.memo.active();
        if (el.is_op) {
            const bool step = uses_step_function(el);
            if (memo)
                key = OperationMemo::key(el.usage_share, el.demand_share, step, el.limits_share,
                                         el.guarantee_share());
            OperationMemo::Sizes sizes;
            if (memo && ctx.memo.find(key, el.fsbs, sizes)) {
                el.mffbs = SChain();
                el.fsbff_right_bound = sizes.fsbff_right_bound;
                el.fsbff_size = sizes.fsbff_size;
                el.mffbs_size = sizes.mffbs_size;
                el.has_functions = true;
                ctx.steps[kStepFsbff] += static_cast<double>(profile_ticks() - start);
                return;
            }
            operation_fsbff(el.usage_share, el.demand_share, step, fsbff);
        } else if (el.fifo) {
            std::vector<const VChain*> chains;
            for (int c : el.sorted) chains.push_back(&e_[c].fsbs);
            fsbff = fifo_fsbff(chains, o_.fast_fifo);
        } else if (el.children.empty()) {
            fsbff.x.assign({0.0, 1.0});
            fsbff.y.assign({kZero, kZero});
        } else {
            const double min_weight = min_child_weight(el);
            std::vector<VChain>& scratch = ctx.workspace.scaled;
            std::vector<const VChain*>& scaled = ctx.workspace.chains;
            if (scratch.size() < el.children.size()) scratch.resize(el.children.size());
            scaled.resize(el.children.size());
            for (std::size_t k = 0; k < el.children.size(); ++k) {
                const Element& child = e_[el.children[k]];
                scaled[k] = scale_and_extend(child.fsbs, child.weight / min_weight, scratch[k]);
            }
            if (o_.improved) {
                fsbff = improved_sum(scaled, el.parts);
                el.has_parts = true;
            } else {
                sum_chains(scaled, fsbff);
            }
        }
        uint64_t next = profile_ticks();
        ctx.steps[kStepFsbff] += static_cast<double>(next - start);
        start = next;
        // Only a pool with children reads its MFFBS again (the top-down fit factor): the others
        // compose from the workspace's copy and keep none (100k operations would hold ~20 MB).
        const SChain& mffbs = max_fit_factor_in_workspace(fsbff, el.limits_share,
                                                          el.guarantee_share(), ctx.workspace);
        el.mffbs_size = static_cast<int32_t>(mffbs.x.size() - 1);
        if (el.is_op || el.children.empty()) {
            el.mffbs = SChain();
        } else {
            el.mffbs.x.assign(mffbs.x.begin(), mffbs.x.end());
            el.mffbs.y.assign(mffbs.y.begin(), mffbs.y.end());
        }
        next = profile_ticks();
        ctx.steps[kStepMffbs] += static_cast<double>(next - start);
        start = next;
        VChain& composed = ctx.workspace.composed;
        compose(fsbff, mffbs, ctx.workspace, composed);
        next = profile_ticks();
        ctx.steps[kStepCompose] += static_cast<double>(next - start);
        start = next;
        VChain& compressed = ctx.workspace.compressed;
        compress(composed, compressed);
        // FSBS lives until the distribution: kept at its exact size (a copy out of the
        // workspace, whose buffers keep their capacity for the next element).
        el.fsbs.x.assign(compressed.x.begin(), compressed.x.end());
        el.fsbs.y.assign(compressed.y.begin(), compressed.y.end());
        el.fsbff_right_bound = fsbff.x.back();
        el.fsbff_size = static_cast<int32_t>(fsbff.x.size() - 1);
        if (memo)
            ctx.memo.insert(key, el.fsbs, {el.fsbff_right_bound, el.fsbff_size, el.mffbs_size});
        next = profile_ticks();
        ctx.steps[kStepCompress] += static_cast<double>(next - start);
        el.has_functions = true;
    }

    // Builds the functions of every unprepared element of the subtree of ``start``, children
    // before parents.  With more than one engine thread the elements without unbuilt children
    // (in post-order) are shared among the threads in chunks, and the thread that finishes an
    // element's last unbuilt child goes on to build that element (a count of unbuilt children
    // per element, decremented atomically, so the parent's build sees every child's result).
    // Nobody waits at a level: a thread that the machine delays holds up only its own
    // ancestors.  ``start`` itself is built last, on the caller with the pool free, so a wide
    // sum there (the root's) can split its points over the threads.  An element's functions
    // read only its own record and its children's finished functions, so which thread builds
    // it changes no double.  The threads' profiles are added up after.
    void prepare_recursively(int start) {
        if (e_[start].prepared) return;
        const ProfileClock clock;
        const std::vector<int> order = postorder(start, [&](int j) { return !e_[j].prepared; });
        const int threads = engine_threads();
        if (threads <= 1 || order.size() < parallel_build_min() || order.size() < 3 ||
            e_.size() < parallel_tree_min()) {
            for (int i : order) {
                build_functions(i, workers_[0]);
                e_[i].prepared = true;
            }
            collect_worker_steps(clock);
            return;
        }
        if (workers_.size() < static_cast<std::size_t>(threads))
            workers_.resize(static_cast<std::size_t>(threads));
        std::vector<int> ready;
        for (int i : order) {
            int count = 0;
            for (int c : e_[i].children) count += e_[c].prepared ? 0 : 1;
            e_[i].unbuilt_children.store(count, std::memory_order_relaxed);
            if (count == 0 && i != start) ready.push_back(i);
        }
        const std::size_t chunk = std::clamp<std::size_t>(
            ready.size() / (static_cast<std::size_t>(threads) * 32), 1, 32);
        const std::size_t chunks = (ready.size() + chunk - 1) / chunk;
        std::atomic<bool> stop{false};
        parallel_items(chunks, threads, [&](int worker, std::size_t c) {
            WorkerContext& ctx = workers_[static_cast<std::size_t>(worker)];
            const std::size_t first = c * chunk;
            const std::size_t last = std::min(ready.size(), first + chunk);
            try {
                for (std::size_t k = first; k < last; ++k) {
                    int i = ready[k];
                    while (!stop.load(std::memory_order_relaxed)) {
                        build_functions(i, ctx);
                        e_[i].prepared = true;
                        const int parent = e_[i].parent;
                        if (parent == start) {
                            e_[start].unbuilt_children.fetch_sub(1, std::memory_order_relaxed);
                            break;
                        }
                        auto& unbuilt = e_[parent].unbuilt_children;
                        if (unbuilt.fetch_sub(1, std::memory_order_acq_rel) != 1) break;
                        i = parent;
                    }
                }
            } catch (...) {
                if (!ctx.error) ctx.error = std::current_exception();
                stop.store(true, std::memory_order_relaxed);
            }
        });
        bool failed = false;
        for (WorkerContext& ctx : workers_) {
            if (ctx.error) failed = true;
            ctx.error = nullptr;
        }
        if (!failed) {
            try {
                build_functions(start, workers_[0]);
                e_[start].prepared = true;
            } catch (...) {
                failed = true;
            }
        }
        if (failed) {
            // Which element failed first depends on the threads' timing; the single-threaded
            // walk from scratch raises the error the sequential engine (and the reference)
            // raises.  Building an element again from the same children is idempotent.
            for (int i : order) e_[i].prepared = false;
            for (int i : order) {
                build_functions(i, workers_[0]);
                e_[i].prepared = true;
            }
        }
        collect_worker_steps(clock);
    }

    // The threads' step times (in ticks of ``profile_ticks``) into the update's profile.
    void collect_worker_steps(const ProfileClock& clock) {
        const double seconds_per_tick = clock.seconds_per_tick();
        for (WorkerContext& ctx : workers_) {
            for (int s = 0; s < kStepCount; ++s) {
                errors_->step_seconds[s] += ctx.steps[s] * seconds_per_tick;
                ctx.steps[s] = 0.0;
            }
        }
    }

    // -- integral shares --

    double share_ratio_by_volume(const Element& pool) const {
        return min_resource_ratio(pool.volume, o_.total) / o_.smooth_period;
    }

    static Vec adjust_proposed(const Vec& limits, const Vec& strong, const Vec& proposed) {
        if (dominates(limits, vadd(strong, proposed))) return proposed;
        Vec adjusted = vsub(limits, strong);
        for (int r = 0; r < 5; ++r) {
            for (int k = 0; k < 32; ++k) {
                if (limits[r] < strong[r] + adjusted[r]) {
                    adjusted[r] = std::nextafter(adjusted[r], 0.0);
                } else {
                    break;
                }
            }
        }
        return adjusted;
    }

    Vec hierarchical_available_limits_share(int index) const {
        Vec result = kOnes;
        int cur = index;
        while (cur >= 0 && !e_[cur].is_root) {
            const Element& el = e_[cur];
            result = vmin(result, vsub(el.limits_share, el.guarantee_share()));
            cur = el.parent;
        }
        return result;
    }

    void increase_hierarchical_integral_share(int index, const Vec& delta) {
        int cur = index;
        while (cur >= 0) {
            Element& el = e_[cur];
            Vec increased = vadd(el.proposed, delta);
            if (!el.is_root) increased = adjust_proposed(el.limits_share, el.sg, increased);
            el.proposed = increased;
            cur = el.parent;
        }
    }

    void update_burst_pool_integral_shares() {
        for (int p : burst_pools_) {
            Element& pool = e_[p];
            const double ratio = pymin(pool.burst_ratio, share_ratio_by_volume(pool));
            Vec proposed = vmin(vconst(ratio), hierarchical_available_limits_share(p));
            proposed = adjust_proposed(pool.limits_share, pool.sg, proposed);
            pool.proposed = proposed;
            prepare_recursively(p);
            pool.proposed = kZero;
            const Vec within = value_at(pool.fsbs, 0.0);
            const Vec integral_share = vmax(vsub(within, pool.sg), kZero);
            increase_hierarchical_integral_share(p, integral_share);
            pool.prepared = false;
            pool.last_ratio = vmaxcomp(integral_share);
        }
    }

    void update_relaxed_pool_integral_shares() {
        if (relaxed_pools_.empty()) return;
        Vec available = kOnes;
        for (int c : e_[root_].children) {
            const Element& child = e_[c];
            available = vsub(available, vmin(child.guarantee_share(), child.demand_share));
        }
        available = vmax(available, kZero);
        std::vector<int> pools;
        std::vector<double> weights;
        std::vector<Vec> original_limits;
        for (int p : relaxed_pools_) {
            Element& pool = e_[p];
            const double ratio = share_ratio_by_volume(pool);
            if (ratio == 0) continue;
            pools.push_back(p);
            weights.push_back(ratio);
            original_limits.push_back(pool.limits_share);
            const double multiplier =
                pool.relaxed_mult_set ? pool.relaxed_mult : o_.relaxed_share_multiplier_limit;
            const Vec cap = vmin(vconst(ratio), vscale(vconst(pool.flow_ratio), multiplier));
            pool.limits_share = vmin(pool.limits_share, vadd(cap, pool.sg));
            prepare_recursively(p);
        }
        if (pools.empty()) return;
        double min_weight = weights[0];
        for (double w : weights) min_weight = pymin(min_weight, w);
        for (double& w : weights) w = w / min_weight;
        auto fits = [&](double fit_factor) {
            Vec acc = kZero;
            for (std::size_t k = 0; k < pools.size(); ++k) {
                const Element& pool = e_[pools[k]];
                const Vec share = value_at(pool.fsbs, pymin(1.0, fit_factor * weights[k]));
                acc = vadd(acc, vmax(vsub(share, pool.sg), kZero));
            }
            return dominates(available, acc);
        };
        const double fit_factor = inverse_lower_bound(0.0, 1.0, fits);
        for (std::size_t k = 0; k < pools.size(); ++k) {
            const int p = pools[k];
            Element& pool = e_[p];
            const Vec share = value_at(pool.fsbs, pymin(1.0, fit_factor * weights[k]));
            const Vec integral_share = vmax(vsub(share, pool.sg), kZero);
            pool.limits_share = original_limits[k];
            const Vec limited = vmin(integral_share, hierarchical_available_limits_share(p));
            increase_hierarchical_integral_share(p, limited);
            pool.prepared = false;
            pool.last_ratio = vmaxcomp(limited);
        }
    }

    // -- top-down distribution --

    void set_detailed(Element& el, const Vec& total, bool promised) {
        const Vec strong = vmin(total, el.sg);
        const Vec rest = vsub(total, strong);
        const Vec integral = vmin(rest, el.proposed);
        Vec* out = promised ? el.pfs : el.fs;
        out[0] = strong;
        out[1] = integral;
        out[2] = vsub(rest, integral);
        out[3] = total;
    }

    const std::vector<int>& children_in_order(const Element& pool) const {
        return pool.fifo ? pool.sorted : pool.children;
    }

    void child_suggestions(const Element& pool, double fit_factor, std::vector<double>& out) const {
        if (pool.fifo) {
            const std::size_t count = pool.sorted.size();
            const double satisfied_d = std::trunc(fit_factor);
            const auto satisfied = static_cast<std::size_t>(satisfied_d);
            const double partial = fit_factor - satisfied_d;
            out.assign(count, 0.0);
            for (std::size_t k = 0; k < satisfied && k < count; ++k) out[k] = 1.0;
            if (partial != 0.0) {
                if (satisfied >= count) throw EngineError("fifo: fit factor beyond the children");
                out[satisfied] = partial;
            }
            return;
        }
        const double min_weight = min_child_weight(pool);
        out.resize(pool.children.size());
        for (std::size_t k = 0; k < pool.children.size(); ++k)
            out[k] = pymin(1.0, fit_factor * (e_[pool.children[k]].weight / min_weight));
    }

    // Distributes ``start``'s share over its subtree, element by element: each element's
    // results depend only on the suggestion its parent hands it and on its own (and its
    // children's) finished functions, so the subtrees below a level are independent of each
    // other and of the order they are visited in (see ``distribute_subtrees``).
    void distribute_scalar(int start, double start_suggestion, bool promised) {
        distribute_subtrees(std::pair<int, double>{start, start_suggestion},
                            [&](const std::pair<int, double>& item,
                                std::vector<std::pair<int, double>>& out) {
                                distribute_scalar_one(item.first, item.second, promised, out);
                            });
    }

    // One element of ``distribute_scalar``: sets its results and appends its children with
    // their suggestions (in the order of ``children_in_order``) to ``out``.
    void distribute_scalar_one(int i, double suggestion, bool promised,
                               std::vector<std::pair<int, double>>& out) {
        Element& el = e_[i];
        if (el.is_op) {
            set_detailed(el, value_at(el.fsbs, suggestion), promised);
            return;
        }
        const auto& children = children_in_order(el);
        if (children.empty()) {
            set_detailed(el, kZero, promised);
            return;
        }
        const Vec suggested = value_at(el.fsbs, suggestion);
        const Vec ceiling = vadd(suggested, kEpsilonVec);
        std::vector<double> buffer;
        auto fits = [&](double fit_factor) {
            child_suggestions(el, fit_factor, buffer);
            Vec acc = kZero;
            for (std::size_t k = 0; k < children.size(); ++k)
                acc = vadd(acc, value_at(e_[children[k]].fsbs, buffer[k]));
            return dominates(ceiling, acc);
        };
        double fit_factor = value_at(el.mffbs, suggestion);
        if (!fits(fit_factor)) fit_factor = inverse_lower_bound(0.0, fit_factor, fits);
        child_suggestions(el, fit_factor, buffer);
        for (std::size_t k = 0; k < children.size(); ++k) out.emplace_back(children[k], buffer[k]);
        set_detailed(el, suggested, promised);
    }

    // Runs a top-down distribution from ``start``: ``step(item, out)`` handles one element and
    // appends its children's items to ``out``.  One thread: a pre-order walk, as the reference.
    // More: the caller handles whole levels until there are enough subtrees (or none), then the
    // subtrees are shared out among the engine's threads, each walked in pre-order.  Every
    // element is handled once from the same item either way, and ``step`` writes only that
    // element's record, so the results are the same doubles; only which error is met first
    // could differ, so on any error the whole distribution runs again on the caller alone
    // (idempotent: every element is written again from the same item) and raises the
    // sequential engine's error.
    template <class Item, class Step>
    void distribute_subtrees(const Item& start, Step&& step) {
        auto walk = [&](const Item& from) {
            std::vector<Item> stack{from};
            std::vector<Item> children;
            while (!stack.empty()) {
                const Item item = stack.back();
                stack.pop_back();
                children.clear();
                step(item, children);
                for (std::size_t k = children.size(); k-- > 0;) stack.push_back(children[k]);
            }
        };
        const int threads = engine_threads();
        if (threads <= 1 || e_.size() < parallel_tree_min()) {
            walk(start);
            return;
        }
        const std::size_t wanted = static_cast<std::size_t>(threads) * kDistributeSubtreesPerThread;
        std::vector<Item> level{start}, next;
        try {
            while (!level.empty() && level.size() < wanted) {
                next.clear();
                for (const Item& item : level) step(item, next);
                level.swap(next);
            }
        } catch (...) {
            walk(start);
            throw;  // not reached: the walk meets the error first
        }
        if (level.empty()) return;
        std::atomic<bool> failed{false};
        parallel_items(level.size(), threads, [&](int, std::size_t k) {
            if (failed.load(std::memory_order_relaxed)) return;
            try {
                walk(level[k]);
            } catch (...) {
                failed.store(true, std::memory_order_relaxed);
            }
        });
        if (failed.load()) {
            walk(start);
            throw EngineError("distribution failed on a thread only");  // not reached
        }
    }

    void child_shares(const Element& pool, double fit_factor, std::vector<Vec>& out) const {
        if (pool.fifo) {
            const auto& children = pool.sorted;
            const double satisfied_d = std::trunc(fit_factor);
            const auto satisfied = static_cast<std::size_t>(satisfied_d);
            const double partial = fit_factor - satisfied_d;
            out.assign(children.size(), kZero);
            for (std::size_t k = 0; k < satisfied && k < children.size(); ++k)
                out[k] = value_at(e_[children[k]].fsbs, 1.0);
            if (partial != 0.0) {
                if (satisfied >= children.size())
                    throw EngineError("fifo: fit factor beyond the children");
                out[satisfied] = value_at(e_[children[satisfied]].fsbs, partial);
            }
            return;
        }
        if (!pool.has_parts) throw EngineError("improved distribution without improved functions");
        pool.parts.shares(fit_factor, out);
    }

    void distribute_vector(int start, const Vec& start_suggested, bool promised) {
        distribute_subtrees(std::pair<int, Vec>{start, start_suggested},
                            [&](const std::pair<int, Vec>& item,
                                std::vector<std::pair<int, Vec>>& out) {
                                distribute_vector_one(item.first, item.second, promised, out);
                            });
    }

    // One element of ``distribute_vector`` (see ``distribute_scalar_one``).
    void distribute_vector_one(int i, const Vec& suggested, bool promised,
                               std::vector<std::pair<int, Vec>>& out) {
        Element& el = e_[i];
        if (el.is_op) {
            set_detailed(el, suggested, promised);
            return;
        }
        const auto& children = children_in_order(el);
        if (children.empty()) {
            set_detailed(el, kZero, promised);
            return;
        }
        std::vector<Vec> buffer;
        auto children_total = [&](double fit_factor) {
            child_shares(el, fit_factor, buffer);
            Vec acc = kZero;
            for (const Vec& s : buffer) acc = vadd(acc, s);
            return acc;
        };
        const double right_bound = el.fsbff_right_bound;
        double fit_factor = inverse_lower_bound(0.0, right_bound, [&](double f) {
            return dominates(suggested, children_total(f));
        });
        if (!dominates(kEpsilonVec, vsub(suggested, children_total(fit_factor))) &&
            o_.improved_gap) {
            const Vec ceiling = vadd(suggested, kEpsilonVec);
            fit_factor = inverse_lower_bound(fit_factor, right_bound, [&](double f) {
                return dominates(ceiling, children_total(f));
            });
        }
        if (fit_factor < kEpsilon) fit_factor = 0.0;
        child_shares(el, fit_factor, buffer);
        for (std::size_t k = 0; k < children.size(); ++k) out.emplace_back(children[k], buffer[k]);
        set_detailed(el, suggested, promised);
    }

    void compute_promised_guarantee_fair_share() {
        std::vector<int> stack{root_};
        while (!stack.empty()) {
            const int i = stack.back();
            stack.pop_back();
            Element& el = e_[i];
            if (el.is_op) continue;
            if (el.promised_flag && !el.is_root) {
                if (o_.improved) {
                    distribute_vector(i, value_at(el.fsbs, 0.0), true);
                } else {
                    distribute_scalar(i, 0.0, true);
                }
                continue;
            }
            for (auto it = el.children.rbegin(); it != el.children.rend(); ++it) stack.push_back(*it);
        }
    }

    void update_root_fair_share() {
        Element& root = e_[root_];
        Vec used_strong = kZero, total = kZero;
        for (int c : root.children) {
            used_strong = vadd(used_strong, e_[c].fs[0]);
            total = vadd(total, e_[c].fs[3]);
        }
        const Vec configured = root.sg;
        root.sg = used_strong;
        set_detailed(root, total, false);
        root.sg = configured;
    }

    void run() {
        Errors& t = *errors_;
        {
            StepTimer timer(t, kStepAttributes);
            validate_pool_configs();
            determine_inferred_strong_guarantees();
            collect_integral_pools();
            update_cumulative_attributes();
        }
        {
            StepTimer timer(t, kStepIntegralVolumes);
            consume_and_refill();
        }
        {
            StepTimer timer(t, kStepGuarantees);
            validate_and_adjust();
            for (int p : fifo_pools_) reorder_fifo_children(p);
        }
        {
            // Functions built here count in their own steps too; the profile subtracts them.
            StepTimer timer(t, kStepIntegralShares);
            update_burst_pool_integral_shares();
            update_relaxed_pool_integral_shares();
        }
        prepare_recursively(root_);
        {
            StepTimer timer(t, kStepDistribute);
            if (o_.improved) {
                distribute_vector(root_, value_at(e_[root_].fsbs, 1.0), false);
            } else {
                distribute_scalar(root_, 1.0, false);
            }
            compute_promised_guarantee_fair_share();
            update_root_fair_share();
        }
    }
};

}  // namespace

std::size_t parallel_build_min() { return g_parallel_build_min.load(std::memory_order_relaxed); }

void set_parallel_build_min(std::size_t elements) {
    g_parallel_build_min.store(elements, std::memory_order_relaxed);
}

void run_update(int64_t n, const double* in_f, const int32_t* in_i, const Options& options,
                double* out_f, int32_t* out_i, Errors& errors) {
    if (n <= 0) throw EngineError("the tree has no elements");
    auto setup_start = std::chrono::steady_clock::now();
    // The parent links are checked first, in row order (so the first bad row names the error),
    // then the rows are read into the element table as it is constructed (shared out on large
    // trees).
    int root = -1;
    for (int64_t k = 0; k < n; ++k) {
        const int32_t parent = in_i[k * kInI + kInParent];
        if (parent < 0) {
            if (root >= 0) throw EngineError("more than one root");
            root = static_cast<int>(k);
        } else if (parent >= n) {
            throw EngineError("parent index out of range");
        }
    }
    if (root < 0) throw EngineError("no root");
    Engine engine(n, options, in_f, in_i);
    engine.errors_ = &errors;
    engine.root_ = root;
    auto& e = engine.e_;
    e[static_cast<std::size_t>(root)].is_root = true;
    for (int64_t k = 0; k < n; ++k) {
        const int p = e[static_cast<std::size_t>(k)].parent;
        if (p >= 0) {
            if (e[p].is_op) throw EngineError("an operation cannot have children");
            e[p].children.push_back(static_cast<int>(k));
        }
    }
    // Every element must hang below the root (no cycles).
    {
        std::vector<int> stack{engine.root_};
        int64_t reached = 0;
        while (!stack.empty()) {
            const int j = stack.back();
            stack.pop_back();
            ++reached;
            for (int c : e[j].children) stack.push_back(c);
        }
        if (reached != n) throw EngineError("elements form a cycle and never reach the root");
    }

    errors.step_seconds[kStepSetup] += seconds_since(setup_start);
    engine.run();

    StepTimer output_timer(errors, kStepOutput);
    // Each element's results go to its own rows: any split of the rows writes the same bytes.
    // Large trees share the rows out (on a fresh result mapping this is mostly page faults).
    for_row_ranges(n, [&](int64_t from, int64_t to) {
        for (int64_t k = from; k < to; ++k) {
            const Element& el = e[static_cast<std::size_t>(k)];
            double* f = out_f + k * kOutF;
            int32_t* i = out_i + k * kOutI;
            for (int part = 0; part < 4; ++part) {
                put(f, kOutFairShare + 5 * part, el.fs[part]);
                put(f, kOutPromised + 5 * part, el.pfs[part]);
            }
            put(f, kOutLimitsShare, el.limits_share);
            put(f, kOutSgShare, el.sg);
            put(f, kOutProposed, el.proposed);
            put(f, kOutUsageShare, el.usage_share);
            put(f, kOutDemandShare, el.demand_share);
            put(f, kOutEstimated, el.estimated);
            f[kOutBurstRatio] = el.burst_ratio;
            f[kOutTotalBurstRatio] = el.total_burst;
            f[kOutFlowRatio] = el.flow_ratio;
            f[kOutTotalFlowRatio] = el.total_flow;
            put(f, kOutVolume, el.volume);
            f[kOutLastRatio] = el.last_ratio;
            put(f, kOutOverflow, el.overflow);
            put(f, kOutAcceptable, el.acceptable);
            put(f, kOutChildrenOverflow, el.children_overflow);
            put(f, kOutAcceptedFree, el.accepted_free);
            f[kOutWeight] = el.weight;
            put(f, kOutInferredSg, el.inferred);
            put(f, kOutUsage, el.usage);
            put(f, kOutDemand, el.demand);
            put(f, kOutLimitedDemand, el.has_functions ? el.fsbs.y.back() : kZero);
            i[kOutDominant] = el.dominant;
            i[kOutFifoIndex] = el.fifo_index;
            i[kOutEffectiveFifo] = el.effective_fifo;
            i[kOutFsbsSize] = el.has_functions ? static_cast<int32_t>(el.fsbs.x.size() - 1) : -1;
            i[kOutFsbffSize] = el.has_functions ? el.fsbff_size : -1;
            i[kOutMffbsSize] = el.has_functions ? el.mffbs_size : -1;
        }
    });
}

Options options_from_flat(const double* of, const int32_t* oi) {
    Options o;
    o.total = {of[0], of[1], of[2], of[3], of[4]};
    o.now = of[5];
    o.previous_update_time = of[6];
    o.saturation_period = of[7];
    o.smooth_period = of[8];
    o.relaxed_share_multiplier_limit = of[9];
    o.weight_multiplier = of[10];
    o.has_times = oi[0] != 0;
    o.main_resource = oi[1];
    o.should_distribute_free_volume = oi[2] != 0;
    o.step_function_for_gangs = oi[3] != 0;
    o.improved = oi[4] != 0;
    o.improved_gap = oi[5] != 0;
    o.fast_fifo = oi[6] != 0;
    o.fifo_reordering = oi[7] != 0;
    o.has_weight_multiplier = oi[8] != 0;
    o.truncate_inferred_guarantees = oi[9] != 0;
    return o;
}

}  // namespace ytsched
