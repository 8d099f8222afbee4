"""Run ``benchmarks/heartbeat.py`` so that callgrind counts only the steady heartbeats.

CPU time on the shared two-core machine varies by 10-20% between runs of the same code (other
benchmarks share the cores and caches); instruction counts do not.  This wrapper routes every
steady-phase ``Scheduler.process_heartbeat`` call through ``operator.call``, a C function
nothing else in the run uses, so that callgrind can collect inside it alone::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_operator_call --callgrind-out-file=/tmp/hb.out \\
        .venv/bin/python benchmarks/heartbeat_callgrind.py [--src DIR] --quick --rounds 6

``I refs`` is then the machine instructions of the steady heartbeats (about a minute with
``--quick``).  ``--src DIR`` imports ``ytsched`` from ``DIR/src`` instead of the installed
package (an old checkout beside the new one; copy the built ``_native`` module into its
``ytsched/fairshare``), for before/after pairs with one venv.  The remaining arguments go to
``heartbeat.py``.
"""

from __future__ import annotations

import operator
import runpy
import sys
from pathlib import Path
from typing import Any


def main() -> None:
    args = sys.argv[1:]
    script = Path(__file__).with_name("heartbeat.py")
    if args[:1] == ["--src"]:
        root = Path(args[1])
        args = args[2:]
        # The editable install's finder would shadow the other tree: drop it.
        sys.meta_path = [f for f in sys.meta_path if "editable" not in type(f).__module__]
        sys.path.insert(0, str(root / "src"))
        script = root / "benchmarks" / "heartbeat.py"
    from ytsched.scheduling.scheduler import Scheduler

    original = Scheduler.process_heartbeat
    call = operator.call
    steady_from = 5.0  # the fill round heartbeats at virtual times below the period

    def routed(self: Scheduler, heartbeat: Any) -> Any:
        if heartbeat.now < steady_from:
            return original(self, heartbeat)
        return call(original, self, heartbeat)

    Scheduler.process_heartbeat = routed  # type: ignore[method-assign]
    sys.argv = [str(script), *args]
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
