// An operation's template from its packed shares in native code (functions of
// ytsched.scheduling._selector; see ytsched/scheduling/native_template.py).
//
// Every operation whose computed shares moved gets a new template at each fair-share update:
// its ShareView, its PreemptionBounds and its scheduling status, all from the 25 doubles of its
// packed shares (fair, demand and usage shares, the tree's total, the demand; see
// fairshare.native.ShareKeys). In the interpreter that was a few hundred bytecodes and five
// frozen dataclass __init__ calls (each field an object.__setattr__) per operation. This file
// computes the same fields with the same double operations in the same order (C doubles under
// -fno-fast-math -ffp-contract=off are the interpreter's float operations: one IEEE operation
// each, no contraction) and fills the very classes' slots through their member descriptors, as
// the generated __init__ does (the classes have no __post_init__; template_setup checks every
// field is a plain object slot). Inputs that are not exact floats (an int tolerance from a
// config, say) are left to the Python path: template_from_shares then returns None.
//
// restart() is PreemptibleList._restart's search for the new boundaries of a republished
// list, with the same scans (the module's own scan(), usage_sums.cpp; a "below" test is a scan
// of one hole), one call instead of a few interpreted method calls; a non-preemptible
// boundary that moves back is walked back to from where it was.
//
// The Python definitions (ShareView.create, PreemptionBounds.create, operation_tolerance,
// status_bound, ShareView.strictly_dominates_non_blocked, the OperationTemplate fields) stay
// the reference: tests/scheduling/test_native_template.py compares every field bit for bit.

#include <Python.h>
#include <structmember.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <iterator>

#include "preempt.hpp"

namespace {

// resources.EPSILON and satisfaction.LARGE_EPSILON (exposed as PREEMPT_EPSILON and
// PREEMPT_LARGE_EPSILON; tests check they agree).
constexpr double kEpsilon = 1e-9;
constexpr double kLargeEpsilon = 1e-4;

// A slotted class and the offsets of its fields' slots, in the order of `names`.
template <std::size_t N>
struct Layout {
  PyTypeObject* type = nullptr;
  Py_ssize_t offsets[N] = {};
};

constexpr const char* kViewFields[] = {
    "fair_share", "demand_share", "usage_share", "total",    "blocked",
    "all_blocked", "fair_share_is_zero", "fair_amounts", "measured", "ratio_measured"};
constexpr const char* kBoundsFields[] = {"aggressive_bound", "bound", "threshold"};
constexpr const char* kBoundFields[] = {"checks", "any_of", "constant"};
constexpr const char* kTemplateFields[] = {"settings", "shares",    "fifo_index", "view",
                                           "bounds",   "order_key", "demand",     "status"};

Layout<std::size(kViewFields)> g_view;
Layout<std::size(kBoundsFields)> g_bounds;
Layout<std::size(kBoundFields)> g_bound;
Layout<std::size(kTemplateFields)> g_template;
PyObject* g_indexes = nullptr;  // satisfaction._INDEXES: per bit mask, its resource indexes
PyObject* g_normal = nullptr;   // SchedulableStatus.NORMAL
PyObject* g_below = nullptr;    // SchedulableStatus.BELOW_FAIR_SHARE
PyObject* g_tolerance = nullptr;
PyObject* g_psat = nullptr;
PyObject* g_apsat = nullptr;
PyObject* g_threshold = nullptr;

// Fills `layout` from `cls` (a type whose every field in `names` is an object slot, a member
// descriptor of type T_OBJECT_EX); 0, or -1 with an exception set.
template <std::size_t N>
int fill_layout(Layout<N>& layout, PyObject* cls, const char* const (&names)[N]) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "template_setup: expected a class");
    return -1;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  // Every slot of the class is one of `names` (a dataclass with slots=True lists its fields
  // there): a field added to the class and not built here must fail now, not leave a slot
  // unset.
  PyObject* slots = PyObject_GetAttrString(cls, "__slots__");
  if (slots == nullptr) return -1;
  const bool same_count = PyTuple_Check(slots) && PyTuple_GET_SIZE(slots) == Py_ssize_t(N);
  Py_DECREF(slots);
  if (!same_count) {
    PyErr_Format(PyExc_TypeError, "template_setup: %s must have exactly %zu slots",
                 type->tp_name, N);
    return -1;
  }
  Py_ssize_t offsets[N];
  for (std::size_t i = 0; i < N; ++i) {
    PyObject* descriptor = PyObject_GetAttrString(cls, names[i]);
    if (descriptor == nullptr) return -1;
    const bool is_member = Py_IS_TYPE(descriptor, &PyMemberDescr_Type);
    const PyMemberDef* member =
        is_member ? reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member : nullptr;
    const bool ok = member != nullptr && member->type == T_OBJECT_EX &&
                    !(member->flags & READONLY) &&
                    reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_common.d_type == type;
    offsets[i] = ok ? member->offset : 0;
    Py_DECREF(descriptor);
    if (!ok) {
      PyErr_Format(PyExc_TypeError, "template_setup: %s.%s is not an object slot of its class",
                   type->tp_name, names[i]);
      return -1;
    }
  }
  Py_INCREF(cls);
  Py_XDECREF(reinterpret_cast<PyObject*>(layout.type));
  layout.type = type;
  std::memcpy(layout.offsets, offsets, sizeof(offsets));
  return 0;
}

// A new instance of `layout`'s class (object.__new__) with its slots set to `values` (stolen
// references, in the order of the layout's names); nullptr with an exception set when a value
// is nullptr or the allocation fails (every value is released either way).
template <std::size_t N>
PyObject* build(const Layout<N>& layout, PyObject* const (&values)[N]) {
  bool missing = false;
  for (PyObject* value : values) missing = missing || value == nullptr;
  PyObject* self = missing ? nullptr : layout.type->tp_alloc(layout.type, 0);
  if (self == nullptr) {
    for (PyObject* value : values) Py_XDECREF(value);
    return nullptr;
  }
  char* base = reinterpret_cast<char*>(self);
  for (std::size_t i = 0; i < N; ++i) {
    *reinterpret_cast<PyObject**>(base + layout.offsets[i]) = values[i];
  }
  return self;
}

// (PyFloat(v[0]), ..., PyFloat(v[4])), or nullptr with an exception set.
PyObject* floats5(const double* v) {
  PyObject* result = PyTuple_New(5);
  if (result == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* value = PyFloat_FromDouble(v[i]);
    if (value == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    PyTuple_SET_ITEM(result, i, value);
  }
  return result;
}

PyObject* boolean(bool value) { return Py_NewRef(value ? Py_True : Py_False); }

// `_INDEXES[mask]` (a new reference).
PyObject* indexes(unsigned mask) {
  PyObject* result = PyTuple_GetItem(g_indexes, static_cast<Py_ssize_t>(mask));
  Py_XINCREF(result);
  return result;
}

// The attribute `name` of `obj` as a double when it is an exact float: 1 (with *out set), 0
// (not an exact float), or -1 with an exception set.
int exact_float(PyObject* obj, PyObject* name, double* out) {
  PyObject* value = PyObject_GetAttr(obj, name);
  if (value == nullptr) return -1;
  const bool exact = PyFloat_CheckExact(value);
  if (exact) *out = PyFloat_AS_DOUBLE(value);
  Py_DECREF(value);
  return exact ? 1 : 0;
}

// A CompiledBound (PreemptionBounds.create's per-bound result): `checks` holds `count`
// pairs (resources[k], limits[k]).
PyObject* compiled_bound(const int* resources, const double* limits, Py_ssize_t count,
                         bool any_of, bool constant) {
  PyObject* checks = PyTuple_New(count);
  if (checks == nullptr) return nullptr;
  for (Py_ssize_t k = 0; k < count; ++k) {
    PyObject* pair = PyTuple_New(2);
    PyObject* resource = pair != nullptr ? PyLong_FromLong(resources[k]) : nullptr;
    PyObject* limit = resource != nullptr ? PyFloat_FromDouble(limits[k]) : nullptr;
    if (limit == nullptr) {
      Py_XDECREF(resource);
      Py_XDECREF(pair);
      Py_DECREF(checks);
      return nullptr;
    }
    PyTuple_SET_ITEM(pair, 0, resource);
    PyTuple_SET_ITEM(pair, 1, limit);
    PyTuple_SET_ITEM(checks, k, pair);
  }
  return build(g_bound, {checks, boolean(any_of), boolean(constant)});
}

// template_setup(template_cls, view_cls, bounds_cls, bound_cls, indexes, normal, below):
// the classes template_from_shares builds (OperationTemplate, ShareView, PreemptionBounds,
// CompiledBound), satisfaction._INDEXES and the two schedulable statuses.
PyObject* template_setup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "template_setup takes 7 arguments");
    return nullptr;
  }
  if (!PyTuple_CheckExact(args[4]) || PyTuple_GET_SIZE(args[4]) != 32) {
    PyErr_SetString(PyExc_TypeError, "template_setup: indexes must be a tuple of 32 tuples");
    return nullptr;
  }
  if (fill_layout(g_template, args[0], kTemplateFields) < 0 ||
      fill_layout(g_view, args[1], kViewFields) < 0 ||
      fill_layout(g_bounds, args[2], kBoundsFields) < 0 ||
      fill_layout(g_bound, args[3], kBoundFields) < 0) {
    return nullptr;
  }
  Py_XSETREF(g_indexes, Py_NewRef(args[4]));
  Py_XSETREF(g_normal, Py_NewRef(args[5]));
  Py_XSETREF(g_below, Py_NewRef(args[6]));
  Py_RETURN_NONE;
}

// template_from_shares(settings, shares, total, bounds, fifo_index): the OperationTemplate of
// post_update._template(settings, shares, None, total, bounds, True, fifo_index), or None when
// an input is not an exact float (the caller then takes the Python path).
PyObject* template_from_shares(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError,
                    "template_from_shares(settings, shares, total, bounds, fifo_index) takes 5 "
                    "arguments");
    return nullptr;
  }
  if (g_template.type == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "template_from_shares before template_setup");
    return nullptr;
  }
  PyObject* settings = args[0];
  PyObject* shares = args[1];
  PyObject* total = args[2];
  PyObject* known_bounds = args[3];
  PyObject* fifo_index = args[4];
  if (!PyBytes_CheckExact(shares) || PyBytes_GET_SIZE(shares) != 25 * sizeof(double)) {
    PyErr_SetString(PyExc_TypeError, "template_from_shares: shares must be 200 bytes");
    return nullptr;
  }
  if (!PyTuple_CheckExact(total) || PyTuple_GET_SIZE(total) != 5) Py_RETURN_NONE;
  double t[5];
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* amount = PyTuple_GET_ITEM(total, i);
    if (!PyFloat_CheckExact(amount)) Py_RETURN_NONE;
    t[i] = PyFloat_AS_DOUBLE(amount);
  }
  double tolerance = 0.0, normal = 0.0, aggressive = 0.0;
  int exact = exact_float(settings, g_tolerance, &tolerance);
  if (exact == 1) exact = exact_float(settings, g_psat, &normal);
  if (exact == 1) exact = exact_float(settings, g_apsat, &aggressive);
  if (exact < 0) return nullptr;
  if (exact == 0) Py_RETURN_NONE;

  // The packed shares: `struct.Struct("25d")`, native byte order, as ShareKeys packs them.
  double v[25];
  std::memcpy(v, PyBytes_AS_STRING(shares), sizeof(v));
  const double* f = v;       // fair share
  const double* d = v + 5;   // demand share
  const double* u = v + 10;  // usage share

  // ShareView.create(fair, demand, usage, total).
  bool blocked[5];
  double amounts[5];
  unsigned mask = 0, ratio = 0;
  bool all_blocked = true, fair_is_zero = true;
  for (int i = 0; i < 5; ++i) {
    blocked[i] = f[i] >= d[i];
    amounts[i] = f[i] * t[i];
  }
  for (int i = 0; i < 5; ++i) {
    if (t[i] != 0.0) mask |= 1u << i;  // `if total[i]` (a NaN is true, as != 0.0 is)
    if (!(blocked[i] || amounts[i] == 0.0)) ratio |= 1u << i;
    all_blocked = all_blocked && blocked[i];
    fair_is_zero = fair_is_zero && f[i] <= kEpsilon;
  }
  PyObject* blocked_tuple = PyTuple_New(5);
  if (blocked_tuple != nullptr) {
    for (Py_ssize_t i = 0; i < 5; ++i) PyTuple_SET_ITEM(blocked_tuple, i, boolean(blocked[i]));
  }
  PyObject* view = build(g_view, {floats5(f), floats5(d), floats5(u), Py_NewRef(total),
                                  blocked_tuple, boolean(all_blocked), boolean(fair_is_zero),
                                  floats5(amounts), indexes(mask), indexes(ratio & mask)});
  if (view == nullptr) return nullptr;

  // PreemptionBounds.create(view, ...), unless the caller has them.
  PyObject* bounds = known_bounds;
  if (bounds == Py_None) {
    bool fully_satisfied = true, demand_is_zero = true;
    for (int i = 0; i < 5; ++i) {
      fully_satisfied = fully_satisfied && std::fabs(f[i] - d[i]) <= kEpsilon;
      demand_is_zero = demand_is_zero && d[i] <= kEpsilon;
    }
    const bool preemptible = !fully_satisfied || demand_is_zero;
    int aggressive_resources[5], normal_resources[5];
    double aggressive_limits[5], normal_limits[5];
    Py_ssize_t aggressive_count = 0, normal_count = 0;
    bool aggressive_constant = !all_blocked, normal_constant = !all_blocked;
    for (int i = 0; i < 5; ++i) {
      if (!all_blocked && blocked[i]) continue;
      const double amount = t[i];
      const double share = f[i];
      if (amount != 0.0) {
        aggressive_resources[aggressive_count] = i;
        aggressive_limits[aggressive_count++] = (share * aggressive - kEpsilon) * amount;
        if (preemptible) {
          normal_resources[normal_count] = i;
          normal_limits[normal_count++] = (share * normal - kEpsilon) * amount;
        }
        continue;
      }
      if (all_blocked) {
        if (share * aggressive > kEpsilon) aggressive_constant = true;
        if (share * normal > kEpsilon) normal_constant = true;
      } else {
        if (!(share * aggressive > kEpsilon)) aggressive_constant = false;
        if (!(share * normal > kEpsilon)) normal_constant = false;
      }
    }
    PyObject* threshold = PyObject_GetAttr(settings, g_threshold);
    PyObject* aggressive_bound =
        threshold != nullptr ? compiled_bound(aggressive_resources, aggressive_limits,
                                              aggressive_count, all_blocked, aggressive_constant)
                             : nullptr;
    PyObject* normal_bound =
        !preemptible ? Py_NewRef(Py_None)
        : aggressive_bound != nullptr
            ? compiled_bound(normal_resources, normal_limits, normal_count, all_blocked,
                             normal_constant)
            : nullptr;
    bounds = build(g_bounds, {aggressive_bound, normal_bound, threshold});
    if (bounds == nullptr) {
      Py_DECREF(view);
      return nullptr;
    }
  } else {
    Py_INCREF(bounds);
  }

  // schedulable_status(view, operation_tolerance(view, tolerance), usage): min(fair x
  // tolerance, demand) strictly dominating the usage share on the non-blocked resources (on
  // some resource when all are blocked).
  bool covered = true;
  for (int i = 0; i < 5; ++i) covered = covered && !(f[i] + kLargeEpsilon < d[i]);
  const double scale = covered ? 1.0 : tolerance;
  bool dominates = !all_blocked;
  for (int i = 0; i < 5; ++i) {
    const double product = f[i] * scale;
    const double bound = d[i] < product ? d[i] : product;  // min(product, demand)
    const bool above = bound > u[i] + kEpsilon;
    if (all_blocked && above) {
      dominates = true;
      break;
    }
    if (!all_blocked && !(blocked[i] || above)) {
      dominates = false;
      break;
    }
  }
  PyObject* order_key =
      fifo_index == Py_None ? PyFloat_FromDouble(0.0) : PyNumber_Float(fifo_index);
  return build(g_template, {Py_NewRef(settings), Py_NewRef(shares), Py_NewRef(fifo_index), view,
                            bounds, order_key, floats5(v + 20),
                            Py_NewRef(dominates ? g_below : g_normal)});
}

// The module's own `scan` and `vsub` (usage_sums.cpp: preemptible._scan, resources.vsub), a
// list of one hole, and resources.ZERO: what restart() calls and starts from.
PyObject* g_scan = nullptr;
PyObject* g_vsub = nullptr;
PyObject* g_usage = nullptr;
PyObject* g_hole = nullptr;
PyObject* g_zero = nullptr;
PyObject* g_aggressive_bound_name = nullptr;
PyObject* g_bound_name = nullptr;

// `scan(items, index, cum, threshold, bound)` (a new reference to its `(index, cum)`), or
// nullptr with an exception set.
PyObject* call_scan(PyObject* items, PyObject* index, PyObject* cum, PyObject* threshold,
                    PyObject* bound) {
  PyObject* args[] = {items, index, cum, threshold, bound};
  PyObject* result = PyObject_Vectorcall(g_scan, args, 5, nullptr);
  if (result != nullptr && !(PyTuple_CheckExact(result) && PyTuple_GET_SIZE(result) == 2)) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_TypeError, "scan must return (index, cum)");
    return nullptr;
  }
  return result;
}

// PreemptionBounds.below(cum, bound) with the bounds' `threshold`: a scan of one hole moves
// on (to index 1, adding nothing) exactly when `cum` is below, scan's loop test being that
// method's tests in the same order. 1, 0, or -1 with an exception set.
int below(PyObject* cum, PyObject* threshold, PyObject* bound) {
  PyObject* zero_index = PyLong_FromLong(0);
  if (zero_index == nullptr) return -1;
  PyObject* result = call_scan(g_hole, zero_index, cum, threshold, bound);
  Py_DECREF(zero_index);
  if (result == nullptr) return -1;
  const int moved = PyObject_IsTrue(PyTuple_GET_ITEM(result, 0));
  Py_DECREF(result);
  return moved;
}

// restart(items, b1, cum1, b2, cum2, bounds) -> (b1, cum1, b2, cum2): the boundaries and
// prefix sums PreemptibleList._restart publishes (see its docstring for why they are those of
// a publication from scratch), its steps in the same order with the same scans.
PyObject* restart(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "restart(items, b1, cum1, b2, cum2, bounds) takes 6 arguments");
    return nullptr;
  }
  if (g_scan == nullptr || g_zero == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "restart before restart_setup");
    return nullptr;
  }
  PyObject* items = args[0];
  if (!PyList_Check(items)) {
    PyErr_SetString(PyExc_TypeError, "restart: items must be a list");
    return nullptr;
  }
  PyObject* bounds = args[5];
  const Py_ssize_t count = PyList_GET_SIZE(items);
  PyObject* threshold = PyObject_GetAttr(bounds, g_threshold);
  PyObject* aggressive = threshold != nullptr ? PyObject_GetAttr(bounds, g_aggressive_bound_name)
                                              : nullptr;
  PyObject* bound = aggressive != nullptr ? PyObject_GetAttr(bounds, g_bound_name) : nullptr;
  // Owned references from here on.
  PyObject* b1 = Py_NewRef(args[1]);
  PyObject* cum1 = Py_NewRef(args[2]);
  PyObject* b2 = Py_NewRef(args[3]);
  PyObject* cum2 = Py_NewRef(args[4]);
  PyObject* result = nullptr;
  auto index_of = [](PyObject* index) { return PyLong_AsSsize_t(index); };
  auto take = [](PyObject*& index, PyObject*& cum, PyObject* pair) {
    Py_SETREF(index, Py_NewRef(PyTuple_GET_ITEM(pair, 0)));
    Py_SETREF(cum, Py_NewRef(PyTuple_GET_ITEM(pair, 1)));
    Py_DECREF(pair);
  };
  do {
    if (bound == nullptr) break;
    // Boundaries are non-negative ints (scan's results or the list's own).
    Py_ssize_t i1 = index_of(b1);
    Py_ssize_t i2 = index_of(b2);
    if ((i1 == -1 || i2 == -1) && PyErr_Occurred()) break;
    bool skip_scan = false;
    int is_below = below(cum1, threshold, aggressive);
    if (is_below < 0) break;
    if (is_below) {
      if (i2 > i1) {
        is_below = below(cum2, threshold, aggressive);
        if (is_below < 0) break;
        if (is_below) {
          Py_SETREF(b1, Py_NewRef(b2));
          Py_SETREF(cum1, Py_NewRef(cum2));
          i1 = i2;
        }
      }
    } else {
      // The old prefix sum is not below the new bound, nor is any later one: the new
      // boundary is at or before the old one. Walk back from it, each earlier prefix sum the
      // later one less the allocation's usage (exact on this list, see the Python docstring),
      // while that sum is not below either; the scan from scratch stops where the walk does
      // (its sum there not below, every earlier one below), so none is needed.
      if (i1 > count) {
        PyErr_SetString(PyExc_ValueError, "restart: b1 beyond the list");
        break;
      }
      const Py_ssize_t old = i1;
      bool failed = false;
      while (i1 > 0) {
        PyObject* allocation = Py_NewRef(PyList_GET_ITEM(items, i1 - 1));
        PyObject* earlier = nullptr;
        if (allocation == Py_None) {
          earlier = Py_NewRef(cum1);
        } else {
          PyObject* usage = PyObject_GetAttr(allocation, g_usage);
          if (usage != nullptr) {
            PyObject* pair[] = {cum1, usage};
            earlier = PyObject_Vectorcall(g_vsub, pair, 2, nullptr);
            Py_DECREF(usage);
          }
        }
        Py_DECREF(allocation);
        const int earlier_below = earlier != nullptr ? below(earlier, threshold, aggressive) : -1;
        if (earlier_below != 0) {
          Py_XDECREF(earlier);
          failed = earlier_below < 0;
          break;
        }
        Py_SETREF(cum1, earlier);
        --i1;
      }
      if (failed) break;
      if (i1 != old) {
        // At the first allocation the sum is ZERO itself, as a scan from scratch keeps it.
        if (i1 == 0) Py_SETREF(cum1, Py_NewRef(g_zero));
        Py_SETREF(b1, PyLong_FromSsize_t(i1));
        if (b1 == nullptr) break;
      }
      skip_scan = true;
    }
    if (i1 < count && !skip_scan) {
      PyObject* pair = call_scan(items, b1, cum1, threshold, aggressive);
      if (pair == nullptr) break;
      take(b1, cum1, pair);
      i1 = index_of(b1);
      if (i1 == -1 && PyErr_Occurred()) break;
    }
    bool restart_at_b1 = i2 <= i1;
    if (!restart_at_b1) {
      is_below = below(cum2, threshold, bound);
      if (is_below < 0) break;
      restart_at_b1 = is_below == 0;
    }
    if (restart_at_b1) {
      Py_SETREF(b2, Py_NewRef(b1));
      Py_SETREF(cum2, Py_NewRef(cum1));
      i2 = i1;
    }
    if (i2 < count) {
      PyObject* pair = call_scan(items, b2, cum2, threshold, bound);
      if (pair == nullptr) break;
      take(b2, cum2, pair);
    }
    result = PyTuple_Pack(4, b1, cum1, b2, cum2);
  } while (false);
  Py_XDECREF(threshold);
  Py_XDECREF(aggressive);
  Py_XDECREF(bound);
  Py_XDECREF(b1);
  Py_XDECREF(cum1);
  Py_XDECREF(b2);
  Py_XDECREF(cum2);
  return result;
}

// restart_setup(zero): resources.ZERO, where a restart that finds no boundary below starts.
PyObject* restart_setup(PyObject*, PyObject* zero) {
  Py_XSETREF(g_zero, Py_NewRef(zero));
  Py_RETURN_NONE;
}

PyMethodDef g_methods[] = {
    {"template_setup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(template_setup)),
     METH_FASTCALL,
     "template_setup(template_cls, view_cls, bounds_cls, bound_cls, indexes, normal, below): "
     "the classes and constants template_from_shares builds from."},
    {"template_from_shares",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(template_from_shares)),
     METH_FASTCALL,
     "template_from_shares(settings, shares, total, bounds, fifo_index): an operation's "
     "template from its packed shares, or None for inputs that are not exact floats."},
    {"restart", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(restart)),
     METH_FASTCALL,
     "restart(items, b1, cum1, b2, cum2, bounds) -> (b1, cum1, b2, cum2): "
     "PreemptibleList._restart's boundaries and prefix sums."},
    {"restart_setup", restart_setup, METH_O,
     "restart_setup(zero): resources.ZERO, the prefix sum restart starts from."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int ytsched_add_preempt(PyObject* module) {
  const char* names[] = {"tolerance", "preemption_satisfaction_threshold",
                         "aggressive_preemption_satisfaction_threshold", "threshold",
                         "aggressive_bound", "bound", "usage"};
  PyObject** slots[] = {&g_tolerance, &g_psat, &g_apsat, &g_threshold, &g_aggressive_bound_name,
                        &g_bound_name, &g_usage};
  static_assert(std::size(names) == std::size(slots), "one interned name per slot");
  for (std::size_t i = 0; i < std::size(names); ++i) {
    if (*slots[i] == nullptr) {
      *slots[i] = PyUnicode_InternFromString(names[i]);
      if (*slots[i] == nullptr) return -1;
    }
  }
  if (PyModule_AddObject(module, "PREEMPT_EPSILON", PyFloat_FromDouble(kEpsilon)) < 0) return -1;
  if (PyModule_AddObject(module, "PREEMPT_LARGE_EPSILON", PyFloat_FromDouble(kLargeEpsilon)) < 0) {
    return -1;
  }
  if (g_hole == nullptr) {
    g_hole = PyList_New(1);
    if (g_hole == nullptr) return -1;
    PyList_SET_ITEM(g_hole, 0, Py_NewRef(Py_None));
  }
  // The module's scan (usage_sums.cpp adds it first, see selector.cpp).
  Py_XSETREF(g_scan, PyObject_GetAttrString(module, "scan"));
  if (g_scan == nullptr) return -1;
  Py_XSETREF(g_vsub, PyObject_GetAttrString(module, "vsub"));
  if (g_vsub == nullptr) return -1;
  return PyModule_AddFunctions(module, g_methods);
}
