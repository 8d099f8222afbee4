"""The node agent's watchdog: when the agent dies, however it dies, its jobs die too.

Jobs run in their own sessions (so that interrupting a job reaches everything it started), which
also means nothing ties them to the agent: after a ``kill -9`` of the agent they kept running
as orphans beside the replacements the scheduler started elsewhere.  The agent therefore starts
one small watchdog process holding the read end of a pipe whose write end only the agent holds
(close-on-exec, so no job inherits it).  The kernel closes that end when the agent exits for
any reason; the watchdog then reads end-of-file, kills every job group recorded in the agent's
jobs directory (:func:`ytsched.node.process.kill_jobs_in`, which checks start times so a reused
group id is never hit) and exits.

Why not ``PR_SET_PDEATHSIG`` alone: it reaches only the job's first process (the shell), not the
processes the command starts, and it fires when the spawning *thread* ends, not the process.
The watchdog runs in its own session, so a signal to the agent's process group (Ctrl-C in a
terminal, ``killpg``) does not take it down with the agent; an agent that restarts also kills
what a predecessor left (``kill_stale_jobs``), which covers a watchdog killed together with it.

Run as ``python -m ytsched.node.watchdog JOBS_DIR FD``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

_ENTRY = "import sys; from ytsched.node.watchdog import main; sys.exit(main(sys.argv[1:]))"
"""The watchdog process's program (``python -c``; its arguments follow in ``sys.argv``)."""


def start_watchdog(jobs_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start the watchdog of ``jobs_dir``; returns it and the write end the agent must keep."""
    read_end, write_end = os.pipe()  # both close-on-exec
    try:
        process = subprocess.Popen(
            # Imported, not run with -m: ``ytsched.node`` already imports this module, and
            # runpy warns when it executes a module that is in sys.modules.
            [sys.executable, "-c", _ENTRY, str(jobs_dir), str(read_end)],
            pass_fds=(read_end,),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return process, write_end


def stop_watchdog(process: subprocess.Popen[bytes], write_end: int) -> None:
    """The agent's orderly exit: closing the pipe lets the watchdog sweep once and exit."""
    with contextlib.suppress(OSError):
        os.close(write_end)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def watch(jobs_dir: Path, fd: int) -> int:
    """Block until the agent's end of the pipe closes, then kill the jobs; returns how many."""
    from ytsched.node.process import kill_jobs_in

    while True:
        try:
            if not os.read(fd, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    return kill_jobs_in(jobs_dir)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m ytsched.node.watchdog JOBS_DIR FD", file=sys.stderr)
        return 2
    watch(Path(argv[0]), int(argv[1]))
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the agent's tests
    sys.exit(main(sys.argv[1:]))
