"""The simulation loop: the real scheduler driven by simulated nodes in virtual time.

Nothing here decides anything about scheduling.  The loop feeds the very same
:class:`~ytsched.scheduling.Scheduler` and :class:`~ytsched.pooltree.PoolTrees` that the
service uses with what a cluster would produce, in time order:

* every ``fair_share_update_period``: ``Scheduler.update(now)``, then the pool series are
  sampled;
* every node heartbeats every ``heartbeat_period`` at its own random (seeded) phase, as in
  YTsaurus's simulator: it reports the jobs that ended since its last heartbeat and runs what
  the answer says (start, interrupt with a timeout, abort);
* jobs end when their work is done, when they finish after an interruption signal, or at their
  interruption deadline (aborted); aborted and interrupted jobs return to pending in the pool
  trees and are started again later;
* operations start at their scenario time (admitted, pending, or refused) and finish when the
  trees say so (last job completed, or a scenario action);
* timed scenario actions change pools, trees, operations and nodes.

Everything observable goes to a :class:`Recorder` (event log, orchid snapshots) and into the
:class:`SimulationResult` (operation records, pool series, counters).  Same scenario and seed:
the same calls in the same order, hence identical outputs.
"""

from __future__ import annotations

import gc
import math
import random
from collections.abc import Callable, Iterable
from heapq import heappop
from typing import Any

from ytsched.errors import YtschedError
from ytsched.pooltree import effective
from ytsched.pooltree.operations import OperationState
from ytsched.resources import CPU_INDEX, RESOURCE_NAMES, Vector
from ytsched.scheduling import (
    AbortJob,
    InterruptionReason,
    InterruptJob,
    JobOutcome,
    Scheduler,
    StartJob,
)
from ytsched.simulator import events
from ytsched.simulator.cluster import SimJob, SimNode, build_pool_trees, node_addresses
from ytsched.simulator.controller import ERROR_CODE as CHECK_ERROR_CODE
from ytsched.simulator.controller import failure_message, survey
from ytsched.simulator.events import EventQueue
from ytsched.simulator.limits import check_run
from ytsched.simulator.results import (
    Counters,
    NullRecorder,
    Recorder,
    SimulationResult,
)
from ytsched.simulator.ring import NodeRing, first_tick, tick_time
from ytsched.simulator.scenario import (
    MS,
    AbortOperation,
    AddNodes,
    CompleteOperation,
    MovePool,
    NodeGroup,
    OperationPlan,
    RemoveNodes,
    RestartScheduler,
    Scenario,
    SetPoolAttribute,
    UpdateNodes,
    UpdateOperationParameters,
    UpdateTreeConfig,
)
from ytsched.simulator.timeseries import Sampler
from ytsched.simulator.workload import OperationRecord, OperationWork, prepare

PREEMPTION_REASONS = frozenset(
    {
        InterruptionReason.PREEMPTION,
        InterruptionReason.AGGRESSIVE_PREEMPTION,
        InterruptionReason.GRACEFUL_PREEMPTION,
        InterruptionReason.RESOURCE_LIMITS_VIOLATED,
    }
)
"""Reasons that count as a preemption of the job (``preempted_job_count``)."""


COLLECT_EVERY_UPDATES = 720
"""While a run lasts, the cyclic garbage collector runs only every this many fair-share updates
(a full collection), instead of at allocation thresholds and after every update."""

ProgressCallback = Callable[[float, float], None]
"""Called with (now, end time) after every fair-share update."""


class Simulation:
    """One run of a scenario (see the module docstring)."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        recorder: Recorder | None = None,
        seed: int | None = None,
        until: float | None = None,
        orchid_period: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.end_time = scenario.duration if until is None else until
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        self.recording_events = not isinstance(self.recorder, NullRecorder)
        """Build job event records at all (the two per job are most of the events)."""
        self.progress = progress
        document = scenario.document
        self.orchid_period = document.orchid_period / MS if orchid_period is None else orchid_period
        check_run(self.end_time, self.orchid_period, "until" if until is not None else "duration")
        self.heartbeat_period = document.cluster.heartbeat_period / MS
        self.trees = build_pool_trees(scenario)
        self.update_period = self.trees.strategy.fair_share_update_period / MS
        self.scan_period = self.trees.strategy.pending_by_pool_operation_scan_period / MS
        self.scheduler = Scheduler(self.trees)
        self.queue = EventQueue()
        self.phases = random.Random(f"{self.seed}/heartbeat-phases")
        self.nodes: dict[str, SimNode] = {}
        self.ring = NodeRing(self.heartbeat_period)
        self.park_idle_nodes = True
        """Skip heartbeats that cannot do anything (exact; switchable for tests)."""
        self.levels: dict[str, int] = {}
        self.levels_version = 0
        """Changes whenever :attr:`levels` do."""
        """``Scheduler.heartbeat_levels`` after the last event that could change them."""
        self.heartbeats_run = 0
        self.collect_garbage = False
        self.freeze_survivors = False
        """Freeze what survives each of the run's collections (see :meth:`run`)."""
        """Heartbeats actually run (``counters.heartbeats`` counts the skipped ones too)."""
        self.sweep_generation = 0
        self.sweep_position: tuple[int, int] | None = None
        self.actions_since_update = False
        self.node_online_since: dict[str, float] = {}
        self._online_addresses: tuple[str, ...] | None = None
        """The online nodes' addresses in :attr:`nodes` order (``None``: to build again; nodes
        join and leave only in ``_add_nodes`` and ``_remove_nodes``)."""
        self.group_sizes: dict[str, int] = {}
        self.works: dict[str, OperationWork] = {}
        self.records: dict[str, OperationRecord] = {}
        self.pending: dict[str, None] = {}
        """Operations waiting for a running-operation limit (insertion-ordered)."""
        self.counters = Counters()
        self.sampler = Sampler(
            int(self.end_time / self.update_period) + 1,
            traced_operations=frozenset(document.trace_operations),
        )
        self.now = 0.0
        controller = document.controller_agent
        self.exec_nodes_check_period = (
            controller.available_exec_nodes_check_period / MS
            if controller.enable_available_exec_nodes_check
            else None
        )
        """Period of the controller's available-exec-nodes check (None: off)."""
        self.scheduler_connected_at = 0.0
        self._spec_waiting_timeouts: bool | None = None
        self.waiting_timeouts = self._waiting_timeouts_configured()
        """Some tree or operation sets a node-side waiting timeout (else jobs never wait)."""

    # --- setup -----------------------------------------------------------------------------

    def _schedule_initial_events(self) -> None:
        for group in self.scenario.document.cluster.node_groups:
            self._add_nodes(group, at=0.0)
        for plan in self.scenario.operations:
            self.records[plan.id] = OperationRecord(
                id=plan.id,
                user=plan.user,
                start_time=plan.start_time,
                job_count=sum(task.job_count for task in plan.spec.tasks.values()),
            )
            if plan.start_time <= self.end_time:
                self.queue.push(plan.start_time, events.OPERATION_START, plan)
        for index, action in enumerate(self.scenario.document.actions):
            if action.time / MS <= self.end_time:
                self.queue.push(action.time / MS, events.ACTION, index)
        self.queue.push(0.0, events.FAIR_SHARE_UPDATE)
        self.queue.push(self.scan_period, events.PENDING_SCAN)
        if self.orchid_period > 0:
            self.queue.push(0.0, events.ORCHID)

    def _add_nodes(self, group: NodeGroup, at: float) -> None:
        first = self.group_sizes.get(group.name, 0)
        self._online_addresses = None
        limits = group.resource_limits.to_vector(0.0)
        tags = frozenset(group.tags)
        for index, address in node_addresses(group, first):
            phase = self.phases.uniform(0.0, self.heartbeat_period)
            node = SimNode(address, group.name, index, limits, tags, phase)
            node.next_tick = first_tick(node, at, self.heartbeat_period)
            self.ring.add(node, len(self.nodes))
            self.nodes[address] = node
            self.node_online_since[address] = at
            self.trees.register_node(
                address, tags=group.tags, resource_limits=group.resource_limits
            )
            self.queue.push(
                tick_time(node, node.next_tick, self.heartbeat_period), events.HEARTBEAT, node
            )
            self._event("node_added", node=address, group=group.name)
        self.group_sizes[group.name] = first + group.count

    # --- the loop --------------------------------------------------------------------------

    def run(self) -> SimulationResult:
        """Run to the end time.  The cyclic garbage collector is paused meanwhile and runs a
        full collection every :data:`COLLECT_EVERY_UPDATES` updates: a run keeps a few hundred
        thousand long-lived objects, which the collector's automatic young-generation passes
        (and the one after every update, see ``Scheduler.update``) would walk again and
        again for little garbage (the scheduler breaks the cycles of replaced state itself).
        That took ~10% of a run; collecting rarely changes nothing else.

        What survives a collection is moved to the permanent generation (``gc.freeze``), so
        that the next one walks only what was created since instead of every job the run
        ever started (such collections grew to ~0.2 s each over a day).  Frozen objects are
        still freed by reference counting; only a cycle among them would outlive the run's
        collections, and runs measured find none (the replaced scheduling state's cycles are
        broken where it is replaced).  The run unfreezes them at its end; a caller that froze
        objects itself keeps the plain collections (its frozen set is left alone).
        """
        collecting = gc.isenabled()
        self.freeze_survivors = collecting and gc.get_freeze_count() == 0
        gc.disable()
        try:
            return self._run(collecting)
        finally:
            if self.freeze_survivors:
                gc.unfreeze()
            if collecting:
                gc.enable()

    def _run(self, collecting: bool) -> SimulationResult:
        self.collect_garbage = collecting
        self._schedule_initial_events()
        queue = self.queue
        heap = queue.heap
        end = self.end_time
        while heap:
            time, kind, _, payload = heappop(heap)
            if time > end:
                break
            self.now = time
            if kind == events.HEARTBEAT:
                if type(payload) is int:
                    self._sweep(payload)
                else:
                    self._heartbeat(payload)
            elif kind == events.JOB_END:
                self._job_end(*payload)
            elif kind == events.FAIR_SHARE_UPDATE:
                self._update()
            elif kind == events.OPERATION_START:
                self._start_operation(payload)
                self._refresh_levels()
            elif kind == events.ACTION:
                self._action(payload)
            elif kind == events.PENDING_SCAN:
                self.trees.scan_pending_operations(now=time)
                self._check_pending()
                self._refresh_levels()
                queue.push(time + self.scan_period, events.PENDING_SCAN)
            elif kind == events.ORCHID:
                self._account_all(including_now=True)
                self._orchid()
            elif kind == events.CONTROLLER_CHECK:
                self._check_exec_nodes(payload)
        self.now = end
        self._account_all(including_now=True)
        self._finish()
        return SimulationResult(
            scenario=self.scenario,
            seed=self.seed,
            end_time=end,
            operations=list(self.records.values()),
            sampler=self.sampler,
            counters=self.counters,
            trees=self.trees,
            scheduler=self.scheduler,
        )

    def _event(self, event_type: str, **fields: Any) -> None:
        self.recorder.event({"time": self.now, "event_type": event_type, **fields})

    # --- periodic --------------------------------------------------------------------------

    def _update(self) -> None:
        if self.actions_since_update:
            # Skipped heartbeats before this update ran with the state an action may have
            # changed (a tree's config, a node's tree) and this update replaces.
            self._account_all(including_now=False)
            self.actions_since_update = False
        self.scheduler.update(self.now)
        self._refresh_levels(force=True)
        if (
            self.collect_garbage
            and self.counters.fair_share_updates % COLLECT_EVERY_UPDATES == 0
            and self.now < self.end_time
        ):
            # (Not in an update at the end time: the run returns right after it, and what a
            # collection then frees is freed as well by the caller's collector, for which
            # ``run`` re-enables it; it walked everything since the last one, ~1% of a run.)
            gc.collect()
            if self.freeze_survivors:
                gc.freeze()
        self.counters.fair_share_updates += 1
        self.sampler.sample(self.now, self.trees)
        if self.progress is not None:
            self.progress(self.now, self.end_time)
        self.queue.push(self.now + self.update_period, events.FAIR_SHARE_UPDATE)

    def _orchid(self) -> None:
        orchid = self.scheduler.orchid()
        self.recorder.orchid({"time": self.now, "pool_trees": orchid.get("pool_trees", {})})
        self.queue.push(self.now + self.orchid_period, events.ORCHID)

    # --- heartbeats ------------------------------------------------------------------------

    def _heartbeat(self, node: SimNode) -> None:
        """The queued heartbeat of an awake node (parked instead when it became idle since it
        was queued: the scheduling state fell to a lower level)."""
        if not node.online:
            return
        if (
            self.park_idle_nodes
            and not node.finished
            and node.awake_levels != self.levels_version
            and not node.changed
            and not self.scheduler.heartbeat_would_act(node.address, self.levels)
        ):
            node.parked = True
            return
        self._beat(node, node.next_tick)

    def _beat(self, node: SimNode, k: int) -> None:
        """The node's ``k``-th heartbeat (at ``now``) runs."""
        if k > node.next_tick:
            self._account_skipped(node, k)
        node.next_tick = k + 1
        node.changed = False
        self.heartbeats_run += 1
        now = self.now
        if node.finished:
            finished = tuple(node.finished)
            node.finished.clear()
        else:
            finished = ()
        trees = self.trees
        finishes = trees.finished_operation_count
        # A ``NodeHeartbeat``'s fields, positional: (address, now, resource_limits, tags,
        # running_job_ids, finished_jobs).
        response = self.scheduler.process_heartbeat_of(
            node.address, now, node.resource_limits, node.tags, tuple(node.running), finished
        )
        self.counters.heartbeats += 1
        if response.abort:
            for abort in response.abort:
                self._abort(node, abort)
        if response.interrupt:
            for interruption in response.interrupt:
                self._interrupt(node, interruption)
        for start in response.start:
            self._start_job(node, start)
        if finished and trees.finished_operation_count != finishes:
            # (Only an operation that finished in this heartbeat can need recording: one that
            # finished earlier was recorded where it finished.)
            self._check_finished(dict.fromkeys(job.operation_id for job in finished))
        levels = self._refresh_levels()
        if (
            self.park_idle_nodes
            and not node.finished
            and not self.scheduler.heartbeat_would_act(node.address, levels)
        ):
            node.parked = True
        else:
            # Until the levels change, the node keeps acting (only its own heartbeats and
            # job ends change what else ``heartbeat_would_act`` reads): no need to ask again.
            node.awake_levels = self.levels_version
            self.queue.push(
                tick_time(node, node.next_tick, self.heartbeat_period), events.HEARTBEAT, node
            )

    # --- idle heartbeats -------------------------------------------------------------------
    #
    # A heartbeat that reports nothing and whose scheduling stages would all return at their
    # first test changes only bookkeeping (``Scheduler.account_idle_heartbeats``).  After
    # each heartbeat that leaves its node in that position, the node is *parked*: no event
    # is queued for it, and its skipped heartbeats are accounted when it wakes (or before
    # anything reads them).  It wakes when
    #
    # * one of its jobs ends (the next heartbeat reports it);
    # * an operation with a job on it finishes (the heartbeat aborts the job);
    # * a scenario action runs (every node wakes);
    # * the scheduling state rises to a level at which its heartbeat could act
    #   (``Scheduler.heartbeat_levels``: placement on nodes with spare resources, or
    #   anything): one sweep walks the ring of nodes in heartbeat order from now and runs
    #   the heartbeat of each parked node that could act, at its own time.
    #
    # Every heartbeat that could act therefore runs at its time and in its order; the ones
    # skipped are exactly the idle ones.  ``park_idle_nodes = False`` runs them all.

    def _account_skipped(self, node: SimNode, stop: int) -> None:
        """Account the node's skipped (idle) heartbeats before its ``stop``-th."""
        if stop <= node.next_tick:
            # None skipped (a node woken by a job end within a period of its last heartbeat,
            # mostly): ``account_idle_heartbeats`` would change nothing and return 0.
            node.next_tick = stop
            return
        count = self.scheduler.account_idle_heartbeats(
            node.address, node.phase, node.next_tick, stop, self.heartbeat_period
        )
        self.counters.heartbeats += count
        node.next_tick = stop

    def _account_all(self, *, including_now: bool) -> None:
        """Account every parked node's skipped heartbeats before now, and those at now too
        when ``including_now`` (they run before an orchid snapshot, after an action or an
        update of the same instant)."""
        period = self.heartbeat_period
        for node in self.nodes.values():
            if node.parked and node.online:
                stop = first_tick(node, self.now, period, inclusive=not including_now)
                self._account_skipped(node, stop)

    def _wake(self, node: SimNode) -> None:
        """Queue a parked node's first heartbeat at or after now."""
        if not node.parked or not node.online:
            return
        k = first_tick(node, self.now, self.heartbeat_period)
        self._account_skipped(node, k)
        node.parked = False
        self.queue.push(tick_time(node, k, self.heartbeat_period), events.HEARTBEAT, node)

    def _refresh_levels(self, *, force: bool = False) -> dict[str, int]:
        """Re-read the heartbeat levels; when one rose (or ``force``, after an update replaced
        the state), start a sweep from now."""
        levels = self.scheduler.heartbeat_levels()
        previous = self.levels
        self.levels = levels
        # (Runs after every heartbeat: the dicts are compared once, and only a change is
        # looked at per tree.)
        rose = False
        if levels != previous:
            self.levels_version += 1
            rose = any(level > previous.get(name, 0) for name, level in levels.items())
        if rose or (force and any(levels.values())):
            self._start_sweep()
        return levels

    def _start_sweep(self) -> None:
        self.sweep_generation += 1
        self.sweep_position = None
        if not self.park_idle_nodes or not self.ring.nodes:
            return
        self._continue_sweep(self.ring.start(self.now))

    def _continue_sweep(self, position: tuple[int, int]) -> None:
        """Queue the sweep at the first parked node from ``position`` (in heartbeat order,
        one period at most) whose heartbeat could act now; none: the sweep ends."""
        if not any(self.levels.values()):
            return
        nodes = self.ring.nodes
        would_act = self.scheduler.heartbeat_would_act
        levels = self.levels
        k, index = position
        count = len(nodes)
        for _ in range(count):
            node = nodes[index]
            if (
                node.parked
                and node.online
                and node.next_tick <= k
                and would_act(node.address, levels)
            ):
                self.sweep_position = (k, index)
                self.queue.push(
                    tick_time(node, k, self.heartbeat_period),
                    events.HEARTBEAT,
                    self.sweep_generation,
                )
                return
            # ``ring.next_position(k, index)`` inline: the next node, wrapping to the next
            # period
            index += 1
            if index == count:
                k += 1
                index = 0

    def _sweep(self, generation: int) -> None:
        """The sweep reached its node's heartbeat time."""
        if generation != self.sweep_generation or self.sweep_position is None:
            return
        k, index = self.sweep_position
        node = self.ring.nodes[index]
        if (
            node.parked
            and node.online
            and node.next_tick <= k
            and self.scheduler.heartbeat_would_act(node.address, self.levels)
        ):
            node.parked = False
            self._beat(node, k)
        if generation == self.sweep_generation:
            self._continue_sweep(self.ring.next_position(k, index))

    def _start_job(self, node: SimNode, start: StartJob) -> None:
        now = self.now
        operation_id = start.operation_id
        job_id = start.job_id
        task = start.task
        live = self.trees.operations[operation_id].jobs[job_id]
        index = live.index
        # ``OperationWork.attempt_duration`` inline (once per job start)
        duration = self.works[operation_id].tasks[task].remaining[index]
        end_time = now + duration
        # Positional: (id, operation_id, task, index, node, resources, start_time, end_time,
        # work_end_time).
        job = SimJob(
            job_id, operation_id, task, index, node, start.resources, now, end_time, end_time
        )
        node.running[job_id] = job
        waits = self.waiting_timeouts and self._wait_for_resources(node, job, live.tree)
        if not waits and end_time != _INFINITY:
            self.queue.push(end_time, events.JOB_END, (job, job.token))
        record = self.records[operation_id]
        record.started_job_count += 1
        if record.first_job_time is None:
            record.first_job_time = now
        self.counters.jobs_started += 1
        if not self.recording_events:
            return
        self._event(
            "job_started",
            operation_id=start.operation_id,
            job_id=start.job_id,
            task=start.task,
            node=node.address,
            resources=_resources(start.resources),
            duration=None if math.isinf(duration) else duration,
        )

    # --- waiting for resources on the node --------------------------------------------------

    def _waiting_timeouts_configured(self) -> bool:
        """Could any job wait on its node?  Re-read after every action (a tree's config may
        have changed); the operations' specs do not change, so they are read once."""
        if self._spec_waiting_timeouts is None:
            self._spec_waiting_timeouts = any(
                plan.engine_spec.waiting_job_timeout is not None
                for plan in self.scenario.operations
            )
        return self._spec_waiting_timeouts or any(
            tree.config.waiting_for_resources_on_node_timeout is not None
            or any(
                pool.effective.waiting_for_resources_on_node_timeout is not None
                for pool in tree.pools.values()
            )
            for tree in self.trees.trees.values()
        )

    def _waiting_timeout(self, operation_id: str, tree: str | None) -> float | None:
        """Seconds a job may wait on its node: the larger of the effective
        ``waiting_for_resources_on_node_timeout`` of the operation's pool (its own, an
        ancestor's or the tree's) and the spec's ``waiting_job_timeout``
        (``yt/yt/server/controller_agent/controllers/task.cpp`` puts the larger into the job
        spec); None: it does not wait, as before this option existed."""
        spec_timeout = self.works[operation_id].plan.engine_spec.waiting_job_timeout
        tree_timeout = None
        pool_tree = self.trees.trees.get(tree) if tree is not None else None
        if pool_tree is not None:
            entry = pool_tree.operations.get(operation_id)
            tree_timeout = (
                effective.waiting_for_resources_on_node_timeout(pool_tree.config, entry.pool)
                if entry is not None
                else pool_tree.config.waiting_for_resources_on_node_timeout
            )
        values = [value for value in (spec_timeout, tree_timeout) if value is not None]
        return max(values) / MS if values else None

    def _wait_for_resources(self, node: SimNode, job: SimJob, tree: str | None) -> bool:
        """Make a just-started job wait when the node's running jobs (preempted ones still
        finishing) leave too little for it; True when it waits."""
        timeout = self._waiting_timeout(job.operation_id, tree)
        if timeout is None or _fits(node, NOTHING):  # the job is already counted in
            return False
        job.waiting = True
        node.waiting_count += 1
        job.end_time = self.now + timeout
        job.outcome = JobOutcome.ABORTED
        job.token += 1
        self.queue.push(job.end_time, events.JOB_END, (job, job.token))
        self._event(
            "job_waiting",
            operation_id=job.operation_id,
            job_id=job.id,
            node=node.address,
            timeout=timeout,
        )
        return True

    def _start_waiting(self, node: SimNode) -> None:
        """Jobs that were waiting on the node and now fit start running, in arrival order."""
        for job in list(node.running.values()):
            if not job.waiting or not _fits(node, job.resources):
                continue
            job.waiting = False
            node.waiting_count -= 1
            duration = self.works[job.operation_id].attempt_duration(job.task, job.index)
            waited = self.now - job.start_time
            job.start_time = self.now
            job.end_time = job.work_end_time = self.now + duration
            job.outcome = JobOutcome.COMPLETED
            job.token += 1
            if not math.isinf(job.end_time):
                self.queue.push(job.end_time, events.JOB_END, (job, job.token))
            self._event(
                "job_resumed",
                operation_id=job.operation_id,
                job_id=job.id,
                node=node.address,
                waited=waited,
            )
            if not node.waiting_count:
                return

    def _interrupt(self, node: SimNode, message: InterruptJob) -> None:
        job = node.running.get(message.job_id)
        if job is None:
            return
        if job.waiting:
            # A job that has not started cannot finish gracefully: the node drops it.
            job.outcome = JobOutcome.ABORTED
            job.token += 1
            node.end(job, report=True)
            self._wake(node)
            self._job_aborted(
                job, message.reason.value, "interrupted while waiting for resources", lost=False
            )
            return
        work = self.works[job.operation_id]
        finish_after = None
        if job.signal_finish_time is None and (
            message.signal is not None or work.plan.type != "vanilla"
        ):
            finish_after = work.finish_after_interruption(job.task)
        first = job.interrupt_deadline is None
        job.interrupt(self.now, message.timeout, finish_after)
        job.interruption_reason = message.reason
        job.preempted_for = message.preempted_for_operation
        if not math.isinf(job.end_time):
            self.queue.push(job.end_time, events.JOB_END, (job, job.token))
        if first and message.reason in PREEMPTION_REASONS:
            self.records[job.operation_id].preempted_job_count += 1
        self.counters.interruptions[message.reason.value] += 1
        self._event(
            "job_interrupted",
            operation_id=job.operation_id,
            job_id=job.id,
            node=node.address,
            reason=message.reason.value,
            timeout=message.timeout,
            signal=message.signal,
            preempted_for=message.preempted_for_operation,
            preempted_for_job=message.preempted_for_job,
            starving_element=message.starving_element,
            explanation=message.explanation,
            expected_end=job.end_time,
            expected_outcome=job.outcome.value,
        )

    def _abort(self, node: SimNode, message: AbortJob) -> None:
        job = node.running.get(message.job_id)
        if job is None:
            return
        node.end(job, report=False)
        if message.preempted_for_operation is not None:
            job.preempted_for = message.preempted_for_operation
        if node.waiting_count:
            self._start_waiting(node)
        lost = message.reason is not InterruptionReason.OPERATION_FINISHED and not job.waiting
        if job.interrupt_deadline is None and message.reason in PREEMPTION_REASONS and lost:
            self.records[job.operation_id].preempted_job_count += 1
        if (
            job.signal_finish_time is not None
            and job.interrupt_deadline is not None
            and job.signal_finish_time <= job.interrupt_deadline
        ):
            self.counters.aborted_after_interruption_in_time += 1
        self._job_aborted(job, message.reason.value, message.explanation, lost=lost)

    def _job_end(self, job: SimJob, token: int) -> None:
        node = job.node
        if token != job.token or node.running.get(job.id) is not job:
            return
        node.end(job, True)  # (``report`` by position)
        if node.parked:
            self._wake(node)
        if node.waiting_count:
            self._start_waiting(node)
        if job.outcome is _ABORTED:
            if job.waiting:
                self._job_aborted(
                    job,
                    WAITING_TIMEOUT,
                    "the job waited for resources on its node longer than its waiting timeout",
                    lost=False,
                )
                return
            self._job_aborted(
                job,
                InterruptionReason.INTERRUPTION_TIMEOUT.value,
                "the job did not finish within its interruption timeout",
                lost=True,
            )
            return
        elapsed = self.now - job.start_time
        operation_id = job.operation_id
        self._account(job, elapsed)
        record = self.records[operation_id]
        work = self.works[operation_id]
        if job.interrupted:
            work.attempt_ended(job.task, job.index, elapsed, "interrupted")
            record.interrupted_job_count += 1
            self.counters.jobs_completed_after_interruption += 1
        else:
            work.attempt_ended(job.task, job.index, elapsed, "completed")
            record.completed_job_count += 1
            self.counters.jobs_completed += 1
        if not self.recording_events:
            return
        self._event(
            "job_completed",
            operation_id=job.operation_id,
            job_id=job.id,
            node=node.address,
            interrupted=job.interrupted,
            interruption_reason=(
                job.interruption_reason.value if job.interruption_reason is not None else None
            ),
            duration=elapsed,
        )

    def _job_aborted(self, job: SimJob, reason: str, explanation: str, *, lost: bool) -> None:
        elapsed = 0.0 if job.waiting else self.now - job.start_time
        self._account(job, elapsed)
        record = self.records[job.operation_id]
        record.aborted_job_count += 1
        if lost:
            record.lost_job_seconds += elapsed
            record.lost_cpu_seconds += elapsed * job.resources[CPU_INDEX]
            self.works[job.operation_id].attempt_ended(job.task, job.index, elapsed, "aborted")
        self.counters.jobs_aborted += 1
        self.counters.aborts[reason] += 1
        self._event(
            "job_aborted",
            operation_id=job.operation_id,
            job_id=job.id,
            node=job.node.address,
            reason=reason,
            explanation=explanation,
            preempted_for=job.preempted_for,
            interruption_reason=(
                job.interruption_reason.value if job.interruption_reason is not None else None
            ),
            interrupted_at=job.interrupt_time,
            interruption_deadline=job.interrupt_deadline,
            interruption_finish_time=job.signal_finish_time,
            lost_job_seconds=elapsed if lost else 0.0,
        )

    def _account(self, job: SimJob, elapsed: float) -> None:
        used = self.counters.used
        r = job.resources
        used[0] += r[0] * elapsed
        used[1] += r[1] * elapsed
        used[2] += r[2] * elapsed
        used[3] += r[3] * elapsed
        used[4] += r[4] * elapsed
        self.records[job.operation_id].job_seconds += elapsed

    # --- operations ------------------------------------------------------------------------

    def _start_operation(self, plan: OperationPlan) -> None:
        work = prepare(plan, self.seed)
        self.works[plan.id] = work
        record = self.records[plan.id]
        try:
            operation = self.trees.start_operation(
                plan.id,
                user=plan.user,
                spec=plan.engine_spec,
                operation_type=plan.type,
                now=self.now,
            )
        except YtschedError as error:
            record.state = "refused"
            record.error = f"{error.message} [{error.code}]"
            record.finish_time = self.now
            self._event(
                "operation_refused", operation_id=plan.id, error=error.message, code=error.code
            )
            return
        tree = operation.pool_trees[0]
        record.tree = tree
        record.pool = self.trees.trees[tree].operations[plan.id].pool.name
        record.state = operation.state.value
        reason = operation.transitions[-1].reason if operation.transitions else ""
        self._event(
            "operation_started",
            operation_id=plan.id,
            user=plan.user,
            state=operation.state.value,
            pool_trees=list(operation.pool_trees),
            pool=record.pool,
            reason=reason,
        )
        if operation.state is OperationState.PENDING:
            self.pending[plan.id] = None
        else:
            record.running_since = self.now
        if self.exec_nodes_check_period is not None:
            self.queue.push(
                self.now + self.exec_nodes_check_period, events.CONTROLLER_CHECK, plan.id
            )

    def _check_finished(self, operation_ids: Iterable[str]) -> None:
        any_finished = False
        for operation_id in operation_ids:
            operation = self.trees.operations.get(operation_id)
            record = self.records[operation_id]
            if operation is None or not operation.state.is_final:
                continue
            if record.finish_time is not None:
                continue
            record.state = operation.state.value
            record.finish_time = operation.finish_time
            self.pending.pop(operation_id, None)
            self._wake_nodes_of(operation_id)
            reason = operation.transitions[-1].reason if operation.transitions else ""
            self._event(
                "operation_finished",
                operation_id=operation_id,
                state=operation.state.value,
                reason=reason,
                pool=record.pool,
            )
            any_finished = True
        if any_finished:
            self._check_pending()

    def _wake_nodes_of(self, operation_id: str) -> None:
        """Nodes still running jobs of an operation that finished: their next heartbeat
        aborts those jobs."""
        operation = self.trees.operations.get(operation_id)
        if operation is None:
            return
        for job in operation.jobs.values():
            node = self.nodes.get(job.node) if job.node is not None else None
            if node is not None and job.id in node.running:
                self._wake(node)

    def _check_pending(self) -> None:
        """Operations that left ``pending`` (a running slot freed, a limit raised)."""
        for operation_id in list(self.pending):
            operation = self.trees.operations[operation_id]
            if operation.state is OperationState.PENDING:
                continue
            del self.pending[operation_id]
            record = self.records[operation_id]
            if operation.state is OperationState.RUNNING:
                record.state = "running"
                record.running_since = self.now
                tree = operation.pool_trees[0]
                record.pool = self.trees.trees[tree].operations[operation_id].pool.name
                self._event(
                    "operation_running",
                    operation_id=operation_id,
                    reason=operation.transitions[-1].reason,
                    pool=record.pool,
                )
            else:
                self._check_finished([operation_id])

    def _check_exec_nodes(self, operation_id: str) -> None:
        """The controller's periodic ``CheckAvailableExecNodes`` for one operation, until a
        suitable node is observed (a started job counts): see
        :mod:`ytsched.simulator.controller`."""
        operation = self.trees.operations.get(operation_id)
        record = self.records[operation_id]
        if operation is None or operation.state.is_final or record.first_job_time is not None:
            return
        period = self.exec_nodes_check_period
        assert period is not None
        controller = self.scenario.document.controller_agent
        online = self._online_addresses
        if online is None:
            online = tuple(address for address, node in self.nodes.items() if node.online)
            self._online_addresses = online
        if (
            self.now < self.scheduler_connected_at + controller.safe_scheduler_online_time / MS
            or len(online) < controller.safe_online_node_count
        ):
            self.queue.push(self.now + period, events.CONTROLLER_CHECK, operation_id)
            return
        found = survey(self.trees, operation, online)
        if found.found:
            return
        message = failure_message(operation)
        record.error = f"{message} [{CHECK_ERROR_CODE}]"
        self._event(
            "operation_check_failed",
            operation_id=operation_id,
            code=CHECK_ERROR_CODE,
            error=message,
            non_matching_filter_node_count=found.non_matching_filter_node_count,
            matching_but_insufficient_resources_node_count_per_task=(
                found.matching_but_insufficient_resources_node_count_per_task
            ),
        )
        self.trees.fail_operation(operation_id, now=self.now, reason=message)
        self._check_finished([operation_id])
        self._refresh_levels()

    # --- actions ---------------------------------------------------------------------------

    def _action(self, index: int) -> None:
        # An action may change what any heartbeat does: account the skipped ones under the
        # state they saw, and let every node beat again.
        self._account_all(including_now=False)
        self.actions_since_update = True
        try:
            self._apply_action(index)
        finally:
            for node in self.nodes.values():
                self._wake(node)
            self._refresh_levels(force=True)

    def _apply_action(self, index: int) -> None:
        action = self.scenario.document.actions[index]
        now = self.now
        trees = self.trees
        description = action.model_dump(mode="json", exclude={"time"})
        try:
            if isinstance(action, SetPoolAttribute):
                tree = trees.tree(action.tree or self._default_tree())
                tree.update_pool(action.pool, {action.attribute: action.value}, now=now)
            elif isinstance(action, UpdateTreeConfig):
                trees.update_tree_config(
                    action.tree or self._default_tree(), action.config, now=now
                )
            elif isinstance(action, UpdateOperationParameters):
                trees.update_operation_parameters(action.operation, action.parameters, now=now)
                operation = trees.operations[action.operation]
                tree_name = operation.pool_trees[0]
                self.records[action.operation].pool = (
                    trees.trees[tree_name].operations[action.operation].pool.name
                )
            elif isinstance(action, AbortOperation):
                trees.abort_operation(action.operation, now=now, reason="aborted by the scenario")
                self._check_finished([action.operation])
            elif isinstance(action, CompleteOperation):
                trees.complete_operation(
                    action.operation, now=now, reason="completed by the scenario"
                )
                self._check_finished([action.operation])
            elif isinstance(action, AddNodes):
                self._add_nodes(action.group, at=now)
            elif isinstance(action, RemoveNodes):
                self._remove_nodes(action.group, action.count)
            elif isinstance(action, UpdateNodes):
                self._update_nodes(action)
            elif isinstance(action, MovePool):
                tree = trees.tree(action.tree or self._default_tree())
                tree.move_pool(action.pool, action.parent, now=now)
            elif isinstance(action, RestartScheduler):
                self._restart_scheduler()
        except YtschedError as error:
            self.counters.actions_failed += 1
            self._event(
                "action_failed",
                action_index=index,
                action=description,
                error=error.message,
                code=error.code,
            )
            return
        self.counters.actions_applied += 1
        self.waiting_timeouts = self._waiting_timeouts_configured()
        self._event("action_applied", action_index=index, action=description)
        self._check_pending()

    def _default_tree(self) -> str:
        default = self.trees.default_tree
        assert default is not None, "validated by the scenario loader"
        return default

    def _remove_nodes(self, group: str, count: int | None) -> None:
        online = [n for n in self.nodes.values() if n.group == group and n.online]
        online.sort(key=lambda n: n.index, reverse=True)
        victims = online if count is None else online[:count]
        self._online_addresses = None
        for node in victims:
            self.trees.unregister_node(node.address)
            node.online = False
            self._close_capacity(node)
            for job in list(node.running.values()):
                node.end(job, report=False)
                self._job_aborted(job, "node_removed", "the node left the cluster", lost=True)
            self._event("node_removed", node=node.address, group=group)

    def _update_nodes(self, action: UpdateNodes) -> None:
        """New tags and/or limits, as the nodes' next heartbeats report them.  A node that
        changes trees has its jobs aborted by the trees (``node_changed_tree``); a node now
        above its limits has jobs preempted by its next heartbeat, as YTsaurus does."""
        if action.node is not None:
            node = self.nodes.get(action.node)
            if node is None or not node.online:
                raise YtschedError(
                    "NoSuchNode", f"node {action.node!r} is not online", node=action.node
                )
            targets = [node]
        else:
            online = [n for n in self.nodes.values() if n.group == action.group and n.online]
            online.sort(key=lambda n: n.index, reverse=True)
            targets = online if action.count is None else online[: action.count]
        for node in targets:
            self._close_capacity(node)
            if action.tags is not None:
                node.tags = frozenset(action.tags)
                self.trees.set_node_tags(node.address, action.tags)
            if action.resource_limits is not None:
                node.resource_limits = action.resource_limits.to_vector(0.0)
                self.trees.set_node_resource_limits(node.address, action.resource_limits)
            self.node_online_since[node.address] = self.now
            node.changed = True
            pool_node = self.trees.nodes[node.address]
            self._event(
                "node_updated",
                node=node.address,
                group=node.group,
                tags=sorted(node.tags),
                resource_limits=_resources(node.resource_limits),
                tree=pool_node.tree,
            )

    def _restart_scheduler(self) -> None:
        """A new scheduler revives from what outlives the process (YTsaurus's
        ``yt/yt/server/scheduler/scheduler.cpp`` revival: operations from Cypress, the
        strategy's persistent state with integral volumes, allocations re-registered by
        node heartbeats): the pool trees stay, the in-memory scheduling state (allocations
        ledger, starvation timers, preemptible lists, node states, tentative-tree saturation)
        is rebuilt.  Running jobs are adopted in start order, so the preemptible lists come
        out as before, and the revived scheduler runs its first fair-share update before any
        heartbeat."""
        for operation in self.trees.operations.values():
            # the strategy's per-operation controller (tentative-tree saturation) is in memory
            operation.tentative_saturation_times.clear()
        fast_path = self.scheduler.fast_path
        self.scheduler = Scheduler(self.trees)
        self.scheduler.fast_path = fast_path
        self.scheduler_connected_at = self.now
        adopted = self.scheduler.adopt_running_jobs()
        self.scheduler.update(self.now)
        self._event("scheduler_restarted", adopted_jobs=adopted)

    def _close_capacity(self, node: SimNode) -> None:
        since = self.node_online_since.pop(node.address, None)
        if since is None:
            return
        capacity = self.counters.capacity
        for index, amount in enumerate(node.resource_limits):
            capacity[index] += amount * (self.now - since)

    # --- end -------------------------------------------------------------------------------

    def _finish(self) -> None:
        """Account the work in flight and the capacity of the nodes still online."""
        for node in self.nodes.values():
            if node.online:
                self._close_capacity(node)
            for job in node.running.values():
                if not job.waiting:
                    self._account(job, self.now - job.start_time)


WAITING_TIMEOUT = "waiting_timeout"
"""Abort reason of a job the node aborted after waiting too long for resources
(``EAbortReason::WaitingTimeout``, from the node's ``WaitingJobTimeout`` error)."""


NOTHING: Vector = (0.0, 0.0, 0.0, 0.0, 0.0)

_ABORTED = JobOutcome.ABORTED
"""A module constant (an Enum class attribute costs ``EnumType.__getattr__``'s slot)."""

_INFINITY = math.inf
"""A job that never ends on its own has this end time (``now + inf``; durations are never
NaN: the scenario validates them)."""


def _fits(node: SimNode, resources: Vector) -> bool:
    """Do the node's running jobs plus ``resources`` stay within its limits?"""
    usage = node.usage()
    limits = node.resource_limits
    return all(usage[i] + resources[i] <= limits[i] + 1e-9 for i in range(5))


def _resources(vector: Vector) -> dict[str, float]:
    return {name: vector[i] for i, name in enumerate(RESOURCE_NAMES) if vector[i]}


def simulate(
    scenario: Scenario,
    *,
    recorder: Recorder | None = None,
    seed: int | None = None,
    until: float | None = None,
    orchid_period: float | None = None,
    progress: ProgressCallback | None = None,
) -> SimulationResult:
    """Run ``scenario`` and return what happened."""
    return Simulation(
        scenario,
        recorder=recorder,
        seed=seed,
        until=until,
        orchid_period=orchid_period,
        progress=progress,
    ).run()
