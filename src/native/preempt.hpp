// An operation's template from its packed shares (preempt.cpp), added to the _selector module.
#pragma once

#include <Python.h>

// Adds template_setup() and template_from_shares() to `module`; 0, or -1 with a Python
// exception set.
int ytsched_add_preempt(PyObject* module);
