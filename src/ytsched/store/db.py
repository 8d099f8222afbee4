"""The service's SQLite store: pool trees, operations, jobs, nodes, volumes, users and tokens.

The database holds *current state*, not a log: every acknowledged change is written in a
transaction before the service answers, so after a crash the service rebuilds its live model
from these rows (:mod:`ytsched.server.revive`).  WAL mode with ``synchronous=NORMAL`` makes a
commit survive the death of the process (the case ``kill -9`` tests); ``durable=True`` switches
to ``synchronous=FULL`` to also survive power loss, at the cost of an fsync per commit.

Values that are documents (configs, specs, events) are stored as JSON text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trees (
    name TEXT PRIMARY KEY, seq INTEGER NOT NULL, config TEXT NOT NULL, attributes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pools (
    tree TEXT NOT NULL, name TEXT NOT NULL, parent TEXT, seq INTEGER NOT NULL,
    config TEXT NOT NULL, PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS pool_acls (
    tree TEXT NOT NULL, name TEXT NOT NULL, attributes TEXT NOT NULL, PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS operations (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, type TEXT NOT NULL, user TEXT NOT NULL,
    spec TEXT NOT NULL, state TEXT NOT NULL, suspended INTEGER NOT NULL DEFAULT 0,
    start_time REAL NOT NULL, finish_time REAL, runtime TEXT NOT NULL, events TEXT NOT NULL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS operations_state ON operations (state);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, operation_id TEXT NOT NULL, task TEXT NOT NULL,
    job_index INTEGER NOT NULL, attempt INTEGER NOT NULL, node TEXT, tree TEXT,
    state TEXT NOT NULL, start_time REAL NOT NULL, finish_time REAL, reason TEXT,
    abort_reason TEXT, interruption TEXT, exit_code INTEGER, stdout TEXT, stderr TEXT
);
CREATE INDEX IF NOT EXISTS jobs_operation ON jobs (operation_id);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
CREATE TABLE IF NOT EXISTS volumes (
    tree TEXT NOT NULL, pool TEXT NOT NULL, volume TEXT NOT NULL, ratio REAL NOT NULL,
    PRIMARY KEY (tree, pool)
);
CREATE TABLE IF NOT EXISTS nodes (
    address TEXT PRIMARY KEY, tags TEXT NOT NULL, user_tags TEXT NOT NULL,
    resource_limits TEXT NOT NULL, last_seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, superuser INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (token_hash TEXT PRIMARY KEY, user TEXT NOT NULL);
"""


def token_hash(token: str) -> str:
    """Tokens are stored hashed so that a copied database does not leak credentials."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(slots=True)
class OperationRow:
    id: str
    seq: int
    type: str
    user: str
    spec: dict[str, Any]
    state: str
    suspended: bool
    start_time: float
    finish_time: float | None
    runtime: dict[str, Any]
    events: list[dict[str, Any]]
    result: dict[str, Any] | None


@dataclass(slots=True)
class JobRow:
    id: str
    operation_id: str
    task: str
    job_index: int
    attempt: int
    node: str | None
    tree: str | None
    state: str
    start_time: float
    finish_time: float | None = None
    reason: str | None = None
    abort_reason: str | None = None
    interruption: dict[str, Any] | None = None
    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


@dataclass(slots=True)
class NodeRow:
    address: str
    tags: list[str]
    user_tags: list[str]
    resource_limits: dict[str, float]
    last_seen: float


@dataclass(slots=True)
class TreeRows:
    """A tree with its pools (pre-order) as stored."""

    name: str
    config: dict[str, Any]
    attributes: dict[str, Any]
    pools: list[tuple[str, str | None, dict[str, Any]]] = field(default_factory=list)


_JOB_COLUMNS = (
    "id, operation_id, task, job_index, attempt, node, tree, state, start_time, finish_time,"
    " reason, abort_reason, interruption, exit_code, stdout, stderr"
)


class Store:
    """All reads and writes of the service's database; one connection, one thread."""

    def __init__(self, path: Path | str, *, durable: bool = False) -> None:
        self.path = str(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.db.execute("PRAGMA foreign_keys=OFF")
        # Checkpoints (which fsync the database file) run in a background thread instead of
        # inside whichever commit crosses the WAL size threshold.
        self.db.execute("PRAGMA wal_autocheckpoint=0")
        self.db.executescript(SCHEMA)
        self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._depth = 0
        self._open = False
        self.deferred = False
        """When true, a finished :meth:`transaction` is not committed until :meth:`commit`:
        the service commits once for all requests handled in one event-loop turn and answers
        them after that commit (group commit)."""
        self._stop = threading.Event()
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop, name="ytsched-checkpoint", daemon=True
        )
        self._checkpointer.start()

    def _checkpoint_loop(self) -> None:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self._stop.wait(1.0):
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()

    def close(self) -> None:
        self.commit()
        self._stop.set()
        self._checkpointer.join(timeout=5)
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()

    @property
    def dirty(self) -> bool:
        return self._open

    def commit(self) -> None:
        """Commit what finished transactions wrote (a no-op when nothing is pending)."""
        if self._open and not self._depth:
            self.db.execute("COMMIT")
            self._open = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit (a savepoint); nested uses join the outermost one.

        A unit that raises is rolled back alone, never the writes of other finished units
        that wait for a deferred commit.
        """
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if not self._open:
            self.db.execute("BEGIN IMMEDIATE")
            self._open = True
        self.db.execute("SAVEPOINT unit")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self.db.execute("ROLLBACK TO unit")
            self.db.execute("RELEASE unit")
            raise
        self._depth = 0
        self.db.execute("RELEASE unit")
        if not self.deferred:
            self.commit()

    # --- meta ---------------------------------------------------------------------------

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else _load(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, _dump(value)),
        )

    def delete_meta(self, key: str) -> None:
        self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    def next_seq(self, name: str) -> int:
        value = int(self.get_meta(f"seq:{name}", 0)) + 1
        self.set_meta(f"seq:{name}", value)
        return value

    # --- trees and pools ---------------------------------------------------------------

    def save_tree(
        self,
        name: str,
        config: dict[str, Any],
        attributes: dict[str, Any],
        pools: list[tuple[str, str | None, dict[str, Any]]],
    ) -> None:
        """Replace a tree's row and all its pools (``pools`` in pre-order, parents first)."""
        seq_row = self.db.execute("SELECT seq FROM trees WHERE name = ?", (name,)).fetchone()
        seq = seq_row[0] if seq_row is not None else self.next_seq("tree")
        self.db.execute(
            "INSERT OR REPLACE INTO trees (name, seq, config, attributes) VALUES (?, ?, ?, ?)",
            (name, seq, _dump(config), _dump(attributes)),
        )
        self.db.execute("DELETE FROM pools WHERE tree = ?", (name,))
        self.db.executemany(
            "INSERT INTO pools (tree, name, parent, seq, config) VALUES (?, ?, ?, ?, ?)",
            [
                (name, pool, parent, index, _dump(config))
                for index, (pool, parent, config) in enumerate(pools)
            ],
        )

    def delete_tree(self, name: str) -> None:
        for table in ("pools", "pool_acls", "volumes"):
            self.db.execute(f"DELETE FROM {table} WHERE tree = ?", (name,))
        self.db.execute("DELETE FROM trees WHERE name = ?", (name,))

    def load_trees(self) -> list[TreeRows]:
        trees = [
            TreeRows(name, _load(config), _load(attributes))
            for name, config, attributes in self.db.execute(
                "SELECT name, config, attributes FROM trees ORDER BY seq"
            )
        ]
        by_name = {tree.name: tree for tree in trees}
        for tree, name, parent, config in self.db.execute(
            "SELECT tree, name, parent, config FROM pools ORDER BY tree, seq"
        ):
            if tree in by_name:
                by_name[tree].pools.append((name, parent, _load(config)))
        return trees

    def save_pool_acl(self, tree: str, pool: str, attributes: dict[str, Any] | None) -> None:
        if not attributes:
            self.db.execute("DELETE FROM pool_acls WHERE tree = ? AND name = ?", (tree, pool))
            return
        self.db.execute(
            "INSERT OR REPLACE INTO pool_acls (tree, name, attributes) VALUES (?, ?, ?)",
            (tree, pool, _dump(attributes)),
        )

    def load_pool_acls(self) -> dict[tuple[str, str], dict[str, Any]]:
        return {
            (tree, name): _load(attributes)
            for tree, name, attributes in self.db.execute(
                "SELECT tree, name, attributes FROM pool_acls"
            )
        }

    # --- operations ----------------------------------------------------------------------

    def insert_operation(self, row: OperationRow) -> None:
        self.db.execute(
            "INSERT INTO operations (id, seq, type, user, spec, state, suspended, start_time,"
            " finish_time, runtime, events, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.seq,
                row.type,
                row.user,
                _dump(row.spec),
                row.state,
                int(row.suspended),
                row.start_time,
                row.finish_time,
                _dump(row.runtime),
                _dump(row.events),
                _dump(row.result),
            ),
        )

    def update_operation(self, row: OperationRow) -> None:
        self.db.execute(
            "UPDATE operations SET state = ?, suspended = ?, finish_time = ?, runtime = ?,"
            " events = ?, result = ? WHERE id = ?",
            (
                row.state,
                int(row.suspended),
                row.finish_time,
                _dump(row.runtime),
                _dump(row.events),
                _dump(row.result),
                row.id,
            ),
        )

    def load_operations(self) -> list[OperationRow]:
        return [
            OperationRow(
                id=r[0],
                seq=r[1],
                type=r[2],
                user=r[3],
                spec=_load(r[4]),
                state=r[5],
                suspended=bool(r[6]),
                start_time=r[7],
                finish_time=r[8],
                runtime=_load(r[9]),
                events=_load(r[10]),
                result=_load(r[11]),
            )
            for r in self.db.execute(
                "SELECT id, seq, type, user, spec, state, suspended, start_time, finish_time,"
                " runtime, events, result FROM operations ORDER BY seq"
            )
        ]

    # --- jobs ---------------------------------------------------------------------------

    def insert_job(self, job: JobRow) -> None:
        self.insert_jobs([job])

    def insert_jobs(self, jobs: list[JobRow]) -> None:
        self.db.executemany(
            f"INSERT OR REPLACE INTO jobs ({_JOB_COLUMNS}) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    job.id,
                    job.operation_id,
                    job.task,
                    job.job_index,
                    job.attempt,
                    job.node,
                    job.tree,
                    job.state,
                    job.start_time,
                    job.finish_time,
                    job.reason,
                    job.abort_reason,
                    _dump(job.interruption),
                    job.exit_code,
                    job.stdout,
                    job.stderr,
                )
                for job in jobs
            ],
        )

    def finish_job(
        self,
        job_id: str,
        *,
        state: str,
        finish_time: float | None,
        reason: str | None,
        abort_reason: str | None = None,
    ) -> None:
        self.finish_jobs([(job_id, state, finish_time, reason, abort_reason)])

    def finish_jobs(
        self, jobs: list[tuple[str, str, float | None, str | None, str | None]]
    ) -> None:
        """``(job id, state, finish time, reason, abort reason)`` for each job."""
        self.db.executemany(
            "UPDATE jobs SET state = ?, finish_time = ?, reason = ?,"
            " abort_reason = COALESCE(?, abort_reason) WHERE id = ?",
            [
                (state, finish, reason, abort, job_id)
                for job_id, state, finish, reason, abort in jobs
            ],
        )

    def set_job_output(
        self, job_id: str, exit_code: int | None, stdout: str | None, stderr: str | None
    ) -> None:
        self.db.execute(
            "UPDATE jobs SET exit_code = COALESCE(?, exit_code), stdout = COALESCE(?, stdout),"
            " stderr = COALESCE(?, stderr) WHERE id = ?",
            (exit_code, stdout, stderr, job_id),
        )

    def set_job_interruption(self, job_id: str, interruption: dict[str, Any]) -> None:
        self.db.execute(
            "UPDATE jobs SET interruption = ? WHERE id = ?", (_dump(interruption), job_id)
        )

    @staticmethod
    def _job(row: tuple[Any, ...]) -> JobRow:
        return JobRow(
            id=row[0],
            operation_id=row[1],
            task=row[2],
            job_index=row[3],
            attempt=row[4],
            node=row[5],
            tree=row[6],
            state=row[7],
            start_time=row[8],
            finish_time=row[9],
            reason=row[10],
            abort_reason=row[11],
            interruption=_load(row[12]),
            exit_code=row[13],
            stdout=row[14],
            stderr=row[15],
        )

    def job(self, job_id: str) -> JobRow | None:
        row = self.db.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else self._job(row)

    def jobs_of(self, operation_id: str) -> list[JobRow]:
        return [
            self._job(row)
            for row in self.db.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE operation_id = ? ORDER BY start_time, id",
                (operation_id,),
            )
        ]

    def running_jobs(self) -> list[JobRow]:
        return [
            self._job(row)
            for row in self.db.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'running' ORDER BY start_time, id"
            )
        ]

    # --- volumes ---------------------------------------------------------------------------

    def save_volumes(self, tree: str, volumes: dict[str, tuple[list[float], float]]) -> None:
        self.db.execute("DELETE FROM volumes WHERE tree = ?", (tree,))
        self.db.executemany(
            "INSERT INTO volumes (tree, pool, volume, ratio) VALUES (?, ?, ?, ?)",
            [(tree, pool, _dump(v), ratio) for pool, (v, ratio) in volumes.items()],
        )

    def load_volumes(self) -> dict[str, dict[str, tuple[list[float], float]]]:
        result: dict[str, dict[str, tuple[list[float], float]]] = {}
        for tree, pool, volume, ratio in self.db.execute(
            "SELECT tree, pool, volume, ratio FROM volumes"
        ):
            result.setdefault(tree, {})[pool] = (_load(volume), ratio)
        return result

    # --- nodes -------------------------------------------------------------------------------

    def save_node(self, node: NodeRow) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO nodes (address, tags, user_tags, resource_limits, last_seen)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                node.address,
                _dump(node.tags),
                _dump(node.user_tags),
                _dump(node.resource_limits),
                node.last_seen,
            ),
        )

    def delete_node(self, address: str) -> None:
        self.db.execute("DELETE FROM nodes WHERE address = ?", (address,))

    def load_nodes(self) -> list[NodeRow]:
        return [
            NodeRow(address, _load(tags), _load(user_tags), _load(limits), last_seen)
            for address, tags, user_tags, limits, last_seen in self.db.execute(
                "SELECT address, tags, user_tags, resource_limits, last_seen FROM nodes"
                " ORDER BY address"
            )
        ]

    # --- users and tokens ----------------------------------------------------------------------

    def save_user(self, name: str, superuser: bool) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO users (name, superuser) VALUES (?, ?)", (name, int(superuser))
        )

    def users(self) -> dict[str, bool]:
        return {
            name: bool(superuser)
            for name, superuser in self.db.execute("SELECT name, superuser FROM users")
        }

    def delete_user(self, name: str) -> None:
        self.db.execute("DELETE FROM users WHERE name = ?", (name,))
        self.db.execute("DELETE FROM tokens WHERE user = ?", (name,))

    def add_token(self, token: str, user: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO tokens (token_hash, user) VALUES (?, ?)",
            (token_hash(token), user),
        )

    def token_user(self, token: str) -> str | None:
        row = self.db.execute(
            "SELECT user FROM tokens WHERE token_hash = ?", (token_hash(token),)
        ).fetchone()
        return None if row is None else str(row[0])

    def tokens(self) -> dict[str, str]:
        """``{token hash: user}`` (the service caches it; hashes only)."""
        return {h: u for h, u in self.db.execute("SELECT token_hash, user FROM tokens")}
