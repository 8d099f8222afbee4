"""An operation's template from its packed shares, natively (``src/native/preempt.cpp``).

Every operation whose computed shares moved gets a new
:class:`~ytsched.scheduling.state.OperationTemplate` at each fair-share update: a
:class:`~ytsched.scheduling.satisfaction.ShareView`, its
:class:`~ytsched.scheduling.preemptible.PreemptionBounds` and its scheduling status, from
the 25 doubles of its packed shares.  In the interpreter that was a few hundred bytecodes and
five frozen-dataclass ``__init__`` calls per operation; :func:`template_from_shares` is one
call that computes the same fields with the same double operations in the same order and
fills the same classes' slots (``tests/scheduling/test_native_template.py`` compares every
field with the Python definitions bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable

from ytsched.resources import Vector
from ytsched.scheduling.preemptible import CompiledBound, PreemptionBounds
from ytsched.scheduling.satisfaction import _INDEXES, ShareView
from ytsched.scheduling.selector import template_from_shares as _native_template_from_shares
from ytsched.scheduling.selector import template_setup
from ytsched.scheduling.starvation import SchedulableStatus
from ytsched.scheduling.state import OperationSettings, OperationTemplate

template_setup(
    OperationTemplate,
    ShareView,
    PreemptionBounds,
    CompiledBound,
    _INDEXES,
    SchedulableStatus.NORMAL,
    SchedulableStatus.BELOW_FAIR_SHARE,
)

template_from_shares: Callable[
    [OperationSettings, bytes, Vector, PreemptionBounds | None, int | None],
    OperationTemplate | None,
] = _native_template_from_shares
"""``template_from_shares(settings, shares, total, bounds, fifo_index)``: what
``_template(settings, shares, None, total, bounds, from_shares=True, fifo_index)`` of
:mod:`~ytsched.scheduling.post_update` returns, or ``None`` when ``total`` or a float setting
the template reads (tolerance, satisfaction thresholds) is not an exact ``float`` (the caller
then takes the Python path).  The native module itself, no Python frame: it runs once per
operation whose shares moved, at every update."""
