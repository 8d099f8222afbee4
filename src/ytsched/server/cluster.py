"""The service core: live pool trees, the scheduler, the store and the records around them.

Everything the service knows lives in one :class:`Cluster`, used from one thread (the event
loop): commands, heartbeats and the periodic update never interleave, so the pure layers need no
locks.  A command first changes the live model (which validates and refuses atomically), then
writes what changed to the store in one transaction, then answers.

The scheduling layer (``ytsched.scheduling.scheduler.Scheduler``) decides placements and
preemption on heartbeats and runs the fair-share update; see :mod:`ytsched.server.heartbeats`.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ytsched.pooltree import Operation, PoolTree, PoolTrees
from ytsched.scheduling.scheduler import Scheduler
from ytsched.server import defaults
from ytsched.server.auth import DEFAULT_POOL_TREES_ACL, AclNode, Auth
from ytsched.server.errors import ApiError
from ytsched.server.gcpolicy import CollectorPolicy
from ytsched.server.history import History
from ytsched.server.limits import RequestLimits
from ytsched.store import OperationRow, Store, open_store

log = logging.getLogger("ytsched.server")

UPDATE_PAUSE = 0.005
"""Seconds the service serves requests between the two halves of a fair-share update."""


HISTORY_SLICE = 500
"""Operations sampled into the history per step of :meth:`Cluster.tick_concurrently` (a
sample of 3,000 took 40-60 ms on the busy development machine)."""


def _settle(waiter: asyncio.Future[None], commit: asyncio.Future[None]) -> None:
    """Pass the outcome of a commit in the writer thread to the requests waiting for it."""
    if waiter.done():
        return
    if commit.cancelled():
        waiter.cancel()
        return
    error = commit.exception()
    if error is not None:
        waiter.set_exception(error)
    else:
        waiter.set_result(None)


def iso(moment: float | None) -> str | None:
    """YTsaurus writes instants as ISO 8601 UTC strings with microseconds."""
    if moment is None:
        return None
    value = datetime.datetime.fromtimestamp(moment, tz=datetime.UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class ServiceConfig:
    """Options of ``ytsched server`` (not of the scheduler: those live in pool trees)."""

    data_dir: Path
    admin_token: str | None = None
    node_heartbeat_timeout: float = defaults.NODE_HEARTBEAT_TIMEOUT
    """Seconds without a heartbeat after which a node is offline and its jobs rescheduled
    (also how long nodes have to re-attach their jobs after a restart)."""
    heartbeat_period: float = defaults.HEARTBEAT_PERIOD
    """Seconds between heartbeats, advertised to nodes in every answer."""
    fair_share_update_period: float | None = None
    """Seconds; default: the scheduler config's ``fair_share_update_period``."""
    durable: bool = False
    """fsync every commit (survives power loss, not only process death)."""
    address: str | None = None
    """The URL other instances and clients reach this one at (``//sys/scheduler/instances``)."""
    store: str | None = None
    """``postgresql://...`` (shared, with leader election) or ``sqlite:PATH``; None: the
    data directory's SQLite file."""
    strategy: dict[str, Any] = field(default_factory=dict)
    """Scheduler-wide options (``StrategyConfig``), used when the data directory is new."""
    initial_pool_trees: dict[str, Any] | None = None
    """Pool trees document loaded into a new data directory (see ``examples/local``)."""
    finished_operations_in_memory: int = 1000
    """Finished operations kept in the live model (their ``explain`` story); older ones are
    served from the store alone, as after a restart."""
    commit_interval: float = 0.005
    """Seconds; the shortest time between two commits of the store (group commit: the
    requests of one interval share one commit and are answered after it)."""
    store_writer_thread: bool = False
    """Run the store's batched row writes and commits in a writer thread (SQLite only; see
    :mod:`ytsched.store.write_behind`).  It moves them to the second core when one is free;
    on the shared 2-core development machine, where other processes keep both cores busy, the
    thread's GIL hand-offs cost more than the work it moves (docs/performance.md), so the
    default runs the batch on the loop."""
    job_output_limit: int = 64 * 1024
    """Bytes of a job's stdout and stderr kept by the server (the tail)."""
    history_samples: int = defaults.HISTORY_SAMPLES
    """Samples of pool and operation shares kept for the Web UI's charts (a ring)."""
    history_period: float = defaults.HISTORY_PERIOD
    """Seconds between history samples (taken after a fair-share update)."""
    history_finished_operations: int = 100
    """Finished operations whose history is kept (the oldest are dropped)."""
    ui_refresh_period: float = defaults.UI_REFRESH_PERIOD
    """Seconds between the Web UI's live refreshes of a page."""
    limits: RequestLimits = field(default_factory=RequestLimits)
    """Bounds on what one request may ask for (:mod:`ytsched.server.limits`)."""


@dataclass(slots=True)
class OperationRecord:
    """What the service keeps about an operation beyond the live model."""

    row: OperationRow
    acl: list[dict[str, Any]]
    seen_transitions: int = 0


class Cluster:
    """The live state of the service and the helpers its command modules share."""

    def __init__(
        self,
        config: ServiceConfig,
        clock: Callable[[], float] = time.time,
        *,
        store: Store | None = None,
    ) -> None:
        from ytsched.server.jobs import JobTracker
        from ytsched.server.metrics import Metrics
        from ytsched.server.nodes import NodeTracker
        from ytsched.server.revive import revive

        self.config = config
        self.clock = clock
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.store: Store = (
            store
            if store is not None
            else open_store(config.store, config.data_dir, durable=config.durable)
        )
        self.auth = Auth(self.store)
        if config.admin_token:
            self.auth.ensure_token(config.admin_token)
        self.trees = PoolTrees(self.store.get_meta("strategy", config.strategy))
        self.tree_attributes: dict[str, dict[str, Any]] = {}
        self.pool_acls: dict[tuple[str, str], dict[str, Any]] = {}
        self.pool_trees_acl: list[dict[str, Any]] = list(DEFAULT_POOL_TREES_ACL)
        self.operations: dict[str, OperationRecord] = {}
        self._finished_live: collections.deque[str] = collections.deque()
        """Finished operations still in the live model, oldest first."""
        self.alerts: list[dict[str, Any]] = []
        self.jobs = JobTracker(self)
        self.nodes = NodeTracker(self)
        self.started_at = clock()
        self.last_update_time: float | None = None
        self.last_update_duration = 0.0
        self.metrics = Metrics(self)
        self.collector: CollectorPolicy | None = None
        """Set by ``ytsched server`` (see :mod:`ytsched.server.gcpolicy`); None in tests."""
        revive(self)
        self.scheduler = Scheduler(self.trees)
        self.scheduler.adopt_running_jobs()
        self.history = History(
            self.trees,
            capacity=config.history_samples,
            period=config.history_period,
            finished_operations=config.history_finished_operations,
        )
        self.store.commit()
        from ytsched.server.orchid_cache import OrchidCache

        self.orchid_cache = OrchidCache(self)
        """Orchid reads, versioned: rebuilt after updates and commands, per subtree."""
        self._update_executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="ytsched-fair-share"
        )
        """Where the fair-share engine runs for :meth:`tick_concurrently` (one update at a
        time: a single worker)."""
        self._store_executor: ThreadPoolExecutor | None = None
        self._commit_waiter: asyncio.Future[None] | None = None
        self._last_commit = float("-inf")
        self.update_period = (
            config.fair_share_update_period
            if config.fair_share_update_period is not None
            else self.trees.strategy.fair_share_update_period / 1000.0
        )

    def now(self) -> float:
        return self.clock()

    async def flush(self) -> None:
        """Wait until everything written so far is committed.

        Requests handled in the same event-loop turn share one commit (group commit); each is
        answered only after it, so nothing acknowledged can be lost.
        """
        if not self.store.dirty:
            return
        loop = asyncio.get_running_loop()
        if self._commit_waiter is None:
            self._commit_waiter = loop.create_future()
            # At most one commit per ``commit_interval``: when busy, the requests of the
            # next few milliseconds share a commit (a commit costs ~0.1 ms of CPU, as much as
            # a whole heartbeat); when idle, the commit is immediate.
            delay = self._last_commit + self.config.commit_interval - loop.time()
            if delay > 0:
                loop.call_later(delay, self._commit_now)
            else:
                loop.call_soon(self._commit_now)
        await asyncio.shield(self._commit_waiter)

    def _commit_now(self) -> None:
        waiter, self._commit_waiter = self._commit_waiter, None
        if waiter is None:
            return
        loop = asyncio.get_running_loop()
        self._last_commit = loop.time()
        # Write-behind (``ytsched.store.write_behind``): the rows of every request since the
        # last commit run as one batch per statement, with the commit.
        in_writer = self.store.take_commit()
        if in_writer is not None and self.config.store_writer_thread:
            # ... in the writer thread while the loop serves other requests; these answer
            # after it.
            done = loop.run_in_executor(self._writer(), in_writer)
            done.add_done_callback(lambda finished: _settle(waiter, finished))
            return
        try:
            if in_writer is not None:
                in_writer()
            else:
                self.store.commit()
        except Exception as error:  # every waiting request learns the commit failed
            waiter.set_exception(error)
            return
        waiter.set_result(None)

    def _writer(self) -> ThreadPoolExecutor:
        """The store's writer thread (one: commits run in the order they were taken)."""
        if self._store_executor is None:
            self._store_executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="ytsched-store-writer"
            )
        return self._store_executor

    def close(self) -> None:
        self._update_executor.shutdown(wait=True)
        if self._store_executor is not None:
            self._store_executor.shutdown(wait=True)
        self.store.close()

    # --- pool trees ----------------------------------------------------------------------

    def tree(self, name: str) -> PoolTree:
        return self.trees.tree(name)

    def persist_tree(self, name: str) -> None:
        """Write a tree's config, attributes and explicit pools (call inside a transaction)."""
        tree = self.trees.trees[name]
        pools = [
            (
                pool.name,
                None if pool.parent is None or pool.parent.is_root else pool.parent.name,
                pool.config.model_dump(mode="json", exclude_unset=True),
            )
            for pool in tree.root.descendants()
            if not pool.is_root and not pool.is_ephemeral
        ]
        self.store.save_tree(
            name,
            tree.config.model_dump(mode="json", exclude_unset=True),
            self.tree_attributes.get(name, {}),
            pools,
        )

    def persist_meta(self) -> None:
        self.store.set_meta("default_tree", self.trees.default_tree)
        self.store.set_meta("user_to_default_pool", self.trees.user_to_default_pool)
        self.store.set_meta("pool_trees_acl", self.pool_trees_acl)

    def acl_chain(self, tree: str, pool: str | None) -> list[AclNode]:
        """ACLs from a pool (None: the tree object) up to ``//sys/pool_trees``."""
        chain: list[AclNode] = []
        live = self.trees.trees.get(tree)
        node = live.pools.get(pool) if live is not None and pool is not None else None
        while node is not None and not node.is_root:
            attributes = self.pool_acls.get((tree, node.name), {})
            chain.append(
                AclNode(attributes.get("acl", []), bool(attributes.get("inherit_acl", True)))
            )
            node = node.parent
        attributes = self.tree_attributes.get(tree, {})
        chain.append(AclNode(attributes.get("acl", []), bool(attributes.get("inherit_acl", True))))
        chain.append(AclNode(self.pool_trees_acl))
        return chain

    def require_pool_permission(
        self, user: str, permission: str, tree: str, pool: str | None
    ) -> None:
        what = f"pool {pool!r} in tree {tree!r}" if pool else f"pool tree {tree!r}"
        self.auth.require(user, permission, self.acl_chain(tree, pool), what)

    # --- operations ------------------------------------------------------------------------

    def record(self, operation_id: str) -> OperationRecord:
        record = self.operations.get(operation_id)
        if record is None:
            raise ApiError(
                "NoSuchOperation",
                f"operation {operation_id!r} does not exist",
                operation_id=operation_id,
            )
        return record

    def live_operation(self, operation_id: str) -> Operation | None:
        return self.trees.operations.get(operation_id)

    def sync_operations(self, operation_ids: list[str] | None = None) -> None:
        """Copy state changes of the live model into the records and the store.

        Called after anything that may change an operation's state: its own commands, job
        completions, and every pool-tree change (which may start pending operations).  With
        ``operation_ids`` only those are looked at, unless one of them finished: a finished
        operation frees a running slot, so every pending operation may have started.
        """
        from ytsched.server.operations import sync_record

        ids = operation_ids if operation_ids is not None else self.active_operation_ids()
        finished = False
        for operation_id in ids:
            record = self.operations.get(operation_id)
            live = self.trees.operations.get(operation_id)
            if record is not None and live is not None:
                was_final = record.row.state in ("completed", "failed", "aborted")
                sync_record(self, record, live)
                if not was_final and live.state.is_final:
                    finished = True
                    self._retire(operation_id)
        if finished and operation_ids is not None:
            self.sync_operations()

    def _retire(self, operation_id: str) -> None:
        """A finished operation was recorded: keep the newest few in the live model only."""
        self._finished_live.append(operation_id)
        while len(self._finished_live) > self.config.finished_operations_in_memory:
            self.trees.forget_operation(self._finished_live.popleft())

    def active_operation_ids(self) -> list[str]:
        return [
            op_id
            for op_id, record in self.operations.items()
            if record.row.state not in ("completed", "failed", "aborted")
        ]

    # --- periodic work -------------------------------------------------------------------

    def tick(self) -> None:
        """One period: node liveness, time limits, the fair-share update, volumes."""
        now = self._begin_tick()
        started = time.perf_counter()
        self.scheduler.update(now)
        self._end_tick(now, time.perf_counter() - started)

    async def tick_concurrently(self, pause: float = UPDATE_PAUSE) -> None:
        """One period as the service runs it: the update in steps with requests served
        between them, the engine in a worker thread (:mod:`ytsched.server.update_steps`), a
        pause of ``pause`` seconds before the scheduling state is built and published.  No
        request waits for a whole update, only for one step."""
        from ytsched.server.update_steps import update_in_steps

        now = self._begin_tick()
        await asyncio.sleep(0)
        times = await update_in_steps(self, self._update_executor, now, pause)
        self.metrics.observe_update_step(
            times.longest_loop_step, times.publish, len(times.fallbacks), times.recomputations
        )
        await asyncio.sleep(0)
        self._end_tick(now, times.total, commit=False, history=False)
        if self.history.due(now):
            for _ in self.history.sample(now, HISTORY_SLICE):
                await asyncio.sleep(0)
        await self.flush()

    def _begin_tick(self) -> float:
        from ytsched.server.operations import enforce_time_limits

        now = self.now()
        self.nodes.check_liveness(now)
        enforce_time_limits(self, now)
        return now

    def _end_tick(
        self, now: float, update_duration: float, *, commit: bool = True, history: bool = True
    ) -> None:
        self.orchid_changed()
        self.last_update_duration = update_duration
        if history:
            self.history.record(now)
        self.metrics.observe_update(self.last_update_duration)
        self.last_update_time = now
        self.persist_volumes()
        if commit:
            self.store.commit()
        if self.collector is not None:
            self.collector.maintain()

    def persist_volumes(self) -> None:
        """Integral volumes of every pool that has one (so a restart keeps them)."""
        with self.store.transaction():
            for name, tree in self.trees.trees.items():
                volumes = {
                    pool.name: (
                        list(pool.accumulated_resource_volume),
                        pool.last_integral_share_ratio,
                    )
                    for pool in tree.root.descendants()
                    if not pool.is_ephemeral
                    and (any(pool.accumulated_resource_volume) or pool.last_integral_share_ratio)
                }
                self.store.save_volumes(name, volumes)

    def instances(self) -> dict[str, Any]:
        """``//sys/scheduler/instances``: every instance sharing the store, with its role.

        On SQLite there is one instance, this one, and it leads."""
        rows = self.store.instances()
        if not rows:
            address = self.config.address or "local"
            return {address: {"role": "leader", "address": address, "engine": self.store.engine}}
        return {
            row["address"]: {**row, "engine": self.store.engine, "last_seen": iso(row["last_seen"])}
            for row in rows
        }

    def orchid(self) -> dict[str, Any]:
        """The whole orchid of the current version (shared: do not modify it)."""
        return self.orchid_cache.full()

    def orchid_changed(self) -> None:
        """An update ended or a command changed the model: orchid reads see it from now."""
        self.orchid_cache.invalidate()
