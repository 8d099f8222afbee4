// Usage sums of the heartbeat path in native code (functions of ytsched.scheduling._selector).
//
// Every allocation that starts or ends adds its usage to its operation and each ancestor
// (TreeState.apply_usage_delta) and classifies itself in its operation's preemptible list
// (preemptible._scan); in the interpreter those loops were the largest part of a heartbeat's
// work left. These functions are the same loops over the same Python objects: each sum is
// computed as the interpreter computes it (two exact floats as one C double addition, which is
// what float.__add__ does; anything else through PyNumber_Add), each comparison likewise
// (C `<` on two exact floats, PyObject_RichCompare otherwise), in the same order, and
// attributes are read and written through the ordinary attribute protocol. So the results are
// the very doubles of the Python loops (tests/scheduling compare them with the reference).
//
// Built with -fno-fast-math -ffp-contract=off (CMakeLists.txt), so `a + b` is one IEEE
// addition, as in CPython.

#include <Python.h>
#include <cstddef>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

#include "usage_sums.hpp"

namespace {

PyObject* g_usage = nullptr;
PyObject* g_parent = nullptr;
PyObject* g_checks = nullptr;
PyObject* g_any_of = nullptr;
PyObject* g_constant = nullptr;
PyObject* g_fair_share_is_zero = nullptr;
PyObject* g_fair_amounts = nullptr;
PyObject* g_measured = nullptr;
PyObject* g_all_blocked = nullptr;
PyObject* g_fair_share = nullptr;
PyObject* g_ratio_measured = nullptr;
PyObject* g_view = nullptr;
PyObject* g_local_sat = nullptr;
PyObject* g_node = nullptr;
PyObject* g_id = nullptr;
PyObject* g_refresh = nullptr;

// satisfaction.INFINITE_SATISFACTION_RATIO
constexpr double kInfiniteSatisfaction = 1e9;
// satisfaction.RESOURCE_EPSILON (tests/scheduling/test_usage_sums.py checks they agree)
constexpr double kResourceEpsilon = 1e-6;

// `a + b` as the interpreter computes it (a new reference, or nullptr with an exception set).
PyObject* add(PyObject* a, PyObject* b) {
  if (PyFloat_CheckExact(a) && PyFloat_CheckExact(b)) {
    return PyFloat_FromDouble(PyFloat_AS_DOUBLE(a) + PyFloat_AS_DOUBLE(b));
  }
  return PyNumber_Add(a, b);
}

// `a <op> b` as the interpreter tests it (`if a < b:`): 1, 0, or -1 with an exception set.
// PyObject_RichCompareBool is not used: it answers "equal" for the very same object, which
// `==` on a NaN does not.
int compare(PyObject* a, PyObject* b, int op) {
  if (PyFloat_CheckExact(a) && PyFloat_CheckExact(b)) {
    const double x = PyFloat_AS_DOUBLE(a);
    const double y = PyFloat_AS_DOUBLE(b);
    switch (op) {
      case Py_LT: return x < y ? 1 : 0;
      case Py_GT: return x > y ? 1 : 0;
      case Py_LE: return x <= y ? 1 : 0;
      case Py_EQ: return x == y ? 1 : 0;
      default: return x != y ? 1 : 0;
    }
  }
  PyObject* result = PyObject_RichCompare(a, b, op);
  if (result == nullptr) return -1;
  const int truth = PyObject_IsTrue(result);
  Py_DECREF(result);
  return truth;
}

int less(PyObject* a, PyObject* b) { return compare(a, b, Py_LT); }

// `a / b` as the interpreter computes it (a new reference, or nullptr with an exception set).
PyObject* divide(PyObject* a, PyObject* b) {
  if (PyFloat_CheckExact(a) && PyFloat_CheckExact(b) && PyFloat_AS_DOUBLE(b) != 0.0) {
    return PyFloat_FromDouble(PyFloat_AS_DOUBLE(a) / PyFloat_AS_DOUBLE(b));
  }
  return PyNumber_TrueDivide(a, b);
}

// `seq[index]` (a new reference): tuples directly (negative indexes as Python counts them),
// anything else through the sequence protocol.
PyObject* item(PyObject* seq, Py_ssize_t index) {
  if (PyTuple_CheckExact(seq)) {
    const Py_ssize_t size = PyTuple_GET_SIZE(seq);
    if (index < 0) index += size;
    if (index < 0 || index >= size) {
      PyErr_SetString(PyExc_IndexError, "tuple index out of range");
      return nullptr;
    }
    PyObject* value = PyTuple_GET_ITEM(seq, index);
    Py_INCREF(value);
    return value;
  }
  return PySequence_GetItem(seq, index);
}

// `a - b` as the interpreter computes it (a new reference, or nullptr with an exception set).
PyObject* subtract(PyObject* a, PyObject* b) {
  if (PyFloat_CheckExact(a) && PyFloat_CheckExact(b)) {
    return PyFloat_FromDouble(PyFloat_AS_DOUBLE(a) - PyFloat_AS_DOUBLE(b));
  }
  return PyNumber_Subtract(a, b);
}

// `(a[0] <op> b[0], ..., a[4] <op> b[4])` (a new reference): the five operations in order.
template <PyObject* (*Op)(PyObject*, PyObject*)>
PyObject* pairwise5(PyObject* a, PyObject* b) {
  PyObject* result = PyTuple_New(5);
  if (result == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* x = item(a, i);
    if (x == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    PyObject* y = item(b, i);
    if (y == nullptr) {
      Py_DECREF(x);
      Py_DECREF(result);
      return nullptr;
    }
    PyObject* value = Op(x, y);
    Py_DECREF(x);
    Py_DECREF(y);
    if (value == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    PyTuple_SET_ITEM(result, i, value);
  }
  return result;
}

// `(a[0] + b[0], ..., a[4] + b[4])` (a new reference): the five additions in order.
PyObject* add5(PyObject* a, PyObject* b) { return pairwise5<add>(a, b); }

// For `element` and each of its ancestors (following `.parent` until None),
// `usage = (usage[0] + delta[0], ..., usage[4] + delta[4])`. 0, or -1 with an exception set.
int add_usage_walk(PyObject* element, PyObject* delta) {
  Py_INCREF(element);
  while (element != Py_None) {
    PyObject* usage = PyObject_GetAttr(element, g_usage);
    if (usage == nullptr) {
      Py_DECREF(element);
      return -1;
    }
    PyObject* sum = add5(usage, delta);
    Py_DECREF(usage);
    if (sum == nullptr || PyObject_SetAttr(element, g_usage, sum) < 0) {
      Py_XDECREF(sum);
      Py_DECREF(element);
      return -1;
    }
    Py_DECREF(sum);
    PyObject* parent = PyObject_GetAttr(element, g_parent);
    Py_DECREF(element);
    if (parent == nullptr) return -1;
    element = parent;
  }
  Py_DECREF(element);
  return 0;
}

// add_usage(element, delta): add_usage_walk.
PyObject* add_usage(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "add_usage(element, delta) takes 2 arguments");
    return nullptr;
  }
  if (add_usage_walk(args[0], args[1]) < 0) return nullptr;
  Py_RETURN_NONE;
}

// Is `cum` below the bound (`checks`, `any_of`, `constant`, as preemptible._scan tests it)?
// 1, 0, or -1 with an exception set.
int below_bound(PyObject* cum, PyObject* checks, bool any_of, bool constant) {
  if (any_of) {
    if (constant) return 1;
  } else if (!constant) {
    return 0;
  }
  // any_of: one check passing suffices; otherwise (constant) every check must pass.
  PyObject* iterator = PyObject_GetIter(checks);
  if (iterator == nullptr) return -1;
  int result = any_of ? 0 : 1;
  while (PyObject* check = PyIter_Next(iterator)) {
    PyObject* resource = item(check, 0);
    PyObject* limit = resource != nullptr ? item(check, 1) : nullptr;
    PyObject* value = nullptr;
    int passed = -1;
    if (limit != nullptr) {
      const Py_ssize_t index = PyNumber_AsSsize_t(resource, PyExc_IndexError);
      if (!(index == -1 && PyErr_Occurred())) value = item(cum, index);
    }
    if (value != nullptr) passed = less(value, limit);
    Py_XDECREF(value);
    Py_XDECREF(limit);
    Py_XDECREF(resource);
    Py_DECREF(check);
    if (passed < 0) {
      result = -1;
      break;
    }
    if (any_of ? passed == 1 : passed == 0) {
      result = any_of ? 1 : 0;
      break;
    }
  }
  Py_DECREF(iterator);
  if (result != -1 && PyErr_Occurred()) result = -1;
  return result;
}

// Is `cum` strictly below `threshold` in all five resources (short-circuit, in order)?
int below_threshold(PyObject* cum, PyObject* threshold) {
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* x = item(cum, i);
    if (x == nullptr) return -1;
    PyObject* y = item(threshold, i);
    if (y == nullptr) {
      Py_DECREF(x);
      return -1;
    }
    const int result = less(x, y);
    Py_DECREF(x);
    Py_DECREF(y);
    if (result != 1) return result;
  }
  return 1;
}

// scan(items, index, cum, threshold, bound) -> (index, cum): preemptible._scan, i.e.
// `while index < len(items) and below(cum, bound): cum += items[index].usage; index += 1`
// (holes, None, add nothing; a cum under `threshold` is below any bound; bound None: always
// below). `cum` is returned as the same object when nothing was added.
PyObject* scan(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "scan(items, index, cum, threshold, bound) takes 5 arguments");
    return nullptr;
  }
  PyObject* items = args[0];
  PyObject* threshold = args[3];
  PyObject* bound = args[4];
  if (!PyList_Check(items)) {
    PyErr_SetString(PyExc_TypeError, "scan: items must be a list");
    return nullptr;
  }
  Py_ssize_t index = PyNumber_AsSsize_t(args[1], PyExc_OverflowError);
  if (index == -1 && PyErr_Occurred()) return nullptr;
  if (index < 0) {
    PyErr_SetString(PyExc_ValueError, "scan: index must not be negative");
    return nullptr;
  }
  PyObject* checks = nullptr;
  bool any_of = true;
  bool constant = true;  // bound None: infinite, always below
  if (bound != Py_None) {
    checks = PyObject_GetAttr(bound, g_checks);
    if (checks == nullptr) return nullptr;
    PyObject* flag = PyObject_GetAttr(bound, g_any_of);
    int truth = flag != nullptr ? PyObject_IsTrue(flag) : -1;
    Py_XDECREF(flag);
    if (truth >= 0) {
      any_of = truth == 1;
      flag = PyObject_GetAttr(bound, g_constant);
      truth = flag != nullptr ? PyObject_IsTrue(flag) : -1;
      Py_XDECREF(flag);
      constant = truth == 1;
    }
    if (truth < 0) {
      Py_DECREF(checks);
      return nullptr;
    }
  }
  PyObject* cum = args[2];
  Py_INCREF(cum);
  const Py_ssize_t count = PyList_GET_SIZE(items);
  bool failed = false;
  while (index < count) {
    int below = threshold == Py_None ? 0 : below_threshold(cum, threshold);
    if (below == 0) below = below_bound(cum, checks, any_of, constant);
    if (below < 0) {
      failed = true;
      break;
    }
    if (below == 0) break;
    if (index >= PyList_GET_SIZE(items)) break;  // the list shrank (it does not, here)
    PyObject* allocation = PyList_GET_ITEM(items, index);
    if (allocation != Py_None) {
      Py_INCREF(allocation);
      PyObject* usage = PyObject_GetAttr(allocation, g_usage);
      Py_DECREF(allocation);
      PyObject* sum = usage != nullptr ? add5(cum, usage) : nullptr;
      Py_XDECREF(usage);
      if (sum == nullptr) {
        failed = true;
        break;
      }
      Py_DECREF(cum);
      cum = sum;
    }
    ++index;
  }
  Py_XDECREF(checks);
  if (failed) {
    Py_DECREF(cum);
    return nullptr;
  }
  PyObject* position = PyLong_FromSsize_t(index);
  if (position == nullptr) {
    Py_DECREF(cum);
    return nullptr;
  }
  PyObject* result = PyTuple_New(2);
  if (result == nullptr) {
    Py_DECREF(position);
    Py_DECREF(cum);
    return nullptr;
  }
  PyTuple_SET_ITEM(result, 0, position);
  PyTuple_SET_ITEM(result, 1, cum);
  return result;
}

// Holds the references of one local_satisfaction call (released on every return).
struct Refs {
  PyObject* items[8] = {};
  int count = 0;
  PyObject* keep(PyObject* object) {
    if (object != nullptr) items[count++] = object;
    return object;
  }
  ~Refs() {
    for (int i = 0; i < count; ++i) Py_DECREF(items[i]);
  }
};

// `seq[index]` with `index` a Python int (tuples of ints in the ShareView), or nullptr.
PyObject* item_at(PyObject* seq, PyObject* index) {
  const Py_ssize_t i = PyNumber_AsSsize_t(index, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  return item(seq, i);
}

// Replaces `*ratio` by `value` when `value <op> *ratio` (`if r > ratio: ratio = r`); takes
// the reference of `value`. 0, or -1 with an exception set.
int keep_if(PyObject* value, PyObject** ratio, int op) {
  if (value == nullptr) return -1;
  const int better = compare(value, *ratio, op);
  if (better == 1) {
    Py_DECREF(*ratio);
    *ratio = value;
    return 0;
  }
  Py_DECREF(value);
  return better;
}

// ShareView.local_satisfaction(view, usage) (satisfaction.py has the rules; this is the
// method's body, statement for statement, over the view's attributes): a new reference, or
// nullptr with an exception set.
PyObject* satisfaction_of(PyObject* view, PyObject* usage) {
  Refs refs;
  PyObject* zero_share = refs.keep(PyObject_GetAttr(view, g_fair_share_is_zero));
  if (zero_share == nullptr) return nullptr;
  const int is_zero = PyObject_IsTrue(zero_share);
  if (is_zero < 0) return nullptr;
  if (is_zero) return PyFloat_FromDouble(kInfiniteSatisfaction);
  PyObject* zero = refs.keep(PyFloat_FromDouble(0.0));
  if (zero == nullptr) return nullptr;
  PyObject* amounts = refs.keep(PyObject_GetAttr(view, g_fair_amounts));
  PyObject* measured = amounts ? refs.keep(PyObject_GetAttr(view, g_measured)) : nullptr;
  if (measured == nullptr) return nullptr;
  PyObject* sequence = refs.keep(PySequence_Fast(measured, "measured must be iterable"));
  if (sequence == nullptr) return nullptr;
  const Py_ssize_t measured_count = PySequence_Fast_GET_SIZE(sequence);
  bool above = false;
  for (Py_ssize_t k = 0; k < measured_count && !above; ++k) {
    PyObject* index = PySequence_Fast_GET_ITEM(sequence, k);
    PyObject* u = item_at(usage, index);
    PyObject* f = u ? item_at(amounts, index) : nullptr;
    const int greater = f ? compare(u, f, Py_GT) : -1;
    Py_XDECREF(u);
    Py_XDECREF(f);
    if (greater < 0) return nullptr;
    above = greater == 1;
  }
  PyObject* ratio = nullptr;
  if (!above) {
    // Within the fair share everywhere (the common case).
    PyObject* all_blocked_flag = refs.keep(PyObject_GetAttr(view, g_all_blocked));
    if (all_blocked_flag == nullptr) return nullptr;
    const int all_blocked = PyObject_IsTrue(all_blocked_flag);
    if (all_blocked < 0) return nullptr;
    if (all_blocked) {
      PyObject* fair = refs.keep(PyObject_GetAttr(view, g_fair_share));
      if (fair == nullptr) return nullptr;
      ratio = PyFloat_FromDouble(kInfiniteSatisfaction);
      if (ratio == nullptr) return nullptr;
      for (Py_ssize_t i = 0; i < 5; ++i) {
        PyObject* r = nullptr;
        PyObject* share = item(fair, i);
        int none = share ? compare(share, zero, Py_EQ) : -1;
        Py_XDECREF(share);
        if (none == 1) {
          r = PyFloat_FromDouble(1.0);
        } else if (none == 0) {
          PyObject* f = item(amounts, i);
          const int nothing = f ? compare(f, zero, Py_EQ) : -1;
          if (nothing == 1) {
            r = PyFloat_FromDouble(0.0);
          } else if (nothing == 0) {
            PyObject* u = item(usage, i);
            r = u ? divide(u, f) : nullptr;
            Py_XDECREF(u);
          }
          Py_XDECREF(f);
        }
        if (keep_if(r, &ratio, Py_LT) < 0) {
          Py_DECREF(ratio);
          return nullptr;
        }
      }
      return ratio;
    }
    // The measured resources that are not blocked and have a non-zero fair amount.
    PyObject* ratio_measured = refs.keep(PyObject_GetAttr(view, g_ratio_measured));
    PyObject* indexes =
        ratio_measured ? refs.keep(PySequence_Fast(ratio_measured, "not iterable")) : nullptr;
    if (indexes == nullptr) return nullptr;
    ratio = PyFloat_FromDouble(0.0);
    if (ratio == nullptr) return nullptr;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(indexes); ++k) {
      PyObject* index = PySequence_Fast_GET_ITEM(indexes, k);
      PyObject* u = item_at(usage, index);
      PyObject* f = u ? item_at(amounts, index) : nullptr;
      PyObject* r = f ? divide(u, f) : nullptr;
      Py_XDECREF(u);
      Py_XDECREF(f);
      if (keep_if(r, &ratio, Py_GT) < 0) {
        Py_DECREF(ratio);
        return nullptr;
      }
    }
    return ratio;
  }
  // Above the fair share in some resource: the largest ratio, capped.
  ratio = PyFloat_FromDouble(0.0);
  if (ratio == nullptr) return nullptr;
  for (Py_ssize_t k = 0; k < measured_count; ++k) {
    PyObject* index = PySequence_Fast_GET_ITEM(sequence, k);
    PyObject* f = item_at(amounts, index);
    PyObject* u = f ? item_at(usage, index) : nullptr;
    PyObject* r = nullptr;
    if (u != nullptr) {
      const int has_fair = compare(f, zero, Py_NE);
      if (has_fair == 1) {
        r = divide(u, f);
      } else if (has_fair == 0) {
        const int used = compare(u, zero, Py_NE);
        if (used == 1) {
          r = PyFloat_FromDouble(kInfiniteSatisfaction);
        } else if (used == 0) {
          r = PyFloat_FromDouble(0.0);
        }
      }
    }
    Py_XDECREF(f);
    Py_XDECREF(u);
    if (keep_if(r, &ratio, Py_GT) < 0) {
      Py_DECREF(ratio);
      return nullptr;
    }
  }
  // min(ratio, INFINITE_SATISFACTION_RATIO): the cap only when it is below the ratio.
  PyObject* cap = PyFloat_FromDouble(kInfiniteSatisfaction);
  if (keep_if(cap, &ratio, Py_LT) < 0) {
    Py_DECREF(ratio);
    return nullptr;
  }
  return ratio;
}

// local_satisfaction(view, usage): satisfaction_of.
PyObject* local_satisfaction(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "local_satisfaction(view, usage) takes 2 arguments");
    return nullptr;
  }
  return satisfaction_of(args[0], args[1]);
}

// apply_usage(element, delta, core): the start of TreeState.apply_usage_delta, one call per
// allocation that starts or ends instead of three: add_usage_walk(element, delta), then
// `element.local_sat = sat = local_satisfaction(element.view, element.usage)` and, when
// `element.node` is not None, `core.refresh(element.node.id, sat)` (the regular selector's
// native heaps). The same sums, ratio and calls in the same order as the Python statements.
PyObject* apply_usage(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "apply_usage(element, delta, core) takes 3 arguments");
    return nullptr;
  }
  PyObject* element = args[0];
  if (add_usage_walk(element, args[1]) < 0) return nullptr;
  Refs refs;
  PyObject* view = refs.keep(PyObject_GetAttr(element, g_view));
  PyObject* usage = view != nullptr ? refs.keep(PyObject_GetAttr(element, g_usage)) : nullptr;
  PyObject* sat = usage != nullptr ? refs.keep(satisfaction_of(view, usage)) : nullptr;
  if (sat == nullptr || PyObject_SetAttr(element, g_local_sat, sat) < 0) return nullptr;
  PyObject* node = refs.keep(PyObject_GetAttr(element, g_node));
  if (node == nullptr) return nullptr;
  if (node != Py_None) {
    PyObject* id = refs.keep(PyObject_GetAttr(node, g_id));
    if (id == nullptr) return nullptr;
    PyObject* call[] = {args[2], id, sat};
    PyObject* result = PyObject_VectorcallMethod(g_refresh, call, 3, nullptr);
    if (result == nullptr) return nullptr;
    Py_DECREF(result);
  }
  Py_RETURN_NONE;
}

// walk_passes(last, backoff, phase, first, stop, period, stop_at_due): the walk of
// scheduler.last_pass_time over the ticks k in [first, stop): `time = phase + k * period;
// if time > last + backoff: last = time` (k converted to a double as `k * period` does),
// returning the final `last`, or None at the first due tick when `stop_at_due`.
// NotImplemented unless last, backoff, phase and period are floats and first and stop fit a
// C long long: the caller walks in Python then.
PyObject* walk_passes(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError,
                    "walk_passes(last, backoff, phase, first, stop, period, stop_at_due) "
                    "takes 7 arguments");
    return nullptr;
  }
  if (!PyFloat_CheckExact(args[0]) || !PyFloat_CheckExact(args[1]) ||
      !PyFloat_CheckExact(args[2]) || !PyFloat_CheckExact(args[5])) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (!PyLong_CheckExact(args[3]) || !PyLong_CheckExact(args[4])) Py_RETURN_NOTIMPLEMENTED;
  int overflow = 0;
  const long long first = PyLong_AsLongLongAndOverflow(args[3], &overflow);
  if (overflow != 0) Py_RETURN_NOTIMPLEMENTED;
  const long long stop = PyLong_AsLongLongAndOverflow(args[4], &overflow);
  if (overflow != 0) Py_RETURN_NOTIMPLEMENTED;
  if (PyErr_Occurred()) return nullptr;
  const int stop_at_due = PyObject_IsTrue(args[6]);
  if (stop_at_due < 0) return nullptr;
  double last = PyFloat_AS_DOUBLE(args[0]);
  const double backoff = PyFloat_AS_DOUBLE(args[1]);
  const double phase = PyFloat_AS_DOUBLE(args[2]);
  const double period = PyFloat_AS_DOUBLE(args[5]);
  for (long long k = first; k < stop; ++k) {
    const double time = phase + static_cast<double>(k) * period;
    if (time > last + backoff) {
      last = time;
      if (stop_at_due) Py_RETURN_NONE;
    }
  }
  return PyFloat_FromDouble(last);
}

// vadd(a, b): resources.vadd, `(a[0] + b[0], ..., a[4] + b[4])`.
PyObject* vadd(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "vadd(a, b) takes 2 arguments");
    return nullptr;
  }
  return add5(args[0], args[1]);
}

// vneg(a): `(-a[0], ..., -a[4])` (the negated usage an end subtracts).
PyObject* vneg(PyObject*, PyObject* a) {
  PyObject* result = PyTuple_New(5);
  if (result == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* x = item(a, i);
    PyObject* negated = nullptr;
    if (x != nullptr) {
      negated = PyFloat_CheckExact(x) ? PyFloat_FromDouble(-PyFloat_AS_DOUBLE(x))
                                      : PyNumber_Negative(x);
      Py_DECREF(x);
    }
    if (negated == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    PyTuple_SET_ITEM(result, i, negated);
  }
  return result;
}

// fits(need, available): satisfaction.fits, `need[i] <= available[i] + RESOURCE_EPSILON`
// for i = 0..4, stopping at the first that fails.
PyObject* fits(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "fits(need, available) takes 2 arguments");
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject* need = item(args[0], i);
    if (need == nullptr) return nullptr;
    PyObject* available = item(args[1], i);
    if (available == nullptr) {
      Py_DECREF(need);
      return nullptr;
    }
    int ok;
    if (PyFloat_CheckExact(need) && PyFloat_CheckExact(available)) {
      ok = PyFloat_AS_DOUBLE(need) <= PyFloat_AS_DOUBLE(available) + kResourceEpsilon ? 1 : 0;
    } else {
      PyObject* eps = PyFloat_FromDouble(kResourceEpsilon);
      PyObject* bound = eps != nullptr ? PyNumber_Add(available, eps) : nullptr;
      Py_XDECREF(eps);
      ok = bound != nullptr ? compare(need, bound, Py_LE) : -1;
      Py_XDECREF(bound);
    }
    Py_DECREF(need);
    Py_DECREF(available);
    if (ok < 0) return nullptr;
    if (ok == 0) Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

// vsub(a, b): resources.vsub, `(a[0] - b[0], ..., a[4] - b[4])`.
PyObject* vsub(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "vsub(a, b) takes 2 arguments");
    return nullptr;
  }
  return pairwise5<subtract>(args[0], args[1]);
}

// The five doubles of `seq` into `out` when it is a tuple of five exact floats: true, else
// false (the caller then sums through the interpreter's protocols).
bool exact5(PyObject* seq, double* out) {
  if (!PyTuple_CheckExact(seq) || PyTuple_GET_SIZE(seq) != 5) return false;
  for (Py_ssize_t k = 0; k < 5; ++k) {
    PyObject* value = PyTuple_GET_ITEM(seq, k);
    if (!PyFloat_CheckExact(value)) return false;
    out[k] = PyFloat_AS_DOUBLE(value);
  }
  return true;
}

// One ancestor's usage while sum_usages folds into it: the element (a strong reference) and
// its five running sums.
struct UsageSum {
  PyObject* element;
  double sum[5];
};

// The UsageSums of one sum_usages call, released on every return.
class UsageSums {
 public:
  UsageSums() = default;
  UsageSums(const UsageSums&) = delete;
  UsageSums& operator=(const UsageSums&) = delete;
  ~UsageSums() {
    for (UsageSum& item : sums_) Py_DECREF(item.element);
  }

  // The indexes of `start` and each of its ancestors in the sums (each ancestor's sum seeded
  // with its usage when first met): 1, 0 when a usage is not five exact floats, -1 with an
  // exception set.
  int chain(PyObject* start, const std::vector<std::size_t>** out) {
    auto known = chains_.find(start);
    if (known != chains_.end()) {
      *out = &known->second;
      return 1;
    }
    std::vector<std::size_t> indexes;
    Py_INCREF(start);
    PyObject* element = start;
    while (element != Py_None) {
      auto seen = index_.find(element);
      std::size_t index;
      if (seen != index_.end()) {
        index = seen->second;
      } else {
        UsageSum item{element, {}};
        PyObject* usage = PyObject_GetAttr(element, g_usage);
        if (usage == nullptr) {
          Py_DECREF(element);
          return -1;
        }
        const bool exact = exact5(usage, item.sum);
        Py_DECREF(usage);
        if (!exact) {
          Py_DECREF(element);
          return 0;
        }
        Py_INCREF(element);  // the sum's own reference
        index = sums_.size();
        sums_.push_back(item);
        index_.emplace(element, index);
      }
      indexes.push_back(index);
      PyObject* parent = PyObject_GetAttr(element, g_parent);
      Py_DECREF(element);
      if (parent == nullptr) return -1;
      element = parent;
    }
    Py_DECREF(element);
    *out = &chains_.emplace(start, std::move(indexes)).first->second;
    return 1;
  }

  void add(std::size_t index, const double* delta) {
    double* sum = sums_[index].sum;
    for (int k = 0; k < 5; ++k) sum[k] += delta[k];
  }

  // Every sum written to its element's usage as a tuple of five floats: 0, or -1.
  int write() {
    for (UsageSum& item : sums_) {
      PyObject* usage = PyTuple_New(5);
      if (usage == nullptr) return -1;
      for (Py_ssize_t k = 0; k < 5; ++k) {
        PyObject* value = PyFloat_FromDouble(item.sum[k]);
        if (value == nullptr) {
          Py_DECREF(usage);
          return -1;
        }
        PyTuple_SET_ITEM(usage, k, value);
      }
      const int status = PyObject_SetAttr(item.element, g_usage, usage);
      Py_DECREF(usage);
      if (status < 0) return -1;
    }
    return 0;
  }

 private:
  std::vector<UsageSum> sums_;
  std::unordered_map<PyObject*, std::size_t> index_;
  std::unordered_map<PyObject*, std::vector<std::size_t>> chains_;
};

// sum_usages(pairs): for each `(element, delta)` of the list `pairs`, in order,
// add_usage_walk(element, delta) -- the post-update's fold of operations' usages into their
// ancestors. Each element's usage is its own accumulator: it receives the same additions in
// the same order whether the sums are written back after each pair (the interpreter's loop)
// or once at the end, so when every delta and usage is five exact floats the running sums are
// kept as C doubles (each `+=` one IEEE addition, as float.__add__) and each element's usage
// is written once; otherwise (nothing written yet) the pairs are walked one by one through
// add_usage_walk. Nothing may read the usages until the call returns (it runs no Python code
// in between but attribute access on the elements).
PyObject* sum_usages(PyObject*, PyObject* pairs) {
  if (!PyList_CheckExact(pairs)) {
    PyErr_SetString(PyExc_TypeError, "sum_usages(pairs) takes a list of (element, delta)");
    return nullptr;
  }
  const Py_ssize_t count = PyList_GET_SIZE(pairs);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* pair = PyList_GET_ITEM(pairs, i);
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "sum_usages(pairs) takes a list of (element, delta)");
      return nullptr;
    }
  }
  bool exact = true;
  {
    UsageSums sums;
    double delta[5];
    for (Py_ssize_t i = 0; i < count && exact; ++i) {
      PyObject* pair = PyList_GET_ITEM(pairs, i);
      if (!exact5(PyTuple_GET_ITEM(pair, 1), delta)) {
        exact = false;
        break;
      }
      const std::vector<std::size_t>* chain = nullptr;
      const int found = sums.chain(PyTuple_GET_ITEM(pair, 0), &chain);
      if (found < 0) return nullptr;
      if (found == 0) {
        exact = false;
        break;
      }
      for (std::size_t index : *chain) sums.add(index, delta);
    }
    if (exact) {
      if (sums.write() < 0) return nullptr;
      Py_RETURN_NONE;
    }
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* pair = PyList_GET_ITEM(pairs, i);
    if (add_usage_walk(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef g_methods[] = {
    {"vsub", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(vsub)), METH_FASTCALL,
     "vsub(a, b): resources.vsub, the five differences in order."},
    {"fits", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fits)), METH_FASTCALL,
     "fits(need, available): satisfaction.fits."},
    {"vneg", vneg, METH_O, "vneg(a): the five negations in order."},
    {"vadd", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(vadd)), METH_FASTCALL,
     "vadd(a, b): resources.vadd, the five sums in order."},
    {"add_usage", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(add_usage)),
     METH_FASTCALL,
     "add_usage(element, delta): add delta to the usage of element and of each ancestor."},
    {"scan", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scan)), METH_FASTCALL,
     "scan(items, index, cum, threshold, bound) -> (index, cum): preemptible._scan."},
    {"local_satisfaction",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(local_satisfaction)),
     METH_FASTCALL, "local_satisfaction(view, usage): ShareView.local_satisfaction."},
    {"apply_usage", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(apply_usage)),
     METH_FASTCALL,
     "apply_usage(element, delta, core): add_usage, the element's local_sat, core.refresh."},
    {"sum_usages", sum_usages, METH_O,
     "sum_usages(pairs): add_usage for each (element, delta) in order, each usage written "
     "once."},
    {"walk_passes", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(walk_passes)),
     METH_FASTCALL,
     "walk_passes(last, backoff, phase, first, stop, period, stop_at_due): "
     "scheduler.last_pass_time's walk."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int ytsched_add_usage_sums(PyObject* module) {
  const char* names[] = {"usage",        "parent",         "checks",   "any_of",
                         "constant",     "fair_share_is_zero", "fair_amounts", "measured",
                         "all_blocked",  "fair_share",     "ratio_measured", "view",
                         "local_sat",    "node",           "id",       "refresh"};
  PyObject** slots[] = {&g_usage,        &g_parent,         &g_checks,   &g_any_of,
                        &g_constant,     &g_fair_share_is_zero, &g_fair_amounts, &g_measured,
                        &g_all_blocked,  &g_fair_share,     &g_ratio_measured, &g_view,
                        &g_local_sat,    &g_node,           &g_id,       &g_refresh};
  static_assert(std::size(names) == std::size(slots), "one interned name per slot");
  for (std::size_t i = 0; i < std::size(names); ++i) {
    if (*slots[i] == nullptr) {
      *slots[i] = PyUnicode_InternFromString(names[i]);
      if (*slots[i] == nullptr) return -1;
    }
  }
  return PyModule_AddFunctions(module, g_methods);
}
