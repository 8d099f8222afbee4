"""A throw-away PostgreSQL server for tests: initdb in a temporary directory, loopback port.

The server runs as a non-root user (PostgreSQL refuses root): the current user when it is not
root, else the ``postgres`` system user that Debian's package creates (through ``runuser``).
It trusts loopback connections, listens on 127.0.0.1 with a free port and keeps its unix socket
in its own directory; :meth:`PostgresServer.stop` stops it and removes everything.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``postgres`` (newest Debian version first)."""
    initdb = shutil.which("initdb")
    if initdb is not None and shutil.which("postgres") is not None:
        return Path(initdb).parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "postgres").exists():
            return Path(candidate)
    return None


def missing_reason() -> str | None:
    """Why PostgreSQL tests cannot run here (None when they can)."""
    if find_binaries() is None:
        return (
            "PostgreSQL server binaries (initdb, postgres) not found; install Debian's"
            " `postgresql` package (.ci/run does)"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and `runuser` is missing"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        binaries = find_binaries()
        assert binaries is not None, missing_reason()
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="ytsched-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.sockets.mkdir()
        self.port = _free_port()
        self.as_user: list[str] = []
        self.user = pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
            os.chown(self.sockets, account.pw_uid, account.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
            self.user = "postgres"
        self.process: subprocess.Popen[bytes] | None = None

    def _run(self, *arguments: str) -> None:
        subprocess.run(
            [*self.as_user, *arguments],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=self.root,
        )

    def start(self) -> PostgresServer:
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "--auth=trust",
            "--no-locale",
            "--encoding=UTF8",
            "-U",
            self.user,
        )
        log = (self.root / "postgres.log").open("ab")
        self.process = subprocess.Popen(
            [
                *self.as_user,
                str(self.binaries / "postgres"),
                "-D",
                str(self.data),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-k",
                str(self.sockets),
                # Tests kill processes, not machines: skip fsync for speed.
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=2):
                    return self
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"PostgreSQL did not start:\n{self.log()}") from None
                time.sleep(0.1)

    def log(self) -> str:
        path = self.root / "postgres.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None:
            # SIGINT to the postmaster alone: PostgreSQL's "fast" shutdown (rolls back
            # sessions, exits promptly); the process group only as a fallback.
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError, ValueError):
                postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
                os.kill(postmaster, signal.SIGINT)
            if self.process.poll() is None and not (self.data / "postmaster.pid").exists():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            self.process = None
        shutil.rmtree(self.root, ignore_errors=True)
