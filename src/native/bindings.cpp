// nanobind module ``ytsched.fairshare._native``: one entry point, ``run_update``, on flat
// arrays that ytsched/fairshare/native.py builds and validates.  The GIL is released while the
// update runs; engine failures raise ``NativeEngineError``.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "flat_input.hpp"
#include "pool.hpp"
#include "update.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

template <class T>
using Matrix = nb::ndarray<T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <class T>
using Array = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::tuple vec(const ytsched::Vec& v) { return nb::make_tuple(v[0], v[1], v[2], v[3], v[4]); }

nb::tuple run(Matrix<const double> in_f, Matrix<const int32_t> in_i, Array<double> opts_f,
              Array<int32_t> opts_i, Matrix<double> out_f, Matrix<int32_t> out_i) {
    const int64_t n = static_cast<int64_t>(in_f.shape(0));
    if (in_f.shape(1) != ytsched::kInF || in_i.shape(1) != ytsched::kInI ||
        out_f.shape(1) != ytsched::kOutF || out_i.shape(1) != ytsched::kOutI ||
        static_cast<int64_t>(in_i.shape(0)) != n || static_cast<int64_t>(out_f.shape(0)) != n ||
        static_cast<int64_t>(out_i.shape(0)) != n)
        throw nb::value_error("run_update: array shapes do not match the flat layout");
    if (opts_f.shape(0) != ytsched::kOptionsF || opts_i.shape(0) != ytsched::kOptionsI)
        throw nb::value_error("run_update: option arrays have the wrong length");
    const double* of = opts_f.data();
    const int32_t* oi = opts_i.data();
    ytsched::Options o = ytsched::options_from_flat(of, oi);
    if (o.main_resource < 0 || o.main_resource > 4)
        throw nb::value_error("run_update: main resource index out of range");

    ytsched::Errors errors;
    {
        nb::gil_scoped_release release;
        ytsched::run_update(n, in_f.data(), in_i.data(), o, out_f.data(), out_i.data(), errors);
    }
    std::vector<double> steps(errors.step_seconds, errors.step_seconds + ytsched::kStepCount);
    return nb::make_tuple(errors.nested_promised, errors.flow_overcommit, errors.burst_overcommit,
                          vec(errors.total_strong), vec(errors.total_flow),
                          vec(errors.total_burst), steps);
}

}  // namespace

NB_MODULE(_native, m) {
    m.doc() = "Native fair-share update (C++17), bit-identical to ytsched.fairshare's reference.";
    nb::exception<ytsched::EngineError>(m, "NativeEngineError");
    m.def("run_update", &run, "in_f"_a, "in_i"_a, "opts_f"_a, "opts_i"_a, "out_f"_a, "out_i"_a,
          "Run one update on the flat tree; fills out_f/out_i and returns the error summary.");
    m.def("parallel_sum_pairs", &ytsched::parallel_sum_pairs,
          "Pool sums of at least this many (point x child) pairs are split over the engine's threads.");
    m.def("set_parallel_sum_pairs", &ytsched::set_parallel_sum_pairs, "pairs"_a,
          "Set the threaded-sum threshold of pool sums (tests set 0 to force the threaded path).");
    m.def("engine_threads", &ytsched::engine_threads,
          "Threads one update may use for its per-element functions and wide sums.");
    m.def("set_engine_threads", &ytsched::set_engine_threads, "threads"_a,
          "Set the update's thread count (clamped to 1..64); returns the previous one.");
    m.def("default_engine_threads", &ytsched::default_engine_threads,
          "The default thread count: min(2, hardware threads).");
    m.def("parallel_build_min", &ytsched::parallel_build_min,
          "Updates with at least this many elements to build share them among the threads.");
    m.def("set_parallel_build_min", &ytsched::set_parallel_build_min, "elements"_a,
          "Set the element threshold of threaded builds (tests set 0 to force the threaded path).");
    m.attr("MAX_ENGINE_THREADS") = ytsched::kMaxEngineThreads;
    m.def("wide_vector_kernels", &ytsched::wide_vector_kernels,
          "Whether pool sums and compression use their AVX2 kernels.");
    m.def("set_wide_vector_kernels", &ytsched::set_wide_vector_kernels, "enabled"_a,
          "Use (when the CPU can) or avoid the AVX2 sum and compression kernels; returns the "
          "previous setting.");
    m.attr("IN_F") = static_cast<int>(ytsched::kInF);
    m.attr("IN_I") = static_cast<int>(ytsched::kInI);
    m.attr("OUT_F") = static_cast<int>(ytsched::kOutF);
    m.attr("OUT_I") = static_cast<int>(ytsched::kOutI);
    m.def("read_flat", &ytsched::read_flat, "pools"_a, "operations"_a, "total"_a, "gpu_only"_a,
          "gpu_index"_a, "vanilla_gang"_a, "kinds"_a, "in_f"_a, "in_i"_a,
          "Fill the flat input arrays from a snapshot's pools and operations; None: fall back "
          "to the Python builder (see flat_input.hpp).");
#ifdef YTSCHED_SANITIZED
    m.attr("SANITIZED") = true;
#else
    m.attr("SANITIZED") = false;
#endif
}
