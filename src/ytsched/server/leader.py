"""The election loop of a scheduler instance on a shared PostgreSQL store.

A thread (not the event loop: a long fair-share update or a takeover's revive must not stop
the lease from being renewed) that, every ``period`` seconds, announces the instance and then
either campaigns for the lease (standby) or renews it (leader).  It tells the service through
two callbacks, called from this thread: ``on_elected(epoch)`` and ``on_lost(reason)``.

A leader steps down as soon as the lease is provably gone (renewal refused) and also when it
could not renew for ``ttl - period`` seconds, i.e. before any standby may take the lease: it
never believes it leads while another instance does.  The database's epoch check makes this
belt-and-braces; it is what keeps a confused leader from *committing*.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from ytsched.store import election

log = logging.getLogger("ytsched.server.leader")

LEASE_TTL = 2.0
"""Seconds a lease lasts without renewal: the takeover time after a partition or a hang.
(After ``kill -9`` a standby takes over sooner: the dead leader's session is gone at once.)"""
ELECTION_PERIOD = 0.2
"""Seconds between two renewals (leader) or two campaigns (standby)."""


class Elector:
    def __init__(
        self,
        pool: ConnectionPool,
        *,
        holder: str,
        address: str,
        on_elected: Callable[[int], None],
        on_lost: Callable[[str], None],
        ttl: float = LEASE_TTL,
        period: float = ELECTION_PERIOD,
    ) -> None:
        self.pool = pool
        self.holder = holder
        self.address = address
        self.on_elected = on_elected
        self.on_lost = on_lost
        self.ttl = ttl
        self.period = period
        self.started_at = time.time()
        self.epoch: int | None = None
        """The epoch this instance leads in; None while standby."""
        self.leader_address: str | None = None
        """Where the leader is, as last seen (None: unknown or nobody)."""
        self._last_renewed = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ytsched-elector", daemon=True)

    @property
    def leading(self) -> bool:
        return self.epoch is not None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop campaigning; a leader releases the lease so a standby takes over at once."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception), self.pool.connection(timeout=2) as conn:
            if self.epoch is not None:
                election.release(conn, self.epoch)
            election.retire(conn, self.holder)
        self.epoch = None

    def step_down(self, reason: str) -> None:
        """Forget the lease (the service found it lost); campaign again as a standby."""
        if self.epoch is not None:
            log.warning("stepping down from epoch %d: %s", self.epoch, reason)
            self.epoch = None
            self.on_lost(reason)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self.pool.connection() as conn:
                    conn.execute("SET lock_timeout = '2s'")
                    while not self._stop.is_set():
                        self._round(conn)
                        self._stop.wait(self.period)
            except Exception as error:  # a lost connection: reconnect; keep the loop alive
                log.warning("election: %s", error)
                self._check_expiry()
                self._stop.wait(self.period)

    def _round(self, conn: psycopg.Connection[Any]) -> None:
        election.announce(conn, self.holder, self.address, self.started_at)
        if self.epoch is not None:
            if election.renew(conn, self.epoch, self.ttl):
                self._last_renewed = time.monotonic()
                self.leader_address = self.address
            else:
                self.step_down("the lease was taken by another instance")
            return
        epoch = election.campaign(conn, self.holder, self.address, self.ttl)
        if epoch is None:
            state = election.read(conn)
            self.leader_address = None if state.free else state.address
            return
        log.info("won the lease: epoch %d", epoch)
        self.epoch = epoch
        self._last_renewed = time.monotonic()
        self.leader_address = self.address
        self.on_elected(epoch)

    def _check_expiry(self) -> None:
        if self.epoch is not None and time.monotonic() - self._last_renewed > max(
            self.ttl - self.period, self.period
        ):
            self.step_down("could not renew the lease in time")
