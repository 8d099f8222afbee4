"""Bookkeeping of allocations: starting, releasing usage on preemption, removing.

Every change of an allocation goes through here so that the four views of usage stay equal:
the node's usage, the operation's preemptible list, the live usage of the operation and its
ancestors in the tree state (which drives satisfaction and the selector), and the pool tree's
jobs (which the next fair-share update reads).  This is the scheduler's part of what YTsaurus
splits between the heartbeat context, ``TOperationSharedState`` (``OnAllocationStarted``,
``ProcessAllocationUpdate``, ``OnAllocationFinished`` in
``yt/yt/server/scheduler/strategy/policy/operation_shared_state.cpp``) and the resource tree.
"""

from __future__ import annotations

from collections.abc import Callable

from ytsched.pooltree.operations import EndWatch, Job, JobState, Task
from ytsched.pooltree.trees import PoolTrees
from ytsched.resources import ZERO, Vector, vadd
from ytsched.scheduling.nodes import Allocation, NodeState
from ytsched.scheduling.selector import vadd as native_vadd
from ytsched.scheduling.selector import vneg
from ytsched.scheduling.starvation import StarvationState
from ytsched.scheduling.state import OperationRecord, ScheduledOperation, TreeState

_RUNNING = JobState.RUNNING
"""A module constant: an Enum class attribute costs ``EnumType.__getattr__``'s slot."""


_negated: Callable[[Vector], Vector] = vneg
"""``(-v[0], ..., -v[4])`` (native, ``src/native/usage_sums.cpp``)."""


class Ledger:
    """All nodes, allocations and per-tree scheduling state of one scheduler."""

    def __init__(self, trees: PoolTrees) -> None:
        self.trees = trees
        self.nodes: dict[str, NodeState] = {}
        self.tree_states: dict[str, TreeState] = {}
        self.records: dict[str, dict[str, OperationRecord]] = {}
        """Tree -> operation -> record (allocations and diagnostics that outlive updates)."""
        self.starvation: dict[str, dict[str, StarvationState]] = {}
        """Tree -> element -> starvation state (kept across updates)."""
        self._sequence = 0
        self.ended_watch = EndWatch()
        """Parent of every node's watch: how many allocations' jobs ended, over all nodes."""

    def new_node(self, address: str, resource_limits: Vector, tags: frozenset[str]) -> NodeState:
        """A node's state, registered, its watch counting into :attr:`ended_watch`."""
        node = NodeState(
            address=address,
            resource_limits=resource_limits,
            tags=tags,
            ended_watch=EndWatch(self.ended_watch),
        )
        self.nodes[address] = node
        return node

    def record(self, tree: str, operation_id: str) -> OperationRecord:
        records = self.records.setdefault(tree, {})
        record = records.get(operation_id)
        if record is None:
            record = OperationRecord()
            records[operation_id] = record
        return record

    def _record_of(self, allocation: Allocation) -> OperationRecord | None:
        """The allocation's operation record, if any (``records[tree][operation]``).

        An operation of a tree's current state holds the same object as ``op.record`` (the
        build takes it from, or puts it into, ``records``; a record leaves ``records`` only
        with its operation gone from the state), so the per-allocation paths read that and
        look here only for an operation the state no longer lists."""
        records = self.records.get(allocation.tree)
        return records.get(allocation.operation_id) if records is not None else None

    def _operation(self, allocation: Allocation) -> tuple[TreeState, ScheduledOperation] | None:
        state = self.tree_states.get(allocation.tree)
        if state is None:
            return None
        op = state.operations.get(allocation.operation_id)
        return None if op is None else (state, op)

    # --- changes ----------------------------------------------------------------------------

    def start(
        self, state: TreeState, op: ScheduledOperation, node: NodeState, task: Task, now: float
    ) -> Allocation:
        """Start the next waiting job of ``task`` on ``node``.

        Runs for every allocation a heartbeat starts: written out (positional construction,
        the node's watch inline) with the same effects in the same order as
        :meth:`NodeState.watch`; the node's usage sum is the native
        :func:`~ytsched.scheduling.selector.vadd` (:func:`~ytsched.resources.vadd`'s sums)."""
        operation = op.operation
        job = operation.start_task_job(task, now, node.address, state.name)
        resources = job.resources
        self._sequence += 1
        job_id = job.id
        # Positional: (id, operation_id, tree, node, task, resources, usage, start_time,
        # sequence, job, preemptible_progress_start_time).
        allocation = Allocation(
            job_id,
            operation.id,
            state.name,
            node.address,
            task.name,
            resources,
            resources,
            now,
            self._sequence,
            job,
            now,
        )
        node.allocations[job_id] = allocation
        watch = node.ended_watch
        job.watch = watch
        if job.state is not _RUNNING:
            watch.add(1)
        node.usage = native_vadd(node.usage, resources)
        node.started_allocation_count += 1
        record = op.record
        record.allocations.append(allocation)
        record.started_allocation_count += 1
        state.apply_usage_delta(op, resources)
        if not task.waiting:
            state.refresh_eligibility(op)
        return allocation

    def adopt(self, operation_id: str, job: Job, resource_limits: Vector) -> Allocation | None:
        """Account a job that already runs in the pool trees (a revived scheduler).

        Jobs must be adopted in start order (the operation's preemptible list is start order);
        the next update rebuilds the tree states from them.
        """
        if job.node is None or job.tree is None:
            return None
        node = self.nodes.get(job.node)
        if node is None:
            node = self.new_node(job.node, resource_limits, frozenset())
        if job.id in node.allocations:
            return None
        self._sequence += 1
        allocation = Allocation(
            id=job.id,
            operation_id=operation_id,
            tree=job.tree,
            node=job.node,
            task=job.task,
            resources=job.resources,
            usage=ZERO if job.usage_released else job.resources,
            start_time=job.start_time,
            sequence=self._sequence,
            job=job,
            preemptible_progress_start_time=job.start_time,
        )
        node.allocations[job.id] = allocation
        node.watch(allocation)
        node.usage = vadd(node.usage, allocation.usage)
        self.record(job.tree, operation_id).allocations.append(allocation)
        return allocation

    def release_usage(self, allocation: Allocation) -> None:
        """Stop counting the allocation's usage (it was preempted and is finishing)."""
        usage = allocation.usage
        operation = self.trees.operations.get(allocation.operation_id)
        if operation is not None:
            operation.release_job_usage(allocation.job)
        else:
            allocation.job.usage_released = True
        if usage == ZERO:
            return
        delta = _negated(usage)
        allocation.usage = ZERO
        node = self.nodes.get(allocation.node)
        if node is not None:
            node.usage = vadd(node.usage, delta)
        found = self._operation(allocation)
        record = found[1].record if found is not None else self._record_of(allocation)
        if record is not None:
            record.allocations.usage_decreased(allocation, delta)
        if found is not None:
            found[0].apply_usage_delta(found[1], delta)

    def remove(self, allocation: Allocation, node: NodeState | None = None) -> None:
        """The allocation ended (its job already ended in the pool tree).

        ``node``, when given, is the allocation's node (``nodes[allocation.node]``, which a
        heartbeat holds already).  Runs for every allocation that ends: the lookups are written
        out; the usage subtraction adds the :func:`_negated` usage with the native
        :func:`~ytsched.scheduling.selector.vadd`."""
        allocation_id = allocation.id
        if node is None:
            node = self.nodes.get(allocation.node)
        if node is not None:
            popped = node.allocations.pop(allocation_id, None)
            if popped is not None:
                # ``node.unwatch(popped)`` inline
                job = popped.job
                watch = node.ended_watch
                if job.watch is watch:
                    job.watch = None
                    if job.state is not _RUNNING:
                        watch.add(-1)
            if node.interrupted:
                node.interrupted.pop(allocation_id, None)
        usage = allocation.usage
        tree = allocation.tree
        operation_id = allocation.operation_id
        state = self.tree_states.get(tree)
        op = state.operations.get(operation_id) if state is not None else None
        record = op.record if op is not None else self._record_of(allocation)
        # Negated once, for the preemptible list's sums as well as the node's and the tree's.
        delta = _negated(usage) if usage != ZERO else None
        if record is not None:
            record.allocations.remove(allocation, delta)
        allocation.usage = ZERO
        if delta is not None:
            if node is not None:
                node.usage = native_vadd(node.usage, delta)
            if op is not None:
                assert state is not None
                state.apply_usage_delta(op, delta)
        if op is not None and not op.eligible:
            assert state is not None
            state.refresh_eligibility(op)
