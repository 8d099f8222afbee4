"""Write-behind: the hot row writes wait for the commit and run with it, in batches.

Every heartbeat that starts or ends jobs writes a few rows (jobs, operations, nodes), and the
service answers it only after they are committed.  Executed one heartbeat at a time on the
event loop, these statements and their commits took about a fifth of the loop's time at 2,000
heartbeats a second.  Kept until the group commit, the rows of many heartbeats go into one
statement; the commit function may run on the loop (the service's default) or in a writer
thread (SQLite releases the GIL while it works, so that thread uses a free core).

How it keeps the store's promises:

* **Commit before answer.** Writes made through :meth:`Store._write` inside a transaction
  unit are kept in memory (consecutive writes of one statement form one batch).  The service's
  group commit (``Cluster.flush``) takes them with :meth:`take_commit` and runs the batch and
  ``COMMIT`` in its writer thread; the requests that wrote them are answered when that commit
  returned, exactly as before.  While a commit is in flight, :attr:`dirty` stays true, so a
  request that could have read what it writes waits for it too.
* **Order and read-your-writes.** Any other statement (a read, or a write that is not a plain
  row write) first waits for the writer thread and executes what is pending on this thread, in
  order: every read sees every earlier write.
* **A failed unit is rolled back alone.** A unit remembers where its writes start in the
  pending batch and drops them if it raises; a unit that also executes statements directly
  switches to a ``SAVEPOINT`` at that point, as without write-behind.
* **Synchronous callers** (:meth:`commit`, :meth:`close`) wait for the writer thread and
  commit the rest on their own thread.

Only one thread (the event loop's) calls the store; the writer thread runs only what
:meth:`take_commit` handed it, one commit at a time, and the store waits for it before it
touches the connection again.  A failed background commit is rolled back and reported to
every request that waited for it, as a failed commit is without write-behind.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ytsched.store.base import Store

Batch = list[tuple[str, list[Sequence[Any]]]]
"""Pending row writes in order: (statement, rows), one entry per run of one statement."""


class WriteBehindStore(Store):
    """A :class:`Store` whose row writes may wait for a commit in a writer thread (off until
    :attr:`write_behind` is set; the service sets it)."""

    def __init__(self) -> None:
        super().__init__()
        self.write_behind = False
        self._pending: Batch = []
        self._unit_start: tuple[int, int] | None = None
        """Where the open unit's writes start in ``_pending`` (entry, rows in that entry);
        ``None`` when no unit is open or it runs its statements directly (savepoint)."""
        self._idle = threading.Condition()
        self._in_flight = 0
        """Commits handed to the writer thread and not yet finished."""

    # --- what an engine provides ------------------------------------------------------------

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    @abstractmethod
    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @abstractmethod
    def _abort_transaction(self) -> None:
        """Roll the open transaction back, ignoring errors (after a failed commit)."""

    # --- statements --------------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self._direct()
        return self._execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._direct()
        self._executemany(sql, rows)

    def _write(self, sql: str, rows: list[Sequence[Any]]) -> None:
        if not rows:
            return
        if self._unit_start is None:
            self.executemany(sql, rows)
            return
        pending = self._pending
        if pending and pending[-1][0] == sql:
            pending[-1][1].extend(rows)
        else:
            pending.append((sql, list(rows)))

    def _direct(self) -> None:
        """Before a statement on this thread: the writer thread is done, pending writes ran."""
        if self._in_flight:
            self._wait_idle()
        start = self._unit_start
        if not self._pending and start is None:
            return
        self._ensure_begun()
        if start is None:
            self._run(self._pending)
        else:
            # The open unit switches to a savepoint: what earlier units wrote runs before it,
            # what this unit wrote so far after it (so that a rollback drops only the unit's).
            entry, rows = start
            before = self._pending[:entry]
            after = self._pending[entry:]
            if after and rows:
                sql, split = after[0]
                before.append((sql, split[:rows]))
                after[0] = (sql, split[rows:])
            self._run(before)
            self._execute("SAVEPOINT unit")
            self._run(after)
            self._unit_start = None
        self._pending = []

    def _run(self, batch: Batch) -> None:
        for sql, rows in batch:
            if rows:
                self._executemany(sql, rows)

    def _ensure_begun(self) -> None:
        if not self._open:
            self._begin()
            self._open = True

    def _wait_idle(self) -> None:
        with self._idle:
            while self._in_flight:
                self._idle.wait()

    # --- transactions --------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return self._open or bool(self._pending) or self._in_flight > 0

    def commit(self) -> None:
        if self._in_flight:
            self._wait_idle()
        if self._depth:
            return
        if self._pending:
            self._ensure_begun()
            self._run(self._pending)
            self._pending = []
        super().commit()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if not self.write_behind or self._depth:
            with super().transaction():
                yield
            return
        entry = len(self._pending)
        start = (entry - 1, len(self._pending[-1][1])) if entry else (0, 0)
        # A run of the last entry's statement continues that entry: the unit starts inside it.
        self._unit_start = start
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            if self._unit_start is None:
                self._rollback_unit()
            else:
                self._drop_from(start)
            self._unit_start = None
            raise
        self._depth = 0
        if self._unit_start is None:
            self.execute("RELEASE unit")
        self._unit_start = None
        if not self.deferred:
            self.commit()

    def _drop_from(self, start: tuple[int, int]) -> None:
        entry, rows = start
        if entry < len(self._pending):
            del self._pending[entry + 1 :]
            kept = self._pending[entry][1]
            del kept[rows:]
            if not kept:
                del self._pending[entry]

    def take_commit(self) -> Callable[[], None] | None:
        """The pending writes and ``COMMIT`` for the writer thread (one thread, run in the
        order taken); ``None`` without write-behind or inside a unit.  With nothing pending
        but a commit in flight, a no-op that ends after it (so that its caller's answer waits
        for what it may have read)."""
        if not self.write_behind or self._depth:
            return None
        batch, self._pending = self._pending, []
        begun, self._open = self._open, False
        if not batch and not begun and not self._in_flight:
            return None
        with self._idle:
            self._in_flight += 1

        def commit_in_writer() -> None:
            try:
                if batch or begun:
                    if not begun:
                        self._begin()
                    self._run(batch)
                    self._end()
            except BaseException:
                self._abort_transaction()
                raise
            finally:
                with self._idle:
                    self._in_flight -= 1
                    self._idle.notify_all()

        return commit_in_writer
