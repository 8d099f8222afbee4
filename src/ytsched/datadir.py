"""One owner per data directory: an OS file lock held for the life of the process.

Two servers (or two node agents) on one directory would both believe they own its database
and job directories: the second one's start-up kills the first one's jobs, operations run
twice and acknowledged writes are lost.  So every process that owns a data directory takes an
exclusive ``flock`` on ``DIR/lock`` before it touches anything else and keeps the descriptor
open until it exits.

Why ``flock`` on a separate file (and not a lock inside the database): the kernel releases it
when the process dies, however it dies (``kill -9`` included), so a stale lock never blocks a
restart; and it guards the job directories of a node agent, which has no database.  The lock
file also records who holds it (pid, host, role, start time) so that the refusal can name the
holder.  The descriptor is close-on-exec (Python's default), so jobs and child processes never
inherit, and never prolong, the lock.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
from pathlib import Path
from typing import Any

from ytsched.errors import YtschedError

LOCK_FILE = "lock"


class DataDirectoryLock:
    """The exclusive lock of one data directory, held until :meth:`release` or exit."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DataDirectoryLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def _holder(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 4096).decode("utf-8", errors="replace")
        value = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "another process"
    role = holder.get("role") or "process"
    parts = [f"{role} pid {holder.get('pid', '?')}"]
    if holder.get("host"):
        parts.append(f"on {holder['host']}")
    if holder.get("started"):
        parts.append(f"since {holder['started']}")
    return " ".join(parts)


def lock_data_directory(directory: Path, role: str) -> DataDirectoryLock:
    """Take ``directory``'s lock (creating the directory) or refuse with ``DataDirectoryLocked``.

    ``role`` names this process in the lock file (``server``, ``node local-node-1``, ...).
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise YtschedError(
            "InvalidArgument",
            f"cannot use data directory {directory}: {error.strerror or error}",
            directory=str(directory),
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = _holder(fd)
        os.close(fd)
        raise YtschedError(
            "DataDirectoryLocked",
            f"data directory {directory} is in use by {_describe(holder)};"
            " stop that process or choose another --data-dir",
            directory=str(directory),
            holder=holder,
        ) from None
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "role": role,
        "started": datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    payload = json.dumps(record).encode("utf-8") + b"\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, payload, 0)
    return DataDirectoryLock(directory, fd)
