// The best-leaf descent's heaps in native code (ytsched.scheduling._selector).
//
// The same algorithm as the pure-Python selector it replaced (kept as the reference in
// tests/scheduling/selector_reference.py): every pool keeps its active children in an indexed
// binary heap keyed by (satisfaction, order); a change is repositioned with the same sift up /
// sift down comparisons in the same order, so every heap is laid out exactly as before and the
// descent picks the same operation. Elements are integer ids over flat arrays; Python holds one
// small handle per id (ytsched.scheduling.selector.SelectorNode) and crosses into this module
// once per start, end, deactivation or descent, instead of running the sifts in the interpreter.
//
// Keys are compared as Python compares the tuples (sat, order): by sat, and by order when the
// sats are equal. (A NaN satisfaction, which local_satisfaction never returns, is the one case
// where a tuple comparison could differ: CPython treats the very same NaN object as equal.)

#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "preempt.hpp"
#include "usage_sums.hpp"

namespace nb = nanobind;

namespace {

class NativeSelector {
 public:
  explicit NativeSelector(double root_sat) {
    add_node(-1, 0, false, root_sat);
    self_active_[0] = 1;
  }

  // A new, inactive node under `parent` (its sat: the element's local satisfaction now).
  int32_t add(int32_t parent, int64_t order, bool is_operation, double sat) {
    check(parent);
    return add_node(parent, order, is_operation, sat);
  }

  // The operation the descent picks (its id), or -1 when nothing is active.
  int32_t best_leaf() const {
    int32_t node = 0;
    if (heap_[0].empty()) return -1;
    while (!heap_[node].empty()) node = heap_[node][0];
    return node;
  }

  bool is_active(int32_t node) const {
    check(node);
    return pos_[node] >= 0 || (parent_[node] < 0 && !heap_[node].empty());
  }

  void activate(int32_t node) {
    check(node);
    if (self_active_[node]) return;
    self_active_[node] = 1;
    if (is_operation_[node] || !heap_[node].empty()) insert(node);
  }

  void deactivate(int32_t node) {
    check(node);
    if (!self_active_[node]) return;
    self_active_[node] = 0;
    if (pos_[node] >= 0) remove(node);
  }

  // An operation's satisfaction is now `sat`: reposition it and propagate up the path.
  void refresh(int32_t node, double sat) {
    check(node);
    if (sat == sat_[node]) return;
    sat_[node] = sat;
    const int32_t index = pos_[node];
    if (index < 0) return;
    const int32_t parent = parent_[node];
    std::vector<int32_t>& heap = heap_[parent];
    fix(heap, index);
    if (sat_[heap[0]] != sat_[parent]) top_changed(parent);
  }

  // Field access for the Python handles (diagnostics, tests, the post-update's builds).
  double sat(int32_t node) const { check(node); return sat_[node]; }
  void set_sat(int32_t node, double sat) { check(node); sat_[node] = sat; }
  void set_own_sat(int32_t node, double sat) { check(node); own_sat_[node] = sat; }
  int32_t pos(int32_t node) const { check(node); return pos_[node]; }
  bool self_active(int32_t node) const { check(node); return self_active_[node] != 0; }
  void set_self_active(int32_t node, bool value) { check(node); self_active_[node] = value; }
  std::vector<int32_t> heap(int32_t node) const { check(node); return heap_[node]; }
  int32_t size() const { return static_cast<int32_t>(parent_.size()); }

 private:
  int32_t add_node(int32_t parent, int64_t order, bool is_operation, double sat) {
    const auto id = static_cast<int32_t>(parent_.size());
    parent_.push_back(parent);
    order_.push_back(order);
    sat_.push_back(sat);
    own_sat_.push_back(sat);
    pos_.push_back(-1);
    self_active_.push_back(0);
    is_operation_.push_back(is_operation ? 1 : 0);
    heap_.emplace_back();
    return id;
  }

  void check(int32_t node) const {
    if (node < 0 || node >= static_cast<int32_t>(parent_.size())) {
      throw std::out_of_range("selector node id out of range");
    }
  }

  // (sat, order) of a < that of b, as Python compares the tuples.
  bool less(int32_t a, int32_t b) const {
    const double sa = sat_[a];
    const double sb = sat_[b];
    return sa < sb || (sa == sb && order_[a] < order_[b]);
  }

  void sift_up(std::vector<int32_t>& heap, int32_t index) {
    const int32_t item = heap[index];
    while (index > 0) {
      const int32_t parent_index = (index - 1) >> 1;
      const int32_t parent = heap[parent_index];
      if (!less(item, parent)) break;
      heap[index] = parent;
      pos_[parent] = index;
      index = parent_index;
    }
    heap[index] = item;
    pos_[item] = index;
  }

  void sift_down(std::vector<int32_t>& heap, int32_t index) {
    const auto size = static_cast<int32_t>(heap.size());
    const int32_t item = heap[index];
    while (true) {
      int32_t child = 2 * index + 1;
      if (child >= size) break;
      int32_t candidate = heap[child];
      const int32_t right = child + 1;
      if (right < size && less(heap[right], candidate)) {
        child = right;
        candidate = heap[right];
      }
      if (!less(candidate, item)) break;
      heap[index] = candidate;
      pos_[candidate] = index;
      index = child;
    }
    heap[index] = item;
    pos_[item] = index;
  }

  void fix(std::vector<int32_t>& heap, int32_t index) {
    if (index > 0 && less(heap[index], heap[(index - 1) >> 1])) {
      sift_up(heap, index);
    } else if (2 * index + 1 < static_cast<int32_t>(heap.size())) {
      sift_down(heap, index);
    }
  }

  void insert(int32_t node) {
    while (true) {
      const int32_t parent = parent_[node];
      if (parent < 0) return;
      std::vector<int32_t>& heap = heap_[parent];
      const bool was_empty = heap.empty();
      const auto index = static_cast<int32_t>(heap.size());
      heap.push_back(node);
      if (index > 0 && less(node, heap[(index - 1) >> 1])) {
        sift_up(heap, index);
      } else {
        pos_[node] = index;
      }
      if (was_empty) {
        sat_[parent] = sat_[node];
        if (self_active_[parent] && parent_[parent] >= 0) {
          node = parent;
          continue;
        }
        return;
      }
      top_changed(parent);
      return;
    }
  }

  void remove(int32_t node) {
    while (true) {
      const int32_t parent = parent_[node];
      std::vector<int32_t>& heap = heap_[parent];
      const int32_t index = pos_[node];
      const int32_t last = heap.back();
      heap.pop_back();
      pos_[node] = -1;
      if (last != node) {
        heap[index] = last;
        pos_[last] = index;
        fix(heap, index);
      }
      if (!heap.empty()) {
        top_changed(parent);
        return;
      }
      sat_[parent] = own_sat_[parent];
      if (pos_[parent] >= 0) {
        node = parent;
        continue;
      }
      return;
    }
  }

  // The top of `node`'s heap may have changed: propagate its satisfaction upward.
  void top_changed(int32_t node) {
    while (true) {
      const double sat = sat_[heap_[node][0]];
      if (sat == sat_[node]) return;
      sat_[node] = sat;
      const int32_t index = pos_[node];
      if (index < 0) return;
      const int32_t parent = parent_[node];
      fix(heap_[parent], index);
      node = parent;
    }
  }

  std::vector<int32_t> parent_;
  std::vector<int64_t> order_;
  std::vector<double> sat_;
  // A pool's own local satisfaction: its sat while it has no active child.
  std::vector<double> own_sat_;
  std::vector<int32_t> pos_;
  std::vector<uint8_t> self_active_;
  std::vector<uint8_t> is_operation_;
  std::vector<std::vector<int32_t>> heap_;
};

}  // namespace

NB_MODULE(_selector, m) {
  m.doc() = "The best-leaf descent's indexed heaps over integer ids (see selector.py).";
  // A selector holds only plain vectors, never a Python reference, so one still alive when the
  // interpreter exits (held by a daemon thread's scheduler state or a cycle the last collection
  // missed, as in the service tests) is not a reference-counting bug; nanobind's exit-time
  // leak report would only alarm users.
  nb::set_leak_warnings(false);
  nb::class_<NativeSelector>(m, "NativeSelector")
      .def(nb::init<double>(), nb::arg("root_sat"))
      .def("add", &NativeSelector::add, nb::arg("parent"), nb::arg("order"),
           nb::arg("is_operation"), nb::arg("sat"))
      .def("best_leaf", &NativeSelector::best_leaf)
      .def("is_active", &NativeSelector::is_active)
      .def("activate", &NativeSelector::activate)
      .def("deactivate", &NativeSelector::deactivate)
      .def("refresh", &NativeSelector::refresh)
      .def("sat", &NativeSelector::sat)
      .def("set_sat", &NativeSelector::set_sat)
      .def("set_own_sat", &NativeSelector::set_own_sat)
      .def("pos", &NativeSelector::pos)
      .def("self_active", &NativeSelector::self_active)
      .def("set_self_active", &NativeSelector::set_self_active)
      .def("heap", &NativeSelector::heap)
      .def("__len__", &NativeSelector::size);
  // The usage sums of starts and ends (usage_sums.cpp), next to the heaps they feed.
  if (ytsched_add_usage_sums(m.ptr()) < 0) throw nb::python_error();
  // An operation's template from its packed shares (preempt.cpp).
  if (ytsched_add_preempt(m.ptr()) < 0) throw nb::python_error();
#ifdef YTSCHED_SANITIZED
  m.attr("SANITIZED") = true;
#else
  m.attr("SANITIZED") = false;
#endif
}
