"""One job as an operating-system process.

The command runs through ``/bin/sh -c`` in a new session, so it leads its own process group:
interrupting or killing the group reaches every process the job started.  stdout and stderr go
to files in the job's directory (retrievable after the job ends); the group id is written there
too (with the leader's start time), so the agent's watchdog (:mod:`ytsched.node.watchdog`)
and an agent restarted after a crash can kill jobs a dead agent left behind, and never an
unrelated group that reused the number.

Outcomes: exit 0 is ``completed``; a non-zero exit is ``failed``; a job the agent killed
(abort, or an interruption that outlived its timeout) is ``aborted``.  A job that exits after
an interruption is reported ``interrupted`` (``completed`` on exit 0, else ``aborted``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil  # type: ignore[import-untyped]

OUTPUT_TAIL = 64 * 1024


def signal_number(name: str | None) -> int:
    """``SIGINT`` -> 2; unknown names fall back to SIGTERM (the job still gets a signal)."""
    if name:
        number = getattr(signal, name.upper(), None)
        if isinstance(number, signal.Signals):
            return int(number)
    return int(signal.SIGTERM)


_ASYNC_IGNORED = (int(signal.SIGINT), int(signal.SIGQUIT))
"""The signals a non-interactive shell ignores for the commands it starts in the background."""

_UNCATCHABLE = (int(signal.SIGKILL), int(signal.SIGSTOP))
"""Signals whose action cannot be set (they are never ignored either)."""


def _default_dispositions(numbers: tuple[int, ...]) -> None:
    """Reset ``numbers`` to their default action (runs in the job's process before ``exec``).

    An ignored signal stays ignored across ``exec``, and a shell cannot trap a signal that was
    ignored when it started.  So an agent started in the background of a script (``agent &``:
    SIGINT and SIGQUIT ignored) would hand that to every job, and a job's interruption signal
    would never reach it: the job would run into its interruption timeout and be killed.  The
    job gets the defaults instead, whatever the agent inherited."""
    for number in numbers:
        if number not in _UNCATCHABLE:
            signal.signal(number, signal.SIG_DFL)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tail(path: Path, limit: int = OUTPUT_TAIL) -> str:
    try:
        with path.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - limit))
            return stream.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


@dataclass(slots=True)
class Finished:
    outcome: str
    exit_code: int | None
    error: str | None
    interrupted: bool
    stdout: str
    stderr: str


class JobProcess:
    def __init__(
        self,
        *,
        job_id: str,
        operation_id: str,
        command: str,
        environment: dict[str, str],
        directory: Path,
        interruption_signal: str | None,
    ) -> None:
        self.job_id = job_id
        self.operation_id = operation_id
        self.directory = directory
        self.interruption_signal = interruption_signal
        self.interrupted = False
        self.interrupt_deadline: float | None = None
        self.killed_reason: str | None = None
        directory.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **environment}
        self._stdout: IO[bytes] = (directory / "stdout").open("wb")
        self._stderr: IO[bytes] = (directory / "stderr").open("wb")
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", command or "true"],
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._stdout,
            stderr=self._stderr,
            start_new_session=True,
            preexec_fn=functools.partial(
                _default_dispositions,
                tuple({*_ASYNC_IGNORED, signal_number(interruption_signal)}),
            ),
        )
        self.pgid = self.process.pid
        record_group(directory, self.pgid)

    def interrupt(self, signal_name: str | None, timeout: float, now: float) -> None:
        """Deliver the interruption signal; the group is killed if still alive at the deadline."""
        if self.interrupted:
            return
        self.interrupted = True
        self.interrupt_deadline = now + max(0.0, timeout)
        kill_group(self.pgid, signal_number(signal_name or self.interruption_signal))

    def abort(self, reason: str) -> None:
        self.killed_reason = reason
        kill_group(self.pgid)

    def check_deadline(self, now: float) -> None:
        expired = self.interrupt_deadline is not None and now >= self.interrupt_deadline
        if expired and self.process.poll() is None and self.killed_reason is None:
            self.abort("interruption timeout expired")

    def poll(self) -> Finished | None:
        code = self.process.poll()
        if code is None:
            return None
        kill_group(self.pgid)  # leftovers the command started in the background
        self._stdout.close()
        self._stderr.close()
        stdout = _tail(self.directory / "stdout")
        stderr = _tail(self.directory / "stderr")
        if self.killed_reason is not None:
            return Finished("aborted", code, self.killed_reason, self.interrupted, stdout, stderr)
        if code == 0:
            return Finished("completed", 0, None, self.interrupted, stdout, stderr)
        if self.interrupted:
            return Finished(
                "aborted", code, f"interrupted; exited with {code}", True, stdout, stderr
            )
        last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
        detail = f": {last[0][:500]}" if last else ""
        message = (
            f"command was killed by signal {-code}"
            if code < 0
            else f"command exited with code {code}{detail}"
        )
        return Finished("failed", code, message, False, stdout, stderr)

    def wait_gone(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)

    def cleanup(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _start_time(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError):
        return None


def record_group(directory: Path, pgid: int) -> None:
    """Write a job's process-group id and its leader's start time into the job directory."""
    started = _start_time(pgid)
    (directory / "pgid.started").write_text("" if started is None else repr(started), "utf-8")
    (directory / "pgid").write_text(str(pgid), encoding="utf-8")


def kill_recorded_group(job_directory: Path) -> bool:
    """Kill the job group recorded in ``job_directory``; False if it names nothing of ours.

    A group outlives its leader (the shell) while anything the job started runs, and Linux
    never hands out a pid that is still some group's id: so if a process with the group's
    number exists but started at another time than our leader, our group is gone and the
    number was reused by an unrelated process, which must not be killed.
    """
    try:
        pgid = int((job_directory / "pgid").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return False
    if pgid <= 1:
        return False
    try:
        recorded = (job_directory / "pgid.started").read_text(encoding="utf-8").strip()
    except OSError:
        recorded = ""
    current = _start_time(pgid)
    if current is not None and recorded:
        with contextlib.suppress(ValueError):
            if abs(current - float(recorded)) > 0.01:
                return False
    kill_group(pgid)
    return True


def kill_jobs_in(jobs_dir: Path) -> int:
    """Kill every job group recorded under ``jobs_dir``; returns how many were ours."""
    if not jobs_dir.is_dir():
        return 0
    return sum(kill_recorded_group(path.parent) for path in jobs_dir.glob("*/pgid"))


def kill_stale_jobs(jobs_dir: Path) -> int:
    """Kill the process groups of jobs a previous agent left running; returns how many."""
    count = kill_jobs_in(jobs_dir)
    shutil.rmtree(jobs_dir, ignore_errors=True)
    return count
