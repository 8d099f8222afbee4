// Chain operations; see plf.hpp.  Each function names the Python reference it mirrors.
#include "plf.hpp"

#include "pool.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstring>
#include <limits>
#include <exception>
#include <utility>

namespace ytsched {

namespace {

[[noreturn]] void fail(const std::string& what) { throw EngineError(what); }

// bisect_left(xs, x, lo)
template <class XS>
std::size_t bisect_left(const XS& xs, double x, std::size_t lo = 0) {
    return static_cast<std::size_t>(std::lower_bound(xs.begin() + lo, xs.end(), x) - xs.begin());
}

// bisect_right(xs, x, lo, hi)
template <class XS>
std::size_t bisect_right(const XS& xs, double x, std::size_t lo, std::size_t hi) {
    return static_cast<std::size_t>(
        std::upper_bound(xs.begin() + lo, xs.begin() + hi, x) - xs.begin());
}

double segment_value(double x0, double y0, double x1, double y1, double m) {
    if (x0 == x1) return y0;
    return interpolate(x0, y0, x1, y1, m);
}

}  // namespace

namespace {

// A scalar chain under construction in preallocated arrays: ``push`` is ``push_point`` (the
// merge rule) on (x[0, n), y[0, n)), with the size kept in a register instead of a vector's end.
template <class T>
struct RawChain {
    double* x;
    T* y;
    std::size_t n;
    void append(double px, const T& py) {
        x[n] = px;
        y[n] = py;
        ++n;
    }
    [[gnu::always_inline]] void push(double px, const T& py) {
        const double lx = x[n - 1];
        const T ly = y[n - 1];
        if (px == lx) {
            if (py == ly) return;
            if (x[n - 2] == lx) {
                y[n - 1] = py;
                return;
            }
        } else if (py == ly) {
            if (y[n - 2] == ly) {
                x[n - 1] = px;
                return;
            }
        } else if (x[n - 2] == lx && y[n - 2] == ly) {
            x[n - 1] = px;
            y[n - 1] = py;
            return;
        }
        append(px, py);
    }
};

}  // namespace

// ``PLF.value_at``: the left limit.
Vec value_at(const VChain& f, double x) {
    const std::size_t j = bisect_left(f.x, x, 1);
    if (j >= f.x.size()) fail("value_at: argument beyond the function's domain");
    const std::size_t i = j - 1;
    const double lb = f.x[i];
    const double rb = f.x[i + 1];
    if (lb == rb) return f.y[i];
    return interpolate_vector(lb, f.y[i], rb, f.y[i + 1], x);
}

// ``PLF.right_limit_at``.
Vec right_limit_at(const VChain& f, double x) {
    const std::size_t j = bisect_right(f.x, x, 0, f.x.size() - 1);
    if (j == 0) fail("right_limit_at: argument before the function's domain");
    const std::size_t i = j - 1;
    const double lb = f.x[i];
    const double rb = f.x[i + 1];
    if (lb == rb) return f.y[i + 1];
    return interpolate_vector(lb, f.y[i], rb, f.y[i + 1], x);
}

double value_at(const SChain& f, double x) {
    const std::size_t j = bisect_left(f.x, x, 1);
    if (j >= f.x.size()) fail("value_at: argument beyond the function's domain");
    const std::size_t i = j - 1;
    const double lb = f.x[i];
    const double rb = f.x[i + 1];
    if (lb == rb) return f.y[i];
    return interpolate(lb, f.y[i], rb, f.y[i + 1], x);
}

uint64_t double_to_key(double x) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    constexpr uint64_t sign = uint64_t{1} << 63;
    return (bits & sign) ? ~bits : (bits ^ sign);
}

double key_to_double(uint64_t key) {
    constexpr uint64_t sign = uint64_t{1} << 63;
    const uint64_t bits = (key & sign) ? (key ^ sign) : ~key;
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

VChain constant_chain(double lb, double rb, const Vec& value) {
    VChain c;
    c.x = {lb, rb};
    c.y = {value, value};
    return c;
}

// ``functions._operation_fsbff`` through the merge rule.
VChain operation_fsbff(const Vec& usage, const Vec& demand, bool step) {
    VChain c;
    operation_fsbff(usage, demand, step, c);
    return c;
}

void operation_fsbff(const Vec& usage, const Vec& demand, bool step, VChain& c) {
    // At most seven points (0, five usage fit factors, 2): the workspace chain keeps that room
    // from one operation to the next, so building it allocates nothing.
    c.x.clear();
    c.y.clear();
    c.x.reserve(8);
    c.y.reserve(8);
    if (step) {
        if (demand == kZero) {
            c.x.assign({0.0, 2.0});
            c.y.assign({kZero, kZero});
            return;
        }
        c.x.assign({0.0, 1.0, 1.0, 2.0});
        c.y.assign({kZero, kZero, demand, demand});
        return;
    }
    const double max_usage = vmaxcomp(usage);
    if (max_usage == 0.0) {
        c.x.assign({0.0, 1.0});
        c.y.assign({kZero, kZero});
    } else {
        c.x.push_back(0.0);
        c.y.push_back(kZero);
        double previous = 0.0;
        // A stable sort: without NaNs, ``<`` is a strict weak order, under which every stable
        // sort gives the same sequence (equal values, -0.0 beside +0.0 included, in their
        // original order), so five doubles are sorted by insertion in place; ``stable_sort``
        // asked for a temporary buffer first, an allocation per operation.  With a NaN the
        // order is whatever ``stable_sort`` makes of it, so it still sorts those.
        Vec sorted = usage;
        if (has_nan(usage)) {
            std::stable_sort(sorted.begin(), sorted.end());
        } else {
            for (int i = 1; i < 5; ++i) {
                const double value = sorted[i];
                int j = i;
                for (; j > 0 && value < sorted[j - 1]; --j) sorted[j] = sorted[j - 1];
                sorted[j] = value;
            }
        }
        for (double value : sorted) {
            const double fit_factor = value / max_usage;
            if (fit_factor > previous) {
                add_point(c.x, c.y, fit_factor, vmin(vconst(value), usage));
                previous = fit_factor;
            }
        }
    }
    push_point(c.x, c.y, 2.0, demand);
}

// ``fsbs.scale_argument(scale).extend_right(1.0)``; a function that neither changes is returned
// as it is (``nullptr``), sparing the copy.
const VChain* scale_and_extend(const VChain& f, double scale, VChain& c) {
    if (scale != 1.0) {
        c.x.clear();
        c.y.clear();
        c.x.reserve(f.x.size() + 1);
        c.y.reserve(f.x.size() + 1);
        c.x.push_back(f.x[0] / scale);
        c.x.push_back(f.x[1] / scale);
        c.y.push_back(f.y[0]);
        c.y.push_back(f.y[1]);
        for (std::size_t j = 2; j < f.x.size(); ++j) push_point(c.x, c.y, f.x[j] / scale, f.y[j]);
    } else if (f.x.back() < 1.0) {
        c = f;
    } else {
        return &f;
    }
    if (c.x.back() < 1.0) {
        const Vec last = c.y.back();
        push_point(c.x, c.y, 1.0, last);
    }
    return &c;
}

namespace {

// Left and right limits (``left_right_limit_at``) at increasing ``points`` in the domain; the
// reference interpolates on every non-vertical segment (even a horizontal one).
void sample_limits(const VChain& f, const std::vector<double>& points, std::vector<Vec>& lefts,
                   std::vector<Vec>& rights) {
    const auto& xs = f.x;
    const auto& ys = f.y;
    const std::size_t n = xs.size();
    lefts.resize(points.size());
    rights.resize(points.size());
    std::size_t i = bisect_left(xs, points[0]);
    for (std::size_t k = 0; k < points.size(); ++k) {
        const double p = points[k];
        while (i < n && xs[i] < p) ++i;
        if (i >= n) fail("sample: point beyond the function's domain");
        const double x = xs[i];
        if (x == p) {
            lefts[k] = ys[i];
            rights[k] = (i + 1 < n && xs[i + 1] == p) ? ys[i + 1] : ys[i];
        } else {
            if (i == 0) fail("sample: point before the function's domain");
            const Vec v = interpolate_vector(xs[i - 1], ys[i - 1], x, ys[i], p);
            lefts[k] = v;
            rights[k] = v;
        }
    }
}

VChain build_from_limits(const std::vector<double>& points, const std::vector<Vec>& lefts,
                         const std::vector<Vec>& rights) {
    VChain c;
    c.x = {points[0], points[0]};
    c.y = {lefts[0], rights[0]};
    for (std::size_t k = 1; k < points.size(); ++k) {
        push_point(c.x, c.y, points[k], lefts[k]);
        push_point(c.x, c.y, points[k], rights[k]);
    }
    // ``Builder.finish`` of a one-point function keeps the point segment.
    return c;
}

}  // namespace

namespace {
std::atomic<std::size_t> g_parallel_sum_pairs{std::size_t{1} << 19};
}  // namespace

std::size_t parallel_sum_pairs() { return g_parallel_sum_pairs.load(std::memory_order_relaxed); }

void set_parallel_sum_pairs(std::size_t pairs) {
    g_parallel_sum_pairs.store(pairs, std::memory_order_relaxed);
}

namespace {

using V4 = double __attribute__((vector_size(32)));

// The two run kernels of ``sum_chains``: add one child segment's values to a run of points'
// left totals.  Compiled twice, for the SSE2 baseline and for AVX2 (used when the CPU has it; tests
// switch it off with ``set_wide_vector_kernels`` to check the baseline build too): IEEE
// addition, subtraction, multiplication and division give the same doubles in any vector lane,
// and -ffp-contract=off keeps them from being fused, so both builds are exact.
#define YTSCHED_RUN_KERNELS(SUFFIX, ATTRIBUTE)                                                   \
    /* One loop over the run adding all five resources (one loop per resource exited at a        \
       mispredicted jump per resource on short runs). */                                         \
    ATTRIBUTE void add_flat_run_##SUFFIX(double* total, std::size_t count, std::size_t k,        \
                                         std::size_t stop, const Vec& lv) {                      \
        double* __restrict t0 = total;                                                           \
        double* __restrict t1 = total + count;                                                   \
        double* __restrict t2 = total + 2 * count;                                               \
        double* __restrict t3 = total + 3 * count;                                               \
        double* __restrict t4 = total + 4 * count;                                               \
        const double v0 = lv[0], v1 = lv[1], v2 = lv[2], v3 = lv[3], v4 = lv[4];                 \
        for (std::size_t j = k; j < stop; ++j) {                                                 \
            t0[j] += v0;                                                                         \
            t1[j] += v1;                                                                         \
            t2[j] += v2;                                                                         \
            t3[j] += v3;                                                                         \
            t4[j] += v4;                                                                         \
        }                                                                                        \
    }                                                                                            \
    /* ``interpolate_vector(x0, lv, x1, rv, p)`` at every point of the run, four points at a     \
       time in GCC vector types (both arms computed, the lanes chosen by the comparison), all five\
       resources per four points: one loop over the run (and one over its last points) instead   \
       of one per resource, whose exits on short runs of varying length were mispredicted. */    \
    ATTRIBUTE void add_sloped_run_##SUFFIX(double* total, std::size_t count, const double* pts,  \
                                           std::size_t k, std::size_t stop, double x0,           \
                                           double x1, const Vec& lv, const Vec& rv) {            \
        const double width = x1 - x0;                                                            \
        const std::size_t len = stop - k;                                                        \
        const std::size_t whole = len & ~std::size_t{3};                                         \
        const double* p = pts + k;                                                               \
        double* __restrict t0 = total + k;                                                       \
        double* __restrict t1 = total + count + k;                                               \
        double* __restrict t2 = total + 2 * count + k;                                           \
        double* __restrict t3 = total + 3 * count + k;                                           \
        double* __restrict t4 = total + 4 * count + k;                                           \
        double l[5], h[5], d[5];                                                                 \
        for (int r = 0; r < 5; ++r) {                                                            \
            l[r] = lv[r];                                                                        \
            h[r] = rv[r];                                                                        \
            d[r] = h[r] - l[r];                                                                  \
        }                                                                                        \
        const V4 xv = {x0, x0, x0, x0};                                                          \
        const V4 wv = {width, width, width, width};                                              \
        const V4 half = {0.5, 0.5, 0.5, 0.5};                                                    \
        const V4 one = {1.0, 1.0, 1.0, 1.0};                                                     \
        for (std::size_t j = 0; j < whole; j += 4) {                                             \
            V4 pv;                                                                               \
            std::memcpy(&pv, p + j, sizeof pv);                                                  \
            const V4 t = (pv - xv) / wv;                                                         \
            const V4 u = one - t;                                                                \
            const auto left = t < half;                                                          \
            double* const rows[5] = {t0, t1, t2, t3, t4};                                        \
            for (int r = 0; r < 5; ++r) {                                                        \
                const V4 lvec = {l[r], l[r], l[r], l[r]};                                        \
                const V4 hvec = {h[r], h[r], h[r], h[r]};                                        \
                const V4 dvec = {d[r], d[r], d[r], d[r]};                                        \
                const V4 v = left ? lvec + dvec * t : hvec - dvec * u;                           \
                V4 a;                                                                            \
                std::memcpy(&a, rows[r] + j, sizeof a);                                          \
                a += v;                                                                          \
                std::memcpy(rows[r] + j, &a, sizeof a);                                          \
            }                                                                                    \
        }                                                                                        \
        for (std::size_t j = whole; j < len; ++j) {                                              \
            const double t = (p[j] - x0) / width;                                                \
            const bool left = t < 0.5;                                                           \
            t0[j] += select_double(left, l[0] + d[0] * t, h[0] - d[0] * (1.0 - t));              \
            t1[j] += select_double(left, l[1] + d[1] * t, h[1] - d[1] * (1.0 - t));              \
            t2[j] += select_double(left, l[2] + d[2] * t, h[2] - d[2] * (1.0 - t));              \
            t3[j] += select_double(left, l[3] + d[3] * t, h[3] - d[3] * (1.0 - t));              \
            t4[j] += select_double(left, l[4] + d[4] * t, h[4] - d[4] * (1.0 - t));              \
        }                                                                                        \
    }

YTSCHED_RUN_KERNELS(baseline, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
YTSCHED_RUN_KERNELS(avx2, __attribute__((target("avx2"))))
#endif
#undef YTSCHED_RUN_KERNELS

struct RunKernels {
    void (*flat)(double*, std::size_t, std::size_t, std::size_t, const Vec&);
    void (*sloped)(double*, std::size_t, const double*, std::size_t, std::size_t, double, double,
                   const Vec&, const Vec&);
};

bool avx2_available() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();  // this runs from a static initialiser, possibly before libgcc's
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

std::atomic<bool> g_wide_kernels{avx2_available()};

RunKernels current_run_kernels() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (g_wide_kernels.load(std::memory_order_relaxed))
        return {add_flat_run_avx2, add_sloped_run_avx2};
#endif
    return {add_flat_run_baseline, add_sloped_run_baseline};
}

}  // namespace

bool wide_vector_kernels() { return g_wide_kernels.load(std::memory_order_relaxed); }

bool set_wide_vector_kernels(bool enabled) {
    return g_wide_kernels.exchange(enabled && avx2_available(), std::memory_order_relaxed);
}

namespace {

// A child's value at ``p`` as the sum's run kernels add it, for a point inside its segment
// ``[x0, x1]`` (``lv``, ``rv``): ``lv`` on a flat segment, else ``interpolate_vector`` (the
// kernels' lanes perform exactly these scalar operations).
inline Vec run_value(double x0, double x1, const Vec& lv, const Vec& rv, double p) {
    bool flat = true;
    for (int r = 0; r < 5; ++r) flat &= (rv[r] - lv[r]) == 0.0;
    if (flat) return lv;
    const double t = (p - x0) / (x1 - x0);
    Vec out;
    for (int r = 0; r < 5; ++r) {
        const double d = rv[r] - lv[r];
        out[r] = select_double(t < 0.5, lv[r] + d * t, rv[r] - d * (1.0 - t));
    }
    return out;
}

// Scratch of one thread's sums (sample points and left totals), kept between sums so that
// every pool does not allocate and fault in fresh pages; buffers grown beyond kKeep doubles
// (the widest sums of 10k-pool trees) are released after the sum.
struct SumScratch {
    std::vector<double> points;
    std::vector<double> merged;           // the other buffer of ``sorted_runs``
    ChainVector<double> totals;  // grown without zeroing: every sum zeroes the part it uses
    std::vector<std::size_t> jumps;
    std::vector<std::size_t> runs, next_runs;
};

// The number of elements of ``a`` (size ``na``) among the first ``k`` of ``std::merge(a, b)``
// (``b`` of size ``nb``): the smallest ``i`` with ``b[k - i - 1] < a[i]`` (``std::merge`` puts
// ``a[i]`` first unless ``b[j] < a[i]``), so merging ``a[i..)`` with ``b[k - i..)`` continues
// the merge exactly where its first ``k`` outputs end.
std::size_t merge_corank(const double* a, std::size_t na, const double* b, std::size_t nb,
                         std::size_t k) {
    std::size_t lo = k > nb ? k - nb : 0;
    std::size_t hi = k < na ? k : na;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (!(b[k - mid - 1] < a[mid])) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Sorts ``points``, the concatenation of the non-decreasing runs ``[runs[k], runs[k + 1])``, by
// merging pairs of neighbouring runs until one is left (log2(runs) passes instead of a sort's
// log2(points) levels; a wide pool's points are its children's breakpoints, each child's
// already in order).  Leaves the result in ``points`` (swapped with ``merged``).  With
// ``threads`` > 1 each pass is cut into pieces of about equal output (a piece starts both of
// its runs at ``merge_corank``) shared out on the engine's threads: every piece writes what the
// whole merge writes at its positions, so the result is the same sequence.
void sorted_runs(std::vector<double>& points, std::vector<double>& merged,
                 std::vector<std::size_t>& runs, std::vector<std::size_t>& next_runs,
                 int threads) {
    if (merged.size() < points.size()) merged.resize(points.size());
    // (No lower bound worth a wake-up is needed: only sums past ``parallel_sum_pairs`` get
    // here, whose passes are thousands of points; tests that lower it split small merges.)
    const std::size_t piece =
        threads > 1 ? std::max<std::size_t>(points.size() / (static_cast<std::size_t>(threads) * 4), 16)
                    : points.size() + 1;
    struct Piece {
        std::size_t first, middle, last, from, to;  // the pair's runs and this piece's outputs
    };
    std::vector<Piece> pieces;
    while (runs.size() > 2) {
        next_runs.clear();
        next_runs.push_back(0);
        pieces.clear();
        const double* from = points.data();
        double* to = merged.data();
        std::size_t k = 0;
        for (; k + 2 < runs.size(); k += 2) {
            for (std::size_t start = runs[k]; start < runs[k + 2]; start += piece)
                pieces.push_back({runs[k], runs[k + 1], runs[k + 2], start,
                                  std::min(runs[k + 2], start + piece)});
            next_runs.push_back(runs[k + 2]);
        }
        if (k + 1 < runs.size()) {
            std::copy(from + runs[k], from + runs[k + 1], to + runs[k]);
            next_runs.push_back(runs[k + 1]);
        }
        auto merge_piece = [&](const Piece& q) {
            const double* a = from + q.first;
            const double* b = from + q.middle;
            const std::size_t na = q.middle - q.first;
            const std::size_t nb = q.last - q.middle;
            const std::size_t i0 = merge_corank(a, na, b, nb, q.from - q.first);
            const std::size_t i1 = merge_corank(a, na, b, nb, q.to - q.first);
            const std::size_t j0 = q.from - q.first - i0;
            const std::size_t j1 = q.to - q.first - i1;
            std::merge(a + i0, a + i1, b + j0, b + j1, to + q.from);
        };
        if (pieces.size() > 1 && threads > 1) {
            parallel_items(pieces.size(), threads,
                           [&](int, std::size_t item) { merge_piece(pieces[item]); });
        } else {
            for (const Piece& q : pieces) merge_piece(q);
        }
        const std::size_t size = points.size();
        points.swap(merged);
        points.resize(size);
        runs.swap(next_runs);
    }
}
constexpr std::size_t kKeepSumScratch = std::size_t{1} << 20;

}  // namespace

// ``plf.sum_functions``: every function sampled at every critical point (left and right limits,
// ``left_right_limit_at``), added in function order starting from zero.  Sampling and adding are
// fused: each function is walked once with a cursor and added into the running totals.
//
// A function's right limit differs from its left limit only where it has a vertical segment
// (two points with the same argument); elsewhere both are the same value, added in the same
// order, so the right total is the left total bit for bit.  The totals are therefore kept for
// the left limits only, and the right totals are computed in a second pass at the points where
// some function jumps (about 1% of the points of the generated trees), from +0.0 in function
// order with the same value expressions: the same doubles as adding both everywhere.
VChain sum_chains(const std::vector<const VChain*>& chains) {
    VChain out;
    sum_chains(chains, out);
    return out;
}

void sum_chains(const std::vector<const VChain*>& chains, VChain& out) {
    if (chains.empty()) fail("sum of no functions");
    double lb = chains[0]->x.front();
    double rb = chains[0]->x.back();
    std::size_t total = 0;
    for (const VChain* c : chains) {
        lb = pymax(lb, c->x.front());
        rb = pymin(rb, c->x.back());
        total += c->x.size();
    }
    if (lb > rb) fail("sum of functions without a common domain");
    thread_local SumScratch scratch;
    std::vector<double>& points = scratch.points;
    points.clear();
    points.reserve(total);
    std::vector<std::size_t>& runs = scratch.runs;
    runs.assign(1, 0);
    // Sorted and made unique, the points are one sequence whatever the sort, as long as no two
    // of them compare equal with different bits: NaNs never pass the domain test, so only a
    // -0.0 beside a +0.0 could (``unique`` keeps whichever the sort put first).  Without a
    // -0.0, and with every function's points in order (always, checked anyway), merging the
    // functions' runs gives the sort's sequence; otherwise the sort runs as before.
    bool mergeable = true;
    for (const VChain* c : chains) {
        double previous = -std::numeric_limits<double>::infinity();
        for (double x : c->x)
            if (lb <= x && x <= rb) {
                points.push_back(x);
                mergeable &= previous <= x && !(x == 0.0 && std::signbit(x));
                previous = x;
            }
        runs.push_back(points.size());
    }
    // Wide sums merge on the engine's threads (by the same threshold as their points' totals
    // below, on the points before they are made unique).
    const int threads = engine_threads();
    const bool wide = threads > 1 && total * chains.size() >= parallel_sum_pairs();
    if (mergeable) {
        sorted_runs(scratch.points, scratch.merged, runs, scratch.next_runs, wide ? threads : 1);
    } else {
        std::sort(points.begin(), points.end());
    }
    points.erase(std::unique(points.begin(), points.end()), points.end());
    const std::size_t count = points.size();
    // Left totals as structure of arrays (resource r at ``totals[r * count + k]``): adding one
    // value to a run of points is then a unit-stride loop the compiler vectorises.
    // Each range of points zeroes its own totals (below), not here: a wide sum's ranges run on
    // the engine's threads.
    auto& totals = scratch.totals;
    totals.resize(5 * count);
    // Blocks of points, every function within a block: each point still gets the functions in
    // function order, but the block's totals stay in cache while the functions pass over them
    // (a wide pool's sum is children x points additions).
    constexpr std::size_t kBlock = 1024;
    // Points ``[from, to)``: each point's totals depend only on that point, so any split of the
    // points gives the same doubles; a range starts its cursors where the sequential walk would
    // be (``bisect_left`` at its first point).
    auto sum_range = [&](std::size_t from, std::size_t to) {
        std::vector<std::size_t> cursors(chains.size());
        for (std::size_t c = 0; c < chains.size(); ++c)
            cursors[c] = bisect_left(chains[c]->x, points[from]);
        double* const total = totals.data();
        const double* const pts = points.data();
        const RunKernels kernels = current_run_kernels();
        for (int r = 0; r < 5; ++r) std::fill(total + r * count + from, total + r * count + to, 0.0);
        for (std::size_t begin = from; begin < to; begin += kBlock) {
            const std::size_t end = std::min(to, begin + kBlock);
            for (std::size_t c = 0; c < chains.size(); ++c) {
                const auto& xs = chains[c]->x;
                const auto& ys = chains[c]->y;
                const std::size_t n = xs.size();
                std::size_t i = cursors[c];
                std::size_t k = begin;
                // Per child segment rather than per (point, child): the points of one segment
                // form a run (every child breakpoint is itself a sample point, so a run ends
                // exactly at the segment's right end), and each point of the run gets the same
                // value expression the per-point walk used, added in the same child order.
                while (k < end) {
                    const double p = pts[k];
                    while (i < n && xs[i] < p) ++i;
                    if (i >= n) fail("sum: point beyond a function's domain");
                    const double x = xs[i];
                    if (x == p) {
                        const Vec& left = ys[i];
                        for (int r = 0; r < 5; ++r) total[r * count + k] += left[r];
                        ++k;
                        continue;
                    }
                    if (i == 0) fail("sum: point before a function's domain");
                    const std::size_t stop =
                        static_cast<std::size_t>(std::lower_bound(pts + k + 1, pts + end, x) - pts);
                    const Vec& lv = ys[i - 1];
                    const Vec& rv = ys[i];
                    // A flat segment (every ``rv - lv`` exactly zero, so finite) interpolates to
                    // ``lv + 0.0 * t`` = ``rv - 0.0 * u``: ``lv`` up to the sign of a zero, which
                    // adding into totals that start at +0.0 cannot see. Skipping the division
                    // there is exact; most points meet a child's flat tail.
                    bool flat = true;
                    for (int r = 0; r < 5; ++r) flat &= (rv[r] - lv[r]) == 0.0;
                    if (flat) {
                        kernels.flat(total, count, k, stop, lv);
                    } else {
                        kernels.sloped(total, count, pts, k, stop, xs[i - 1], x, lv, rv);
                    }
                    k = stop;
                }
                cursors[c] = i;
            }
        }
    };
    // Wide sums (children x points beyond ~0.5M pairs, several ms) split their points into
    // ranges (four per engine thread, so a thread the machine delays holds up little) that the
    // engine's worker pool shares out; smaller sums are not worth a wake-up.  A sum inside an
    // element built on the pool (the pool is busy) runs its ranges one after the other on its
    // own thread: the same doubles either way.
    if (threads > 1 && count >= 2 && count * chains.size() >= parallel_sum_pairs()) {
        const std::size_t parts = std::min(count, static_cast<std::size_t>(threads) * 4);
        std::vector<std::exception_ptr> errors(parts);
        parallel_items(parts, threads, [&](int, std::size_t part) {
            try {
                sum_range(count * part / parts, count * (part + 1) / parts);
            } catch (...) {
                errors[part] = std::current_exception();
            }
        });
        for (const std::exception_ptr& error : errors)
            if (error) std::rethrow_exception(error);
    } else {
        sum_range(0, count);
    }
    // The points where some function has a vertical segment (both of its points are sample
    // points: the domain's bounds are sample points too), in increasing order.
    std::vector<std::size_t>& jumps = scratch.jumps;
    jumps.clear();
    for (const VChain* c : chains) {
        const auto& xs = c->x;
        for (std::size_t j = 1; j < xs.size(); ++j) {
            const double x = xs[j];
            if (x == xs[j - 1] && lb <= x && x <= rb)
                jumps.push_back(static_cast<std::size_t>(
                    std::lower_bound(points.begin(), points.end(), x) - points.begin()));
        }
    }
    std::vector<Vec> right_at_jumps;
    if (!jumps.empty()) {
        std::sort(jumps.begin(), jumps.end());
        jumps.erase(std::unique(jumps.begin(), jumps.end()), jumps.end());
        right_at_jumps.assign(jumps.size(), kZero);
        // Jumps ``[from, to)``: each jump's right total is its own sum over the functions in
        // function order, so any split of the jumps gives the same doubles; a range starts each
        // function's cursor at ``bisect_left`` of its first jump, where the full walk would be.
        auto jump_range = [&](std::size_t from, std::size_t to) {
            for (const VChain* c : chains) {
                const auto& xs = c->x;
                const auto& ys = c->y;
                const std::size_t n = xs.size();
                std::size_t i = from == 0 ? 0 : bisect_left(xs, points[jumps[from]]);
                for (std::size_t q = from; q < to; ++q) {
                    const double p = points[jumps[q]];
                    while (xs[i] < p) ++i;  // the first pass checked every point is in the domain
                    Vec value;
                    if (xs[i] == p) {
                        value = (i + 1 < n && xs[i + 1] == p) ? ys[i + 1] : ys[i];
                    } else {
                        value = run_value(xs[i - 1], xs[i], ys[i - 1], ys[i], p);
                    }
                    Vec& sum = right_at_jumps[q];
                    for (int r = 0; r < 5; ++r) sum[r] += value[r];
                }
            }
        };
        // Jumps x functions is the sum's largest serial term on wide pools (the root of 10k
        // pools / 100k operations at depth 3: ~30k jumps x 1,428 functions): shared out like
        // the points above, in any sum wide enough for that.  A (jump, function) pair costs
        // about an interpolation (a division), several times a pair of the run kernels, so a
        // wide sum splits its jumps too even when there are few (the 1k-pool root: 188 jumps x
        // 66 functions, ~0.2 ms on one thread).
        const std::size_t jump_count = jumps.size();
        if (wide && jump_count >= 2 && jump_count * chains.size() * 32 >= parallel_sum_pairs()) {
            const std::size_t parts = std::min(jump_count, static_cast<std::size_t>(threads) * 4);
            parallel_items(parts, threads, [&](int, std::size_t part) {
                jump_range(jump_count * part / parts, jump_count * (part + 1) / parts);
            });
        } else {
            jump_range(0, jump_count);
        }
    }
    // ``build_from_limits`` on the totals: (left, right) at every point through the merge rule,
    // written through raw pointers into room for two points per sample point.  Away from the
    // jumps the right limit is the left one, just pushed, which the merge rule ignores (the
    // last point equals it) unless it holds a NaN: only jumps and NaNs push a second point.
    const std::size_t bound = 2 * count;
    if (out.x.size() < bound) {
        out.x.resize(bound);
        out.y.resize(bound);
    }
    RawChain<Vec> w{out.x.data(), out.y.data(), 0};
    const double* t = totals.data();
    std::size_t next_jump = 0;
    for (std::size_t k = 0; k < count; ++k) {
        const Vec left{t[k], t[count + k], t[2 * count + k], t[3 * count + k], t[4 * count + k]};
        const bool jump = next_jump < jumps.size() && jumps[next_jump] == k;
        const Vec& right = jump ? right_at_jumps[next_jump++] : left;
        if (k == 0) {
            w.append(points[0], left);
            w.append(points[0], right);
        } else {
            w.push(points[k], left);
            if (jump || !(left == left)) w.push(points[k], right);
        }
    }
    out.x.resize(w.n);
    out.y.resize(w.n);
    // ``Builder.finish`` of a one-point function keeps the point segment.
    if (totals.capacity() > kKeepSumScratch) totals = ChainVector<double>();
    if (points.capacity() > kKeepSumScratch) points = std::vector<double>();
    if (scratch.merged.capacity() > kKeepSumScratch) scratch.merged = std::vector<double>();
}

void ImprovedParts::shares(double fit_factor, std::vector<Vec>& out) const {
    out.resize(children);
    const double kf = static_cast<double>(static_cast<int64_t>(fit_factor));
    const auto k = static_cast<std::size_t>(kf);
    if (fit_factor == kf) {
        for (std::size_t c = 0; c < children; ++c) out[c] = arriving[c * count + k];
        return;
    }
    for (std::size_t c = 0; c < children; ++c) {
        const Vec& lv = leaving[c * count + k];
        const Vec& rv = arriving[c * count + k + 1];
        out[c] = interpolate_vector(kf, lv, kf + 1.0, rv, fit_factor);
    }
}

// ``functions._improved_fsbff``.
VChain improved_sum(const std::vector<const VChain*>& chains, ImprovedParts& parts) {
    const double rb = chains[0]->x.back();
    for (const VChain* c : chains)
        if (c->x.front() != 0.0 || c->x.back() != rb)
            fail("improved fair share: the children of a pool have different domains");
    std::vector<std::pair<double, std::size_t>> owned;
    for (std::size_t index = 0; index < chains.size(); ++index) {
        const auto& xs = chains[index]->x;
        for (std::size_t j = 0; j < xs.size(); ++j)
            if (j == 0 || xs[j] != xs[j - 1]) owned.emplace_back(xs[j], index);
    }
    std::sort(owned.begin(), owned.end());
    const std::size_t count = owned.size();
    std::vector<double> points(count);
    for (std::size_t k = 0; k < count; ++k) points[k] = owned[k].first;
    parts.count = count;
    parts.children = chains.size();
    parts.arriving.assign(count * chains.size(), kZero);
    parts.leaving.assign(count * chains.size(), kZero);
    std::vector<Vec> left_total(count, kZero);
    std::vector<Vec> right_total(count, kZero);
    std::vector<Vec> lefts, rights;
    for (std::size_t index = 0; index < chains.size(); ++index) {
        sample_limits(*chains[index], points, lefts, rights);
        Vec* arriving = &parts.arriving[index * count];
        Vec* leaving = &parts.leaving[index * count];
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t owner = owned[k].second;
            arriving[k] = index < owner ? rights[k] : lefts[k];
            leaving[k] = index > owner ? lefts[k] : rights[k];
            left_total[k] = vadd(left_total[k], arriving[k]);
            right_total[k] = vadd(right_total[k], leaving[k]);
        }
    }
    std::vector<double> fit_factors(count);
    for (std::size_t k = 0; k < count; ++k) fit_factors[k] = static_cast<double>(k);
    return build_from_limits(fit_factors, left_total, right_total);
}

// ``functions._fifo_fsbff``.  When every child's FSBS starts at exactly zero on [0, 1] (always
// so for operations, whose guarantees are zero) both constructions are the concatenation.
VChain fifo_fsbff(const std::vector<const VChain*>& chains, bool fast) {
    if (chains.empty()) return constant_chain(0.0, 1.0, kZero);
    bool plain = true;
    for (const VChain* c : chains)
        if (c->x.front() != 0.0 || c->x.back() != 1.0 || !(c->y.front() == kZero)) plain = false;
    if (plain) {
        VChain out;
        Vec prefix = kZero;
        double shift = 0.0;
        for (const VChain* c : chains) {
            for (std::size_t j = 0; j < c->x.size(); ++j) {
                const double x = c->x[j] + shift;
                const Vec y = vadd(c->y[j], prefix);
                if (j == 0 && !out.x.empty()) {
                    if (out.x.back() != x || !(out.y.back() == y))
                        fail("fifo: children do not join");
                    continue;
                }
                add_point(out.x, out.y, x, y);
            }
            prefix = vadd(prefix, c->y.back());
            shift += 1.0;
        }
        return out;
    }
    if (fast) fail("fast fifo: a child's fair share by suggestion does not start at zero on [0, 1]");
    const double count = static_cast<double>(chains.size());
    std::vector<VChain> shifted(chains.size());
    for (std::size_t index = 0; index < chains.size(); ++index) {
        const VChain& c = *chains[index];
        const double d = static_cast<double>(index);
        VChain& s = shifted[index];
        // shift(d): every value plus zero, through the merge rule.
        for (std::size_t j = 0; j < c.x.size(); ++j) add_point(s.x, s.y, c.x[j] + d, vadd(c.y[j], kZero));
        // extend_both(0, count)
        VChain e;
        if (0.0 < s.x.front()) {
            add_point(e.x, e.y, 0.0, s.y.front());
        }
        for (std::size_t j = 0; j < s.x.size(); ++j) add_point(e.x, e.y, s.x[j], s.y[j]);
        if (e.x.back() < count) push_point(e.x, e.y, count, Vec(e.y.back()));
        s = std::move(e);
    }
    std::vector<const VChain*> ptrs;
    for (const VChain& s : shifted) ptrs.push_back(&s);
    return sum_chains(ptrs);
}


namespace {

double crossing(double left, double right, const std::array<double, 4>& lo,
                const std::array<double, 4>& hi) {
    if (left == right) return left;
    auto below = [&](double m) {
        return segment_value(lo[0], lo[1], lo[2], lo[3], m) <=
               segment_value(hi[0], hi[1], hi[2], hi[3], m);
    };
    return inverse_lower_bound(left, right, below);
}

// One resource's inverse, restricted, shifted and extended: the reference
// ``extract_component(r, f).transpose().narrow(g, limit).trim_left().shift(-g).extend_right(1)
// .trim()`` of ``functions._max_fit_factor_by_suggestion``, walked with one cursor.
void component_inverse(const VChain& fsbff, int r, double limit_share, double guarantee_share,
                       Workspace& w, SChain& out) {
    const auto& fx = fsbff.x;
    const auto& fv = fsbff.y;
    const std::size_t nf = fx.size();
    // Every buffer is written through raw pointers (``RawChain``) into room for the most points
    // it can get, and only the result is cut to its size.
    if (w.a.size() < nf) {
        w.a.resize(nf);
        w.f.resize(nf);
    }
    RawChain<double> ext{w.f.data(), w.a.data(), 0};
    ext.append(fx[0], fv[0][r]);
    ext.append(fx[1], fv[1][r]);
    for (std::size_t i = 2; i < nf; ++i) ext.push(fx[i], fv[i][r]);
    // (``ext`` has f as arguments and a as values: the extraction's merge rule.)
    const double* a = w.a.data();
    const double* f = w.f.data();
    const std::size_t n = ext.n;
    const double lo = a[0];
    const double hi = a[n - 1];
    const double limit = pymin(pymax(limit_share, lo), hi);
    const double g = pymin(pymax(guarantee_share, lo), limit);

    std::size_t i = 0;
    while (i < n && a[i] < g) ++i;
    if (i == n) fail("max fit factor: guarantee beyond the function's values");
    const std::size_t bound = n + 4;
    if (out.x.size() < bound) {
        out.x.resize(bound);
        out.y.resize(bound);
    }
    RawChain<double> c{out.x.data(), out.y.data(), 0};
    if (a[i] == g) {
        if (i + 1 < n && a[i + 1] == g) {
            c.append(g, f[i]);
            c.append(g, f[i + 1]);
            i += 2;
        } else {
            c.append(g, f[i]);
            c.append(g, f[i]);
            i += 1;
        }
    } else {
        const double v = interpolate(a[i - 1], f[i - 1], a[i], f[i], g);
        c.append(g, v);
        c.append(g, v);
    }
    while (i < n && a[i] <= limit) {
        const double x = a[i];
        if (i + 1 < n && a[i + 1] == x) {
            c.push(x, f[i]);
            c.push(x, f[i + 1]);
            i += 2;
        } else {
            c.push(x, f[i]);
            i += 1;
        }
    }
    if (c.x[c.n - 1] != limit) {
        if (i == 0 || i >= n) fail("max fit factor: limit outside the function's values");
        const double v = interpolate(a[i - 1], f[i - 1], a[i], f[i], limit);
        c.push(limit, v);
    }
    // trim_left: drop the first point (or keep the point segment at the right value)
    double* xs = c.x;
    double* ys = c.y;
    std::size_t m = c.n;
    if (xs[0] == xs[1] && ys[0] != ys[1]) {
        if (m > 2) {
            ++xs;
            ++ys;
            --m;
        } else {
            ys[0] = ys[1];
        }
    }
    // shift(-g) into the second buffer: the merge rule may join points the shift makes equal
    if (g != 0.0) {
        if (w.sx.size() < m + 2) {
            w.sx.resize(m + 2);
            w.sy.resize(m + 2);
        }
        RawChain<double> sh{w.sx.data(), w.sy.data(), 0};
        sh.append(xs[0] - g, ys[0]);
        sh.append(xs[1] - g, ys[1]);
        for (std::size_t j = 2; j < m; ++j) sh.push(xs[j] - g, ys[j]);
        c = sh;
    } else {
        c = RawChain<double>{xs, ys, m};
    }
    // extend_right(1.0), then trim (both buffers have room for one point more)
    if (c.x[c.n - 1] < 1.0) {
        const double last = c.y[c.n - 1];
        c.push(1.0, last);
    }
    m = c.n;
    if (c.x[m - 1] == c.x[m - 2] && c.y[m - 1] != c.y[m - 2]) {
        if (m > 2) {
            --m;
        } else {
            c.x[1] = c.x[0];
            c.y[1] = c.y[0];
        }
    }
    // Copy the result to the front of ``out`` (it may start one point in, or live in the shift
    // buffer), then cut ``out`` to its size.
    if (c.x != out.x.data()) {
        std::memmove(out.x.data(), c.x, m * sizeof(double));
        std::memmove(out.y.data(), c.y, m * sizeof(double));
    }
    out.x.resize(m);
    out.y.resize(m);
}

}  // namespace

// MFFBS: the reference ``pointwise_min_all`` over the five inverses.  A constant component's
// inverse is the constant right bound on [0, 1]: it never binds and adds no critical point, so
// it is skipped (unless some inverse's domain is not [0, 1]: then all five, as the reference).
SChain max_fit_factor_by_suggestion(const VChain& f, const Vec& limits, const Vec& guarantee,
                                    Workspace& w) {
    const SChain& m = max_fit_factor_in_workspace(f, limits, guarantee, w);
    SChain out;
    out.x.assign(m.x.begin(), m.x.end());
    out.y.assign(m.y.begin(), m.y.end());
    return out;
}

const SChain& max_fit_factor_in_workspace(const VChain& f, const Vec& limits,
                                          const Vec& guarantee, Workspace& w) {
    // The running minimum lives in ``w.acc``; each step writes into ``w.next`` and swaps, so
    // the five inverses and four minimums reuse the same buffers for every element.
    bool have = false;
    for (int r = 0; r < 5; ++r) {
        const double c = f.y[0][r];
        bool constant = true;
        for (const Vec& v : f.y)
            if (v[r] != c) {
                constant = false;
                break;
            }
        if (constant) continue;
        component_inverse(f, r, limits[r], guarantee[r], w, w.inverse);
        if (w.inverse.x.front() != 0.0 || w.inverse.x.back() != 1.0) {
            // Generic: all five inverses, constants included.
            component_inverse(f, 0, limits[0], guarantee[0], w, w.acc);
            for (int s = 1; s < 5; ++s) {
                component_inverse(f, s, limits[s], guarantee[s], w, w.inverse);
                pointwise_min(w.acc, w.inverse, w.next);
                std::swap(w.acc, w.next);
            }
            return w.acc;
        }
        if (!have) {
            std::swap(w.acc, w.inverse);
            have = true;
        } else {
            pointwise_min(w.acc, w.inverse, w.next);
            std::swap(w.acc, w.next);
        }
    }
    if (!have) {
        const double last = f.x.back();
        w.acc.x.assign({0.0, 1.0});
        w.acc.y.assign({last, last});
    }
    return w.acc;
}

namespace {

// The cursors of ``pointwise_min``'s merged walk: the next point ``p`` (not yet taken), each
// chain's index of its first point at or after ``p``, and the last step's point and right limits.
struct MinWalk {
    const double* ax;
    const double* ay;
    std::size_t na;
    const double* bx;
    const double* by;
    std::size_t nb;
    std::size_t ia, ib;
    double p, rb, previous, prev_ra, prev_rb;
};

// The steps of ``pointwise_min`` while one chain (``low``: B if ``BLow``, else A) stays strictly
// below the other (``high``), taken without the high chain's interpolation where a bound proves
// it is not needed. Returns before the first step it cannot prove (a point of both chains, the
// last point ``rb``, a step where the chains meet or may meet): the general step takes it.
//
// On the MFFBS of 1k / 10k's pools 89% of the minimum's steps are taken here; a run of the low
// chain's points before the high chain's next point checks its segment once and reads no value
// of the high chain but its segment's start.
//
// Why the output is the general step's, double for double: a step at ``p`` pushes
// ``min(low, high)`` of the left limits, then (on a jump, or a NaN) of the right limits, after a
// crossing search that runs only when the order of the previous right limits flips; strictly
// below means ``min`` is the low value itself (``a < b ? a : b`` picks ``b`` on a tie, so ties,
// signed zeros included, go to the general step) and there is no crossing.
// * ``p`` a point of the high chain only: the low value is the same ``interpolate`` call as the
//   general step's, compared with the high chain's exact values; the right-limit push repeats the
//   left point (the low chain has no jump here), which the merge rule leaves unchanged.
// * ``p`` a point of the low chain only: the high value would be ``interpolate(x0, y0, x1, y1, p)``
//   on its segment with ``x0 <= p < x1``. With ``x1 - x0`` finite, ``t`` is in [0, 1]; with
//   ``d = y1 - y0`` finite and ``>= 0``, ``y0 + d t >= y0`` (t < 0.5) and, for t >= 0.5,
//   ``d (1 - t) <= d / 2 <= y1 - y0`` (as reals, ``d`` rounded by at most half an ulp), so
//   ``y1 - d (1 - t) >= y0``: rounding to nearest is monotone, so the computed value is at least
//   ``y0``. Both low limits strictly below ``y0`` are then strictly below the high value.
// The previous high right limit is kept as a bound (``y0``, or the exact value): the general
// step reads it only through its order with the low one, which the bound keeps.
template <bool BLow>
void min_dominated_steps(MinWalk& m, RawChain<double>& w) {
    const double* lx = BLow ? m.bx : m.ax;
    const double* ly = BLow ? m.by : m.ay;
    const std::size_t nl = BLow ? m.nb : m.na;
    const double* hx = BLow ? m.ax : m.bx;
    const double* hy = BLow ? m.ay : m.by;
    const std::size_t nh = BLow ? m.na : m.nb;
    std::size_t il = BLow ? m.ib : m.ia;
    std::size_t ih = BLow ? m.ia : m.ib;
    constexpr double finite = std::numeric_limits<double>::max();
    const double rb = m.rb;
    double p = m.p;
    double previous = m.previous;
    double prev_low = BLow ? m.prev_rb : m.prev_ra;
    double prev_high = BLow ? m.prev_ra : m.prev_rb;
    // The next point in the general step's order (``nxa < nxb ? nxa : nxb``, then ``rb``).
    auto next_point = [&]() {
        const double nxa = BLow ? hx[ih] : lx[il];
        const double nxb = BLow ? lx[il] : hx[ih];
        const double q = nxa < nxb ? nxa : nxb;
        return q > rb ? rb : q;
    };
    while (p < rb) {
        const double xl = lx[il];
        const double xh = hx[ih];
        if (xh == p) {
            if (xl == p) break;
            const double lh = hy[ih];
            double rh = lh;
            const bool jump = ih + 1 < nh && hx[ih + 1] == p;
            if (jump) rh = hy[ih + 1];
            const double v = interpolate(lx[il - 1], ly[il - 1], xl, ly[il], p);
            if (!(v < lh && v < rh)) break;
            ih += jump ? 2 : 1;
            w.push(p, v);
            previous = p;
            prev_low = v;
            prev_high = rh;
            if (ih >= nh) fail("pointwise_min: ran past a function's end");
            p = next_point();
            continue;
        }
        if (xl != p || ih == 0 || il + 1 >= nl) break;
        // The low chain's points before the high chain's next one share one bound: ``y0``.
        const double x0 = hx[ih - 1];
        const double y0 = hy[ih - 1];
        const double d = hy[ih] - y0;
        if (!(xh - x0 <= finite && d >= 0.0 && d <= finite)) break;
        while (true) {
            // Here ``p == lx[il] < xh``, ``p < rb`` and ``il + 1 < nl``.
            const double v = ly[il];
            if (lx[il + 1] == p) {
                const double r = ly[il + 1];
                if (!((x0 <= p) & (v < y0) & (r < y0))) goto done;
                il += 2;
                w.push(p, v);
                w.push(p, r);
                prev_low = r;
                if (il >= nl) fail("pointwise_min: ran past a function's end");
            } else {
                if (!((x0 <= p) & (v < y0))) goto done;
                il += 1;
                w.push(p, v);
                prev_low = v;
            }
            previous = p;
            prev_high = y0;
            // The next point is the low chain's (the general order's minimum) while it is
            // before both ``xh`` and ``rb``.
            const double nxl = lx[il];
            if (!(nxl < xh && nxl < rb && il + 1 < nl)) break;
            p = nxl;
        }
        p = next_point();
    }
done:
    (BLow ? m.ib : m.ia) = il;
    (BLow ? m.ia : m.ib) = ih;
    m.p = p;
    m.previous = previous;
    (BLow ? m.prev_rb : m.prev_ra) = prev_low;
    (BLow ? m.prev_ra : m.prev_rb) = prev_high;
}

}  // namespace

// ``plf.pointwise_min`` with its crossing search, in one merged pass over both chains' points.
SChain pointwise_min(const SChain& A, const SChain& B) {
    SChain out;
    pointwise_min(A, B, out);
    return out;
}

void pointwise_min(const SChain& A, const SChain& B, SChain& out) {
    const auto& ax = A.x;
    const auto& ay = A.y;
    const auto& bx = B.x;
    const auto& by = B.y;
    const double lb = ax.front() > bx.front() ? ax.front() : bx.front();
    const double rb = ax.back() < bx.back() ? ax.back() : bx.back();
    if (lb > rb) fail("pointwise_min: the domains do not intersect");
    const std::size_t na = ax.size();
    const std::size_t nb = bx.size();
    std::size_t ia = bisect_left(ax, lb);
    std::size_t ib = bisect_left(bx, lb);
    // Every step advances at least one cursor and adds at most three points (a crossing and
    // both limits), so the result fits in 3 (na + nb) + 2 points: it is written through raw
    // pointers held in registers (``push_point`` on the vectors reloads their ends from memory
    // after every store), and cut to its size at the end.
    const std::size_t bound = 3 * (na + nb) + 4;
    if (out.x.size() < bound) {
        out.x.resize(bound);
        out.y.resize(bound);
    }
    RawChain<double> w{out.x.data(), out.y.data(), 0};
    double p = lb;
    double previous = lb;
    double prev_ra = 0.0, prev_rb = 0.0;
    std::size_t ja0 = 0, jb0 = 0;
    bool first = true;
    while (true) {
        double la, ra, lbv, rbv;
        bool jump = false;  // whether either chain has a vertical segment at p
        const double xa = ax[ia];
        if (xa == p) {
            la = ay[ia];
            if (ia + 1 < na && ax[ia + 1] == p) {
                ra = ay[ia + 1];
                ia += 2;
                jump = true;
            } else {
                ra = la;
                ia += 1;
            }
        } else {
            la = ra = interpolate(ax[ia - 1], ay[ia - 1], xa, ay[ia], p);
        }
        const double xb = bx[ib];
        if (xb == p) {
            lbv = by[ib];
            if (ib + 1 < nb && bx[ib + 1] == p) {
                rbv = by[ib + 1];
                ib += 2;
                jump = true;
            } else {
                rbv = lbv;
                ib += 1;
            }
        } else {
            lbv = rbv = interpolate(bx[ib - 1], by[ib - 1], xb, by[ib], p);
        }
        if (first) {
            first = false;
            w.append(p, la < lbv ? la : lbv);
            w.append(p, ra < rbv ? ra : rbv);
        } else {
            if (prev_ra != prev_rb) {
                const bool crosses = prev_ra < prev_rb ? la > lbv : lbv > la;
                if (crosses) {
                    const std::array<double, 4> sa{ax[ja0], ay[ja0], ax[ja0 + 1], ay[ja0 + 1]};
                    const std::array<double, 4> sb{bx[jb0], by[jb0], bx[jb0 + 1], by[jb0 + 1]};
                    const double c = prev_ra < prev_rb ? crossing(previous, p, sa, sb)
                                                       : crossing(previous, p, sb, sa);
                    if (c != previous) {
                        const double ca = interpolate(sa[0], sa[1], sa[2], sa[3], c);
                        const double cb = interpolate(sb[0], sb[1], sb[2], sb[3], c);
                        w.push(c, ca < cb ? ca : cb);
                    }
                }
            }
            const double left = la < lbv ? la : lbv;
            w.push(p, left);
            // Without a jump the right limits are the left ones (``ra = la``, ``rbv = lbv``), and
            // pushing the point just pushed again changes nothing (the merge rule leaves the
            // last point equal to the one pushed) unless its value is a NaN.
            if (jump || left != left) w.push(p, ra < rbv ? ra : rbv);
        }
        if (p >= rb) {
            out.x.resize(w.n);
            out.y.resize(w.n);
            return;
        }
        previous = p;
        prev_ra = ra;
        prev_rb = rbv;
        if (ia >= na || ib >= nb) fail("pointwise_min: ran past a function's end");
        const double nxa = ax[ia];
        const double nxb = bx[ib];
        p = nxa < nxb ? nxa : nxb;
        if (p > rb) p = rb;
        // While one chain stays strictly below, its steps skip the other's interpolation.
        if (prev_ra < prev_rb || prev_rb < prev_ra) {
            MinWalk m{ax.data(), ay.data(), na, bx.data(), by.data(), nb,
                      ia, ib, p, rb, previous, prev_ra, prev_rb};
            if (prev_ra < prev_rb)
                min_dominated_steps<false>(m, w);
            else
                min_dominated_steps<true>(m, w);
            ia = m.ia;
            ib = m.ib;
            p = m.p;
            previous = m.previous;
            prev_ra = m.prev_ra;
            prev_rb = m.prev_rb;
        }
        ja0 = ia - 1;
        jb0 = ib - 1;
    }
}

// ``plf.compose(outer, inner).trim()``.
VChain compose(const VChain& F, const SChain& M) {
    Workspace w;
    VChain out;
    compose(F, M, w, out);
    return out;
}

void compose(const VChain& F, const SChain& M, Workspace& w, VChain& c) {
    const auto& fx = F.x;
    const auto& fv = F.y;
    const auto& mx = M.x;
    const auto& my = M.y;
    // The sample points are M's points plus, rarely, points where M reaches one of F's
    // breakpoints between two of its own: those are collected first, and only when there are
    // any are all points gathered into pairs and sorted (as the reference's sorted set);
    // otherwise M's own arrays are the sample points, already in order, and nothing is copied.
    auto& points = w.points;
    points.clear();
    const double lo = my.front();
    const double hi = my.back();
    const std::size_t n = my.size();
    std::size_t i = 0;
    bool have_previous = false;
    double previous = 0.0;
    for (double value : fx) {
        if (have_previous && value == previous) continue;
        have_previous = true;
        previous = value;
        if (value <= lo || value >= hi) continue;
        while (i + 2 < n && my[i + 1] < value) ++i;
        const double y1 = my[i + 1];
        if (y1 == value) continue;
        const double y0 = my[i];
        if (y0 == value) continue;
        const double x0 = mx[i];
        const double x1 = mx[i + 1];
        if (x0 != x1 && y0 != y1) points.emplace_back(interpolate(y0, x0, y1, x1, value), value);
    }
    const double* sample_x = mx.data();
    const double* sample_v = my.data();
    std::size_t count = n;
    if (!points.empty()) {
        points.reserve(n + points.size());
        for (std::size_t k = 0; k < n; ++k) points.emplace_back(mx[k], my[k]);
        std::sort(points.begin(), points.end());
        count = points.size();
        if (w.sx.size() < count) {
            w.sx.resize(count);
            w.sy.resize(count);
        }
        for (std::size_t k = 0; k < count; ++k) {
            w.sx[k] = points[k].first;
            w.sy[k] = points[k].second;
        }
        sample_x = w.sx.data();
        sample_v = w.sy.data();
    }

    // The composed points go straight into the result through the merge rule (the first two
    // as they are, like ``Builder``), without a buffer of the raw points in between.
    // At most two points per sample point: written through raw pointers (``RawChain``) into
    // buffers sized for that, then cut to the result's size.
    const std::size_t bound = count * 2 + 2;
    if (c.x.size() < bound) {
        c.x.resize(bound);
        c.y.resize(bound);
    }
    RawChain<Vec> out{c.x.data(), c.y.data(), 0};
    std::size_t emitted = 0;
    auto emit = [&](double x, const Vec& y) {
        if (emitted++ < 2) {
            out.append(x, y);
        } else {
            out.push(x, y);
        }
    };
    const std::size_t nf = fx.size();
    // ``value_at(F, v)`` and ``right_limit_at(F, v)`` with cursors: the inner function is
    // non-decreasing, so ``v`` never decreases along ``points`` and the indices the binary
    // searches would find (first j >= 1 with fx[j] >= v; first j < nf - 1 with fx[j] > v)
    // never decrease either.
    std::size_t jl = 1;
    std::size_t jr = 0;
    auto left_value = [&](double v) {
        while (jl < nf && fx[jl] < v) ++jl;
        if (jl >= nf) fail("compose: value beyond the outer function's domain");
        const double lb = fx[jl - 1];
        const double rb = fx[jl];
        return lb == rb ? fv[jl - 1] : interpolate_vector(lb, fv[jl - 1], rb, fv[jl], v);
    };
    auto right_value = [&](double v) {
        while (jr < nf - 1 && fx[jr] <= v) ++jr;
        if (jr == 0) fail("compose: value before the outer function's domain");
        const double lb = fx[jr - 1];
        const double rb = fx[jr];
        return lb == rb ? fv[jr] : interpolate_vector(lb, fv[jr - 1], rb, fv[jr], v);
    };
    // The value just emitted as a left value, and the argument and segment it was computed for:
    // ``left_value`` of the same argument, or ``right_value`` of it on the same non-vertical
    // segment (``jr == jl``), is the same interpolation of the same doubles, so it is reused
    // instead of computed again.
    bool have_px = false;
    double previous_x = 0.0;
    Vec last_left{};
    double last_v = 0.0;
    bool have_left = false;
    for (std::size_t k = 0; k < count; ++k) {
        const double x = sample_x[k];
        const double v = sample_v[k];
        if (!have_px || x != previous_x) {
            last_left = left_value(v);
            last_v = v;
            have_left = true;
            emit(x, last_left);
            previous_x = x;
            have_px = true;
        }
        bool right_limit;
        if (k + 1 == count) {
            right_limit = false;
        } else {
            if (sample_x[k + 1] == x) continue;
            right_limit = sample_v[k + 1] > v;
        }
        const bool same_v = have_left && v == last_v && std::signbit(v) == std::signbit(last_v);
        if (right_limit) {
            while (jr < nf - 1 && fx[jr] <= v) ++jr;
            if (same_v && jr == jl && fx[jl - 1] != fx[jl]) {
                // The left value just emitted at the same ``x``: after any push the chain's
                // last point equals the one pushed, so pushing it again changes nothing unless
                // it holds a NaN (or the chain has fewer than two points, which appends).
                if (emitted < 2 || has_nan(last_left)) emit(x, last_left);
            } else {
                emit(x, right_value(v));
            }
        } else if (same_v) {
            if (emitted < 2 || has_nan(last_left)) emit(x, last_left);  // (as above)
        } else {
            emit(x, left_value(v));
        }
    }
    c.x.resize(out.n);
    c.y.resize(out.n);
    if (emitted < 2) fail("a piecewise-linear function needs at least one segment");
    const std::size_t m = c.x.size();
    if (c.x[m - 1] == c.x[m - 2] && !(c.y[m - 1] == c.y[m - 2])) {
        if (m > 2) {
            c.x.pop_back();
            c.y.pop_back();
        } else {
            c.x = {c.x[0], c.x[0]};
            c.y = {c.y[0], c.y[0]};
        }
    }
}

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// ``compress``'s corridor walk with the five resources in two AVX2 vectors (resources 0-3, then
// resource 4 beside three NaN lanes, whose comparisons are all false, so they never stop the
// walk).  Each lane performs the scalar loop's operations in the same order (two products, then
// their difference; IEEE in every lane, nothing fused), so the corridor ends at the same point
// and the kept points are the same.  From the corridor's start ``c``: returns the last point the
// corridor reaches (``end``) and leaves ``c`` at the first point outside it (or ``n``).
using M4 = int64_t __attribute__((vector_size(32)));

// One block of lanes of the corridor walk: the scalar loop's body for each of its resources.
__attribute__((target("avx2"), always_inline)) inline M4 corridor_step(const V4& d, const V4& e,
                                                                      const V4& v, const V4& l,
                                                                      V4& tx, V4& ty, V4& bx,
                                                                      V4& by) {
    const V4 zero = {0.0, 0.0, 0.0, 0.0};
    const V4 cty = (v + e) - l;
    const V4 cby = (v - e) - l;
    const M4 top = (d * ty - tx * cty) > zero;
    tx = top ? d : tx;
    ty = top ? cty : ty;
    const M4 bottom = (d * by - bx * cby) < zero;
    bx = bottom ? d : bx;
    by = bottom ? cby : by;
    const V4 u = v - l;
    return ((bx * u - d * by) <= zero) | ((tx * u - d * ty) >= zero);
}

__attribute__((target("avx2"))) std::size_t compress_corridor_avx2(const double* xs,
                                                                   const Vec* ys, std::size_t n,
                                                                   double eps, std::size_t& c) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double lb = xs[c];
    const Vec& l = ys[c];
    const V4 la = {l[0], l[1], l[2], l[3]};
    const V4 lz = {l[4], nan, nan, nan};
    const V4 e = {eps, eps, eps, eps};
    V4 txa, tya, bxa, bya, txz, tyz, bxz, byz;
    {
        const Vec& v = ys[c + 1];
        const double dx = xs[c + 1] - lb;
        const V4 d = {dx, dx, dx, dx};
        const V4 va = {v[0], v[1], v[2], v[3]};
        const V4 vz = {v[4], nan, nan, nan};
        txa = bxa = txz = bxz = d;
        tya = (va + e) - la;
        bya = (va - e) - la;
        tyz = (vz + e) - lz;
        byz = (vz - e) - lz;
    }
    std::size_t end = c + 1;
    c += 1;
    while (c < n) {
        const Vec& v = ys[c + 1];
        const double dx = xs[c + 1] - lb;
        const V4 d = {dx, dx, dx, dx};
        const V4 va = {v[0], v[1], v[2], v[3]};
        const V4 vz = {v[4], nan, nan, nan};
        const M4 stop = corridor_step(d, e, va, la, txa, tya, bxa, bya) |
                        corridor_step(d, e, vz, lz, txz, tyz, bxz, byz);
        if ((stop[0] | stop[1] | stop[2] | stop[3]) != 0) break;
        end = c + 1;
        c += 1;
    }
    return end;
}
#endif

}  // namespace

// ``plf.compress``: the greedy corridor test of ``CompressFunction``.
VChain compress(const VChain& F, double eps) {
    VChain out;
    compress(F, out, eps);
    return out;
}

void compress(const VChain& F, VChain& out, double eps) {
    const auto& xs = F.x;
    const auto& ys = F.y;
    const std::size_t n = xs.size() - 1;
    if (n == 1) {
        out.x.assign(xs.begin(), xs.end());
        out.y.assign(ys.begin(), ys.end());
        return;
    }
    // At most every point is kept: the kept ones are written through raw pointers
    // (``RawChain``) into room for all of them, through ``add_point``'s merge rule, and the
    // result is cut to its size.
    if (out.x.size() < xs.size()) {
        out.x.resize(xs.size());
        out.y.resize(xs.size());
    }
    RawChain<Vec> w{out.x.data(), out.y.data(), 0};
    w.append(xs[0], ys[0]);
    auto keep = [&](std::size_t k) {
        if (w.n < 2) {
            w.append(xs[k], ys[k]);
        } else {
            w.push(xs[k], ys[k]);
        }
    };
    auto finish = [&] {
        out.x.resize(w.n);
        out.y.resize(w.n);
    };
    std::size_t end = 1;
    std::size_t c = 0;
    double tx[5], ty[5], bx[5], by[5];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (g_wide_kernels.load(std::memory_order_relaxed)) {
        while (true) {
            end = compress_corridor_avx2(xs.data(), ys.data(), n, eps, c);
            keep(end);
            if (c >= n) return finish();
        }
    }
#endif
    while (true) {
        const double lb = xs[c];
        const Vec l = ys[c];
        {
            const Vec& v = ys[c + 1];
            const double dx = xs[c + 1] - lb;
            for (int r = 0; r < 5; ++r) {
                tx[r] = bx[r] = dx;
                ty[r] = (v[r] + eps) - l[r];
                by[r] = (v[r] - eps) - l[r];
            }
        }
        end = c + 1;
        c += 1;
        while (c < n) {
            const double rbx = xs[c + 1];
            const Vec& v = ys[c + 1];
            const double dx = rbx - lb;
            // Every resource is updated even after one has left the corridor (the reference
            // stops at the first): the corridor is rebuilt from scratch after a stop, so the
            // extra updates are never read, and the loop runs without data-dependent jumps.
            bool stop = false;
            for (int r = 0; r < 5; ++r) {
                const double cty = (v[r] + eps) - l[r];
                const double cby = (v[r] - eps) - l[r];
                const bool top = dx * ty[r] - tx[r] * cty > 0;
                tx[r] = top ? dx : tx[r];
                ty[r] = top ? cty : ty[r];
                const bool bottom = dx * by[r] - bx[r] * cby < 0;
                bx[r] = bottom ? dx : bx[r];
                by[r] = bottom ? cby : by[r];
                const double u = v[r] - l[r];
                stop |= (bx[r] * u - dx * by[r] <= 0) | (tx[r] * u - dx * ty[r] >= 0);
            }
            if (stop) break;
            end = c + 1;
            c += 1;
        }
        keep(end);
        if (c >= n) return finish();
    }
}

}  // namespace ytsched
