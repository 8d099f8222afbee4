"""The leader lease on PostgreSQL: one row, a holder, an expiry and a growing epoch.

An instance becomes the leader with a compare-and-set on the epoch it read, and only when the
lease is free: never held, released, expired (by the database's clock, so the instances' clocks
do not matter), or held by a session that no longer exists (a ``kill -9``-ed leader's
connection closes at once, so a standby need not wait for the expiry).  Before taking the lease
it terminates the previous holder's sessions, which ends any transaction that holder still had
open — with the epoch check of :mod:`ytsched.store.fencing` this is what stops a paused or
partitioned old leader from committing afterwards.

This is the role YTsaurus gives a Cypress lock: a scheduler becomes active by taking an
exclusive lock on ``//sys/scheduler/lock`` under its master transaction, and a standby gets it
when that transaction dies (``yt/yt/server/scheduler/master_connector.cpp``); there the master
fences the old instance, here the epoch trigger does.  See docs/deployment.md.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import psycopg

NOW = "extract(epoch from clock_timestamp())"


@dataclass(frozen=True, slots=True)
class LeaseState:
    epoch: int
    holder: str | None
    address: str | None
    lease_pid: int | None
    writer_pid: int | None
    free: bool
    """Nobody holds a live lease: it may be taken."""


def read(conn: psycopg.Connection[Any]) -> LeaseState:
    row = conn.execute(
        "SELECT epoch, holder, address, lease_pid, writer_pid,"
        f" holder IS NULL OR expires_at IS NULL OR expires_at < {NOW}"
        " OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = leader.lease_pid)"
        " FROM leader WHERE id = 1"
    ).fetchone()
    assert row is not None, "the leader row is created by migration 2"
    return LeaseState(int(row[0]), row[1], row[2], row[3], row[4], bool(row[5]))


def campaign(conn: psycopg.Connection[Any], holder: str, address: str, ttl: float) -> int | None:
    """Take the lease if it is free; the new epoch, or None when someone else holds it."""
    state = read(conn)
    if not state.free:
        return None
    for pid in (state.lease_pid, state.writer_pid):
        if pid is not None:
            with contextlib.suppress(psycopg.Error):
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid = %s AND pid <> pg_backend_pid()",
                    (pid,),
                )
    row = conn.execute(
        "UPDATE leader SET epoch = epoch + 1, holder = %s, address = %s,"
        f" lease_pid = pg_backend_pid(), writer_pid = NULL, expires_at = {NOW} + %s"
        " WHERE id = 1 AND epoch = %s RETURNING epoch",
        (holder, address, ttl, state.epoch),
    ).fetchone()
    return None if row is None else int(row[0])


def renew(conn: psycopg.Connection[Any], epoch: int, ttl: float) -> bool:
    """Extend the lease of ``epoch``; False when it is no longer ours."""
    row = conn.execute(
        f"UPDATE leader SET expires_at = {NOW} + %s, lease_pid = pg_backend_pid()"
        " WHERE id = 1 AND epoch = %s RETURNING epoch",
        (ttl, epoch),
    ).fetchone()
    return row is not None


def release(conn: psycopg.Connection[Any], epoch: int) -> None:
    """Give the lease up (a clean shutdown): a standby takes over without waiting."""
    conn.execute(
        "UPDATE leader SET holder = NULL, expires_at = NULL, lease_pid = NULL, writer_pid = NULL"
        " WHERE id = 1 AND epoch = %s",
        (epoch,),
    )


def announce(conn: psycopg.Connection[Any], holder: str, address: str, started_at: float) -> None:
    """Record that this instance is alive (``//sys/scheduler/instances``)."""
    conn.execute(
        "INSERT INTO instances (holder, address, started_at, last_seen)"
        f" VALUES (%s, %s, %s, {NOW}) ON CONFLICT (holder) DO UPDATE SET"
        " address = excluded.address, last_seen = excluded.last_seen",
        (holder, address, started_at),
    )


def retire(conn: psycopg.Connection[Any], holder: str) -> None:
    conn.execute("DELETE FROM instances WHERE holder = %s", (holder,))
