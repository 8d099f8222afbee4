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

import struct
from collections.abc import Callable
from typing import cast

from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import TagFilter
from ytsched.config.tree import TreeConfig
from ytsched.fairshare.elements import Element
from ytsched.fairshare.native import ElementsByName, ShareKeys
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree import effective
from ytsched.pooltree.operations import OperationState
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.pooltree.tree import PoolTree
from ytsched.resources import EPSILON, INFINITE_AMOUNT, RESOURCE_NAMES, ZERO, Vector
from ytsched.scheduling.native_template import template_from_shares as _template_from_shares
from ytsched.scheduling.preemptible import PreemptionBounds
from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.selector import Selector, SelectorNode, local_satisfaction, sum_usages
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
    OperationSettings,
    OperationTemplate,
    ScheduledOperation,
    TreeState,
    is_eligible,
)

# Enum members as module constants (the same objects): a class attribute of an Enum goes
# through ``EnumType.__getattr__`` in Python 3.11, ~10x a global load, and these are read
# per operation and update.
_RUNNING = OperationState.RUNNING
_NO_PRIORITY = PreemptionPriority.NONE
_NORMAL_PRIORITY = PreemptionPriority.NORMAL
_AGGRESSIVE_PRIORITY = PreemptionPriority.AGGRESSIVE
_NORMAL_STATUS = SchedulableStatus.NORMAL
_NON_STARVING = StarvationStatus.NON_STARVING
_AGGRESSIVELY_STARVING = StarvationStatus.AGGRESSIVELY_STARVING


def _view(
    element: Element | None, total: Vector, keys: ShareKeys | None = None, row: int | None = None
) -> ShareView:
    """The element's share view; with ``keys`` (a native result) the shares come from its
    packed row (the very doubles the lazy attributes would convert, see :class:`ShareKeys`):
    ``row``, else the element's (``element`` is then not read when ``row`` is given)."""
    if keys is not None:
        if row is None:
            assert element is not None
            row = ShareKeys.row(element)
        values = _UNPACK_FAIR_DEMAND_USAGE(keys.blob, row * _SHARES_SIZE)
        return ShareView.create(values[0:5], values[5:10], values[10:15], total)
    assert element is not None
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


def _root(result: UpdateResult, config: TreeConfig, keys: ShareKeys | None) -> ElementState:
    return ElementState(
        name=result.root.name,
        is_operation=False,
        parent=None,
        view=_view(result.root, result.total_resource_limits, keys),
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
    computed: Element | None,
    total: Vector,
    starvation: StarvationState | None,
    filters: _FilterCache,
    keys: ShareKeys | None,
    row: int | None = None,
) -> ElementState:
    """A pool: its own starvation and preemption settings, else its parent's (its shares
    from ``computed``, or from its ``row`` of ``keys``: see :func:`_view`)."""
    own = pool.effective
    return ElementState(
        name=pool.name,
        is_operation=False,
        parent=parent,
        view=_view(computed, total, keys, row),
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


_PACK_SHARES = struct.Struct("25d").pack
"""Exact bit patterns of the float inputs of an operation's template (:class:`ShareKeys`
holds the same bytes for a native result)."""

_UNPACK_SHARES = struct.Struct("25d").unpack
_PACK_TAIL = struct.Struct("2d").pack
"""Exact bit patterns of the pool's tolerance and timeout (see :func:`_pool_key`)."""

_UNPACK_FAIR_DEMAND_USAGE = struct.Struct("15d").unpack_from
"""The fair, demand and usage shares at the start of an element's packed shares."""

_SHARES_SIZE = 25 * 8

_FAIR_AND_DEMAND = slice(0, 10 * 8)
_TOTAL = slice(15 * 8, 20 * 8)
"""Where the fair and demand shares and the tree's total are in the packed shares: with the
settings, all that :meth:`PreemptionBounds.create` reads (not the usage share)."""


def _pool_key(tree: PoolTree, parent: ElementState) -> tuple[object, ...]:
    """The part of :func:`_settings_key` that comes from the operation's pool (the same for
    all its operations, built once per pool and update): the bit patterns of the pool's
    tolerance and timeout, the tree config by identity (a frozen model), as well as the
    inherited ``non_preemptible_resource_usage_threshold`` (``parent.threshold_config``, the
    very object :func:`effective.non_preemptible_threshold` returns for the operation's
    pool: both take the nearest own threshold up the chain, else the tree's), the pool's
    inherited flags and the tree's name."""
    return (
        _PACK_TAIL(parent.tolerance, parent.timeout),
        id(tree.config),
        id(parent.threshold_config),
        parent.aggressive_preemption_allowed,
        parent.aggressive_starvation_enabled,
        tree.name,
    )


def _settings_key(entry: TreeOperation, pool_key: tuple[object, ...]) -> tuple[object, ...]:
    """Every input :func:`_settings` reads, exactly: the pool's part (:func:`_pool_key`), the
    operation spec and the entry's ``resource_limits`` (frozen models, by identity)."""
    return (pool_key, id(entry.operation.spec), id(entry.resource_limits))


def _settings(
    key: tuple[object, ...],
    tree: PoolTree,
    entry: TreeOperation,
    parent: ElementState,
    filters: _FilterCache,
) -> OperationSettings:
    """An operation's effective settings from scratch (reads only what ``key`` holds).

    It can only be more conservative than its pool (tolerance = min, timeout = max); its
    aggressive-starvation flag is the pool's.
    """
    config = tree.config
    spec = entry.operation.spec
    tolerance = parent.tolerance
    if spec.fair_share_starvation_tolerance is not None:
        tolerance = min(tolerance, spec.fair_share_starvation_tolerance)
    timeout = parent.timeout
    if spec.fair_share_starvation_timeout is not None:
        timeout = max(timeout, spec.fair_share_starvation_timeout / MS)
    aggressive_allowed = parent.aggressive_preemption_allowed
    if spec.is_gang and not config.allow_aggressive_preemption_for_gang_operations:
        aggressive_allowed = False
    return OperationSettings(
        key=key,
        anchors=(config, spec, entry.resource_limits, parent.threshold_config),
        specified_limits=_limits(entry.resource_limits),
        tolerance=tolerance,
        timeout=timeout,
        aggressive_preemption_allowed=aggressive_allowed,
        tag_filter=filters.get(
            spec.tree_options(tree.name).scheduling_tag_filter or spec.scheduling_tag_filter
        ),
        graceful=spec.preemption_mode == "graceful",
        preemption_timeout=effective.allocation_preemption_timeout(config, entry) / MS,
        graceful_preemption_timeout=(
            effective.allocation_graceful_preemption_timeout(config, entry) / MS
        ),
        threshold=_threshold_vector(effective.operation_non_preemptible_threshold(config, entry)),
        preemption_satisfaction_threshold=config.preemption_satisfaction_threshold,
        aggressive_preemption_satisfaction_threshold=(
            config.aggressive_preemption_satisfaction_threshold
        ),
    )


def _template(
    settings: OperationSettings,
    shares: bytes,
    computed: Element | None,
    total: Vector,
    bounds: PreemptionBounds | None = None,
    from_shares: bool = False,
    fifo_index: int | None = None,
) -> OperationTemplate:
    """What the operation's computed shares give under its settings, from scratch; with
    ``bounds`` when the caller has them from the same settings, fair and demand shares and
    total (the only inputs of the bounds).

    ``from_shares``: read the fair, demand and usage shares and the demand from the packed
    ``shares`` (the very doubles the element's attributes hold, see :class:`ShareKeys`)
    instead of converting them from the element, and the FIFO index is ``fifo_index`` (the
    element, ``computed``, is then not read and may be ``None``: creating a native result's
    element costs more than the rest of an unchanged operation's step); the tree's total is
    ``total`` either way.

    With ``from_shares`` the template is built natively when every float input is an exact
    ``float`` (:func:`~ytsched.scheduling.native_template.template_from_shares`: the same
    operations on the same doubles; the code below stays its definition and the path for
    other inputs)."""
    if from_shares:
        template = _template_from_shares(settings, shares, total, bounds, fifo_index)
        if template is not None:
            return template
        values = _UNPACK_SHARES(shares)
        fair, demand_share, usage = values[0:5], values[5:10], values[10:15]
        demand = values[20:25]
        view = ShareView.create(fair, demand_share, usage, total)
    else:
        assert computed is not None
        demand = computed.resource_demand
        fifo_index = computed.fifo_index
        view = _view(computed, total)
    if bounds is None:
        # PublishFairShareAtOperation: the new fair share moves the class boundaries.
        bounds = PreemptionBounds.create(
            view,
            preemption_satisfaction_threshold=settings.preemption_satisfaction_threshold,
            aggressive_preemption_satisfaction_threshold=(
                settings.aggressive_preemption_satisfaction_threshold
            ),
            threshold=settings.threshold,
        )
    return OperationTemplate(
        settings=settings,
        shares=shares,
        fifo_index=fifo_index,
        view=view,
        bounds=bounds,
        order_key=float(fifo_index) if fifo_index is not None else 0.0,
        demand=demand,
        status=schedulable_status(
            view, operation_tolerance(view, settings.tolerance), view.usage_share
        ),
    )


def _current_template(
    tree: PoolTree,
    entry: TreeOperation,
    parent: ElementState,
    pool_key: tuple[object, ...],
    computed: Element | None,
    total: Vector,
    record: OperationRecord,
    filters: _FilterCache,
    incremental: bool,
    keys: ShareKeys | None,
    row: int | None = None,
) -> OperationTemplate:
    """The operation's template for this update: the record's when every input is the same
    (and ``incremental``), else a new one (kept in the record when ``incremental``).

    ``pool_key`` is :func:`_pool_key` of ``parent``.  ``keys`` holds the same bit patterns
    for a native result, read from the core's rows in one pass instead of through each
    element's lazy attributes (the byte strings compared are identical either way); ``row``
    is then the operation's row in the result (:meth:`ElementsByName.row`), read from
    ``computed`` when ``None`` (only then is ``computed`` read, and may otherwise be ``None``)."""
    if keys is not None:
        if row is None:
            assert computed is not None
            row = ShareKeys.row(computed)
        shares = keys.blob[row * _SHARES_SIZE : (row + 1) * _SHARES_SIZE]
        fifo_index = keys.fifo_indexes[row]
    else:
        assert computed is not None
        shares = _PACK_SHARES(
            *computed.fair_share.total,
            *computed.demand_share,
            *computed.usage_share,
            *total,
            *computed.resource_demand,
        )
        fifo_index = computed.fifo_index
    key = _settings_key(entry, pool_key)
    if not incremental:
        return _template(_settings(key, tree, entry, parent, filters), shares, computed, total)
    template = record.template
    bounds = None
    if template is not None and template.settings.key == key:
        known = template.shares
        if known == shares and template.fifo_index == fifo_index:
            return template
        settings = template.settings
        if known[_FAIR_AND_DEMAND] == shares[_FAIR_AND_DEMAND] and known[_TOTAL] == shares[_TOTAL]:
            # When only the usage share moved, the same bounds object lets the preemptible
            # list skip its reclassification (PreemptibleList.publish).
            bounds = template.bounds
    else:
        settings = _settings(key, tree, entry, parent, filters)
    template = _template(settings, shares, computed, total, bounds, keys is not None, fifo_index)
    record.template = template
    return template


def _operation(
    tree: PoolTree,
    entry: TreeOperation,
    parent: ElementState,
    pool_key: tuple[object, ...],
    computed: Element | None,
    total: Vector,
    starvation: StarvationState | None,
    record: OperationRecord,
    filters: _FilterCache,
    limited: list[ElementState],
    reusable: ScheduledOperation | None,
    incremental: bool,
    keys: ShareKeys | None,
    row: int | None = None,
) -> ScheduledOperation:
    """An operation's scheduling state: its template (reused when ``incremental`` and its
    key did not change) and what may change without its inputs changing (running state,
    pending jobs).

    ``pool_key`` is :func:`_pool_key` of ``parent``; ``limited`` is the parent's chain of
    ancestors with ``resource_limits``; ``reusable`` is the operation's state in the disposed
    state this one replaces, or ``None``; ``computed`` and ``row`` as in
    :func:`_current_template`.
    """
    operation = entry.operation
    template = _current_template(
        tree, entry, parent, pool_key, computed, total, record, filters, incremental, keys, row
    )
    reason, pending = live_inputs(entry)
    if starvation is None:
        starvation = StarvationState()
    if (
        reusable is not None
        and reusable.operation is operation
        and reusable.entry is entry
        and reusable.record is record
        and reusable.template is not None
    ):
        if reusable.template is not template:
            _retemplate(reusable, template)
        op = _reset(reusable, parent, starvation, reason, pending)
    else:
        op = _fresh(template, entry, parent, starvation, record, reason, pending)
    element = op.element
    op.limited = [element, *limited] if template.settings.specified_limits is not None else limited
    record.allocations.publish(template.bounds)
    return op


def _unchanged(
    op: ScheduledOperation,
    entry: TreeOperation,
    record: OperationRecord,
    context: _PoolContext,
    row: int,
    blob: bytes,
    fifo_indexes: list[int | None],
    own: StarvationState | None,
) -> ScheduledOperation | None:
    """:func:`_operation` for the common case, in one call: ``op`` (the operation's state in
    the replaced state) made what :func:`_operation` returns, when every input of its template
    is unchanged, else ``None`` (the caller takes the general path).

    The tests are those of :func:`_current_template` (the record's template has the same
    settings key and the same packed shares and FIFO index, read from the native result's
    ``blob`` at the operation's ``row``: the row's 200-byte slice, as there; ``startswith``
    at the row's offset compares the same bytes but parses its arguments as a tuple, which
    costs more than the slice) and of :func:`_operation` (``op`` was built from
    that template for the same operation, entry and record), with the pool's key by identity
    (an equal key that is another object takes the general path, which compares by value).
    The key's spec and limits ids are tested as identity of the objects
    ``settings.anchors`` keeps (:func:`_settings` builds both from the same entry, and a
    live object's id is another live object's only if it is that object): the same test
    without two ``id`` calls.  ``own`` is the operation's entry in the persistent starvation
    map (``None``: none), looked up once by the caller for either path.
    What follows is :func:`live_inputs`, :func:`_reset` and the rest of :func:`_operation`,
    written out."""
    template = record.template
    if template is None or op.template is not template:
        return None
    operation = entry.operation
    parent, pool_key, limited, _ = context
    settings = template.settings
    anchors = settings.anchors
    if not (
        op.entry is entry
        and op.operation is operation
        and op.record is record
        and settings.key[0] is pool_key
        and anchors[1] is operation.spec
        and anchors[2] is entry.resource_limits
        and template.fifo_index == fifo_indexes[row]
        and blob[row * _SHARES_SIZE : (row + 1) * _SHARES_SIZE] == template.shares
    ):
        return None
    # live_inputs(entry); the pending count is reused while the operation's job change
    # count is the same (only starts and ends change the waiting lists, see
    # ``Operation.job_changes``).
    pending = 0
    reason: str | None = "not_running"
    if entry.running and operation.state is _RUNNING:
        changes = operation.job_changes
        memo = record.pending_memo
        if memo is not None and memo[0] is operation and memo[1] == changes:
            pending = memo[2]
        else:
            for task in op.tasks:
                pending += len(task.waiting)
            record.pending_memo = (operation, changes, pending)
        reason = None if pending else "no_pending_allocations"
    # _reset(op, parent, own or StarvationState(), reason, pending), less the fields that
    # build_tree_state's later passes assign for every operation whatever they held: usage,
    # local_sat, status, the starving pointers and eligible (_OperationSteps); an operation's
    # element never has children (only pools' and the root's lists are built).
    element = op.element
    element.parent = parent
    element.aggressive_starvation_enabled = parent.aggressive_starvation_enabled
    element.starvation = own if own is not None else StarvationState()
    element.schedulable = reason is None
    element.node = None
    element.operation = op
    op.unschedulable_reason = reason
    op.pending_allocation_count = pending
    op.static_priority = _NO_PRIORITY
    if op.preemptive_nodes:  # else the op's own empty list, as good as a new one
        op.preemptive_nodes = []
    op.limited = [element, *limited] if settings.specified_limits is not None else limited
    record.allocations.publish(template.bounds)
    return op


def live_inputs(entry: TreeOperation) -> tuple[str | None, int]:
    """What an operation's scheduling state reads that heartbeats and requests change between
    two updates without changing the tree's structure: why it may not schedule (``None``,
    ``"not_running"``, ``"no_pending_allocations"``) and its pending allocation count."""
    operation = entry.operation
    pending = 0
    if not (entry.running and operation.state is _RUNNING):
        return "not_running", pending
    for task in operation.tasks.values():
        pending += len(task.waiting)
    return (None if pending else "no_pending_allocations"), pending


def _fresh(
    template: OperationTemplate,
    entry: TreeOperation,
    parent: ElementState,
    starvation: StarvationState,
    record: OperationRecord,
    reason: str | None,
    pending: int,
) -> ScheduledOperation:
    """New scheduling objects for an operation (``limited`` is set by the caller)."""
    operation = entry.operation
    settings = template.settings
    element = ElementState(
        name=operation.id,
        is_operation=True,
        parent=parent,
        view=template.view,
        usage=ZERO,
        specified_limits=settings.specified_limits,
        tolerance=settings.tolerance,
        timeout=settings.timeout,
        aggressive_starvation_enabled=parent.aggressive_starvation_enabled,
        aggressive_preemption_allowed=settings.aggressive_preemption_allowed,
        starvation=starvation,
        tag_filter=settings.tag_filter,
        schedulable=reason is None,
        order_key=template.order_key,
    )
    op = ScheduledOperation(
        element=element,
        operation=operation,
        entry=entry,
        record=record,
        demand=template.demand,
        limited=[],
        graceful=settings.graceful,
        preemption_timeout=settings.preemption_timeout,
        graceful_preemption_timeout=settings.graceful_preemption_timeout,
        unschedulable_reason=reason,
        pending_allocation_count=pending,
        tasks=list(operation.tasks.values()),
        template=template,
    )
    element.operation = op
    return op


def _retemplate(op: ScheduledOperation, template: OperationTemplate) -> None:
    """Give ``op`` (built by :func:`_fresh` from another template of the same operation,
    entry and record) every field :func:`_fresh` takes from ``template``, so that
    :func:`_reset` then makes it what :func:`_fresh` would build from ``template``: an
    operation whose shares moved keeps its objects too."""
    settings = template.settings
    element = op.element
    element.view = template.view
    element.specified_limits = settings.specified_limits
    element.tolerance = settings.tolerance
    element.timeout = settings.timeout
    element.aggressive_preemption_allowed = settings.aggressive_preemption_allowed
    element.tag_filter = settings.tag_filter
    element.order_key = template.order_key
    op.demand = template.demand
    op.graceful = settings.graceful
    op.preemption_timeout = settings.preemption_timeout
    op.graceful_preemption_timeout = settings.graceful_preemption_timeout
    op.template = template


def _reset(
    op: ScheduledOperation,
    parent: ElementState,
    starvation: StarvationState,
    reason: str | None,
    pending: int,
) -> ScheduledOperation:
    """The scheduling objects of the disposed state, made what :func:`_fresh` would build.

    The caller checked that ``op`` was built from (or :func:`_retemplate` gave it) the same
    template, operation, entry and
    record, so every field :func:`_fresh` takes from those holds the same value (templates
    are immutable and nothing assigns those fields after a build; the operation's tasks are
    fixed at its creation).  Every other field, the ones the build, the heartbeats and
    :meth:`TreeState.dispose` change, is set here to what :func:`_fresh` gives it
    (``tests/scheduling/test_incremental_update.py`` compares both field by field).  An
    operation's element keeps the empty ``children`` :func:`_fresh` gives it: only the
    pools' and the root's lists are ever built (:func:`_build_children`).
    """
    element = op.element
    element.parent = parent
    element.usage = ZERO
    element.local_sat = 0.0
    element.aggressive_starvation_enabled = parent.aggressive_starvation_enabled
    element.starvation = starvation
    element.status = _NORMAL_STATUS
    element.lowest_starving = None
    element.lowest_aggressively_starving = None
    element.schedulable = reason is None
    element.node = None
    element.operation = op
    op.unschedulable_reason = reason
    op.pending_allocation_count = pending
    op.static_priority = _NO_PRIORITY
    op.eligible = False
    op.preemptive_nodes = []
    return op


def _share_keys(result: UpdateResult, total: Vector) -> ShareKeys | None:
    """Every element's packed shares in one pass when ``result`` comes from the native core
    (all its elements read one pair of result arrays), else ``None``."""
    rows = ShareKeys.rows_of(result.root)
    return None if rows is None else ShareKeys(rows[0], rows[1], total)


PoolElements = tuple[
    ElementState,
    dict[str, ElementState],
    list[tuple[Pool, ElementState]],
    dict[str, list[ElementState]],
]
"""The root's element, every element by name, the pools with theirs in pre-order, and per
element it and its ancestors that specify ``resource_limits`` (read-only lists)."""


def _pool_elements(
    tree: PoolTree,
    result: UpdateResult,
    keys: ShareKeys | None,
    filters: _FilterCache,
    starvation_of: Callable[[str], StarvationState | None],
) -> PoolElements:
    """The pools' elements of the new state (shared by the one-step and the aside build,
    which differ only in the starvation state a pool starts from: ``starvation_of``)."""
    total = result.total_resource_limits
    root = _root(result, tree.config, keys)
    elements: dict[str, ElementState] = {root.name: root}
    pools: list[tuple[Pool, ElementState]] = []
    limited: dict[str, list[ElementState]] = {root.name: []}
    computed_pools = result.pools
    # With a native result (``keys``), pools are found by row, their elements not created.
    rows = cast(ElementsByName, computed_pools).rows() if keys is not None else None
    computed: Element | None = None
    row: int | None = None
    for pool in tree.root.descendants():
        if pool.is_root or pool.parent is None:
            continue
        if rows is not None:
            row = rows.get(pool.name)
            if row is None:
                continue
        else:
            computed = computed_pools.get(pool.name)
            if computed is None:
                continue
        parent = elements[pool.parent.name]
        element = _pool_element(
            pool, parent, computed, total, starvation_of(pool.name), filters, keys, row
        )
        elements[pool.name] = element
        pools.append((pool, element))
        inherited = limited[parent.name]
        limited[pool.name] = (
            [element, *inherited] if element.specified_limits is not None else inherited
        )
    return root, elements, pools, limited


_PoolContext = tuple[ElementState, tuple[object, ...], list[ElementState], list[ScheduledOperation]]
"""Per pool with operations, in :func:`build_tree_state`: its element, :func:`_pool_key`,
``limited`` chain and its list of operations in ``by_pool`` (held here to save a lookup per
operation)."""


def build_tree_state(
    tree: PoolTree,
    result: UpdateResult,
    now: float,
    records: dict[str, OperationRecord],
    starvation: dict[str, StarvationState],
    previous: TreeState | None = None,
    *,
    incremental: bool = True,
) -> TreeState:
    """The scheduling view of ``tree`` after ``result`` (the update at ``now``).

    ``records`` (per operation) and ``starvation`` (per element) are the persistent parts;
    entries of elements that no longer exist are dropped from them.  ``previous``, the state
    this one replaces, is disposed (:meth:`TreeState.dispose`) first; nothing may use it
    afterwards.

    ``incremental`` builds the same state with less work, which matters because most
    operations do not change between two updates: an operation's template
    (:class:`OperationTemplate`) is reused when its key did not change, with it the
    publication of its preemptible list when the list did not change either
    (:meth:`PreemptibleList.publish`), and its scheduling objects from ``previous`` when built
    from the same template (:func:`_reset`).  ``incremental=False`` builds everything anew
    (tests compare the two).
    """
    reusable: dict[str, ScheduledOperation] = {}
    known_pool_keys: dict[str, tuple[object, ...]] = {}
    if previous is not None and incremental:
        reusable = previous.operations
        known_pool_keys = previous.pool_keys
    pool_keys: dict[str, tuple[object, ...]] = {}
    config = tree.config
    total = result.total_resource_limits
    filters = _FilterCache()
    keys = _share_keys(result, total) if incremental else None
    root, elements, pools, limited = _pool_elements(tree, result, keys, filters, starvation.get)
    pool_elements = [element for _, element in pools]
    # Without a FIFO pools' count limit the children lists leave every operation's
    # schedulability as built, and nothing else an operation's step reads comes later
    # (the pools' starvation reads no operation): each operation's step then runs as soon
    # as the operation is built, in the same order (``fused``; see :class:`_OperationSteps`);
    # with a limit, after the children lists.
    fused = config.max_schedulable_element_count_in_fifo_pool is None
    if fused:
        _pool_starvation(pool_elements, config, now)
    steps = _OperationSteps(config, now)
    run_steps = steps.run

    operations: dict[str, ScheduledOperation] = {}
    by_pool: dict[str, list[ScheduledOperation]] = {}
    contexts: dict[str, _PoolContext] = {}
    computed_operations = result.operations
    blob = keys.blob if keys is not None else b""
    fifo_indexes = keys.fifo_indexes if keys is not None else []
    # With a native result, operations are found by row, their elements never created (see
    # :func:`_template`); ``keys`` is only set for one, whose operations are ElementsByName
    # (their rows looked up in one pass: ``ElementsByName.rows``).
    rows = cast(ElementsByName, computed_operations).rows() if keys is not None else None
    # The maps' ``get`` bound once: the loop runs per operation and update, and a method
    # lookup costs about as much as the call it precedes.
    row_of = rows.get if rows is not None else None
    record_of = records.get
    context_of = contexts.get
    reusable_of = reusable.get
    starvation_of = starvation.get
    computed: Element | None = None
    row = -1
    for entry in tree.operations.values():
        operation = entry.operation
        op_id = operation.id
        if row_of is not None:
            found = row_of(op_id)
            if found is None:
                continue
            row = found
        else:
            computed = computed_operations.get(op_id)
            if computed is None:
                continue
        record = record_of(op_id)
        if record is None:
            record = OperationRecord()
            records[op_id] = record
        pool_name = entry.pool.name
        context = context_of(pool_name)
        if context is None:
            parent = elements[pool_name]
            pool_key = _pool_key(tree, parent)
            known = known_pool_keys.get(pool_name)
            if known == pool_key:
                pool_key = known  # the same object: operations' keys then compare by identity
            pool_keys[pool_name] = pool_key
            children: list[ScheduledOperation] = []
            by_pool[pool_name] = children
            context = (parent, pool_key, limited[pool_name], children)
            contexts[pool_name] = context
        old = reusable_of(op_id)
        own = starvation_of(op_id)
        op = (
            _unchanged(old, entry, record, context, row, blob, fifo_indexes, own)
            if old is not None and keys is not None
            else None
        )
        if op is None:
            op = _operation(
                tree,
                entry,
                context[0],
                context[1],
                computed,
                total,
                own,
                record,
                filters,
                context[2],
                old,
                incremental,
                keys,
                row,
            )
        elements[op_id] = op.element
        operations[op_id] = op
        context[3].append(op)
        if fused:
            run_steps(op)
    if previous is not None:
        # After the build: the objects reused from it (``_reset``) are left alone.
        previous.dispose(keep=operations)

    # Every operation built has its record: with as many records, none is stale.
    if len(records) != len(operations):
        for stale in [name for name in records if name not in operations]:
            records[stale].allocations.publish(None)
            if not len(records[stale].allocations):
                del records[stale]

    _build_children(tree, pools, root, by_pool, config)
    if not fused:
        _pool_starvation(pool_elements, config, now)
    starvation.clear()
    for element in pool_elements:
        starvation[element.name] = element.starvation
    limited_elements = [e for e in (root, *pool_elements) if e.specified_limits is not None]
    if not fused:
        for op in operations.values():
            run_steps(op)
    starvation.update(steps.states)
    sum_usages(steps.usages)
    limited_elements.extend(steps.limited)
    priority_operations, has_graceful = steps.priority_operations, steps.graceful
    root.update_local_sat()
    for element in pool_elements:
        element.update_local_sat()

    selector = Selector(root)
    root.node = selector.root
    tag_filtered: list[ElementState] = []
    _build_selector(selector, root, tag_filtered)
    # Only an operation in a schedulable children list gets a node, and those lists hold
    # only operations schedulable when their step ran (fused: no FIFO limit demotes one
    # later; else the steps run after the lists), in operation order as before: every other
    # operation's ``eligible`` stays the ``False`` its step gave it.
    for op in steps.schedulable:
        if op.element.node is not None:
            op.eligible = is_eligible(op)
            if op.eligible:
                selector.activate(op.element.node)
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
        preemptive_selectors=preemptive_selectors(root, priority_operations),
        has_graceful_operations=has_graceful,
        limited_elements=limited_elements,
        composites=[root, *pool_elements],
        pool_keys=pool_keys,
    )


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


def _pool_starvation(pools: list[ElementState], config: TreeConfig, now: float) -> None:
    """:func:`_update_starvation`'s part for the pools (every non-root pool element, in
    pre-order): what it does to them before the operations' step, whose result no pool
    step reads."""
    coefficient = config.allocation_count_preemption_timeout_coefficient
    aggressive_timeout = config.fair_share_aggressive_starvation_timeout / MS
    pool_starvation = config.enable_pool_starvation
    for element in pools:
        element_starvation(element, now, coefficient, aggressive_timeout, pool_starvation)
    for element in pools:
        starving_pointers(element)


class _OperationSteps:
    """Every per-operation pass that follows the schedulable children lists, one operation
    at a time (the passes read nothing another operation's step writes, and the pools'
    results are folded in the same order): :func:`_operation_starvation` (the pools'
    pointers must be set), the operation's entry in :attr:`states` (added to the
    ``starvation`` map after the pools', as :func:`build_tree_state` fills it from its
    elements), :func:`_fill_usage`'s operation part (the ancestors' sums gathered in
    :attr:`usages`; the caller then sums them and updates the pools' local
    satisfaction), the operations with ``resource_limits`` in :attr:`limited` (after the
    pools', in element order), :func:`_preemption_priorities`
    (:attr:`priority_operations`, :attr:`graceful`), and the reset of ``eligible`` with the
    schedulable operations gathered for the selector's activation (:attr:`schedulable`).

    The starvation step of a ``NORMAL`` operation is :func:`check_for_starvation`'s first
    branch written out: its (scaled) timeouts are not read there."""

    __slots__ = (
        "aggressive_timeout",
        "coefficient",
        "graceful",
        "limited",
        "now",
        "operation_only",
        "priority_operations",
        "schedulable",
        "states",
        "usages",
    )

    def __init__(self, config: TreeConfig, now: float) -> None:
        self.now = now
        self.coefficient = config.allocation_count_preemption_timeout_coefficient
        self.aggressive_timeout = config.fair_share_aggressive_starvation_timeout / MS
        self.operation_only = config.scheduling_preemption_priority_scope == "operation_only"
        self.states: dict[str, StarvationState] = {}
        self.limited: list[ElementState] = []
        self.priority_operations: list[ScheduledOperation] = []
        self.graceful = False
        """Whether any operation is graceful."""
        self.schedulable: list[ScheduledOperation] = []
        """The schedulable operations, in operation order: the only ones the regular selector
        may hold (see :func:`build_tree_state`); every operation's ``eligible`` is reset here
        (``False``), the selector's activation sets it for these."""
        self.usages: list[tuple[ElementState, Vector]] = []
        """``(parent, total)`` of each operation with usage, in operation order: the caller
        folds them into the ancestors' usages with one :func:`sum_usages` call (nothing in the
        steps reads a pool's usage)."""

    def run(self, op: ScheduledOperation) -> None:
        """The steps of one operation, after its pool's (see the class)."""
        element = op.element
        template = op.template
        schedulable = element.schedulable
        if not schedulable:
            status = _NORMAL_STATUS
        elif template is not None:
            status = template.status
        else:
            view = element.view
            tolerance = operation_tolerance(view, element.tolerance)
            status = schedulable_status(view, tolerance, view.usage_share)
        element.status = status
        state = element.starvation
        if status is _NORMAL_STATUS:
            state.below_fair_share_since = None
            if state.status is not _NON_STARVING:
                state.status = _NON_STARVING
                state.starving_since = None
        else:
            timeout, aggressive = element.timeout, self.aggressive_timeout
            ratio = op.pending_allocation_count / self.coefficient
            if ratio < 1.0:
                timeout, aggressive = timeout * ratio, aggressive * ratio
            check_for_starvation(
                state, status, self.now, timeout, aggressive, element.aggressive_starvation_enabled
            )
        parent = element.parent
        assert parent is not None
        starving = state.status
        lowest = element if starving is not _NON_STARVING else parent.lowest_starving
        lowest_aggressive = (
            element if starving is _AGGRESSIVELY_STARVING else parent.lowest_aggressively_starving
        )
        element.lowest_starving = lowest
        element.lowest_aggressively_starving = lowest_aggressive
        self.states[element.name] = state
        if element.specified_limits is not None:
            self.limited.append(element)
        if op.graceful:
            self.graceful = True
        op.eligible = False

        record = op.record
        total = record.allocations.total
        view = element.view
        memo = record.usage_memo
        if memo is None or memo[0] is not view or memo[1] is not total:
            memo = _own_usage(view, total)
            record.usage_memo = memo
        element.usage = memo[2]
        element.local_sat = memo[3]
        if total != ZERO:
            self.usages.append((parent, total))

        if schedulable:
            self.schedulable.append(op)
            # preemption_priority(element, operation_only), written out on the pointers just
            # set: with the default scope an operation is starving when it or an ancestor is.
            if self.operation_only:
                aggressive_here = lowest_aggressive is element
                starving_here = lowest is element
            else:
                aggressive_here = lowest_aggressive is not None
                starving_here = lowest is not None
            if aggressive_here:
                op.static_priority = _AGGRESSIVE_PRIORITY
                self.priority_operations.append(op)
            elif starving_here:
                op.static_priority = _NORMAL_PRIORITY
                self.priority_operations.append(op)
            else:
                op.static_priority = _NO_PRIORITY


def _update_starvation(elements: dict[str, ElementState], config: TreeConfig, now: float) -> None:
    """Statuses and the starvation state machine of every element (``UpdateStarvationStatuses``).

    :func:`build_tree_state` does the same in two parts (:func:`_pool_starvation`, then each
    operation inside :class:`_OperationSteps`); this whole-tree form serves the state built
    aside (``post_update_aside``)."""
    coefficient = config.allocation_count_preemption_timeout_coefficient
    aggressive_timeout = config.fair_share_aggressive_starvation_timeout / MS
    pool_starvation = config.enable_pool_starvation
    for element in elements.values():
        if element.parent is not None:
            element_starvation(element, now, coefficient, aggressive_timeout, pool_starvation)
    # Elements are in pre-order (parents first), so the parent's pointers are ready.
    for element in elements.values():
        if element.parent is not None:
            starving_pointers(element)


def element_starvation(
    element: ElementState,
    now: float,
    coefficient: float,
    aggressive_timeout: float,
    pool_starvation: bool,
) -> None:
    """One non-root element's status and starvation step (see :func:`_update_starvation`;
    ``coefficient`` and ``aggressive_timeout`` from the tree config, the latter in seconds).

    An operation's depends on its view, template, schedulability and pending allocation
    count alone; a pool's on its view and settings (never on live usage)."""
    op = element.operation
    if op is not None and not element.schedulable:
        element.status = _NORMAL_STATUS
    elif op is not None and op.template is not None:
        # The same computation on the same view and tolerance, done with the template.
        element.status = op.template.status
    else:
        tolerance = element.tolerance
        if element.is_operation:
            tolerance = operation_tolerance(element.view, tolerance)
        element.status = schedulable_status(element.view, tolerance, element.view.usage_share)
    if op is None and not pool_starvation:
        return
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


def starving_pointers(element: ElementState) -> None:
    """The element's lowest (aggressively) starving element on its path, from its own
    starvation status and its parent's pointers (which must be set already)."""
    parent = element.parent
    assert parent is not None
    status = element.starvation.status
    element.lowest_starving = element if status is not _NON_STARVING else parent.lowest_starving
    element.lowest_aggressively_starving = (
        element if status is _AGGRESSIVELY_STARVING else parent.lowest_aggressively_starving
    )


def _fill_usage(
    elements: dict[str, ElementState], operations: dict[str, ScheduledOperation]
) -> None:
    """Live usage of every element from the allocations, and its local satisfaction.

    Each element's usage is the sum, in operation order, of its operations' usages, starting
    from ``ZERO``.  Operations without usage are skipped: adding a zero (of either sign) leaves
    a sum unchanged bit for bit unless the sum is ``-0.0``, and a sum that starts at ``+0.0``
    never becomes ``-0.0`` (round-to-nearest gives ``-0.0`` only for ``-0.0 + -0.0``).

    An operation's own usage and satisfaction are functions of its view and its list's
    ``total`` alone (:func:`_own_usage`), kept in its record with those very objects.  The
    ancestors' sums are one :func:`sum_usages` call over the operations' ``(parent, total)``
    pairs in operation order (the same additions in the same order for each ancestor).
    """
    usages: list[tuple[ElementState, Vector]] = []
    for op in operations.values():
        record = op.record
        total = record.allocations.total
        element = op.element
        view = element.view
        memo = record.usage_memo
        if memo is None or memo[0] is not view or memo[1] is not total:
            memo = _own_usage(view, total)
            record.usage_memo = memo
        element.usage = memo[2]
        element.local_sat = memo[3]
        if total != ZERO:
            assert element.parent is not None
            usages.append((element.parent, total))
    sum_usages(usages)
    for element in elements.values():
        if not element.is_operation:
            element.update_local_sat()


def _own_usage(view: ShareView, total: Vector) -> tuple[ShareView, Vector, Vector, float]:
    """``(view, total, usage, satisfaction)`` of an operation element whose allocations sum to
    ``total``: its usage is ``ZERO`` plus ``total`` (skipped when zero, as in
    :func:`_fill_usage`), a pure function of ``total``, and its satisfaction a pure function
    of the view and that usage (``ShareView.local_satisfaction``'s native body, called
    directly).  The caller keeps the tuple, which keeps ``view`` and
    ``total`` alive: the same objects (``is``) give the same results."""
    usage = ZERO
    if total != ZERO:
        usage = (0.0 + total[0], 0.0 + total[1], 0.0 + total[2], 0.0 + total[3], 0.0 + total[4])
    return view, total, usage, local_satisfaction(view, usage)


def _preemption_priorities(
    operations: dict[str, ScheduledOperation], config: TreeConfig
) -> list[ScheduledOperation]:
    """``GetOperationPreemptionPriority`` from the starvation flags of this update."""
    operation_only = config.scheduling_preemption_priority_scope == "operation_only"
    result = []
    for op in operations.values():
        if op.element.schedulable:
            op.static_priority = preemption_priority(op.element, operation_only)
            if op.static_priority is not _NO_PRIORITY:
                result.append(op)
    return result


def preemption_priority(element: ElementState, operation_only: bool) -> PreemptionPriority:
    """A schedulable operation's static preemption priority from its starvation pointers
    (``operation_only``: the tree's ``scheduling_preemption_priority_scope``)."""
    if operation_only:
        aggressive = element.lowest_aggressively_starving is element
        starving = element.lowest_starving is element
    else:
        aggressive = element.lowest_aggressively_starving is not None
        starving = element.lowest_starving is not None
    if aggressive:
        return _AGGRESSIVE_PRIORITY
    if starving:
        return _NORMAL_PRIORITY
    return _NO_PRIORITY


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


def preemptive_selectors(
    root: ElementState, priority_operations: list[ScheduledOperation]
) -> dict[PreemptionPriority, Selector]:
    """Per preemption priority, a selector over the operations with at least that priority.

    An aggressively starving operation whose aggressive flag no longer holds on live usage may
    still be normally starving through an ancestor: it is in both selectors, and the stage
    checks the live priority."""
    return {
        priority: _subset_selector(
            root, [op for op in priority_operations if op.static_priority >= priority]
        )
        for priority in (PreemptionPriority.AGGRESSIVE, PreemptionPriority.NORMAL)
    }


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
