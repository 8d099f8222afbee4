"""The scheduling post-update built aside, in slices, and published in one short step.

:func:`~ytsched.scheduling.post_update.build_tree_state` (what ``Scheduler.update`` and the
simulator use) builds a tree's new :class:`~ytsched.scheduling.state.TreeState` in one call
and reuses the objects of the state it replaces, which heartbeats read: nothing may run while
it works (35-57 ms at 3,000 operations).  :class:`AsideBuild` builds the same state from new
objects, in slices of at most :data:`OPERATIONS_PER_SLICE` operations, touching nothing that
heartbeats read, and then publishes it in one step.  YTsaurus does the same: its post-update
works on the tree snapshot the fair shares were computed on and the node shards switch to the
new snapshot at once (``DoFairShareUpdateAt`` in
``yt/yt/server/scheduler/strategy/pool_tree.cpp``); usage that changes later is applied to the
published snapshot by the heartbeat path.

**What the published state is.**  Exactly what ``build_tree_state`` gives at the moment of
publication for the same update result (``tests/scheduling/test_post_update_aside.py``
compares them field by field after heartbeats ran between the slices), up to the layout of
the selectors' heaps, which nothing observes (heap keys ``(satisfaction, order)`` are unique
among siblings, so every heap yields the same minimum; see ``Scheduler._stages_idle``).  The
slices read, per operation, things heartbeats and requests change; publication checks them:

* *usage* (allocations started, ended, preempted): every element's usage is summed again at
  publication (the same sums in the same order), the selectors' satisfactions refreshed, and
  the eligibility of graceful operations (which depends on usage) re-checked;
* an operation's *pending allocation count* (waiting jobs started): its starvation step is
  done again from the state before the update (slices advance copies of the starvation
  states; the originals change only at publication), then its pointers and priority, and the
  preemptive selectors are rebuilt when a priority changed;
* anything else (an operation that stopped running or has no more waiting jobs, a changed
  spec, pool or tree config, a record created meanwhile): publication builds the state with
  ``build_tree_state`` instead, which is exact by definition and costs what it always did;
* operations that arrived since the computation (no share computed) and operations that
  left (finished, aborted) are not in the state, as in ``build_tree_state`` at the moment of
  publication with the same result (see ``scheduler.structure_compatible``): one that left
  after its slice is dropped before the tree-wide passes, one that left during those passes
  makes publication build the state with ``build_tree_state``;
* any other change of the tree's structure (the set of pools or trees, their parents, a
  tree's config, an operation's pool):
  the caller (``Scheduler.finish_update_aside``) refuses to publish, and the shares are
  computed again.
"""

from __future__ import annotations

from collections.abc import Iterator

from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree.operations import OperationState
from ytsched.pooltree.tree import PoolTree
from ytsched.resources import ZERO
from ytsched.scheduling.post_update import (
    _build_children,
    _build_selector,
    _current_template,
    _fill_usage,
    _FilterCache,
    _fresh,
    _pool_elements,
    _pool_key,
    _preemption_priorities,
    _share_keys,
    _update_starvation,
    build_tree_state,
    element_starvation,
    live_inputs,
    preemption_priority,
    preemptive_selectors,
    starving_pointers,
)
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.starvation import PreemptionPriority, StarvationState
from ytsched.scheduling.state import (
    MS,
    ElementState,
    OperationRecord,
    ScheduledOperation,
    TreeState,
    is_eligible,
)

OPERATIONS_PER_SLICE = 250
"""Operations per slice of the per-operation step (~1-2 ms of work); the tree-wide passes
(children lists, starvation, usage, selectors) are one slice each."""


def _copy(state: StarvationState | None) -> StarvationState:
    """A private copy the slices may advance (heartbeats read the original until publication)."""
    if state is None:
        return StarvationState()
    return StarvationState(state.status, state.below_fair_share_since, state.starving_since)


def _settings_fingerprint(tree: PoolTree) -> tuple[object, ...]:
    """The settings the pool elements read, by identity (configs are frozen models replaced
    on change): the tree's config and every pool's effective config."""
    return (id(tree.config), tuple(id(pool.effective) for pool in tree.root.descendants()))


class AsideBuild:
    """One tree's new scheduling state, built in :meth:`steps` and put in place by
    :meth:`publish` (see the module docstring)."""

    def __init__(
        self,
        tree: PoolTree,
        result: UpdateResult,
        now: float,
        records: dict[str, OperationRecord],
        starvation: dict[str, StarvationState],
        previous: TreeState | None,
        *,
        operations_per_slice: int = OPERATIONS_PER_SLICE,
    ) -> None:
        self.tree = tree
        self.result = result
        self.now = now
        self.records = records
        self.starvation = starvation
        self.known_pool_keys = previous.pool_keys if previous is not None else {}
        self.per_slice = max(1, operations_per_slice)
        self.fallback: str | None = None
        """Why :meth:`publish` built the state with ``build_tree_state`` (``None``: it did not)."""
        self._fingerprint = _settings_fingerprint(tree)
        self._state: TreeState | None = None
        self._inputs: list[tuple[ScheduledOperation, str | None, int]] = []
        """Per operation, its state, the ``reason`` :func:`live_inputs` gave its slice and its
        ``job_changes`` then (no job started or ended since: the same waiting lists)."""
        self._new_records: dict[str, OperationRecord] = {}
        self._priority_operations: list[ScheduledOperation] = []

    # --- the slices ------------------------------------------------------------------------

    def steps(self) -> Iterator[None]:
        """Build the state; the caller may serve requests at every ``yield``."""
        tree, result = self.tree, self.result
        config = tree.config
        total = result.total_resource_limits
        filters = _FilterCache()
        keys = _share_keys(result, total)
        starvation = self.starvation
        root, elements, pools, limited = _pool_elements(
            tree, result, keys, filters, lambda name: _copy(starvation.get(name))
        )
        entries = list(tree.operations.values())
        yield

        operations: dict[str, ScheduledOperation] = {}
        by_pool: dict[str, list[ScheduledOperation]] = {}
        pool_keys: dict[str, tuple[object, ...]] = {}
        contexts: dict[str, tuple[ElementState, tuple[object, ...], list[ElementState]]] = {}
        computed_operations = result.operations
        attached = tree.operations
        for start in range(0, len(entries), self.per_slice):
            for entry in entries[start : start + self.per_slice]:
                op_id = entry.operation.id
                computed = computed_operations.get(op_id)
                if computed is None or attached.get(op_id) is not entry:
                    continue  # arrived after the computation, or left
                record = self.records.get(op_id) or self._new_records.get(op_id)
                if record is None:
                    record = OperationRecord()
                    self._new_records[op_id] = record
                pool_name = entry.pool.name
                context = contexts.get(pool_name)
                if context is None:
                    if pool_name not in elements:
                        return  # moved to a new pool: the caller sees the structure change
                    parent = elements[pool_name]
                    pool_key = _pool_key(tree, parent)
                    known = self.known_pool_keys.get(pool_name)
                    if known == pool_key:
                        pool_key = known
                    pool_keys[pool_name] = pool_key
                    context = (parent, pool_key, limited[pool_name])
                    contexts[pool_name] = context
                    by_pool[pool_name] = []
                parent, pool_key, chain = context
                template = _current_template(
                    tree, entry, parent, pool_key, computed, total, record, filters, True, keys
                )
                changes = entry.operation.job_changes
                reason, pending = live_inputs(entry)
                own = _copy(self.starvation.get(op_id))
                op = _fresh(template, entry, parent, own, record, reason, pending)
                element = op.element
                op.limited = (
                    [element, *chain] if template.settings.specified_limits is not None else chain
                )
                elements[op_id] = element
                operations[op_id] = op
                by_pool[pool_name].append(op)
                self._inputs.append((op, reason, changes))
            yield

        left = [op for op in operations.values() if attached.get(op.entry.id) is not op.entry]
        if left:
            # Operations that left after their slice: not in the state, as build_tree_state
            # at this moment would have it.
            for op in left:
                del operations[op.entry.id]
                del elements[op.entry.id]
                by_pool[op.entry.pool.name].remove(op)
            self._inputs = [item for item in self._inputs if item[0].entry.id in operations]
        _build_children(tree, pools, root, by_pool, config)
        _update_starvation(elements, config, self.now)
        yield
        _fill_usage(elements, operations)
        self._priority_operations = _preemption_priorities(operations, config)
        yield
        selector = Selector(root)
        root.node = selector.root
        tag_filtered: list[ElementState] = []
        _build_selector(selector, root, tag_filtered)
        for op in operations.values():
            if op.element.node is not None:
                op.eligible = is_eligible(op)
                if op.eligible:
                    selector.activate(op.element.node)
        yield
        self._state = TreeState(
            name=tree.name,
            tree=tree,
            config=config,
            result=result,
            update_time=self.now,
            total=total,
            root=root,
            elements=elements,
            operations=operations,
            selector=selector,
            tag_filtered=tag_filtered,
            preemptive_selectors=preemptive_selectors(root, self._priority_operations),
            has_graceful_operations=any(op.graceful for op in operations.values()),
            limited_elements=[e for e in elements.values() if e.specified_limits is not None],
            composites=[root, *(element for _, element in pools)],
            pool_keys=pool_keys,
        )

    # --- publication -----------------------------------------------------------------------

    def publish(self, previous: TreeState | None) -> TreeState:
        """The state as ``build_tree_state`` would build it now, made the persistent one:
        records and starvation states updated, preemptible lists published.  Call after
        :meth:`steps` ended, with the tree's structure unchanged since the update's
        computation.  ``previous`` is left for the caller to dispose, except when the
        fallback (``build_tree_state``) disposed it already (``fallback`` says why)."""
        state = self._state
        moved: list[tuple[ScheduledOperation, int]] = []
        reason = self._stale(moved) if state is not None else "not built"
        if state is None or reason is not None:
            self.fallback = reason
            return build_tree_state(
                self.tree, self.result, self.now, self.records, self.starvation, previous
            )
        config = state.config
        coefficient = config.allocation_count_preemption_timeout_coefficient
        aggressive_timeout = config.fair_share_aggressive_starvation_timeout / MS
        operation_only = config.scheduling_preemption_priority_scope == "operation_only"
        pool_starvation = config.enable_pool_starvation
        priorities_changed = False
        recheck = [op for op in state.operations.values() if op.graceful]
        for op, pending in moved:
            # The same reason (checked in _stale): only the starvation timeouts moved.
            op.pending_allocation_count = pending
            element = op.element
            element.starvation = _copy(self.starvation.get(element.name))
            element_starvation(element, self.now, coefficient, aggressive_timeout, pool_starvation)
            starving_pointers(element)
            if element.schedulable:
                priority = preemption_priority(element, operation_only)
                if priority is not op.static_priority:
                    op.static_priority = priority
                    priorities_changed = True
            recheck.append(op)
        self._refresh_usage(state)
        if priorities_changed:
            for op in state.operations.values():
                op.preemptive_nodes = []
            self._priority_operations = [
                op
                for op in state.operations.values()
                if op.element.schedulable and op.static_priority is not PreemptionPriority.NONE
            ]
            state.preemptive_selectors = preemptive_selectors(state.root, self._priority_operations)
        self._refresh_selectors(state)
        for op in recheck:
            if op.element.node is not None:
                state.refresh_eligibility(op)
        self._commit(state)
        return state

    def _stale(self, moved: list[tuple[ScheduledOperation, int]]) -> str | None:
        """Why the slices' state cannot be brought up to date here, or ``None``; appends to
        ``moved`` the operations whose pending allocation count changed, with the new one."""
        if _settings_fingerprint(self.tree) != self._fingerprint:
            return "a tree or pool config changed"
        records = self.records
        for op_id, record in self._new_records.items():
            if records.get(op_id, record) is not record:
                return "a record was created meanwhile"
        running = OperationState.RUNNING
        attached = self.tree.operations
        for op, reason, changes in self._inputs:
            entry = op.entry
            element = op.element
            parent = element.parent
            if attached.get(element.name) is not entry or parent is None:
                return "an operation left during the last slices"
            if entry.pool.name != parent.name:
                return "an operation moved"
            operation = entry.operation
            key = op.template.settings.key  # type: ignore[union-attr]
            if key[1] != id(operation.spec) or key[2] != id(entry.resource_limits):
                return "an operation's spec or limits changed"
            # live_inputs(entry), written out: this runs for every operation in one step.
            if entry.running and operation.state is running:
                if operation.job_changes == changes and reason != "not_running":
                    continue  # no job started or ended: the same waiting jobs
                pending = 0
                for task in operation.tasks.values():
                    pending += len(task.waiting)
                if (reason is None) != (pending > 0) or reason == "not_running":
                    return "an operation's schedulability changed"
                if pending != op.pending_allocation_count:
                    moved.append((op, pending))
            elif reason != "not_running":
                return "an operation's schedulability changed"
        return None

    def _refresh_usage(self, state: TreeState) -> None:
        """Every element's usage and satisfaction summed again from the live allocations
        (as :func:`_fill_usage` did in the slices, from the same start)."""
        for element in state.elements.values():
            if not element.is_operation:
                element.usage = ZERO
        _fill_usage(state.elements, state.operations)

    @staticmethod
    def _refresh_selectors(state: TreeState) -> None:
        """Selector nodes' satisfactions as a build with today's usage gives them: operations
        repositioned where theirs changed, pools without active children take their own."""
        for op in state.operations.values():
            node = op.element.node
            if node is not None:
                state.selector.refresh(node)
            for selector, place in op.preemptive_nodes:
                selector.refresh(place)
        nodes: list[SelectorNode] = []
        for selector in (state.selector, *state.preemptive_selectors.values()):
            nodes.append(selector.root)
            if selector.index is not None:
                nodes.extend(selector.index.values())
        nodes.extend(
            element.node
            for element in state.elements.values()
            if element.node is not None and not element.is_operation
        )
        for node in nodes:
            if not node.element.is_operation and not node.heap:
                node.sat = node.element.local_sat
        for selector in (state.selector, *state.preemptive_selectors.values()):
            selector.sync_own_sats()

    def _commit(self, state: TreeState) -> None:
        """Make the state's records, lists and starvation states the persistent ones."""
        records = self.records
        records.update(self._new_records)
        for op in state.operations.values():
            template = op.template
            assert template is not None
            op.record.allocations.publish(template.bounds)
        for stale in [name for name in records if name not in state.operations]:
            records[stale].allocations.publish(None)
            if not len(records[stale].allocations):
                del records[stale]
        starvation = self.starvation
        starvation.clear()
        for name, element in state.elements.items():
            if element.parent is not None:
                starvation[name] = element.starvation
