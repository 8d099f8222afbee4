"""One scheduler instance among several on a shared PostgreSQL store: standby, takeover, lead.

The instance serves HTTP from the start (a :class:`LeaderGate` that redirects while standby).
When the elector wins the lease, :meth:`Instance.take_over` opens a store that writes with the
new epoch, rebuilds the live model from it (``Cluster`` → :mod:`ytsched.server.revive`:
operations, jobs, nodes, volumes) and starts serving and updating.  When the lease is lost (a
renewal refused, or the database refusing a write), :meth:`Instance.step_down` stops serving at
once, drops the model and its uncommitted writes, and the instance campaigns again.

This follows the YTsaurus scheduler, whose standby instances hold no operation model and revive
every operation from Cypress when they become active (``yt/yt/server/scheduler/
master_connector.cpp``, ``scheduler.cpp``: ``OnMasterConnected``).  What the standby keeps warm
is everything but the model: the process, imports, the database pool, the HTTP listener and
the web app's routes (:func:`warm_up`), so a takeover costs the revive alone
(docs/performance.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import types
import uuid
from typing import cast

from ytsched.server.app import create_app, periodic
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.gate import LeaderGate
from ytsched.server.gcpolicy import CollectorPolicy
from ytsched.server.leader import Elector
from ytsched.store.postgresql import PostgresStore, migrate, open_pool

log = logging.getLogger("ytsched.server")


def warm_up(config: ServiceConfig) -> None:
    """Build (and drop) the service's app once while standing by: the framework's first build
    of routes and schemas costs ~0.3 s that a takeover would otherwise pay (later builds
    ~0.05 s).  Building reads only the cluster's config and store flag, so a stand-in is
    enough; if that ever changes, the warm-up is skipped (it only saves time)."""
    stand_in = types.SimpleNamespace(config=config, store=types.SimpleNamespace(deferred=False))
    try:
        create_app(cast(Cluster, stand_in), background=False)
    except Exception:  # an optimization must never keep a standby from standing by
        log.warning("warming up the app failed; the takeover will build it", exc_info=True)


class Instance:
    def __init__(self, config: ServiceConfig, address: str) -> None:
        assert config.store is not None
        self.config = config
        self.address = address
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.pool = open_pool(config.store, max_size=4)
        with self.pool.connection() as conn:  # the lease row must exist before campaigning
            migrate(conn)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.cluster: Cluster | None = None
        self._periodic: asyncio.Task[None] | None = None
        self.elector = Elector(
            self.pool,
            holder=self.holder,
            address=address,
            on_elected=self._elected,
            on_lost=self._lost,
        )
        self.gate = LeaderGate(address, lambda: self.elector.leader_address)
        self.takeovers: list[float] = []
        """Seconds each takeover of this instance took (lease won → serving)."""

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        warm_up(self.config)
        self.elector.start()

    # --- callbacks from the election thread ------------------------------------------------

    def _elected(self, epoch: int) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.take_over, epoch)

    def _lost(self, reason: str) -> None:
        # Stop answering as the leader now (from any thread); tear down on the loop.
        self.gate.app = None
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.step_down, reason)

    # --- on the event loop ---------------------------------------------------------------------

    def take_over(self, epoch: int) -> None:
        if self.elector.epoch != epoch or self.cluster is not None:
            return
        started = time.perf_counter()
        try:
            store = PostgresStore(
                self.config.store or "",
                pool=self.pool,
                epoch=epoch,
                on_lost=self.elector.step_down,
            )
            opened = time.perf_counter()
            cluster = Cluster(self.config, store=store)
            revived = time.perf_counter()
        except Exception as error:
            log.exception("takeover at epoch %d failed", epoch)
            self.elector.step_down(f"takeover failed: {error}")
            return
        if self.elector.epoch != epoch:  # lost while reviving
            with contextlib.suppress(Exception):
                store.abandon()
            return
        self.cluster = cluster
        cluster.collector = CollectorPolicy(observe=cluster.metrics.observe_gc_pause)
        cluster.collector.install()
        self._periodic = asyncio.get_running_loop().create_task(periodic(cluster))
        self.gate.app = create_app(cluster, background=False)
        took = time.perf_counter() - started
        self.takeovers.append(took)
        log.info(
            "leading at epoch %d: revived %d operation(s) and %d node(s) in %.3f s"
            " (store %.3f s, model %.3f s, app %.3f s)",
            epoch,
            len(cluster.active_operation_ids()),
            len(cluster.store.load_nodes()),
            took,
            opened - started,
            revived - opened,
            time.perf_counter() - revived,
        )

    def step_down(self, reason: str) -> None:
        self.gate.app = None
        if self._periodic is not None:
            self._periodic.cancel()
            self._periodic = None
        cluster, self.cluster = self.cluster, None
        if cluster is not None:
            if cluster.collector is not None:
                cluster.collector.uninstall()
            log.warning("stepped down (%s): the model and uncommitted writes are dropped", reason)
            store = cluster.store
            if isinstance(store, PostgresStore):
                store.abandon()

    def close(self) -> None:
        """A clean stop: commit, release the lease (a standby takes over at once), close."""
        self.gate.app = None
        if self._periodic is not None:
            self._periodic.cancel()
        cluster, self.cluster = self.cluster, None
        if cluster is not None:
            if cluster.collector is not None:
                cluster.collector.uninstall()
            with contextlib.suppress(Exception):
                cluster.close()
        self.elector.stop()
        self.pool.close()
