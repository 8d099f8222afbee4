// An operation's template from its packed shares and its preemptible list's restart
// (preempt.cpp), added to the _selector module.
#pragma once

#include <Python.h>

// Adds template_setup(), template_from_shares(), restart_setup() and restart() to `module`
// (which must have usage_sums' scan() already); 0, or -1 with a Python exception set.
int ytsched_add_preempt(PyObject* module);
