// The functions of operations with the same inputs, built once per update and worker.
//
// An operation's FSBS is a pure function of its usage and demand shares, whether it uses the
// step function, its limits share and its guarantee share (``operation_fsbff``, the MFFBS,
// compose and compress read nothing else), so two operations whose inputs have the same bits
// get the same doubles.  The simulator's leaf pools hold many such operations (one update of
// the default day: 275 operations, 79 distinct inputs; the production GPU tree: 743 and 260),
// and operations were ~45% of its update's instructions.  The key is the inputs' bits, not
// ``==`` on doubles: -0.0 and 0.0 (or two NaNs) could take different paths, and equal bits
// always take the same one.  Each worker thread has its own memo (nothing shared), cleared at
// the start of every update; an entry holds a copy of the result, so a later rebuild of the
// element it came from (with other inputs) cannot change it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "plf.hpp"

namespace ytsched {

class OperationMemo {
public:
    using Key = std::array<uint64_t, 21>;

    // What an operation's build leaves on its element besides the FSBS.
    struct Sizes {
        double fsbff_right_bound = 0.0;
        int32_t fsbff_size = 0;
        int32_t mffbs_size = 0;
    };

    // At most this many results per worker and update (a bound on the memory a worker keeps:
    // a tree of 100k distinct operations would otherwise hold a copy of every FSBS).  Lookups
    // go on when it is full; only new inputs are no longer stored.
    static constexpr std::size_t kMaxEntries = 4096;

    // Whether looking up is still worth its cost (~400 instructions an operation with the key,
    // hash and stored copy; 1k pools / 10k distinct operations paid +0.7% for nothing): after
    // kTrialLookups lookups, only while at least one in eight hit.  Which operations are built
    // and which are copied changes no double, only the work.
    static constexpr std::size_t kTrialLookups = 512;
    bool active() const { return lookups_ < kTrialLookups || hits_ * 8 >= lookups_; }

    static Key key(const Vec& usage, const Vec& demand, bool step, const Vec& limits,
                   const Vec& guarantee) {
        Key k;
        std::memcpy(&k[0], usage.data(), sizeof(Vec));
        std::memcpy(&k[5], demand.data(), sizeof(Vec));
        std::memcpy(&k[10], limits.data(), sizeof(Vec));
        std::memcpy(&k[15], guarantee.data(), sizeof(Vec));
        k[20] = step ? 1 : 0;
        return k;
    }

    // The stored result of ``key`` into ``fsbs`` and ``sizes``; false (nothing written) if
    // there is none.
    bool find(const Key& key, VChain& fsbs, Sizes& sizes) {
        ++lookups_;
        if (entries_.empty()) return false;
        const uint64_t h = hash(key);
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t s = h & mask; slots_[s] != 0; s = (s + 1) & mask) {
            const Entry& e = entries_[slots_[s] - 1];
            if (e.hash != h || e.key != key) continue;
            fsbs.x.assign(xs_.begin() + e.first, xs_.begin() + e.first + e.points);
            fsbs.y.assign(ys_.begin() + e.first, ys_.begin() + e.first + e.points);
            sizes = e.sizes;
            ++hits_;
            return true;
        }
        return false;
    }

    // Stores the result of ``key`` (which ``find`` did not have).
    void insert(const Key& key, const VChain& fsbs, const Sizes& sizes) {
        if (entries_.size() >= kMaxEntries) return;
        if ((entries_.size() + 1) * 2 > slots_.size()) grow();
        Entry e{key, hash(key), 0, xs_.size(), fsbs.x.size(), sizes};
        xs_.insert(xs_.end(), fsbs.x.begin(), fsbs.x.end());
        ys_.insert(ys_.end(), fsbs.y.begin(), fsbs.y.end());
        entries_.push_back(e);
        place(entries_.size() - 1);
    }

    // Forgets every entry, keeping the buffers' capacity (cost: the entries, not the table).
    void clear() noexcept {
        for (const Entry& e : entries_) slots_[e.slot] = 0;
        entries_.clear();
        xs_.clear();
        ys_.clear();
        lookups_ = 0;
        hits_ = 0;
    }

private:
    struct Entry {
        Key key;
        uint64_t hash;
        std::size_t slot;
        std::size_t first;   // into xs_ / ys_
        std::size_t points;
        Sizes sizes;
    };

    static uint64_t hash(const Key& key) {
        uint64_t h = 0;
        for (uint64_t w : key) h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        return h ^ (h >> 29);
    }

    void place(std::size_t index) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t s = entries_[index].hash & mask;
        while (slots_[s] != 0) s = (s + 1) & mask;
        slots_[s] = static_cast<uint32_t>(index + 1);
        entries_[index].slot = s;
    }

    void grow() {
        slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, 0);
        for (std::size_t i = 0; i < entries_.size(); ++i) place(i);
    }

    std::vector<Entry> entries_;
    std::vector<uint32_t> slots_;  // entry index + 1; 0: empty (a power of two long)
    ChainVector<double> xs_;
    ChainVector<Vec> ys_;
    std::size_t lookups_ = 0, hits_ = 0;
};

}  // namespace ytsched
