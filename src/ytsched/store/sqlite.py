"""The embedded engine: one SQLite file in the data directory (the default, ``ytsched local``).

Why SQLite: a single file, transactions, and write-ahead logging give the service crash safety
(``kill -9`` loses nothing that was committed) without another process to run.  WAL mode with
``synchronous=NORMAL`` makes a commit survive the death of the process; ``durable=True``
switches to ``synchronous=FULL`` to also survive power loss, at the cost of an fsync per commit.
One process owns the file, so there is no election and no fencing here.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ytsched.store.migrations import MIGRATIONS, SQLITE, VERSION_TABLE, check_version
from ytsched.store.write_behind import WriteBehindStore


class SQLiteStore(WriteBehindStore):
    engine = "sqlite"

    def __init__(self, path: Path | str, *, durable: bool = False) -> None:
        super().__init__()
        self.path = str(path)
        self.location = self.path
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.db.execute("PRAGMA foreign_keys=OFF")
        # Checkpoints (which fsync the database file) run in a background thread instead of
        # inside whichever commit crosses the WAL size threshold.
        self.db.execute("PRAGMA wal_autocheckpoint=0")
        self._migrate()
        self._stop = threading.Event()
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop, name="ytsched-checkpoint", daemon=True
        )
        self._checkpointer.start()

    # --- schema -----------------------------------------------------------------------------

    def _found_version(self) -> int:
        has_table = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if has_table:
            row = self.db.execute("SELECT max(version) FROM schema_version").fetchone()
            if row is not None and row[0] is not None:
                return int(row[0])
        # Written before the version table existed: ``PRAGMA user_version`` said 1.
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        found = self._found_version()
        check_version(found)
        if found == len(MIGRATIONS):
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for migration in MIGRATIONS[found:]:
                for statement in SQLITE.render(migration):
                    self.db.execute(statement)
            self.db.execute(VERSION_TABLE)
            self.db.execute("DELETE FROM schema_version")
            self.db.execute("INSERT INTO schema_version (version) VALUES (?)", (len(MIGRATIONS),))
            self.db.execute(f"PRAGMA user_version={len(MIGRATIONS)}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    @property
    def schema_version(self) -> int:
        return self._found_version()

    # --- engine primitives --------------------------------------------------------------------

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(sql, params)

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    def _abort_transaction(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")

    def _begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def _end(self) -> None:
        self.db.execute("COMMIT")

    def _checkpoint_loop(self) -> None:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self._stop.wait(1.0):
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()

    def _close(self) -> None:
        self._stop.set()
        self._checkpointer.join(timeout=5)
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()
