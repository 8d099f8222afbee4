// Usage sums of the heartbeat path (usage_sums.cpp), added to the _selector module.
#pragma once

#include <Python.h>

// Adds add_usage(), apply_usage(), sum_usages(), scan(), walk_passes() and the vector helpers
// to `module`; 0, or -1 with a Python exception set.
int ytsched_add_usage_sums(PyObject* module);
