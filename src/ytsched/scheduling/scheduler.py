"""The scheduler: node heartbeats in, decisions out, over a set of pool trees.

:class:`Scheduler` wraps :class:`~ytsched.pooltree.trees.PoolTrees` and keeps the scheduling
state YTsaurus keeps in its strategy and node shards: allocations per node, starvation
timestamps per element, the last preemptive scheduling time per node and the interruptions in
flight with their deadlines.  It is pure and deterministic: time is the ``now`` of each call.

* :meth:`Scheduler.update` runs the fair-share update of every tree (``PoolTrees.update``),
  then the scheduling post-update: starvation statuses, preemptible lists, selectors.  Call it
  every ``fair_share_update_period``; operations started since the last update are not
  scheduled until the next one (they are not in the tree snapshot yet, as in YTsaurus).
* :meth:`Scheduler.process_heartbeat` handles one node heartbeat in the order of
  ``TSchedulingPolicy::DoProcessSchedulingHeartbeat`` (``yt/yt/server/scheduler/strategy/
  policy/scheduling_policy_detail.cpp``) and of the node shard around it: register an unknown
  node; apply the jobs it reports finished; drop jobs it no longer runs; abort interrupted jobs
  past their deadline; the graceful pass; the regular stage; the preemptive stages (per-node
  backoff); aborts of a node that stays over its limits.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ytsched.config.resources import ResourceAmounts
from ytsched.config.strategy import StrategyConfig
from ytsched.errors import YtschedError
from ytsched.fairshare import native
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree.operations import WAITING_EMPTINESS_CHANGES, JobState, OperationState
from ytsched.pooltree.snapshot import apply_result, update_snapshot
from ytsched.pooltree.trees import PoolTrees
from ytsched.resources import RESOURCE_NAMES, Vector
from ytsched.scheduling import orchid
from ytsched.scheduling.api import (
    AbortJob,
    FinishedJob,
    HeartbeatResponse,
    InterruptionReason,
    JobOutcome,
    NodeHeartbeat,
    heartbeat_response,
)
from ytsched.scheduling.context import HeartbeatContext, Outbox, abort_job
from ytsched.scheduling.graceful import preempt_gracefully
from ytsched.scheduling.ledger import Ledger
from ytsched.scheduling.nodes import Allocation, NodeState
from ytsched.scheduling.placement import DeactivationReason, run_regular_stage
from ytsched.scheduling.post_update import build_tree_state
from ytsched.scheduling.post_update_aside import OPERATIONS_PER_SLICE, AsideBuild
from ytsched.scheduling.preemptible import (
    PreemptionStatus,
    preemption_sort_key,
)
from ytsched.scheduling.preemption import preemptive_scheduling_due, run_preemptive_stages
from ytsched.scheduling.satisfaction import RESOURCE_EPSILON, fits
from ytsched.scheduling.selector import vsub, walk_passes
from ytsched.scheduling.state import ScheduledOperation, TreeState

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree

MS = 1000.0

_JOB_RUNNING = JobState.RUNNING
_COMPLETED = JobOutcome.COMPLETED
_OP_RUNNING = OperationState.RUNNING
"""Module constants for ``_apply_finished`` (an Enum class attribute costs
``EnumType.__getattr__``'s slot, for every job that ends)."""

_EMPTY_RESPONSE = HeartbeatResponse()
"""The answer of a heartbeat that decided nothing (immutable, shared)."""


class Scheduler:
    """Heartbeat scheduling over :class:`PoolTrees` (see the module docstring)."""

    incremental_update = True
    """Let updates reuse what provably did not change since the last one (exact; see
    :func:`build_tree_state` and :meth:`_reconcile_all`); ``False`` for tests to compare."""

    def __init__(self, trees: PoolTrees) -> None:
        self.trees = trees
        self.ledger = Ledger(trees)
        self.last_update_time: float | None = None
        self.clock = 0.0
        """The latest time any call gave (``explain_operation`` measures waiting against it)."""
        self.fast_path = True
        """Answer heartbeats whose scheduling stages cannot do anything without running them
        (see :meth:`_stages_idle`; exact, switchable for tests)."""
        self._min_spare_source: ResourceAmounts | None = None
        self._validated_limits: dict[str, Vector] = {}
        """Per node, the ``resource_limits`` tuple of a heartbeat that passed validation: a
        later heartbeat passing that very (immutable) tuple needs no second check of it."""
        self._min_spare_vector: Vector = (0.0, 0.0, 0.0, 0.0, 0.0)

    # --- fair-share update -----------------------------------------------------------------

    def update(self, now: float) -> dict[str, UpdateResult]:
        """Fair-share update of every tree at ``now``, then starvation and preemptible lists.

        The same as :meth:`begin_update` followed at once by :meth:`finish_update`, with the
        cyclic garbage collector paused (see :func:`collector_paused`).
        """
        with collector_paused():
            # Nothing runs between the two halves here, so the structure cannot change in
            # between: the pending update carries none to check (see :meth:`finish_update`).
            return self.finish_update(self._compute(now, with_structure=False))

    def begin_update(self, now: float) -> PendingUpdate:
        """The fair-share computation of an update, not yet visible to heartbeats.

        Heartbeats may run between this and :meth:`finish_update` (the service lets them,
        so that no heartbeat waits for a whole update): they keep scheduling with the previous
        state, as YTsaurus's node shards do while the fair-share update runs on its own pool.
        """
        return self._compute(now, with_structure=True)

    def reconcile(self) -> None:
        """The first step of an update run in steps (:meth:`snapshot_update`): drop the
        allocations of jobs the pool trees ended (:meth:`_reconcile_all`)."""
        self._reconcile_all()

    def snapshot_update(self, now: float) -> UpdateInputs:
        """:meth:`begin_update` in steps, for a caller that runs the engine elsewhere: after
        :meth:`reconcile`, the engine input of every tree at ``now``.  The caller computes
        each with ``run_update`` (pure: it may run in a worker thread while heartbeats change
        the live trees) and passes the results to :meth:`adopt_results`.  The structure is
        recorded now, with the input: :meth:`finish_update` computes again if it changed."""
        trees = self.trees
        trees.clock = max(trees.clock, now)
        return UpdateInputs(
            now=now,
            snapshots={
                name: update_snapshot(tree, now, trees.tree_resource_limits(name))
                for name, tree in trees.trees.items()
            },
            replaced=[tree.last_result for tree in trees.trees.values()],
            structure=tree_shapes(trees),
        )

    def adopt_results(
        self, inputs: UpdateInputs, results: dict[str, UpdateResult]
    ) -> PendingUpdate:
        """The end of :meth:`begin_update` in steps: keep the integral volumes and results
        computed on ``inputs`` (a tree removed meanwhile is skipped: :meth:`finish_update`
        sees the changed set of trees and computes again)."""
        for name, result in results.items():
            tree = self.trees.trees.get(name)
            if tree is not None:
                apply_result(tree, inputs.now, result)
        return PendingUpdate(inputs.now, results, inputs.replaced, inputs.structure)

    def _compute(self, now: float, *, with_structure: bool) -> PendingUpdate:
        """:meth:`begin_update`; the structure :meth:`finish_update` checks is recorded only
        ``with_structure`` (``None`` tells it that nothing can have changed in between)."""
        self._reconcile_all()
        replaced = [tree.last_result for tree in self.trees.trees.values()]
        results = self.trees.update(now)
        structure = (
            {name: _structure(self.trees.trees[name]) for name in results}
            if with_structure
            else None
        )
        return PendingUpdate(now, results, replaced, structure)

    def finish_update(self, pending: PendingUpdate) -> dict[str, UpdateResult]:
        """Build the scheduling state (starvation, preemptible lists, selectors) from a
        computation of :meth:`begin_update`.

        The state is built from the live trees with the computed shares looked up by name, so
        it needs a result computed on the same structure: when a pool or operation appeared,
        moved or left, or a tree's config or the set of trees changed in between, the
        computation is done again first (at the same ``now``: integral volumes do not move
        twice).  Changes of usage in between need nothing: the state reads live usage.
        """
        trees = self.trees.trees
        structure = pending.structure
        if structure is not None and (
            set(trees) != set(structure)
            or any(_structure(trees[name]) != shape for name, shape in structure.items())
        ):
            again = self.begin_update(pending.now)
            again.replaced = [*pending.replaced, *again.replaced]
            pending = again
        now = pending.now
        results = pending.results
        ledger = self.ledger
        for name, result in results.items():
            ledger.tree_states[name] = build_tree_state(
                trees[name],
                result,
                now,
                ledger.records.setdefault(name, {}),
                ledger.starvation.setdefault(name, {}),
                ledger.tree_states.get(name),
                incremental=self.incremental_update,
            )
        for name in [n for n in ledger.tree_states if n not in results]:
            ledger.tree_states.pop(name).dispose()
        current = {id(result) for result in results.values()}
        for replaced in pending.replaced:
            if replaced is not None and id(replaced) not in current:
                _unlink(replaced)
        self.last_update_time = now
        self.clock = max(self.clock, now)
        return results

    def finish_update_aside(
        self, pending: PendingUpdate, operations_per_slice: int = OPERATIONS_PER_SLICE
    ) -> AsideUpdate:
        """:meth:`finish_update` for a caller that serves requests while the state is built:
        run :meth:`AsideUpdate.steps` (requests may be served at every step), then
        :meth:`AsideUpdate.publish` (one short step), then :meth:`AsideUpdate.cleanup`.

        Every tree's state is built aside (:class:`AsideBuild`: heartbeats keep the previous
        one until publication) from the live trees with the computed shares, so the structure
        must stay what it was when they were computed: ``publish`` refuses (returns ``False``,
        nothing changed) when it did not, and the caller computes again.  The simulator keeps
        :meth:`update`, which reuses the replaced state's objects instead (cheaper when
        nothing needs to run in between)."""
        ledger = self.ledger
        builds = {
            name: AsideBuild(
                self.trees.trees[name],
                result,
                pending.now,
                ledger.records.setdefault(name, {}),
                ledger.starvation.setdefault(name, {}),
                ledger.tree_states.get(name),
                operations_per_slice=operations_per_slice,
            )
            for name, result in pending.results.items()
            if name in self.trees.trees
        }
        return AsideUpdate(self, pending, builds)

    def _reconcile_all(self) -> None:
        """Drop allocations whose jobs the pool trees ended (operation finished or aborted,
        node moved or removed); their nodes are told to abort them at the next heartbeat.

        Such allocations are rare (heartbeats drop the allocations of the jobs they end at
        once): each node counts its allocations' ended jobs (``NodeState.ended_watch``), and
        the ledger their sum, so most updates see at once that there are none; otherwise
        every node is scanned as before, in order.
        """
        if self.incremental_update and not self.ledger.ended_watch.ended:
            return
        for node in self.ledger.nodes.values():
            for allocation in list(node.allocations.values()):
                if allocation.job.state is not JobState.RUNNING:
                    reason, explanation = self._ended_elsewhere(allocation)
                    node.pending_aborts.append(
                        (allocation.operation_id, allocation.id, reason, explanation)
                    )
                    self.ledger.remove(allocation)

    def _ended_elsewhere(self, allocation: Allocation) -> tuple[InterruptionReason, str]:
        operation = self.trees.operations.get(allocation.operation_id)
        explanation = allocation.job.reason or "job ended"
        if operation is None or operation.state.is_final:
            return InterruptionReason.OPERATION_FINISHED, explanation
        pool_node = self.trees.nodes.get(allocation.node)
        if pool_node is None or pool_node.tree != allocation.tree:
            return InterruptionReason.NODE_CHANGED_TREE, explanation
        return InterruptionReason.OPERATION_FINISHED, explanation

    # --- heartbeats ----------------------------------------------------------------------

    def process_heartbeat(self, heartbeat: NodeHeartbeat) -> HeartbeatResponse:
        """Decide what starts, what is interrupted and what is aborted on this node now."""
        return self.process_heartbeat_of(
            heartbeat.address,
            heartbeat.now,
            heartbeat.resource_limits,
            heartbeat.tags,
            heartbeat.running_job_ids,
            heartbeat.finished_jobs,
        )

    def process_heartbeat_of(
        self,
        address: str,
        now: float,
        limits: Vector,
        tags: frozenset[str],
        running_job_ids: tuple[str, ...],
        finished_jobs: tuple[FinishedJob, ...],
    ) -> HeartbeatResponse:
        """:meth:`process_heartbeat` with the fields of the :class:`NodeHeartbeat` as
        arguments, for a caller that would build one per heartbeat only to pass it (the
        simulator: a frozen dataclass costs a ``object.__setattr__`` per field)."""
        # The steps below run for every heartbeat, so the common case of each is written out
        # in front of its method (the same tests and effects): a known node with the limits
        # and tags it had, nothing to abort, no finished job, no interrupted allocation.
        if self._validated_limits.get(address) is not limits:
            _validate(NodeHeartbeat(address, now, limits, tags, running_job_ids, finished_jobs))
            self._validated_limits[address] = limits
        elif not address or not math.isfinite(now):
            _validate_time(NodeHeartbeat(address, now, limits, tags))  # raises
        if now > self.clock:  # ``max(self.clock, now)``
            self.clock = now
        trees = self.trees
        ledger = self.ledger
        pool_node = trees.nodes.get(address)
        node = ledger.nodes.get(address)
        if (
            node is None
            or pool_node is None
            or pool_node.tags != tags
            or pool_node.resource_limits != limits
        ):
            node = self._register(NodeHeartbeat(address, now, limits, tags))
            pool_node = trees.nodes[address]
        else:
            node.resource_limits = limits
            node.tags = tags
        node.last_heartbeat_time = now
        outbox = Outbox()
        if node.pending_aborts:
            for operation_id, job_id, reason, explanation in node.pending_aborts:
                outbox.abort.append(AbortJob(operation_id, job_id, reason, explanation))
            node.pending_aborts.clear()
        if finished_jobs:
            self._apply_finished(node, finished_jobs, now)
        self._reconcile_node(node, running_job_ids, now, outbox)
        if node.interrupted:
            self._abort_expired(node, now, outbox)

        state = (
            ledger.tree_states.get(pool_node.tree)
            if pool_node.tree is not None and pool_node.state == "online"
            else None
        )
        if state is not None:
            strategy = trees.strategy
            amounts = strategy.min_spare_allocation_resources_on_node
            if amounts is self._min_spare_source:  # ``_min_spare`` without the call
                min_spare = self._min_spare_vector
            else:
                min_spare = self._min_spare(strategy)
            max_started = strategy.max_started_allocations_per_heartbeat
            if self.fast_path and self._stages_idle(state, node, now, min_spare, max_started):
                if not outbox.abort:
                    return _EMPTY_RESPONSE
                return HeartbeatResponse(abort=tuple(outbox.abort))
            # Positional: (ledger, tree, node, now, outbox, min_spare, max_started, pool_node).
            ctx = HeartbeatContext(
                self.ledger, state, node, now, outbox, min_spare, max_started, pool_node
            )
            preempt_gracefully(ctx)
            run_regular_stage(ctx)
            if preemptive_scheduling_due(ctx, state.config.preemptive_scheduling_backoff / MS):
                run_preemptive_stages(ctx)
            self._check_overcommit(ctx, strategy.allowed_node_resources_overcommit_duration / MS)
        if not (outbox.start or outbox.interrupt or outbox.abort):
            return _EMPTY_RESPONSE
        return heartbeat_response(tuple(outbox.start), tuple(outbox.interrupt), tuple(outbox.abort))

    def _min_spare(self, strategy: StrategyConfig) -> Vector:
        """``min_spare_allocation_resources_on_node`` as a vector (configs are frozen: the
        vector is recomputed only when the strategy's amounts object is replaced)."""
        amounts = strategy.min_spare_allocation_resources_on_node
        if amounts is not self._min_spare_source:
            self._min_spare_source = amounts
            self._min_spare_vector = amounts.to_vector(0.0)
        return self._min_spare_vector

    def _stages_idle(
        self,
        state: TreeState,
        node: NodeState,
        now: float,
        min_spare: Vector,
        max_started: int | None,
    ) -> bool:
        """Would every scheduling stage of this heartbeat return at its first test?

        When it does, apply the only state changes those stages would make (the preemptive
        backoff timestamp when the pass is due, the cleared overcommit mark) and return
        ``True``: the caller answers at once, without a :class:`HeartbeatContext`.  This is
        exact, not a heuristic: each condition below is the early exit of the stage as written,
        evaluated on the same state (the stages run on a node that nothing has changed since
        the checks above, and a stage that returns at its first test changes nothing):

        * ``preempt_gracefully`` returns when the tree has no graceful operation;
        * ``run_regular_stage``: its loop stops before any attempt when nothing is active in
          the selector (``best_leaf`` is ``None`` exactly when the root's heap is empty; the
          tag-filter deactivations before the loop only remove and are undone, leaving every
          node as it was: a pool with no active child is in no heap) or when the node lacks
          ``min_spare`` (with no discount and nothing started yet); in the latter case we
          require no tag-filtered element, so the deactivate/restore round trip, which may
          permute a heap's layout, is not skipped either;
        * or, with spare resources, when no active operation has a waiting task that fits the
          node (:func:`_all_fail_to_fit`): the loop then attempts each active operation once,
          each attempt fails with ``min_needed_resources_unsatisfied`` before touching
          anything, and the operation is deactivated for the stage and restored after it.
          The only trace is one such deactivation reason per operation, counted here.  (The
          round trip may change a heap's layout but not what it yields: heap keys are
          ``(satisfaction, order)`` with ``order`` unique among siblings.)
        * ``run_preemptive_stages`` (when due): each stage returns before analysing the node
          when its selector has no active leaf, the aggressive stage unconditionally, the
          normal one when the node fits its limits and no specified limit is violated;
        * ``_check_overcommit`` only clears the overcommit mark of a node that fits.

        Anything else (finished jobs, aborts, expired interruptions) was handled before and
        does not depend on this; ``fast_path = False`` turns the shortcut off (tests compare).
        """
        if state.has_graceful_operations:
            return False
        # (An empty tuple, not a list built per heartbeat: most idle heartbeats have none.)
        failing: Sequence[ScheduledOperation] = ()
        limits = node.resource_limits
        usage = node.usage
        if not fits(usage, limits):
            return False
        if state.selector.any_active():
            if state.tag_filtered:
                return False
            if _has_spare(limits, usage, min_spare, max_started):
                fail_to_fit = _failing_to_fit(state, limits, usage)
                if fail_to_fit is None:
                    return False
                failing = fail_to_fit
        last = node.last_preemptive_scheduling_time
        due = last is None or now > last + state.config.preemptive_scheduling_backoff / MS
        if due:
            for selector in state.preemptive_selectors.values():
                if selector.any_active():
                    return False
            if state.limited_elements and state.any_limits_violated():
                return False
            node.last_preemptive_scheduling_time = now
        node.resources_overcommit_since = None
        for op in failing:
            reasons = op.record.deactivation_reasons
            reasons[_MIN_NEEDED] = reasons.get(_MIN_NEEDED, 0) + 1
        return True

    # --- idle heartbeats (the simulator skips them) -----------------------------------------

    def heartbeat_levels(self) -> dict[str, int]:
        """Per tree, what a heartbeat reporting nothing new could do on a node that fits its
        limits and has nothing to abort: ``0`` nothing (every stage returns at its first
        test), ``1`` only place allocations, and only with spare resources, ``2`` anything.

        The levels change only when the scheduling state does: at an update, and in a
        heartbeat that starts, preempts or ends allocations (see :func:`activity_level`).
        """
        return {name: activity_level(state) for name, state in self.ledger.tree_states.items()}

    def heartbeat_would_act(self, address: str, levels: dict[str, int]) -> bool:
        """Could a heartbeat of this node now, reporting no finished or lost job, change
        anything beyond the bookkeeping of :meth:`account_idle_heartbeats`?

        ``False`` means the heartbeat is idle in the sense of :meth:`_stages_idle` (and has no
        allocation to reconcile), with
        ``levels`` from :meth:`heartbeat_levels` of the current state.  A node's own usage
        and its pending aborts change only through its own heartbeats (or a job ending on
        it), so the answer stays ``False`` until the node reports something or a level rises.
        """
        node = self.ledger.nodes.get(address)
        pool_node = self.trees.nodes.get(address)
        if node is None or pool_node is None:
            return True  # the heartbeat would register it
        if node.pending_aborts or node.interrupted or node.ended_watch.ended:
            # An allocation's job ended elsewhere (its operation finished): abort it on the node.
            return True
        tree = pool_node.tree
        if tree is None or pool_node.state != "online":
            return False
        level = levels.get(tree, 0)
        if level == 0 and tree not in self.ledger.tree_states:
            return False
        usage = node.usage
        limits = node.resource_limits
        if not fits(usage, limits):
            return True
        if level == 0:
            return False
        if level == 2:
            return True
        if self.ledger.tree_states[tree].tag_filtered:
            return True
        strategy = self.trees.strategy
        return _has_spare(
            limits, usage, self._min_spare(strategy), strategy.max_started_allocations_per_heartbeat
        )

    def account_idle_heartbeats(
        self, address: str, phase: float, first: int, stop: int, period: float
    ) -> int:
        """Apply what idle heartbeats of the node at ``phase + k * period`` for ``k`` in
        ``range(first, stop)`` (all while :meth:`heartbeat_would_act` said ``False``; the
        simulator's heartbeat times, see ``ytsched.simulator.ring``) would have changed,
        without running them: the last heartbeat time, the preemptive-scheduling timestamp
        each due pass sets, the cleared overcommit mark, the clock.  Returns how many there
        were.

        Exactly what :meth:`process_heartbeat` does for such a heartbeat through
        :meth:`_stages_idle` (or nothing, for a node outside any tree's scheduling state):
        each tick's pass is due when ``time > last + backoff``, in order.  When the period
        exceeds the backoff by more than the rounding of those sums can eat
        (:func:`_always_due`), every tick after a due one is due too, so the walk stops at
        the first due tick and the timestamp is the last tick's time: the value the walk
        would reach, computed by the same expression.
        """
        node = self.ledger.nodes.get(address)
        if node is None or stop <= first:
            return 0
        pool_node = self.trees.nodes.get(address)
        state = None
        if pool_node is not None and pool_node.tree is not None and pool_node.state == "online":
            state = self.ledger.tree_states.get(pool_node.tree)
        count = stop - first
        latest = phase + (stop - 1) * period
        if state is not None:
            node.last_preemptive_scheduling_time = last_pass_time(
                node.last_preemptive_scheduling_time,
                state.config.preemptive_scheduling_backoff / MS,
                phase,
                first,
                stop,
                period,
            )
            node.resources_overcommit_since = None
        if count:
            node.last_heartbeat_time = latest
            self.clock = max(self.clock, latest)
        return count

    def _register(self, heartbeat: NodeHeartbeat) -> NodeState:
        address = heartbeat.address
        limits = heartbeat.resource_limits
        pool_node = self.trees.nodes.get(address)
        if pool_node is None:
            self.trees.register_node(
                address,
                tags=heartbeat.tags,
                resource_limits=dict(zip(RESOURCE_NAMES, limits, strict=True)),
            )
        else:
            if pool_node.tags != heartbeat.tags:
                self.trees.set_node_tags(address, heartbeat.tags)
            if pool_node.resource_limits != limits:
                self.trees.set_node_resource_limits(
                    address, dict(zip(RESOURCE_NAMES, limits, strict=True))
                )
        node = self.ledger.nodes.get(address)
        if node is None:
            node = self.ledger.new_node(address, limits, heartbeat.tags)
        else:
            node.resource_limits = limits
            node.tags = heartbeat.tags
        return node

    def _apply_finished(
        self, node: NodeState, finished: tuple[FinishedJob, ...], now: float
    ) -> None:
        """Jobs the node reports ended.  A job that ended because it was interrupted returns
        its work to pending (the task waits to run it again)."""
        trees = self.trees
        operations = trees.operations
        allocations = node.allocations
        remove = self.ledger.remove
        watch = node.ended_watch
        for report in finished:
            allocation = allocations.get(report.job_id)
            if allocation is None or allocation.operation_id != report.operation_id:
                continue
            job = allocation.job
            operation = operations.get(allocation.operation_id)
            if (
                job.state is _JOB_RUNNING
                and operation is not None
                and (operation.state is _OP_RUNNING or not operation.state.is_final)
            ):
                op_id, job_id = allocation.operation_id, allocation.id
                if report.outcome is _COMPLETED and not report.interrupted:
                    if job.watch is watch:
                        # ``remove`` below unwatches the job: detached now, its end is not
                        # counted (+1 up the watches) only to be uncounted (-1) there.
                        job.watch = None
                    # ``trees.complete_job`` with the operation and job already at hand
                    trees.complete_running_job(operation, job, now)
                elif report.outcome is JobOutcome.FAILED:
                    self.trees.fail_job(op_id, job_id, now=now, reason=report.error or "job failed")
                else:
                    reason = report.error or (
                        "interrupted" if report.interrupted else "aborted on the node"
                    )
                    if allocation.preemption is not None:
                        reason = f"{reason} after {allocation.preemption.reason.value}"
                    self.trees.abort_job(op_id, job_id, now=now, reason=reason)
            remove(allocation, node)

    def _reconcile_node(
        self, node: NodeState, running: tuple[str, ...], now: float, outbox: Outbox
    ) -> None:
        """Allocations the node no longer runs are lost (their jobs return to pending);
        allocations whose jobs the pool trees ended are aborted on the node."""
        allocations = node.allocations
        # The common case, without building a set: the same ids (as many, all known), every
        # job still running (``node.any_job_ended`` false): nothing to do.  ``all`` over
        # ``map`` runs the membership tests in C, stopping at the first unknown id.
        if (
            len(running) == len(allocations)
            and all(map(allocations.__contains__, running))
            and not node.ended_watch.ended
        ):
            return
        reported = set(running)
        for allocation in list(node.allocations.values()):
            if allocation.job.state is not JobState.RUNNING:
                reason, explanation = self._ended_elsewhere(allocation)
                outbox.abort.append(
                    AbortJob(allocation.operation_id, allocation.id, reason, explanation)
                )
                self.ledger.remove(allocation)
            elif allocation.id not in reported:
                abort_job(self.ledger, allocation, "lost: the node no longer reports it", now)

    def _abort_expired(self, node: NodeState, now: float, outbox: Outbox) -> None:
        """Interrupted allocations whose timeout passed are aborted."""
        if not node.interrupted:
            return
        expired = [
            a for a in node.interrupted.values() if a.preemption and a.preemption.deadline <= now
        ]
        for allocation in expired:
            preemption = allocation.preemption
            assert preemption is not None
            explanation = (
                f"did not finish within {preemption.timeout:g} s after {preemption.reason.value}"
            )
            abort_job(self.ledger, allocation, f"interruption_timeout: {explanation}", now)
            outbox.abort.append(
                AbortJob(
                    allocation.operation_id,
                    allocation.id,
                    InterruptionReason.INTERRUPTION_TIMEOUT,
                    explanation,
                )
            )

    def _check_overcommit(self, ctx: HeartbeatContext, allowed: float) -> None:
        """``AbortAllocationsSinceResourcesOvercommit``: a node over its limits for longer than
        ``allowed_node_resources_overcommit_duration`` keeps, in preemption order (not
        reversed), the allocations that still fit and aborts the rest."""
        node = ctx.node
        if ctx.node_fits():
            node.resources_overcommit_since = None
            return
        if node.resources_overcommit_since is None:
            node.resources_overcommit_since = ctx.now
        if not ctx.now > node.resources_overcommit_since + allowed:
            return
        infos = []
        for allocation in node.allocations.values():
            op = ctx.tree.operations.get(allocation.operation_id)
            if op is None or allocation.tree != ctx.tree.name:
                continue
            status = op.record.allocations.status(allocation)
            infos.append((preemption_sort_key(allocation, status), allocation))
        infos.sort(key=lambda item: item[0])
        kept: Vector = (0.0, 0.0, 0.0, 0.0, 0.0)
        limits = node.resource_limits
        for _, allocation in infos:
            usage = allocation.usage
            total = tuple(kept[i] + usage[i] for i in range(5))
            if all(total[i] <= limits[i] + RESOURCE_EPSILON for i in range(5)):
                kept = (total[0], total[1], total[2], total[3], total[4])
                continue
            ctx.abort(
                allocation,
                InterruptionReason.RESOURCE_OVERCOMMIT,
                "Preempted due to node resource overcommit",
            )
        node.resources_overcommit_since = None

    def adopt_running_jobs(self) -> int:
        """Attach the jobs the pool trees say are running on nodes (after a restart) as
        allocations, in start order; returns how many were adopted.

        A node that heartbeats again finds its jobs attached; one that no longer lists them
        has them treated as lost.  Call :meth:`update` afterwards.
        """
        jobs = [
            (operation.id, job)
            for operation in self.trees.operations.values()
            for job in operation.running_jobs.values()
            if job.node is not None and job.tree is not None
        ]
        jobs.sort(key=lambda item: (item[1].start_time, item[1].id))
        count = 0
        for operation_id, job in jobs:
            assert job.node is not None
            pool_node = self.trees.nodes.get(job.node)
            if pool_node is None:
                continue
            if self.ledger.adopt(operation_id, job, pool_node.resource_limits) is not None:
                count += 1
        return count

    # --- views -----------------------------------------------------------------------------

    def orchid(self) -> dict[str, Any]:
        """The pool-tree orchid plus scheduling attributes (YTsaurus names)."""
        return orchid.scheduler_orchid(self)

    def explain_operation(self, operation_id: str) -> dict[str, Any]:
        """Why the operation is pending, below its fair share, starving; why its jobs were
        preempted.  Reasons are data (codes and numbers), not only prose."""
        return orchid.explain_operation(self, operation_id)

    def preemption_status(self, job_id: str) -> PreemptionStatus | None:
        """The preemption status of a running allocation (tests and diagnostics)."""
        for node in self.ledger.nodes.values():
            allocation = node.allocations.get(job_id)
            if allocation is not None:
                record = self.ledger.records.get(allocation.tree, {}).get(allocation.operation_id)
                return record.allocations.status(allocation) if record is not None else None
        return None


@dataclass(slots=True)
class PendingUpdate:
    """A fair-share computation (:meth:`Scheduler.begin_update`) not yet applied."""

    now: float
    results: dict[str, UpdateResult]
    replaced: list[UpdateResult | None]
    """The results these replace, unlinked once the new scheduling state is in place."""
    structure: dict[str, tuple[object, ...]] | None
    """Per tree, what :func:`_structure` was when the shares were computed; ``None`` when
    nothing can run between the computation and its application (:meth:`Scheduler.update`)."""


class AsideUpdate:
    """An update's scheduling state built aside and published in one step (see
    :meth:`Scheduler.finish_update_aside`)."""

    def __init__(
        self, scheduler: Scheduler, pending: PendingUpdate, builds: dict[str, AsideBuild]
    ) -> None:
        self.scheduler = scheduler
        self.pending = pending
        self.builds = builds
        self.published = False
        self._retired: list[TreeState] = []

    def steps(self) -> Iterator[None]:
        """The slices of every tree's build (nothing heartbeats read changes in them)."""
        for build in self.builds.values():
            yield from build.steps()

    def publish(self) -> bool:
        """Put every tree's new state in place (one uninterrupted step), or return ``False``
        and change nothing when the structure changed since the shares were computed in a
        way the state cannot be built on (see :func:`structure_compatible`)."""
        structure = self.pending.structure
        if structure is not None and (
            set(structure) != set(self.builds)
            or not structure_compatible(structure, self.scheduler.trees)
        ):
            return False
        scheduler = self.scheduler
        ledger = scheduler.ledger
        results = self.pending.results
        for name, build in self.builds.items():
            previous = ledger.tree_states.get(name)
            ledger.tree_states[name] = build.publish(previous)
            if previous is not None and build.fallback is None:
                # (The fallback build disposed it and may reuse its objects: not again.)
                self._retired.append(previous)
        for name in [n for n in ledger.tree_states if n not in results]:
            self._retired.append(ledger.tree_states.pop(name))
        now = self.pending.now
        scheduler.last_update_time = now
        scheduler.clock = max(scheduler.clock, now)
        self.published = True
        return True

    def cleanup(self, per_slice: int | None = None) -> Iterator[None]:
        """After :meth:`publish`: break the cycles of the replaced states and results (see
        :meth:`TreeState.dispose` and :func:`_unlink`), which nothing reads any more, with a
        ``yield`` after every ``per_slice`` elements (``None``: none)."""
        retired, self._retired = self._retired, []
        for state in retired:
            yield from state.dispose_in_slices(per_slice)
        current = {id(result) for result in self.pending.results.values()}
        replaced, self.pending.replaced = self.pending.replaced, []
        for result in replaced:
            if result is not None and id(result) not in current:
                yield from _unlink_in_slices(result, per_slice)


@dataclass(slots=True)
class UpdateInputs:
    """The engine inputs of an update run in steps (:meth:`Scheduler.snapshot_update`)."""

    now: float
    snapshots: dict[str, TreeSnapshot]
    replaced: list[UpdateResult | None]
    structure: dict[str, tuple[object, ...]]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector around (a part of) an update.

    The update builds tens of thousands of objects, and collections triggered on the way
    would walk them many times over; the young generations are collected once at the end,
    here rather than in the next heartbeat.  Nested uses (or a collector already disabled by
    the caller) leave it alone.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)


_MIN_NEEDED = DeactivationReason.MIN_NEEDED_RESOURCES_UNSATISFIED.value


def last_pass_time(
    last: float | None, backoff: float, phase: float, first: int, stop: int, period: float
) -> float | None:
    """The preemptive-scheduling timestamp after idle heartbeats at ``phase + k * period``
    for ``k`` in ``range(first, stop)``, from ``last``: each heartbeat whose time is after
    ``last + backoff`` sets it (see :meth:`Scheduler.account_idle_heartbeats`)."""
    latest = phase + (stop - 1) * period
    always = phase >= 0.0 and first >= 0 and _always_due(period, backoff, latest)
    if last is None:
        if first >= stop:
            return None
        last = phase + first * period  # the first tick is due: nothing was set before
        if always:
            return latest
        first += 1
    # The walk (periods equal to the backoff, where rounding decides each tick): the same
    # sums and comparisons in the same order, without the ``None`` test per tick.  Native
    # for floats (``walk_passes``, the same doubles: this loop runs for every skipped tick of
    # a woken node at such periods); in Python for anything else.
    walked = walk_passes(last, backoff, phase, first, stop, period, always)
    if walked is not NotImplemented:
        return latest if walked is None else walked
    for k in range(first, stop):
        time = phase + k * period
        if time > last + backoff:
            last = time
            if always:
                return latest
    return last


def _always_due(period: float, backoff: float, latest: float) -> bool:
    """Is ``t_(k+1) > t_k + backoff`` for any two consecutive ticks ``t_k = phase + k *
    period`` up to ``latest``, whatever the rounding (for ``phase >= 0`` and ``k >= 0``)?

    Then ``0 <= k * period <= t_k <= latest``: each tick is within an ulp of ``latest`` of
    the exact ``phase + k * period`` (half for the product, half for the sum), and
    ``t_k + backoff`` rounds by half an ulp of ``latest + backoff`` more, so the comparison
    is off by less than three ulps of ``latest + backoff``.  Eight ulps of margin (of twice
    that, for sums that round up past it) leave it no room to go the other way.
    """
    if not (math.isfinite(period) and math.isfinite(backoff) and math.isfinite(latest)):
        return False
    return period - backoff > 8.0 * math.ulp(2.0 * (abs(latest) + abs(backoff)))


def _has_spare(limits: Vector, usage: Vector, min_spare: Vector, max_started: int | None) -> bool:
    """Would the regular stage's loop attempt anything on a node with this usage
    (``min_spare`` free, no discount, and starts allowed)?"""
    if max_started is not None and max_started <= 0:
        return False
    # ``min_spare[i] <= (limits[i] - usage[i]) + RESOURCE_EPSILON`` in order: the native
    # difference and fit test (the same doubles; faster than the five tests in Python, and
    # the simulator asks this for parked nodes in every sweep).
    return fits(min_spare, vsub(limits, usage))


FAIL_TO_FIT_MEMO_LIMIT = 4096
"""How many nodes' answers :func:`_failing_to_fit` keeps at most (it starts over beyond)."""


def _failing_to_fit(
    state: TreeState, limits: Vector, usage: Vector
) -> list[ScheduledOperation] | None:
    """:func:`_all_fail_to_fit`, remembered per ``(limits, usage)`` while it cannot change.

    Its answer reads the regular selector's active operations, their ``eligible`` flags,
    tentative trees and tasks (each fixed per operation), which of those tasks have waiting
    jobs (not how many) and the node's free resources.  Between heartbeats the active
    operations are the eligible ones (stage-local deactivations are undone), so they change
    only with :attr:`TreeState.eligibility_changes` or with a new state, and the emptiness of
    the waiting lists only with ``WAITING_EMPTINESS_CHANGES``: while neither count moves,
    nodes with the same limits and usage get the same answer (idle nodes repeat theirs, and
    so do nodes whose stage then fails at a later test).  Equal tuples give equal free
    resources (``-0.0`` and ``0.0`` included: each is only compared after ``limits - usage
    + eps``)."""
    epoch = (WAITING_EMPTINESS_CHANGES[0], state.eligibility_changes)
    memo = state.fail_to_fit
    if state.fail_to_fit_epoch != epoch or len(memo) >= FAIL_TO_FIT_MEMO_LIMIT:
        memo.clear()
        state.fail_to_fit_epoch = epoch
    key = (limits, usage)
    if key in memo:
        return memo[key]
    failing = memo[key] = _all_fail_to_fit(state, limits, usage)
    return failing


def _all_fail_to_fit(
    state: TreeState, limits: Vector, usage: Vector
) -> list[ScheduledOperation] | None:
    """The active operations of the regular stage's selector when every one of them would
    fail to fit the node (``attempt`` returning ``min_needed_resources_unsatisfied``);
    ``None`` when any might do something else."""
    eps = RESOURCE_EPSILON
    f0 = limits[0] - usage[0] + eps
    f1 = limits[1] - usage[1] + eps
    f2 = limits[2] - usage[2] + eps
    f3 = limits[3] - usage[3] + eps
    f4 = limits[4] - usage[4] + eps
    failing: list[ScheduledOperation] = []
    # Depth first with a stack of iterators: a pool's children are visited when the walk
    # reaches it, so the first operations seen are those near the best leaf (the likeliest
    # to fit), without first stacking every pool of the upper levels.  Which operations are
    # visited, and so the answer, does not depend on the order.
    tree = state.name
    # The native selector's heaps as lists of node ids (``core.heap``), the root's first.
    core = state.selector.core
    nodes = state.selector.nodes
    stack = [iter(core.heap(0))]
    while stack:
        for child_id in stack[-1]:
            element = nodes[child_id].element
            if not element.is_operation:
                stack.append(iter(core.heap(child_id)))
                break
            op = element.operation
            if op is None or not op.eligible:
                return None
            operation = op.operation
            if operation.tentative_trees and tree in operation.tentative_trees:
                return None  # may fail as ``saturated_in_tentative_tree`` first
            tasks = op.tasks
            if len(tasks) == 1 and not tasks[0].waiting:
                return None  # ``schedule_allocation_failed``, not this reason
            for task in tasks:
                if not task.waiting:
                    continue
                r = task.resources
                if r[0] <= f0 and r[1] <= f1 and r[2] <= f2 and r[3] <= f3 and r[4] <= f4:
                    return None
            failing.append(op)
        else:
            stack.pop()  # this heap is exhausted
    return failing


def activity_level(state: TreeState) -> int:
    """See :meth:`Scheduler.heartbeat_levels`: the tree-wide early exits of
    :meth:`Scheduler._stages_idle`.  ``2`` when a graceful operation exists, a preemptive
    stage has an active operation or a specified limit is violated; else ``1`` when the
    regular stage has an active operation; else ``0``.

    Asked after every heartbeat the simulator runs.  Without specified limits (whose test
    reads live usage) the answer reads only what is fixed per state and which operations are
    active in its selectors, which between heartbeats changes only with
    :attr:`TreeState.eligibility_changes` (stage-local deactivations are undone): it is kept
    in the state with that count and computed again only when the count moved."""
    if state.limited_elements:
        return _activity_level(state)
    changes = state.eligibility_changes
    memo = state.level_memo
    if memo is not None and memo[0] == changes:
        return memo[1]
    level = _activity_level(state)
    state.level_memo = (changes, level)
    return level


def _activity_level(state: TreeState) -> int:
    """:func:`activity_level`, computed."""
    # (``any_limits_violated`` only with limited elements: most trees have none.)
    if state.has_graceful_operations or (state.limited_elements and state.any_limits_violated()):
        return 2
    for selector in state.preemptive_selectors.values():
        if selector.any_active():
            return 2
    return 1 if state.selector.any_active() else 0


def tree_shapes(trees: PoolTrees) -> dict[str, tuple[object, ...]]:
    """Per tree, what :meth:`Scheduler.finish_update` compares with ``PendingUpdate.structure``
    (for callers that check before applying, see :meth:`Scheduler.snapshot_update`)."""
    return {name: _structure(tree) for name, tree in trees.trees.items()}


def structure_compatible(structure: dict[str, tuple[object, ...]], trees: PoolTrees) -> bool:
    """Can a scheduling state be built aside (:class:`AsideBuild`) from shares computed when
    the trees were ``structure`` (:func:`tree_shapes`)?  Yes when the set of trees, their
    configs and pools are the same and every operation of then is either still in its pool
    or gone.  The state is then what ``build_tree_state`` builds from the live trees with
    those shares: an operation that arrived since has no share yet and joins at the next
    update, as one arriving just after the update would; one that left (finished, aborted)
    is not in it, and the share it was computed leaves unused until the next update (as
    between two updates anyway: YTsaurus's fair shares, too, are recomputed only at the
    next update).  Anything else needs the shares computed again."""
    if set(trees.trees) != set(structure):
        return False
    for name, (config_id, pools, operations) in structure.items():
        tree = trees.trees[name]
        if id(tree.config) != config_id or _pools(tree) != pools:
            return False
        current = tree.operations
        for op_id, pool in operations:  # type: ignore[attr-defined]
            entry = current.get(op_id)
            if entry is not None and entry.pool.name != pool:
                return False
    return True


def _pools(tree: PoolTree) -> tuple[tuple[str, str | None], ...]:
    return tuple(
        (pool.name, pool.parent.name if pool.parent is not None else None)
        for pool in tree.root.descendants()
    )


def _structure(tree: PoolTree) -> tuple[object, ...]:
    """What the scheduling state's construction needs to match between an update's
    computation and its application: the tree's config object, every pool with its parent,
    every operation with its pool."""
    return (
        id(tree.config),
        _pools(tree),
        tuple((entry.id, entry.pool.name) for entry in tree.operations.values()),
    )


def _unlink_in_slices(result: UpdateResult, per_slice: int | None) -> Iterator[None]:
    """:func:`_unlink` with a ``yield`` after every ``per_slice`` elements (``None``: none)."""
    count = 0
    for element in native.linked_elements(result):
        element.parent = None
        element.children = []
        element.sorted_children = []
        count += 1
        if count == per_slice:
            count = 0
            yield
    native.forget_elements(result)


def _unlink(result: UpdateResult) -> None:
    """Unlink the element tree of a replaced update result (parents and children lists).

    Nothing reads a result once the next update replaced it; without its cycles, reference
    counting frees it at once.  Otherwise every replaced tree waits for a full garbage
    collection, and those grow with every update until one stalls a heartbeat for seconds.
    A native result's elements are created on demand: only those that exist are touched, then
    the result forgets them (its record of them would be a cycle too).
    """
    for element in native.linked_elements(result):
        element.parent = None
        element.children = []
        element.sorted_children = []
    native.forget_elements(result)


def _validate_time(heartbeat: NodeHeartbeat) -> None:
    if not heartbeat.address:
        raise YtschedError("InvalidNodeHeartbeat", "a heartbeat needs a node address")
    if not math.isfinite(heartbeat.now):
        raise YtschedError(
            "InvalidNodeHeartbeat",
            f"node {heartbeat.address!r}: heartbeat time {heartbeat.now!r} is not finite",
            node=heartbeat.address,
        )


def _validate(heartbeat: NodeHeartbeat) -> None:
    _validate_time(heartbeat)
    limits = heartbeat.resource_limits
    if len(limits) != len(RESOURCE_NAMES) or any(
        not math.isfinite(value) or value < 0 for value in limits
    ):
        raise YtschedError(
            "InvalidNodeHeartbeat",
            f"node {heartbeat.address!r}: resource_limits {limits!r} must be five finite,"
            " non-negative amounts (user_slots, cpu, gpu, memory, network)",
            node=heartbeat.address,
        )
