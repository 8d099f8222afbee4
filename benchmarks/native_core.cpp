// Times the native fair-share core alone on flat inputs written by dump_flat_inputs.py, and
// prints a digest of its results (to check that two builds give the same bytes).
//
//   g++ -std=c++17 -O3 -fno-fast-math -ffp-contract=off -pthread -Isrc/native
//       benchmarks/native_core.cpp src/native/plf.cpp src/native/pool.cpp
//       src/native/update.cpp -o /tmp/native_core      (one command line)
//   /tmp/native_core FILE.flat [runs] [threads] [wide kernels 0/1]
//
// Prints per run nothing; at the end min / median wall and CPU (process CPU time: all
// threads), the per-step medians, and an FNV-1a digest of out_f and out_i.  "caller" is the
// CPU time of the calling thread alone: the pool's waits block, so on a machine whose load
// leaves the engine no second core it still shows the serial path (the caller's own work),
// which is what the wall time of an update on a free second core follows.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/resource.h>
#include <fstream>
#include <vector>

#include "plf.hpp"
#include "pool.hpp"
#include "update.hpp"

namespace {

double cpu_seconds(clockid_t clock = CLOCK_PROCESS_CPUTIME_ID) {
    timespec ts;
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t fnv(const void* data, std::size_t bytes, uint64_t h) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t k = 0; k < bytes; ++k) {
        h ^= p[k];
        h *= 1099511628211ull;
    }
    return h;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE.flat [runs] [threads] [wide 0/1]\n", argv[0]);
        return 2;
    }
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    if (argc > 4) ytsched::set_wide_vector_kernels(std::atoi(argv[4]) != 0);
    ytsched::set_engine_threads(threads);
    {
        // A long-running Python process has freed large numpy arrays, which raises glibc's
        // mmap threshold (to at most 32 MiB): medium allocations then come from the heap and
        // are reused. Do the same here, so the driver's page faults are the module's.
        void* big = std::malloc(std::size_t{24} << 20);
        std::free(big);
    }
    std::ifstream in(argv[1], std::ios::binary);
    int64_t header[4];
    in.read(reinterpret_cast<char*>(header), sizeof header);
    const int64_t n = header[0];
    double of[ytsched::kOptionsF];
    int32_t oi[ytsched::kOptionsI];
    in.read(reinterpret_cast<char*>(of), sizeof of);
    in.read(reinterpret_cast<char*>(oi), sizeof oi);
    std::vector<double> in_f(static_cast<std::size_t>(n * ytsched::kInF));
    std::vector<int32_t> in_i(static_cast<std::size_t>(n * ytsched::kInI));
    in.read(reinterpret_cast<char*>(in_f.data()), static_cast<std::streamsize>(in_f.size() * 8));
    in.read(reinterpret_cast<char*>(in_i.data()), static_cast<std::streamsize>(in_i.size() * 4));
    if (!in) {
        std::fprintf(stderr, "short file\n");
        return 2;
    }
    ytsched::Options o = ytsched::options_from_flat(of, oi);
    std::vector<double> out_f(static_cast<std::size_t>(n * ytsched::kOutF));
    std::vector<int32_t> out_i(static_cast<std::size_t>(n * ytsched::kOutI));
    std::vector<double> walls, cpus, callers, faults;
    std::vector<std::vector<double>> steps(ytsched::kStepCount);
    uint64_t digest = 0;
    for (int run = 0; run < runs; ++run) {
        ytsched::Errors errors;
        const auto w0 = std::chrono::steady_clock::now();
        const double c0 = cpu_seconds();
        const double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        rusage u0, u1;
        getrusage(RUSAGE_SELF, &u0);
        ytsched::run_update(n, in_f.data(), in_i.data(), o, out_f.data(), out_i.data(), errors);
        callers.push_back(cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0);
        cpus.push_back(cpu_seconds() - c0);
        getrusage(RUSAGE_SELF, &u1);
        faults.push_back(static_cast<double>(u1.ru_minflt - u0.ru_minflt));
        walls.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
        for (int s = 0; s < ytsched::kStepCount; ++s) steps[s].push_back(errors.step_seconds[s]);
        uint64_t h = 1469598103934665603ull;
        h = fnv(out_f.data(), out_f.size() * 8, h);
        h = fnv(out_i.data(), out_i.size() * 4, h);
        if (run > 0 && h != digest) std::printf("DIGEST CHANGED BETWEEN RUNS\n");
        digest = h;
    }
    std::printf("wall min %.2f med %.2f ms | cpu min %.2f med %.2f ms | faults %.0f | digest %016llx\n",
                *std::min_element(walls.begin(), walls.end()) * 1e3, median(walls) * 1e3,
                *std::min_element(cpus.begin(), cpus.end()) * 1e3, median(cpus) * 1e3, median(faults),
                static_cast<unsigned long long>(digest));
    std::printf("caller cpu min %.2f med %.2f ms\n", *std::min_element(callers.begin(), callers.end()) * 1e3,
                median(callers) * 1e3);
    static const char* names[] = {"setup", "attr", "ivol", "guar", "ishare", "fsbff",
                                  "mffbs", "compose", "compress", "distrib", "output"};
    std::printf("steps:");
    for (int s = 0; s < ytsched::kStepCount; ++s) std::printf(" %s %.1f", names[s], median(steps[s]) * 1e3);
    std::printf("\n");
    // Minima too: on a loaded machine the median of a short step is mostly waiting for a core.
    std::printf("steps min:");
    for (int s = 0; s < ytsched::kStepCount; ++s)
        std::printf(" %s %.1f", names[s], *std::min_element(steps[s].begin(), steps[s].end()) * 1e3);
    std::printf("\n");
    return 0;
}
