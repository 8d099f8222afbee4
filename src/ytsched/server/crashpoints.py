"""Named moments at which a test can make the service die as by ``kill -9``.

``YTSCHED_CRASH_AT=NAME:N`` makes the process SIGKILL itself the N-th time it reaches point
NAME (``fair_share_update``: between the two halves of an update; ``heartbeat``: a heartbeat
that wrote jobs, before its commit and answer; ``operation_start``: a ``start_op`` written but
not committed).  The failover tests use it to kill a leader at exactly those moments, which a
signal sent from outside can only hit by luck.  With ``YTSCHED_CRASH_ARM=FILE`` visits count
only once FILE exists, so a test decides *when* (e.g. after a standby is ready).  Unset
(always, outside tests), a point costs one global read.
"""

from __future__ import annotations

import os
import signal

POINTS = ("fair_share_update", "heartbeat", "operation_start")


def _plan() -> tuple[str, int] | None:
    text = os.environ.get("YTSCHED_CRASH_AT", "")
    name, _, count = text.partition(":")
    if name not in POINTS or not count.isdigit() or int(count) < 1:
        return None
    return name, int(count)


PLAN = _plan()
ARMED = PLAN is not None
ARM_FILE = os.environ.get("YTSCHED_CRASH_ARM") or None
_reached: dict[str, int] = {}


def reach(name: str) -> None:
    """Count a visit of ``name``; die here when the plan says so."""
    if PLAN is None or PLAN[0] != name:
        return
    if ARM_FILE is not None and not os.path.exists(ARM_FILE):
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == PLAN[1]:
        os.kill(os.getpid(), signal.SIGKILL)
