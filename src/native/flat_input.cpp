// The flat-input reader (see flat_input.hpp): the layout and checks of
// ytsched/fairshare/flat.py's Python builder, done in one pass over the snapshot's objects.
//
// Proving "same result as the Python builder" is kept simple: only exact, known types are read
// (so no Python code can run during the walk and nothing can change under it), every value is
// converted the way ``struct.pack("d")`` / ``struct.pack("i")`` convert it (exact floats as they
// are, exact ints only where the conversion to double is exact), and every condition under
// which the Python builder raises, or might behave differently, returns ``None`` instead.
#include "flat_input.hpp"

#include <Python.h>
#include <structmember.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "update.hpp"

namespace nb = nanobind;

namespace ytsched {
namespace {

// Thrown (and caught in read_flat) to fall back to the Python builder.
struct Fallback {};

// A dataclass slot, read through its member descriptor's offset.
struct Slot {
    Py_ssize_t offset = 0;
};

Slot slot(PyTypeObject* type, const char* name) {
    PyObject* descriptor = PyDict_GetItemString(type->tp_dict, name);  // borrowed
    if (descriptor == nullptr || Py_TYPE(descriptor) != &PyMemberDescr_Type) throw Fallback{};
    PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY)) throw Fallback{};
    return Slot{member->offset};
}

// The slot's value (borrowed); an unset slot (AttributeError in Python) falls back.
inline PyObject* get(PyObject* object, Slot s) {
    PyObject* value = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(object) + s.offset);
    if (value == nullptr) throw Fallback{};
    return value;
}

PyTypeObject* plain_type(PyObject* candidate) {
    if (!PyType_Check(candidate)) throw Fallback{};
    auto* type = reinterpret_cast<PyTypeObject*>(candidate);
    // A type that customises attribute access could answer differently from its slots.
    if (type->tp_getattro != PyObject_GenericGetAttr) throw Fallback{};
    return type;
}

inline void exact(PyObject* object, PyTypeObject* type) {
    if (Py_TYPE(object) != type) throw Fallback{};
}

constexpr long long kExactInt = 1LL << 53;

// A number as ``struct.pack("d")`` converts it; only exact floats and ints whose double is
// exact (bool, subclasses and anything else fall back).
inline double number(PyObject* value) {
    if (PyFloat_CheckExact(value)) return PyFloat_AS_DOUBLE(value);
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow != 0 || v > kExactInt || v < -kExactInt) throw Fallback{};
        return static_cast<double>(v);
    }
    throw Fallback{};
}

inline int flag(PyObject* value) {
    if (value == Py_True) return 1;
    if (value == Py_False) return 0;
    throw Fallback{};
}

// A five-component resource vector: an exact tuple or list of five numbers.
inline void vector(PyObject* value, double* out) {
    PyObject** items;
    if (PyTuple_CheckExact(value)) {
        if (PyTuple_GET_SIZE(value) != 5) throw Fallback{};
        items = &PyTuple_GET_ITEM(value, 0);
    } else if (PyList_CheckExact(value)) {
        if (PyList_GET_SIZE(value) != 5) throw Fallback{};
        items = &PyList_GET_ITEM(value, 0);
    } else {
        throw Fallback{};
    }
    for (int k = 0; k < 5; ++k) out[k] = number(items[k]);
}

inline PyObject* exact_str(PyObject* value) {
    if (!PyUnicode_CheckExact(value)) throw Fallback{};
    return value;
}

// Owned reference helper: steals, and raises the Python error if creation failed.
nb::object owned(PyObject* object) {
    if (object == nullptr) throw nb::python_error();
    return nb::steal(object);
}

inline bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }
inline bool amount(double v) { return finite_non_negative(v); }  // NaN, <0 and inf fail
inline bool limit(double v) { return !std::isnan(v) && v >= 0; }  // inf allowed

// ``_check_values``: every condition under which the Python builder raises.
bool row_valid(const double* r) {
    for (int k = 0; k < 5; ++k) {
        if (!amount(r[kInDemand + k]) || !amount(r[kInUsage + k]) || !limit(r[kInLimits + k]) ||
            !amount(r[kInExplicitSg + k]) || !amount(r[kInFlow + k]) ||
            !amount(r[kInBurst + k]) || !amount(r[kInVolume + k]))
            return false;
    }
    if (!finite_non_negative(r[kInWeight]) || r[kInWeight] <= 0) return false;
    if (!finite_non_negative(r[kInRelaxedMult]) || !finite_non_negative(r[kInLastRatio]) ||
        !finite_non_negative(r[kInPendingJobs]))
        return false;
    const double start = r[kInStartTime];
    if (std::isnan(start) || start == -std::numeric_limits<double>::infinity()) return false;
    return true;
}

// Exact ``str`` names to rows: open addressing on the strings' own (cached) hashes, equal as
// Python compares them; ~5x cheaper than a dict of row ints, which callers build only if they
// look elements up by name.
class NameTable {
public:
    explicit NameTable(size_t count) {
        size_t capacity = 16;
        while (capacity < 2 * count) capacity *= 2;
        mask_ = capacity - 1;
        slots_.assign(capacity, Entry{nullptr, 0, -1});
    }
    // False if an equal name is present already.
    bool insert(PyObject* name, int32_t row) {
        const Py_hash_t hash = hash_of(name);
        for (size_t i = static_cast<size_t>(hash) & mask_;; i = (i + 1) & mask_) {
            Entry& entry = slots_[i];
            if (entry.name == nullptr) {
                entry = Entry{name, hash, row};
                return true;
            }
            if (same(entry, name, hash)) return false;
        }
    }
    // The row of ``name``, or -1.
    int32_t find(PyObject* name) const {
        const Py_hash_t hash = hash_of(name);
        for (size_t i = static_cast<size_t>(hash) & mask_;; i = (i + 1) & mask_) {
            const Entry& entry = slots_[i];
            if (entry.name == nullptr) return -1;
            if (same(entry, name, hash)) return entry.row;
        }
    }

private:
    struct Entry {
        PyObject* name;  // borrowed: the snapshot's objects outlive the table
        Py_hash_t hash;
        int32_t row;
    };
    static Py_hash_t hash_of(PyObject* name) {
        const Py_hash_t hash = PyObject_Hash(name);  // exact str: cached, cannot fail
        if (hash == -1) throw nb::python_error();
        return hash;
    }
    static bool same(const Entry& entry, PyObject* name, Py_hash_t hash) {
        if (entry.name == name) return true;
        return entry.hash == hash && PyUnicode_Compare(entry.name, name) == 0;
    }
    std::vector<Entry> slots_;
    size_t mask_;
};

struct Kinds {
    PyTypeObject* pool;
    PyTypeObject* operation;
    PyTypeObject* integral;
    PyObject* fifo;
    PyObject* fair_share;
    PyObject* integral_types[3];
    PyObject* fifo_parameters[3];
};

Kinds kinds_of(nb::tuple kinds) {
    if (kinds.size() != 11) throw nb::value_error("read_flat: expected 11 kinds");
    Kinds k;
    k.pool = plain_type(kinds[0].ptr());
    k.operation = plain_type(kinds[1].ptr());
    k.integral = plain_type(kinds[2].ptr());
    k.fifo = kinds[3].ptr();
    k.fair_share = kinds[4].ptr();
    for (int i = 0; i < 3; ++i) k.integral_types[i] = kinds[5 + i].ptr();
    for (int i = 0; i < 3; ++i) k.fifo_parameters[i] = kinds[8 + i].ptr();
    return k;
}

int code_of(PyObject* value, PyObject* const* members) {
    for (int i = 0; i < 3; ++i)
        if (value == members[i]) return i;
    throw Fallback{};
}

nb::object read(PyObject* pools, PyObject* operations, PyObject* total_object, bool gpu_only,
                int gpu_index, bool vanilla_gang, const Kinds& kinds, double* in_f,
                int32_t* in_i, int64_t rows) {
    if (!PyList_CheckExact(pools) || !PyList_CheckExact(operations)) throw Fallback{};
    const Py_ssize_t pool_count = PyList_GET_SIZE(pools);
    const Py_ssize_t operation_count = PyList_GET_SIZE(operations);
    if (pool_count + operation_count != rows) throw nb::value_error("read_flat: row count");
    double total[5];
    vector(total_object, total);

    const Slot p_name = slot(kinds.pool, "name"), p_parent = slot(kinds.pool, "parent"),
               p_mode = slot(kinds.pool, "mode"), p_weight = slot(kinds.pool, "weight"),
               p_sg = slot(kinds.pool, "strong_guarantee_resources"),
               p_limits = slot(kinds.pool, "resource_limits"),
               p_ig = slot(kinds.pool, "integral_guarantees"),
               p_volume = slot(kinds.pool, "accumulated_resource_volume"),
               p_ratio = slot(kinds.pool, "last_integral_share_ratio"),
               p_fifo_parameters = slot(kinds.pool, "fifo_sort_parameters"),
               p_promised = slot(kinds.pool, "compute_promised_guarantee_fair_share"),
               p_reorder =
                   slot(kinds.pool, "enable_fifo_children_reordering_for_guarantee_utilization"),
               p_step = slot(kinds.pool, "enable_step_function_for_gang_operations");
    const Slot i_type = slot(kinds.integral, "guarantee_type"),
               i_flow = slot(kinds.integral, "resource_flow"),
               i_burst = slot(kinds.integral, "burst_guarantee_resources"),
               i_relaxed = slot(kinds.integral, "relaxed_share_multiplier_limit"),
               i_accept = slot(kinds.integral, "can_accept_free_volume"),
               i_distribute = slot(kinds.integral, "should_distribute_free_volume_among_children");
    const Slot o_name = slot(kinds.operation, "name"), o_parent = slot(kinds.operation, "parent"),
               o_demand = slot(kinds.operation, "resource_demand"),
               o_usage = slot(kinds.operation, "resource_usage"),
               o_limits = slot(kinds.operation, "resource_limits"),
               o_weight = slot(kinds.operation, "weight"),
               o_start = slot(kinds.operation, "start_time"),
               o_pending = slot(kinds.operation, "pending_job_count"),
               o_gang = slot(kinds.operation, "is_gang"),
               o_type = slot(kinds.operation, "operation_type");

    // Names: one table for all rows (pools first), duplicates found on insertion.
    NameTable names(static_cast<size_t>(rows));
    nb::object pool_names = owned(PyList_New(pool_count));
    nb::object operation_names = owned(PyList_New(operation_count));
    std::vector<int32_t> parent_rows(static_cast<size_t>(rows), -1);
    std::vector<char> fifo(static_cast<size_t>(pool_count), 0);
    Py_ssize_t root = -1;

    auto insert = [&](PyObject* name, Py_ssize_t row) {
        if (!names.insert(name, static_cast<int32_t>(row))) throw Fallback{};  // duplicate
    };
    auto row_of = [&](PyObject* name) -> Py_ssize_t {
        const int32_t row = names.find(name);
        if (row < 0) throw Fallback{};  // UnknownParent
        return row;
    };

    for (Py_ssize_t p = 0; p < pool_count; ++p) {
        PyObject* spec = PyList_GET_ITEM(pools, p);
        exact(spec, kinds.pool);
        PyObject* name = exact_str(get(spec, p_name));
        insert(name, p);
        Py_INCREF(name);
        PyList_SET_ITEM(pool_names.ptr(), p, name);
        PyObject* mode = get(spec, p_mode);
        if (mode == kinds.fifo)
            fifo[p] = 1;
        else if (mode != kinds.fair_share)
            throw Fallback{};
        if (get(spec, p_parent) == Py_None) {
            if (root >= 0) throw Fallback{};  // MultipleRoots
            root = p;
        }
    }
    if (pool_count > 0 && root < 0) throw Fallback{};  // MissingRoot
    if (pool_count == 0) throw Fallback{};  // the Python builder decides what an empty tree is
    for (Py_ssize_t p = 0; p < pool_count; ++p) {
        PyObject* parent = get(PyList_GET_ITEM(pools, p), p_parent);
        if (parent == Py_None) continue;
        const Py_ssize_t row = row_of(exact_str(parent));
        if (fifo[static_cast<size_t>(row)]) throw Fallback{};  // FifoPoolWithSubpools
        parent_rows[static_cast<size_t>(p)] = static_cast<int32_t>(row);
    }
    // ParentCycle: every pool must reach the root.  0 unknown, 1 on the current path, 2 good.
    {
        std::vector<char> state(static_cast<size_t>(pool_count), 0);
        state[static_cast<size_t>(root)] = 2;
        std::vector<Py_ssize_t> path;
        for (Py_ssize_t start = 0; start < pool_count; ++start) {
            path.clear();
            Py_ssize_t current = start;
            while (state[static_cast<size_t>(current)] == 0) {
                state[static_cast<size_t>(current)] = 1;
                path.push_back(current);
                current = parent_rows[static_cast<size_t>(current)];
                if (current < 0) throw Fallback{};
            }
            if (state[static_cast<size_t>(current)] != 2) throw Fallback{};
            for (Py_ssize_t element : path) state[static_cast<size_t>(element)] = 2;
        }
    }

    // Pool rows.
    for (Py_ssize_t p = 0; p < pool_count; ++p) {
        PyObject* spec = PyList_GET_ITEM(pools, p);
        double* f = in_f + p * kInF;
        int32_t* r = in_i + p * kInI;
        std::memset(f, 0, sizeof(double) * kInF);
        PyObject* weight = get(spec, p_weight);
        f[kInWeight] = weight == Py_None ? 1.0 : number(weight);
        if (p == root) {
            std::memcpy(f + kInLimits, total, sizeof total);
        } else {
            vector(get(spec, p_limits), f + kInLimits);
        }
        PyObject* ig = get(spec, p_ig);
        exact(ig, kinds.integral);
        vector(get(ig, i_flow), f + kInFlow);
        vector(get(ig, i_burst), f + kInBurst);
        PyObject* relaxed = get(ig, i_relaxed);
        f[kInRelaxedMult] = relaxed == Py_None ? 0.0 : number(relaxed);
        vector(get(spec, p_volume), f + kInVolume);
        f[kInLastRatio] = number(get(spec, p_ratio));

        int mask = 0;
        PyObject* guarantees = get(spec, p_sg);
        if (!PyDict_CheckExact(guarantees)) throw Fallback{};
        Py_ssize_t position = 0;
        PyObject *key, *value;
        while (PyDict_Next(guarantees, &position, &key, &value)) {
            if (!PyLong_CheckExact(key)) throw Fallback{};
            const long resource = PyLong_AsLong(key);
            if (resource == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                throw Fallback{};
            }
            if (gpu_only && resource != gpu_index) continue;
            if (resource < 0 || resource > 4) throw Fallback{};  // unknown resource index
            mask |= 1 << resource;
            f[kInExplicitSg + resource] = number(value);
        }

        PyObject* parameters = get(spec, p_fifo_parameters);
        if (!PyTuple_CheckExact(parameters) || PyTuple_GET_SIZE(parameters) > 3) throw Fallback{};
        int codes[3] = {-1, -1, -1};
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(parameters); ++k)
            codes[k] = code_of(PyTuple_GET_ITEM(parameters, k), kinds.fifo_parameters);
        PyObject* distribute = get(ig, i_distribute);

        r[kInParent] = parent_rows[static_cast<size_t>(p)];
        r[kInIsOp] = 0;
        r[kInFifo] = fifo[static_cast<size_t>(p)];
        r[kInWeightExplicit] = weight != Py_None;
        r[kInSgMask] = mask;
        r[kInIntegralType] = code_of(get(ig, i_type), kinds.integral_types);
        r[kInRelaxedMultSet] = relaxed != Py_None;
        r[kInCanAccept] = flag(get(ig, i_accept));
        r[kInShouldDistribute] = distribute == Py_None ? -1 : flag(distribute);
        r[kInFifoParam0] = codes[0];
        r[kInFifoParam0 + 1] = codes[1];
        r[kInFifoParam0 + 2] = codes[2];
        r[kInPromised] = flag(get(spec, p_promised));
        r[kInFifoReorder] = flag(get(spec, p_reorder));
        r[kInStepEnabled] = flag(get(spec, p_step));
        r[kInGang] = 0;
        if (!row_valid(f)) throw Fallback{};
    }

    // Operation rows.
    for (Py_ssize_t o = 0; o < operation_count; ++o) {
        PyObject* op = PyList_GET_ITEM(operations, o);
        exact(op, kinds.operation);
        const Py_ssize_t row = pool_count + o;
        PyObject* name = exact_str(get(op, o_name));
        const Py_ssize_t parent = row_of(exact_str(get(op, o_parent)));
        if (parent >= pool_count) throw Fallback{};  // an operation is no parent
        insert(name, row);
        Py_INCREF(name);
        PyList_SET_ITEM(operation_names.ptr(), o, name);

        double* f = in_f + row * kInF;
        int32_t* r = in_i + row * kInI;
        std::memset(f, 0, sizeof(double) * kInF);
        f[kInWeight] = number(get(op, o_weight));
        vector(get(op, o_demand), f + kInDemand);
        vector(get(op, o_usage), f + kInUsage);
        vector(get(op, o_limits), f + kInLimits);
        for (int k = 0; k < 5; ++k)  // UsageAboveDemand (NaN fails too)
            if (!(f[kInDemand + k] >= f[kInUsage + k])) throw Fallback{};
        PyObject* start = get(op, o_start);
        f[kInStartTime] =
            start == Py_None ? std::numeric_limits<double>::infinity() : number(start);
        f[kInPendingJobs] = number(get(op, o_pending));
        if (!row_valid(f)) throw Fallback{};

        int gang = flag(get(op, o_gang));
        PyObject* type = get(op, o_type);
        if (type != Py_None) {
            exact_str(type);
            if (!gang && vanilla_gang && PyUnicode_CompareWithASCIIString(type, "vanilla") == 0)
                gang = 1;
        }
        r[kInParent] = static_cast<int32_t>(parent);
        r[kInIsOp] = 1;
        r[kInFifo] = 0;
        r[kInWeightExplicit] = 0;
        r[kInSgMask] = 0;
        r[kInIntegralType] = 0;
        r[kInRelaxedMultSet] = 0;
        r[kInCanAccept] = 1;
        r[kInShouldDistribute] = -1;
        r[kInFifoParam0] = r[kInFifoParam0 + 1] = r[kInFifoParam0 + 2] = -1;
        r[kInPromised] = 0;
        r[kInFifoReorder] = 0;
        r[kInStepEnabled] = 1;
        r[kInGang] = gang;
    }
    return nb::make_tuple(pool_names, operation_names, root);
}

}  // namespace

nb::object read_flat(nb::handle pools, nb::handle operations, nb::handle total, bool gpu_only,
                     int gpu_index, bool vanilla_gang, nb::tuple kinds,
                     nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> in_f,
                     nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> in_i) {
    const int64_t rows = static_cast<int64_t>(in_f.shape(0));
    if (in_f.shape(1) != kInF || in_i.shape(1) != kInI ||
        static_cast<int64_t>(in_i.shape(0)) != rows)
        throw nb::value_error("read_flat: array shapes do not match the flat layout");
    try {
        const Kinds k = kinds_of(kinds);
        return read(pools.ptr(), operations.ptr(), total.ptr(), gpu_only, gpu_index, vanilla_gang,
                    k, in_f.data(), in_i.data(), rows);
    } catch (const Fallback&) {
        return nb::none();
    }
}

}  // namespace ytsched
