"""The scheduling post-update: a :class:`~ytsched.scheduling.state.TreeState` from an update.

YTsaurus's ``PostUpdate`` (``yt/yt/server/scheduler/strategy/pool_tree.cpp`` and
``TSchedulingPolicy::PostUpdate`` in ``strategy/policy/scheduling_policy_detail.cpp``), in
order: effective (inherited) attributes (``UpdateRecursiveAttributes``,
``UpdateEffectiveRecursiveAttributes``), fair shares published to operations with their
preemptible lists recomputed (``PublishFairShareAtOperation``), schedulable children lists
(``BuildSchedulableChildrenLists``), scheduling and starvation statuses
(``UpdateStarvationStatuses``), preemption priorities (``GetOperationPreemptionPriority``),
and the selector of the best-leaf descent with the operations that may schedule.
"""

from __future__ import annotations

from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import TagFilter
from ytsched.config.tree import TreeConfig
from ytsched.fairshare.elements import Element
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree import effective
from ytsched.pooltree.operations import OperationState
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.pooltree.tree import PoolTree
from ytsched.resources import EPSILON, INFINITE_AMOUNT, RESOURCE_NAMES, ZERO, Vector, vadd
from ytsched.scheduling.preemptible import PreemptionBounds
from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.starvation import (
    PreemptionPriority,
    SchedulableStatus,
    StarvationState,
    StarvationStatus,
    check_for_starvation,
    operation_tolerance,
    scaled_timeouts,
    schedulable_status,
)
from ytsched.scheduling.state import (
    MS,
    ElementState,
    OperationRecord,
    ScheduledOperation,
    TreeState,
    is_eligible,
)


def _view(element: Element, total: Vector) -> ShareView:
    return ShareView.create(
        element.fair_share.total, element.demand_share, element.usage_share, total
    )


def _threshold_vector(values: dict[str, float]) -> Vector | None:
    if not values:
        return None
    result = [INFINITE_AMOUNT] * 5
    for index, name in enumerate(RESOURCE_NAMES):
        if name in values:
            result[index] = values[name]
    return (result[0], result[1], result[2], result[3], result[4])


def _limits(amounts: ResourceAmounts | None) -> Vector | None:
    if amounts is None or amounts.is_empty():
        return None
    return amounts.limits_vector()


class _FilterCache:
    def __init__(self) -> None:
        self._cache: dict[str, TagFilter] = {}

    def get(self, text: str | None) -> TagFilter | None:
        if not text:
            return None
        found = self._cache.get(text)
        if found is None:
            found = TagFilter.parse(text)
            self._cache[text] = found
        return found


def _root(result: UpdateResult, config: TreeConfig) -> ElementState:
    return ElementState(
        name=result.root.name,
        is_operation=False,
        parent=None,
        view=_view(result.root, result.total_resource_limits),
        usage=ZERO,
        tolerance=config.fair_share_starvation_tolerance,
        timeout=config.fair_share_starvation_timeout / MS,
        aggressive_starvation_enabled=config.enable_aggressive_starvation,
        threshold_config=config.effective_non_preemptible_resource_usage_threshold,
        schedulable=True,
    )


def _pool_element(
    pool: Pool,
    parent: ElementState,
    computed: Element,
    total: Vector,
    starvation: StarvationState | None,
    filters: _FilterCache,
) -> ElementState:
    """A pool: its own starvation and preemption settings, else its parent's."""
    own = pool.effective
    return ElementState(
        name=pool.name,
        is_operation=False,
        parent=parent,
        view=_view(computed, total),
        usage=ZERO,
        specified_limits=_limits(own.resource_limits),
        tolerance=(
            own.fair_share_starvation_tolerance
            if own.fair_share_starvation_tolerance is not None
            else parent.tolerance
        ),
        timeout=(
            own.fair_share_starvation_timeout / MS
            if own.fair_share_starvation_timeout is not None
            else parent.timeout
        ),
        aggressive_starvation_enabled=(
            own.enable_aggressive_starvation
            if own.enable_aggressive_starvation is not None
            else parent.aggressive_starvation_enabled
        ),
        aggressive_preemption_allowed=(
            own.allow_aggressive_preemption
            if own.allow_aggressive_preemption is not None
            else parent.aggressive_preemption_allowed
        ),
        allow_normal_preemption=own.allow_normal_preemption,
        threshold_config=(
            own.non_preemptible_resource_usage_threshold
            if own.non_preemptible_resource_usage_threshold is not None
            else parent.threshold_config
        ),
        starvation=starvation if starvation is not None else StarvationState(),
        tag_filter=filters.get(own.scheduling_tag_filter),
        fifo=own.mode == "fifo",
    )


def _operation(
    tree: PoolTree,
    entry: TreeOperation,
    parent: ElementState,
    computed: Element,
    total: Vector,
    starvation: StarvationState | None,
    record: OperationRecord,
    filters: _FilterCache,
) -> ScheduledOperation:
    """An operation: it can only be more conservative than its pool (tolerance = min, timeout
    = max); its aggressive-starvation flag is the pool's."""
    config = tree.config
    operation = entry.operation
    spec = operation.spec
    tolerance = parent.tolerance
    if spec.fair_share_starvation_tolerance is not None:
        tolerance = min(tolerance, spec.fair_share_starvation_tolerance)
    timeout = parent.timeout
    if spec.fair_share_starvation_timeout is not None:
        timeout = max(timeout, spec.fair_share_starvation_timeout / MS)
    aggressive_allowed = parent.aggressive_preemption_allowed
    if spec.is_gang and not config.allow_aggressive_preemption_for_gang_operations:
        aggressive_allowed = False
    running = entry.running and operation.state is OperationState.RUNNING
    pending = operation.pending_job_count if running else 0
    reason = None
    if not running:
        reason = "not_running"
    elif pending == 0:
        reason = "no_pending_allocations"
    element = ElementState(
        name=operation.id,
        is_operation=True,
        parent=parent,
        view=_view(computed, total),
        usage=ZERO,
        specified_limits=_limits(entry.resource_limits),
        tolerance=tolerance,
        timeout=timeout,
        aggressive_starvation_enabled=parent.aggressive_starvation_enabled,
        aggressive_preemption_allowed=aggressive_allowed,
        starvation=starvation if starvation is not None else StarvationState(),
        tag_filter=filters.get(
            spec.tree_options(tree.name).scheduling_tag_filter or spec.scheduling_tag_filter
        ),
        schedulable=reason is None,
        order_key=float(computed.fifo_index) if computed.fifo_index is not None else 0.0,
    )
    op = ScheduledOperation(
        element=element,
        operation=operation,
        entry=entry,
        record=record,
        demand=computed.resource_demand,
        limited=[e for e in [element, *_ancestors(parent)] if e.specified_limits is not None],
        graceful=spec.preemption_mode == "graceful",
        preemption_timeout=effective.allocation_preemption_timeout(config, entry) / MS,
        graceful_preemption_timeout=(
            effective.allocation_graceful_preemption_timeout(config, entry) / MS
        ),
        unschedulable_reason=reason,
        pending_allocation_count=pending,
        tasks=list(operation.tasks.values()),
    )
    element.operation = op
    # PublishFairShareAtOperation: the new fair share moves the class boundaries.
    record.allocations.publish(
        PreemptionBounds.create(
            element.view,
            preemption_satisfaction_threshold=config.preemption_satisfaction_threshold,
            aggressive_preemption_satisfaction_threshold=(
                config.aggressive_preemption_satisfaction_threshold
            ),
            threshold=_threshold_vector(
                effective.operation_non_preemptible_threshold(config, entry)
            ),
        )
    )
    return op


def build_tree_state(
    tree: PoolTree,
    result: UpdateResult,
    now: float,
    records: dict[str, OperationRecord],
    starvation: dict[str, StarvationState],
) -> TreeState:
    """The scheduling view of ``tree`` after ``result`` (the update at ``now``).

    ``records`` (per operation) and ``starvation`` (per element) are the persistent parts;
    entries of elements that no longer exist are dropped from them.
    """
    config = tree.config
    total = result.total_resource_limits
    filters = _FilterCache()
    root = _root(result, config)
    elements: dict[str, ElementState] = {root.name: root}
    pools: list[tuple[Pool, ElementState]] = []
    for pool in tree.root.descendants():
        computed = result.pools.get(pool.name)
        if pool.is_root or pool.parent is None or computed is None:
            continue
        parent = elements[pool.parent.name]
        element = _pool_element(pool, parent, computed, total, starvation.get(pool.name), filters)
        elements[pool.name] = element
        pools.append((pool, element))

    operations: dict[str, ScheduledOperation] = {}
    by_pool: dict[str, list[ScheduledOperation]] = {}
    for entry in tree.operations.values():
        computed = result.operations.get(entry.id)
        if computed is None:
            continue
        record = records.get(entry.id)
        if record is None:
            record = OperationRecord()
            records[entry.id] = record
        parent = elements[entry.pool.name]
        op = _operation(
            tree, entry, parent, computed, total, starvation.get(entry.id), record, filters
        )
        elements[entry.id] = op.element
        operations[entry.id] = op
        by_pool.setdefault(parent.name, []).append(op)

    for stale in [name for name in records if name not in operations]:
        records[stale].allocations.publish(None)
        if not len(records[stale].allocations):
            del records[stale]

    _build_children(tree, pools, root, by_pool, config)
    _update_starvation(elements, config, now)
    starvation.clear()
    for name, element in elements.items():
        if element.parent is not None:
            starvation[name] = element.starvation

    _fill_usage(elements, operations)
    priority_operations = _preemption_priorities(operations, config)

    selector = Selector(root)
    root.node = selector.root
    tag_filtered: list[ElementState] = []
    _build_selector(selector, root, tag_filtered)
    for op in operations.values():
        op.eligible = False
        if op.element.node is not None:
            op.eligible = is_eligible(op)
            if op.eligible:
                selector.activate(op.element.node)
    # An aggressively starving operation whose aggressive flag no longer holds on live usage
    # may still be normally starving through an ancestor: it is in both selectors, and the
    # stage checks the live priority.
    preemptive_selectors = {
        priority: _subset_selector(
            root, [op for op in priority_operations if op.static_priority >= priority]
        )
        for priority in (PreemptionPriority.AGGRESSIVE, PreemptionPriority.NORMAL)
    }

    return TreeState(
        name=tree.name,
        tree=tree,
        config=config,
        result=result,
        update_time=now,
        total=total,
        root=root,
        elements=elements,
        operations=operations,
        selector=selector,
        tag_filtered=tag_filtered,
        preemptive_selectors=preemptive_selectors,
        has_graceful_operations=any(op.graceful for op in operations.values()),
        limited_elements=[e for e in elements.values() if e.specified_limits is not None],
    )


def _ancestors(element: ElementState) -> list[ElementState]:
    result = []
    current: ElementState | None = element
    while current is not None:
        result.append(current)
        current = current.parent
    return result


def _build_children(
    tree: PoolTree,
    pools: list[tuple[Pool, ElementState]],
    root: ElementState,
    by_pool: dict[str, list[ScheduledOperation]],
    config: TreeConfig,
) -> None:
    """Schedulable children lists (``BuildSchedulableChildrenLists``), bottom-up.

    A pool is schedulable when it has a schedulable child.  Child pools come first, in creation
    order, then operations in attach order; in FIFO pools operations come in FIFO order, and
    past ``max_schedulable_element_count_in_fifo_pool`` schedulable elements a child with (near)
    zero fair share becomes unschedulable.
    """
    limit = config.max_schedulable_element_count_in_fifo_pool
    by_name = {element.name: element for _, element in pools}
    composite = [(tree.root, root), *pools]
    for pool, element in reversed(composite):
        children: list[ElementState] = []
        for child_pool in pool.children.values():
            child = by_name.get(child_pool.name)
            if child is not None and child.schedulable:
                children.append(child)
        ops = by_pool.get(element.name, [])
        if element.fifo:
            ops = sorted(ops, key=lambda op: op.element.order_key)
        count = len(children)
        for op in ops:
            if not op.element.schedulable:
                continue
            if (
                element.fifo
                and limit is not None
                and count >= limit
                and all(x <= EPSILON for x in op.element.view.fair_share)
            ):
                op.element.schedulable = False
                op.unschedulable_reason = "fifo_schedulable_element_count_limit_reached"
                continue
            children.append(op.element)
            count += 1
        element.children = children
        element.schedulable = element.parent is None or bool(children)


def _update_starvation(elements: dict[str, ElementState], config: TreeConfig, now: float) -> None:
    """Statuses and the starvation state machine of every element (``UpdateStarvationStatuses``)."""
    coefficient = config.allocation_count_preemption_timeout_coefficient
    aggressive_timeout = config.fair_share_aggressive_starvation_timeout / MS
    for element in elements.values():
        if element.parent is None:
            continue
        op = element.operation
        if op is not None and not element.schedulable:
            element.status = SchedulableStatus.NORMAL
        else:
            tolerance = element.tolerance
            if element.is_operation:
                tolerance = operation_tolerance(element.view, tolerance)
            element.status = schedulable_status(element.view, tolerance, element.view.usage_share)
        if op is None and not config.enable_pool_starvation:
            continue
        timeout, aggressive = element.timeout, aggressive_timeout
        if op is not None:
            timeout, aggressive = scaled_timeouts(
                timeout, aggressive, op.pending_allocation_count, coefficient
            )
        check_for_starvation(
            element.starvation,
            element.status,
            now,
            timeout,
            aggressive,
            element.aggressive_starvation_enabled,
        )
    # Elements are in pre-order (parents first), so the parent's pointers are ready.
    for element in elements.values():
        parent = element.parent
        if parent is None:
            continue
        status = element.starvation.status
        element.lowest_starving = (
            element if status is not StarvationStatus.NON_STARVING else parent.lowest_starving
        )
        element.lowest_aggressively_starving = (
            element
            if status is StarvationStatus.AGGRESSIVELY_STARVING
            else parent.lowest_aggressively_starving
        )


def _fill_usage(
    elements: dict[str, ElementState], operations: dict[str, ScheduledOperation]
) -> None:
    """Live usage of every element from the allocations, and its local satisfaction."""
    for op in operations.values():
        usage = op.record.allocations.total
        element: ElementState | None = op.element
        while element is not None:
            element.usage = vadd(element.usage, usage)
            element = element.parent
    for element in elements.values():
        element.update_local_sat()


def _preemption_priorities(
    operations: dict[str, ScheduledOperation], config: TreeConfig
) -> list[ScheduledOperation]:
    """``GetOperationPreemptionPriority`` from the starvation flags of this update."""
    operation_only = config.scheduling_preemption_priority_scope == "operation_only"
    result = []
    for op in operations.values():
        element = op.element
        if not element.schedulable:
            continue
        if operation_only:
            aggressive = element.lowest_aggressively_starving is element
            starving = element.lowest_starving is element
        else:
            aggressive = element.lowest_aggressively_starving is not None
            starving = element.lowest_starving is not None
        if aggressive:
            op.static_priority = PreemptionPriority.AGGRESSIVE
        elif starving:
            op.static_priority = PreemptionPriority.NORMAL
        if op.static_priority is not PreemptionPriority.NONE:
            result.append(op)
    return result


def _build_selector(
    selector: Selector, root: ElementState, tag_filtered: list[ElementState]
) -> None:
    stack: list[tuple[ElementState, SelectorNode]] = [(root, selector.root)]
    while stack:
        element, node = stack.pop()
        for order, child in enumerate(element.children):
            child_node = selector.add(child, node, order)
            child.node = child_node
            if child.tag_filter is not None:
                tag_filtered.append(child)
            if not child.is_operation:
                child_node.self_active = True
                stack.append((child, child_node))


def _subset_selector(root: ElementState, operations: list[ScheduledOperation]) -> Selector:
    """A selector over some operations and their ancestors (``BuildOperationSubsetInduced
    Subtree``), with the regular selector's orders; operations that may schedule are active."""
    selector = Selector(root, indexed=True)
    index = selector.index
    assert index is not None
    for op in operations:
        chain: list[ElementState] = []
        element: ElementState | None = op.element
        while element is not None and element.parent is not None and element.name not in index:
            chain.append(element)
            element = element.parent
        parent = selector.root if element is None or element.parent is None else index[element.name]
        for member in reversed(chain):
            regular = member.node
            node = selector.add(member, parent, regular.order if regular is not None else 0)
            if not member.is_operation:
                node.self_active = True
            parent = node
        op.preemptive_nodes.append((selector, index[op.element.name]))
    for op in operations:
        if op.eligible:
            selector.activate(index[op.element.name])
    return selector
