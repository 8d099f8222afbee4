// One fair-share update on a flat description of the tree (see ytsched/fairshare/native.py for
// the Python side that builds it).  Mirrors src/ytsched/fairshare/update.py step by step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plf.hpp"

namespace ytsched {

// Columns of the per-element float input (n x kInF, row-major).
enum InF : int {
    kInWeight = 0,
    kInDemand = 1,         // 5
    kInUsage = 6,          // 5
    kInLimits = 11,        // 5 (the root's: the cluster total)
    kInExplicitSg = 16,    // 5 (meaningful where the mask bit is set)
    kInFlow = 21,          // 5 integral_guarantees.resource_flow
    kInBurst = 26,         // 5 integral_guarantees.burst_guarantee_resources
    kInRelaxedMult = 31,
    kInVolume = 32,        // 5 accumulated_resource_volume
    kInLastRatio = 37,
    kInStartTime = 38,     // +inf when unknown
    kInPendingJobs = 39,
    kInF = 40,
};

// Columns of the per-element int input (n x kInI).
enum InI : int {
    kInParent = 0,          // -1 for the root
    kInIsOp = 1,
    kInFifo = 2,
    kInWeightExplicit = 3,
    kInSgMask = 4,          // bit r: strong guarantee of resource r given explicitly
    kInIntegralType = 5,    // 0 none, 1 burst, 2 relaxed
    kInRelaxedMultSet = 6,
    kInCanAccept = 7,
    kInShouldDistribute = 8,  // -1 unset, 0, 1
    kInFifoParam0 = 9,      // 3 columns: -1 none, 0 weight, 1 start_time, 2 pending_job_count
    kInPromised = 12,
    kInFifoReorder = 13,
    kInStepEnabled = 14,
    kInGang = 15,
    kInI = 16,
};

// Columns of the per-element float output (n x kOutF).
enum OutF : int {
    kOutFairShare = 0,       // 20: strong, integral, weight-proportional, total
    kOutPromised = 20,       // 20
    kOutLimitsShare = 40,
    kOutSgShare = 45,
    kOutProposed = 50,
    kOutUsageShare = 55,
    kOutDemandShare = 60,
    kOutEstimated = 65,
    kOutBurstRatio = 70,
    kOutTotalBurstRatio = 71,
    kOutFlowRatio = 72,
    kOutTotalFlowRatio = 73,
    kOutVolume = 74,
    kOutLastRatio = 79,
    kOutOverflow = 80,
    kOutAcceptable = 85,
    kOutChildrenOverflow = 90,
    kOutAcceptedFree = 95,
    kOutWeight = 100,
    kOutInferredSg = 101,
    kOutUsage = 106,
    kOutDemand = 111,
    kOutLimitedDemand = 116,  // FSBS right value
    kOutF = 121,
};

enum OutI : int {
    kOutDominant = 0,
    kOutFifoIndex = 1,       // -1 = None
    kOutEffectiveFifo = 2,   // -1 = None
    kOutFsbsSize = 3,        // segments; -1 = no functions
    kOutFsbffSize = 4,
    kOutMffbsSize = 5,
    kOutI = 6,
};

struct Options {
    Vec total{};
    bool has_times = false;
    double now = 0.0;
    double previous_update_time = 0.0;
    int main_resource = 1;
    double saturation_period = 0.0;
    double smooth_period = 0.0;
    double relaxed_share_multiplier_limit = 0.0;
    bool should_distribute_free_volume = false;
    bool step_function_for_gangs = false;
    bool improved = false;
    bool improved_gap = false;
    bool fast_fifo = false;
    bool fifo_reordering = false;
    bool has_weight_multiplier = false;
    double weight_multiplier = 0.0;
    // Issue 17 hook: truncate inferred guarantees of integer resources (off until the Python
    // reference does it).
    bool truncate_inferred_guarantees = false;
};

// Lengths of the two option arrays the Python side packs (ytsched/fairshare/flat.py, opts_f and
// opts_i), decoded by options_from_flat: one layout for the module and the benchmark driver.
constexpr int kOptionsF = 11;
constexpr int kOptionsI = 10;
Options options_from_flat(const double* opts_f, const int32_t* opts_i);

// Seconds spent per step of one update (the per-step profile in docs/performance.md).
enum Step : int {
    kStepSetup = 0,        // reading the flat input, linking the tree
    kStepAttributes,       // configs, inferred guarantees, bottom-up attributes, FIFO order
    kStepIntegralVolumes,  // consume and refill, free-volume distribution
    kStepGuarantees,       // overcommit checks, shrinking, weights, estimated shares, reordering
    kStepIntegralShares,   // burst and relaxed integral shares (their functions included)
    kStepFsbff,            // fair share by fit factor: operation, pool sums, FIFO, improved
    kStepMffbs,            // max fit factor by suggestion (inverses, pointwise minimum)
    kStepCompose,          // FSBFF o MFFBS
    kStepCompress,         // compression into FSBS
    kStepDistribute,       // top-down distribution, promised shares, root share
    kStepOutput,           // writing the flat results
    kStepCount,
};

struct Errors {
    std::vector<int32_t> nested_promised;  // element indices, pre-order
    bool flow_overcommit = false;
    bool burst_overcommit = false;
    Vec total_strong{};
    Vec total_flow{};
    Vec total_burst{};
    double step_seconds[kStepCount] = {};
};

// Updates whose unbuilt subtree has at least this many elements build their functions on the
// engine's threads (pool.hpp; default 64, tests set 0); trees of fewer than eight times as
// many elements run on the caller alone.
std::size_t parallel_build_min();
void set_parallel_build_min(std::size_t elements);

// Runs the whole update.  ``in_f``/``in_i`` are n x kInF / n x kInI, ``out_f``/``out_i``
// n x kOutF / n x kOutI (written completely).  Throws EngineError on inputs the reference
// cannot handle either.
void run_update(int64_t n, const double* in_f, const int32_t* in_i, const Options& options,
                double* out_f, int32_t* out_i, Errors& errors);

}  // namespace ytsched
