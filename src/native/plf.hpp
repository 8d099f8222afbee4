// Piecewise-linear functions as chains (points x[i], y[i]; point i ends segment i-1 and starts
// segment i), with exactly the floating-point operations of the Python reference
// (src/ytsched/fairshare/plf.py, a port of yt/yt/library/numeric/piecewise_linear_function*.h
// and yt/yt/library/vector_hdrf/piecewise_linear_function_helpers.cpp).
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ytsched {

using Vec = std::array<double, 5>;

constexpr Vec kZero{0.0, 0.0, 0.0, 0.0, 0.0};
constexpr Vec kOnes{1.0, 1.0, 1.0, 1.0, 1.0};
constexpr double kEpsilon = 1e-9;
constexpr Vec kEpsilonVec{kEpsilon, kEpsilon, kEpsilon, kEpsilon, kEpsilon};

// Chains grow into buffers that are written before they are read (the builders size a buffer
// for the most points they can produce and cut it to the result), so growing a chain's vectors
// leaves the new elements uninitialised instead of zeroing them: a workspace chain that is cut
// and grown again for every element would otherwise be cleared each time (``memset`` was ~2%
// of the core).  Only ``resize``/default construction differ; ``assign``, ``push_back`` and
// copies behave as with ``std::allocator``.
template <class T>
struct NoInitAllocator : std::allocator<T> {
    using value_type = T;
    template <class U>
    struct rebind {
        using other = NoInitAllocator<U>;
    };
    NoInitAllocator() = default;
    template <class U>
    NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

template <class T>
using ChainVector = std::vector<T, NoInitAllocator<T>>;

struct VChain {
    ChainVector<double> x;
    ChainVector<Vec> y;
};

struct SChain {
    ChainVector<double> x;
    ChainVector<double> y;
};

// An input the reference could not handle either (it would raise); reported to Python.
class EngineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// --- element-wise helpers (Python semantics: min(a, b) keeps a unless b < a) ---------------

inline Vec vadd(const Vec& a, const Vec& b) {
    return {a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]};
}
inline Vec vsub(const Vec& a, const Vec& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4]};
}
inline Vec vscale(const Vec& a, double k) {
    return {a[0] * k, a[1] * k, a[2] * k, a[3] * k, a[4] * k};
}
inline Vec vmin(const Vec& a, const Vec& b) {
    Vec r;
    for (int i = 0; i < 5; ++i) r[i] = a[i] < b[i] ? a[i] : b[i];
    return r;
}
inline Vec vmax(const Vec& a, const Vec& b) {
    Vec r;
    for (int i = 0; i < 5; ++i) r[i] = a[i] > b[i] ? a[i] : b[i];
    return r;
}
inline Vec vconst(double x) { return {x, x, x, x, x}; }
inline bool dominates(const Vec& a, const Vec& b) {
    return a[0] >= b[0] && a[1] >= b[1] && a[2] >= b[2] && a[3] >= b[3] && a[4] >= b[4];
}
// Python's max() over a tuple: the first maximal item.
inline double vmaxcomp(const Vec& a) {
    double m = a[0];
    for (int i = 1; i < 5; ++i)
        if (a[i] > m) m = a[i];
    return m;
}
// Whether any component is a NaN, without an early exit (one branch for the caller).
inline bool has_nan(const Vec& a) {
    return (a[0] != a[0]) | (a[1] != a[1]) | (a[2] != a[2]) | (a[3] != a[3]) | (a[4] != a[4]);
}
inline double pymin(double a, double b) { return b < a ? b : a; }
inline double pymax(double a, double b) { return b > a ? b : a; }

// --- the merge rule ---------------------------------------------------------------------------

// Inlined everywhere: it runs once per point of every chain built.
template <class XS, class YS, class T>
[[gnu::always_inline]] inline void push_point(XS& xs, YS& ys, double x, const T& y) {
    const std::size_t n = xs.size();
    const double px = xs[n - 1];
    const T py = ys[n - 1];
    if (x == px) {
        if (y == py) return;
        if (xs[n - 2] == px) {
            ys[n - 1] = y;
            return;
        }
    } else if (y == py) {
        if (ys[n - 2] == py) {
            xs[n - 1] = x;
            return;
        }
    } else if (xs[n - 2] == px && ys[n - 2] == py) {
        xs[n - 1] = x;
        ys[n - 1] = y;
        return;
    }
    xs.push_back(x);
    ys.push_back(y);
}

// Add a point to a chain under construction that may still have fewer than two points
// (``Builder.add_point``: the first point only starts the chain).
template <class XS, class YS, class T>
void add_point(XS& xs, YS& ys, double x, const T& y) {
    if (xs.size() >= 2) {
        push_point(xs, ys, x, y);
    } else {
        xs.push_back(x);
        ys.push_back(y);
    }
}

// ``c ? a : b`` without a jump: GCC keeps a branch for a double ``?:`` whose arms are
// arithmetic (it may not evaluate an arm the program would not have, as that could raise a
// floating-point exception), so the choice is made on the bits.
inline double select_double(bool c, double a, double b) {
    uint64_t ua, ub;
    std::memcpy(&ua, &a, sizeof ua);
    std::memcpy(&ub, &b, sizeof ub);
    const uint64_t mask = uint64_t{0} - static_cast<uint64_t>(c);
    const uint64_t bits = (ua & mask) | (ub & ~mask);
    double out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

// Both of the reference's expressions are computed and one is selected: the same doubles as
// its branch (IEEE operations have no side effects the result could see), without the
// mispredicted jump on ``t < 0.5``, which is a coin toss along a chain.
inline double interpolate(double lb, double lv, double rb, double rv, double x) {
    const double t = (x - lb) / (rb - lb);
    const double d = rv - lv;
    const double from_left = lv + d * t;
    const double from_right = rv - d * (1.0 - t);
    return select_double(t < 0.5, from_left, from_right);
}

inline Vec interpolate_vector(double lb, const Vec& lv, double rb, const Vec& rv, double x) {
    const double t = (x - lb) / (rb - lb);
    const double u = 1.0 - t;
    const bool left = t < 0.5;
    Vec out;
    for (int r = 0; r < 5; ++r) {
        const double d = rv[r] - lv[r];
        const double from_left = lv[r] + d * t;
        const double from_right = rv[r] - d * u;
        out[r] = select_double(left, from_left, from_right);
    }
    return out;
}

// --- sampling ---------------------------------------------------------------------------------

Vec value_at(const VChain& f, double x);
Vec right_limit_at(const VChain& f, double x);
double value_at(const SChain& f, double x);

// --- binary search over doubles -------------------------------------------------------------

uint64_t double_to_key(double x);
double key_to_double(uint64_t key);

template <class Pred>
double inverse_lower_bound(double lo, double hi, Pred&& predicate) {
    if (lo == hi) return lo;
    if (predicate(hi)) return hi;
    uint64_t klo = double_to_key(lo);
    uint64_t khi = double_to_key(hi);
    while (klo + 1 < khi) {
        const uint64_t mid = klo + ((khi - klo) >> 1);
        if (predicate(key_to_double(mid))) {
            klo = mid;
        } else {
            khi = mid;
        }
    }
    return key_to_double(klo);
}

// --- function construction ------------------------------------------------------------------

VChain operation_fsbff(const Vec& usage, const Vec& demand, bool step);
// Into ``out`` (its buffers are reused: a workspace chain).
void operation_fsbff(const Vec& usage, const Vec& demand, bool step, VChain& out);
const VChain* scale_and_extend(const VChain& f, double scale, VChain& scratch);
VChain sum_chains(const std::vector<const VChain*>& chains);
// Into ``out`` (its buffers are reused: a workspace chain).
void sum_chains(const std::vector<const VChain*>& chains, VChain& out);

// Sums of at least this many (sample point x function) pairs split their points over the
// engine's threads (pool.hpp; exact: each point's total depends only on that point). Default
// 2^19; tests lower it to run the threaded path on small trees.
std::size_t parallel_sum_pairs();
void set_parallel_sum_pairs(std::size_t pairs);
VChain constant_chain(double lb, double rb, const Vec& value);

// Whether pool sums and compression use their AVX2 kernels (default: when the CPU has AVX2).
// Both kernels give the same doubles; ``set_wide_vector_kernels`` returns the previous setting
// and ignores ``true`` on a CPU without AVX2.
bool wide_vector_kernels();
bool set_wide_vector_kernels(bool enabled);

// The improved FSBFF of a pool: one unit of fit factor per (critical point, child).
struct ImprovedParts {
    std::size_t count = 0;      // fit factors 0 .. count - 1
    std::size_t children = 0;
    std::vector<Vec> arriving;  // [child * count + k]
    std::vector<Vec> leaving;
    void shares(double fit_factor, std::vector<Vec>& out) const;
};
VChain improved_sum(const std::vector<const VChain*>& chains, ImprovedParts& parts);

// A FIFO pool's FSBFF: children end to end, each lifted by its predecessors' right values.
// ``generic``: the sum of the children shifted to [k, k + 1] and extended to [0, n].
VChain fifo_fsbff(const std::vector<const VChain*>& chains, bool fast);

// Scratch buffers that one update's function builders reuse from element to element (an
// operation's five inverses, four minimums and composition would otherwise allocate some forty
// small vectors). Owned by the update, so they are freed with it.
struct Workspace {
    std::vector<double> a, f, sx, sy;
    SChain inverse, acc, next;
    std::vector<std::pair<double, double>> points;
    VChain composed;
    VChain compressed;
    VChain fsbff;  // the element's FSBFF (operations and pool sums build into it)
    // A pool's children's FSBS scaled by their weights (``scale_and_extend``), and the
    // pointers its sum reads: kept from pool to pool, so a sum allocates nothing for them.
    std::vector<VChain> scaled;
    std::vector<const VChain*> chains;
};

// The result is allocated to its exact size (it is kept until the distribution).
SChain max_fit_factor_by_suggestion(const VChain& f, const Vec& limits, const Vec& guarantee,
                                    Workspace& w);
// The same chain left in the workspace (valid until the workspace builds the next MFFBS), for
// elements that need it only for their own composition.
const SChain& max_fit_factor_in_workspace(const VChain& f, const Vec& limits,
                                          const Vec& guarantee, Workspace& w);
SChain pointwise_min(const SChain& a, const SChain& b);
void pointwise_min(const SChain& a, const SChain& b, SChain& out);
VChain compose(const VChain& f, const SChain& m);
void compose(const VChain& f, const SChain& m, Workspace& w, VChain& out);
VChain compress(const VChain& f, double epsilon = 1e-15);
// Into ``out`` (cleared first; a workspace buffer keeps its capacity between elements).
void compress(const VChain& f, VChain& out, double epsilon = 1e-15);

}  // namespace ytsched
