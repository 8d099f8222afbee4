"""The store interface: pool trees, operations, jobs, nodes, volumes, users and tokens.

The database holds *current state*, not a log: every acknowledged change is written in a
transaction before the service answers, so after a crash (or on a standby that takes over) the
service rebuilds its live model from these rows (:mod:`ytsched.server.revive`).

:class:`Store` is the one interface the service uses; the engines (:mod:`.sqlite`, embedded, the
default; :mod:`.postgresql`, shared by several scheduler instances) provide a connection, the
transaction statements and the schema migrations.  The row-level SQL below is written once in the
subset both engines understand (``?`` placeholders are rewritten for psycopg, upserts use
``ON CONFLICT``, the ``user`` column is quoted because it is a keyword in PostgreSQL).

Transactions: :meth:`Store.transaction` is one atomic unit (a savepoint); with ``deferred`` set,
finished units are committed together by :meth:`Store.commit` (group commit, see
``Cluster.flush``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ytsched.store.rows import (
    JobRow,
    NodeRow,
    OperationRow,
    TreeRows,
    dump,
    load,
    token_hash,
)

_JOB_COLUMNS = (
    "id, operation_id, task, job_index, attempt, node, tree, state, start_time, finish_time,"
    " reason, abort_reason, interruption, exit_code, stdout, stderr"
)
_OPERATION_COLUMNS = (
    'id, seq, type, "user", spec, state, suspended, start_time, finish_time, runtime, events,'
    " result"
)


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """``INSERT ... ON CONFLICT (key) DO UPDATE`` for every non-key column (both engines)."""
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    return f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT ({', '.join(key)}) {action}"


_INSERT_JOBS = upsert("jobs", [c.strip() for c in _JOB_COLUMNS.split(",")], ("id",))
"""Built once: every heartbeat that starts jobs writes with it (building it each time was
~1.5% of the server's time at 2,000 heartbeats a second)."""


class Store(ABC):
    """All reads and writes of the service's database; one connection, one thread."""

    engine: str = ""
    location: str = ""
    """Where the data lives (a file path, or a PostgreSQL URL without its password)."""

    def __init__(self) -> None:
        self._depth = 0
        self._open = False
        self.deferred = False
        """When true, a finished :meth:`transaction` is not committed until :meth:`commit`:
        the service commits once for all requests handled in one event-loop turn and answers
        them after that commit (group commit)."""

    # --- what an engine provides ---------------------------------------------------------

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (``?`` placeholders); the result iterates over row tuples and has
        ``fetchone``/``fetchall``."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @abstractmethod
    def _begin(self) -> None:
        """Open the transaction that the next commit ends."""

    @abstractmethod
    def _end(self) -> None:
        """Commit the open transaction (raises if the database refused it)."""

    @abstractmethod
    def _close(self) -> None: ...

    def _write(self, sql: str, rows: list[Sequence[Any]]) -> None:
        """A row write that reads nothing back and cannot fail on the data (an upsert, or an
        update or delete by key): engines with write-behind
        (:class:`~ytsched.store.write_behind.WriteBehindStore`) may keep it in memory until
        the commit; here it runs at once."""
        self.executemany(sql, rows)

    def take_commit(self) -> Callable[[], None] | None:
        """The pending commit as a function to run in a writer thread, taken from the store,
        or ``None`` when :meth:`commit` must run on the caller's thread (no write-behind)."""
        return None

    @property
    @abstractmethod
    def schema_version(self) -> int: ...

    # --- transactions ---------------------------------------------------------------------

    def close(self) -> None:
        self.commit()
        self._close()

    @property
    def dirty(self) -> bool:
        return self._open

    def commit(self) -> None:
        """Commit what finished transactions wrote (a no-op when nothing is pending)."""
        if self._open and not self._depth:
            self._end()
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
            self._begin()
            self._open = True
        self.execute("SAVEPOINT unit")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._rollback_unit()
            raise
        self._depth = 0
        self.execute("RELEASE unit")
        if not self.deferred:
            self.commit()

    def _rollback_unit(self) -> None:
        self.execute("ROLLBACK TO unit")
        self.execute("RELEASE unit")

    # --- meta ---------------------------------------------------------------------------

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else load(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        self.execute(upsert("meta", ("key", "value"), ("key",)), (key, dump(value)))

    def delete_meta(self, key: str) -> None:
        self.execute("DELETE FROM meta WHERE key = ?", (key,))

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
        seq_row = self.execute("SELECT seq FROM trees WHERE name = ?", (name,)).fetchone()
        seq = seq_row[0] if seq_row is not None else self.next_seq("tree")
        self.execute(
            upsert("trees", ("name", "seq", "config", "attributes"), ("name",)),
            (name, seq, dump(config), dump(attributes)),
        )
        self.execute("DELETE FROM pools WHERE tree = ?", (name,))
        self.executemany(
            "INSERT INTO pools (tree, name, parent, seq, config) VALUES (?, ?, ?, ?, ?)",
            [
                (name, pool, parent, index, dump(config))
                for index, (pool, parent, config) in enumerate(pools)
            ],
        )

    def delete_tree(self, name: str) -> None:
        for table in ("pools", "pool_acls", "volumes"):
            self.execute(f"DELETE FROM {table} WHERE tree = ?", (name,))
        self.execute("DELETE FROM trees WHERE name = ?", (name,))

    def load_trees(self) -> list[TreeRows]:
        trees = [
            TreeRows(name, load(config), load(attributes))
            for name, config, attributes in self.execute(
                "SELECT name, config, attributes FROM trees ORDER BY seq"
            ).fetchall()
        ]
        by_name = {tree.name: tree for tree in trees}
        for tree, name, parent, config in self.execute(
            "SELECT tree, name, parent, config FROM pools ORDER BY tree, seq"
        ).fetchall():
            if tree in by_name:
                by_name[tree].pools.append((name, parent, load(config)))
        return trees

    def save_pool_acl(self, tree: str, pool: str, attributes: dict[str, Any] | None) -> None:
        if not attributes:
            self.execute("DELETE FROM pool_acls WHERE tree = ? AND name = ?", (tree, pool))
            return
        self.execute(
            upsert("pool_acls", ("tree", "name", "attributes"), ("tree", "name")),
            (tree, pool, dump(attributes)),
        )

    def load_pool_acls(self) -> dict[tuple[str, str], dict[str, Any]]:
        return {
            (tree, name): load(attributes)
            for tree, name, attributes in self.execute(
                "SELECT tree, name, attributes FROM pool_acls"
            ).fetchall()
        }

    # --- operations ----------------------------------------------------------------------

    def insert_operation(self, row: OperationRow) -> None:
        self.execute(
            f"INSERT INTO operations ({_OPERATION_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.seq,
                row.type,
                row.user,
                dump(row.spec),
                row.state,
                int(row.suspended),
                row.start_time,
                row.finish_time,
                dump(row.runtime),
                dump(row.events),
                dump(row.result),
            ),
        )

    def update_operation(self, row: OperationRow) -> None:
        self._write(
            "UPDATE operations SET state = ?, suspended = ?, finish_time = ?, runtime = ?,"
            " events = ?, result = ? WHERE id = ?",
            [
                (
                    row.state,
                    int(row.suspended),
                    row.finish_time,
                    dump(row.runtime),
                    dump(row.events),
                    dump(row.result),
                    row.id,
                )
            ],
        )

    def load_operations(self) -> list[OperationRow]:
        return [
            OperationRow(
                id=r[0],
                seq=r[1],
                type=r[2],
                user=r[3],
                spec=load(r[4]),
                state=r[5],
                suspended=bool(r[6]),
                start_time=r[7],
                finish_time=r[8],
                runtime=load(r[9]),
                events=load(r[10]),
                result=load(r[11]),
            )
            for r in self.execute(
                f"SELECT {_OPERATION_COLUMNS} FROM operations ORDER BY seq"
            ).fetchall()
        ]

    # --- jobs ---------------------------------------------------------------------------

    def insert_job(self, job: JobRow) -> None:
        self.insert_jobs([job])

    def insert_jobs(self, jobs: list[JobRow]) -> None:
        self._write(
            _INSERT_JOBS,
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
                    dump(job.interruption),
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
        self._write(
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
        self._write(
            "UPDATE jobs SET exit_code = COALESCE(?, exit_code), stdout = COALESCE(?, stdout),"
            " stderr = COALESCE(?, stderr) WHERE id = ?",
            [(exit_code, stdout, stderr, job_id)],
        )

    def set_job_interruption(self, job_id: str, interruption: dict[str, Any]) -> None:
        self._write("UPDATE jobs SET interruption = ? WHERE id = ?", [(dump(interruption), job_id)])

    @staticmethod
    def _job(row: Sequence[Any]) -> JobRow:
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
            interruption=load(row[12]),
            exit_code=row[13],
            stdout=row[14],
            stderr=row[15],
        )

    def job(self, job_id: str) -> JobRow | None:
        row = self.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else self._job(row)

    def jobs_of(self, operation_id: str) -> list[JobRow]:
        return [
            self._job(row)
            for row in self.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE operation_id = ? ORDER BY start_time, id",
                (operation_id,),
            ).fetchall()
        ]

    def running_jobs(self) -> list[JobRow]:
        return [
            self._job(row)
            for row in self.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'running' ORDER BY start_time, id"
            ).fetchall()
        ]

    def job_state_counts(self, operation_id: str) -> dict[str, int]:
        """``{job state: count}`` of an operation's stored jobs."""
        return {
            str(state): int(count)
            for state, count in self.execute(
                "SELECT state, count(*) FROM jobs WHERE operation_id = ? GROUP BY state",
                (operation_id,),
            ).fetchall()
        }

    # --- volumes ---------------------------------------------------------------------------

    def save_volumes(self, tree: str, volumes: dict[str, tuple[list[float], float]]) -> None:
        self._write("DELETE FROM volumes WHERE tree = ?", [(tree,)])
        self._write(
            "INSERT INTO volumes (tree, pool, volume, ratio) VALUES (?, ?, ?, ?)",
            [(tree, pool, dump(v), ratio) for pool, (v, ratio) in volumes.items()],
        )

    def load_volumes(self) -> dict[str, dict[str, tuple[list[float], float]]]:
        result: dict[str, dict[str, tuple[list[float], float]]] = {}
        for tree, pool, volume, ratio in self.execute(
            "SELECT tree, pool, volume, ratio FROM volumes"
        ).fetchall():
            result.setdefault(tree, {})[pool] = (load(volume), ratio)
        return result

    # --- nodes -------------------------------------------------------------------------------

    def save_node(self, node: NodeRow) -> None:
        self._write(
            upsert(
                "nodes",
                ("address", "tags", "user_tags", "resource_limits", "last_seen"),
                ("address",),
            ),
            [
                (
                    node.address,
                    dump(node.tags),
                    dump(node.user_tags),
                    dump(node.resource_limits),
                    node.last_seen,
                )
            ],
        )

    def delete_node(self, address: str) -> None:
        self.execute("DELETE FROM nodes WHERE address = ?", (address,))

    def load_nodes(self) -> list[NodeRow]:
        return [
            NodeRow(address, load(tags), load(user_tags), load(limits), last_seen)
            for address, tags, user_tags, limits, last_seen in self.execute(
                "SELECT address, tags, user_tags, resource_limits, last_seen FROM nodes"
                " ORDER BY address"
            ).fetchall()
        ]

    # --- users and tokens ----------------------------------------------------------------------

    def save_user(self, name: str, superuser: bool) -> None:
        self.execute(upsert("users", ("name", "superuser"), ("name",)), (name, int(superuser)))

    def users(self) -> dict[str, bool]:
        return {
            name: bool(superuser)
            for name, superuser in self.execute("SELECT name, superuser FROM users").fetchall()
        }

    def delete_user(self, name: str) -> None:
        self.execute("DELETE FROM users WHERE name = ?", (name,))
        self.execute('DELETE FROM tokens WHERE "user" = ?', (name,))

    def add_token(self, token: str, user: str) -> None:
        self.execute(
            upsert("tokens", ("token_hash", '"user"'), ("token_hash",)), (token_hash(token), user)
        )

    def token_user(self, token: str) -> str | None:
        row = self.execute(
            'SELECT "user" FROM tokens WHERE token_hash = ?', (token_hash(token),)
        ).fetchone()
        return None if row is None else str(row[0])

    def tokens(self) -> dict[str, str]:
        """``{token hash: user}`` (the service caches it; hashes only)."""
        return {h: u for h, u in self.execute('SELECT token_hash, "user" FROM tokens').fetchall()}

    # --- scheduler instances (election bookkeeping; see ytsched.server.leader) -----------------

    def instances(self) -> list[dict[str, Any]]:
        """The scheduler instances that share this store and when each was last seen."""
        leader = self.execute("SELECT holder, epoch FROM leader WHERE id = 1").fetchone()
        holder, epoch = (leader[0], leader[1]) if leader is not None else (None, 0)
        return [
            {
                "holder": name,
                "address": address,
                "role": "leader" if name == holder else "standby",
                "epoch": epoch if name == holder else None,
                "started_at": started_at,
                "last_seen": last_seen,
            }
            for name, address, started_at, last_seen in self.execute(
                "SELECT holder, address, started_at, last_seen FROM instances ORDER BY holder"
            ).fetchall()
        ]
