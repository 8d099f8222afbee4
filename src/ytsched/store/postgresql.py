"""The shared engine: PostgreSQL through psycopg 3 and a psycopg_pool connection pool.

Selected by ``ytsched server --store postgresql://...`` (or ``YTSCHED_STORE``).  Several
scheduler instances use one database: one of them, the leader, writes; every write it makes
carries its epoch and the database refuses a stale one (:mod:`ytsched.store.fencing`).

The store keeps one connection from the pool for its whole life: a deferred (group-commit)
transaction spans several requests and reads inside it must see its own writes.  The pool's
other connections serve the election loop and standby reads.  A refused write (stale epoch) or a
broken connection means this instance can no longer act as the leader: the store raises
:class:`LeadershipLost` and calls ``on_lost`` so the service steps down at once.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool

from ytsched.errors import YtschedError
from ytsched.store import fencing
from ytsched.store.base import Store
from ytsched.store.migrations import MIGRATIONS, POSTGRESQL, VERSION_TABLE, check_version

log = logging.getLogger("ytsched.store")

MIGRATION_LOCK = 0x79747363  # "ytsc": serializes migrations of instances starting together


class LeadershipLost(YtschedError):
    """This instance's epoch was refused, or its connection to the database broke."""

    def __init__(self, message: str) -> None:
        super().__init__("NotLeader", message)


def redact(url: str) -> str:
    """The URL without its password (for logs and ``location``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def open_pool(url: str, *, max_size: int = 4, timeout: float = 10.0) -> ConnectionPool:
    """A pool of autocommit connections (transactions are explicit ``BEGIN``/``COMMIT``)."""
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        # tcp_user_timeout: a leader cut off from the database notices in seconds (its
        # renewal fails and it steps down) instead of after the kernel's TCP retries.
        kwargs={"autocommit": True, "tcp_user_timeout": 3000},
        timeout=timeout,
        open=False,
        name="ytsched",
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except Exception as error:
        pool.close()
        raise YtschedError(
            "StoreUnavailable", f"cannot connect to {redact(url)}: {error}"
        ) from None
    return pool


_PLACEHOLDER = re.compile(r"\?")


class PostgresStore(Store):
    engine = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        pool: ConnectionPool | None = None,
        epoch: int | None = None,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self.url = url
        self.location = redact(url)
        self._own_pool = pool is None
        self.pool = pool if pool is not None else open_pool(url)
        self.on_lost = on_lost
        self._sql: dict[str, str] = {}
        self._released = False
        self.conn: psycopg.Connection[Any] = self.pool.getconn()
        try:
            migrate(self.conn)
            self.epoch = epoch
            if epoch is not None:
                self._claim(epoch)
        except BaseException:
            self._release_connection(broken=True)
            raise

    def _claim(self, epoch: int) -> None:
        """Carry ``epoch`` on every write of this connection; record it as the writer."""
        self.conn.execute("SELECT set_config('ytsched.epoch', %s, false)", (str(epoch),))
        self.conn.execute(
            "UPDATE leader SET writer_pid = pg_backend_pid() WHERE id = 1 AND epoch = %s",
            (epoch,),
        )

    @property
    def schema_version(self) -> int:
        return found_version(self.conn)

    # --- engine primitives --------------------------------------------------------------------

    def _translate(self, sql: str) -> str:
        translated = self._sql.get(sql)
        if translated is None:
            translated = self._sql[sql] = _PLACEHOLDER.sub("%s", sql)
        return translated

    def _failed(self, error: psycopg.Error) -> BaseException:
        """Turn a refused epoch or a lost connection into :class:`LeadershipLost`."""
        if getattr(error, "sqlstate", None) == fencing.FENCED_SQLSTATE or isinstance(
            error, psycopg.OperationalError
        ):
            message = f"the store refused this instance's writes: {error}".strip()
            if self.on_lost is not None:
                self.on_lost(message)
            return LeadershipLost(message)
        return error

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        try:
            return self.conn.execute(self._translate(sql), params)
        except psycopg.Error as error:
            raise self._failed(error) from error

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        try:
            with self.conn.cursor() as cursor:
                cursor.executemany(self._translate(sql), batch)
        except psycopg.Error as error:
            raise self._failed(error) from error

    def _begin(self) -> None:
        self.execute("BEGIN")

    def _end(self) -> None:
        try:
            self.execute("COMMIT")
        except BaseException:
            # A failed COMMIT ends the transaction on the server; forget it here too.
            self._open = False
            with contextlib.suppress(psycopg.Error):
                self.conn.execute("ROLLBACK")
            raise

    def abandon(self) -> None:
        """Drop the connection without committing (a leader stepping down)."""
        self._open = False
        self._depth = 0
        self._release_connection(broken=True)

    def _release_connection(self, *, broken: bool) -> None:
        """Give the connection back (closed first when ``broken``: a later use of this store
        then fails with :class:`LeadershipLost` instead of writing)."""
        if self._released:
            return
        self._released = True
        if broken:
            with contextlib.suppress(Exception):
                self.conn.close()
        with contextlib.suppress(Exception):
            self.pool.putconn(self.conn)
        if self._own_pool:
            self.pool.close()

    def _close(self) -> None:
        self._release_connection(broken=False)


def found_version(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    version = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(version[0]) if version is not None and version[0] is not None else 0


def migrate(conn: psycopg.Connection[Any], target: int | None = None) -> int:
    """Bring the schema to ``target`` (default: the newest) in one transaction; returns it.

    Instances starting together take an advisory lock, so only one of them migrates.
    """
    goal = len(MIGRATIONS) if target is None else target
    if found_version(conn) == goal:
        return goal
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        found = found_version(conn)
        check_version(found)
        for index in range(found, goal):
            for statement in POSTGRESQL.render(MIGRATIONS[index]):
                conn.execute(statement.encode())
            if index == 1:
                for statement in fencing.statements():
                    conn.execute(statement.encode())
        conn.execute(VERSION_TABLE)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (max(found, goal),))
    log.info("store schema migrated from version %d to %d", found, goal)
    return goal
