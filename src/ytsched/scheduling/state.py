"""The scheduling view of one tree between two fair-share updates.

:func:`ytsched.scheduling.post_update.build_tree_state` builds it from an update (YTsaurus's
tree snapshot after ``PostUpdate``): per element the fair share, statuses, starvation state and
effective attributes; per operation its preemptible list, limits and timeouts; the selector.

Between updates the fair shares, statuses and starvation flags of a :class:`TreeState` stay
fixed; what moves is *usage*: every start, preemption and finish changes the live usage of an
operation and its ancestors (:meth:`TreeState.apply_usage_delta`), which keeps satisfaction
ratios, the selector and the preemptible lists current.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import TagFilter
from ytsched.config.tree import TreeConfig
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree.operations import Operation, OperationState, Task
from ytsched.pooltree.pool import TreeOperation
from ytsched.pooltree.tree import PoolTree
from ytsched.resources import Vector
from ytsched.scheduling.preemptible import PreemptibleList, PreemptionBounds
from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.selector import Selector, SelectorNode, apply_usage, local_satisfaction
from ytsched.scheduling.starvation import (
    PreemptionPriority,
    SchedulableStatus,
    StarvationState,
    operation_tolerance,
    schedulable_status,
)

MS = 1000.0

PREEMPTION_HISTORY_LIMIT = 64
"""How many preemptions (suffered and caused) an operation remembers for ``explain``."""


@dataclass(frozen=True, slots=True)
class OperationSettings:
    """An operation's effective settings in a tree, derived from ``key`` alone.

    Part of an :class:`OperationTemplate`; they change only when a config, the spec or the
    pool's inherited settings do.  ``key`` holds every input the derivation reads: floats as
    their exact bit patterns (``-0.0`` and ``0.0`` differ), frozen config objects by identity
    (``anchors`` keeps them alive, so that no other object can take their ids while the key
    is held), flags and the tree's name as they are.
    """

    key: tuple[object, ...]
    anchors: tuple[object, ...]
    specified_limits: Vector | None
    tolerance: float
    timeout: float
    aggressive_preemption_allowed: bool
    tag_filter: TagFilter | None
    graceful: bool
    preemption_timeout: float
    graceful_preemption_timeout: float
    threshold: Vector | None
    """Absolute ``non_preemptible_resource_usage_threshold`` (see :class:`PreemptionBounds`)."""
    preemption_satisfaction_threshold: float
    aggressive_preemption_satisfaction_threshold: float


@dataclass(frozen=True, slots=True)
class OperationTemplate:
    """What an update derives for an operation from its settings and its computed shares.

    :func:`~ytsched.scheduling.post_update.build_tree_state` keeps the template of the last
    update in the operation's :class:`OperationRecord` and builds a new one only when the
    settings object or the exact ``shares`` (bit patterns of the fair, demand and usage shares,
    the tree's total and the absolute demand) or the FIFO index differ; most operations'
    shares do not move between two updates.  Everything here is immutable, so the same
    objects serve every update with those inputs; in particular the same ``bounds`` object
    lets :meth:`PreemptibleList.publish` skip an unchanged list.
    """

    settings: OperationSettings
    shares: bytes
    fifo_index: int | None
    view: ShareView
    bounds: PreemptionBounds
    order_key: float
    demand: Vector
    status: SchedulableStatus
    """The scheduling status at the update while the operation is schedulable."""


@dataclass(slots=True)
class OperationRecord:
    """Per (tree, operation) state that outlives updates: allocations and diagnostics."""

    allocations: PreemptibleList = field(default_factory=PreemptibleList)
    deactivation_reasons: dict[str, int] = field(default_factory=dict)
    """``deactivation_reasons``: why attempts to schedule the operation failed (counts)."""
    preempted: deque[dict[str, object]] = field(
        default_factory=lambda: deque(maxlen=PREEMPTION_HISTORY_LIMIT)
    )
    """Its allocations that were preempted, newest last."""
    preempted_for: deque[dict[str, object]] = field(
        default_factory=lambda: deque(maxlen=PREEMPTION_HISTORY_LIMIT)
    )
    """Allocations preempted to make room for it."""
    started_allocation_count: int = 0
    preempted_allocation_count: int = 0
    template: OperationTemplate | None = None
    """The operation's template at the last update (see :class:`OperationTemplate`)."""
    usage_memo: tuple[ShareView, Vector, Vector, float] | None = None
    """The operation element's view, list total, usage and local satisfaction at the last
    update (see ``_own_usage`` in :mod:`ytsched.scheduling.post_update`)."""
    pending_memo: tuple[Operation, int, int] | None = None
    """The operation, its ``job_changes`` and its tasks' waiting job count then (see
    ``_unchanged`` in :mod:`ytsched.scheduling.post_update`)."""


@dataclass(eq=False, slots=True)
class ElementState:
    """A pool, the root or an operation as the heartbeats see it until the next update."""

    name: str
    is_operation: bool
    parent: ElementState | None
    view: ShareView
    usage: Vector
    """Live usage: allocations not preempted (graceful ones until they end)."""
    local_sat: float = 0.0
    specified_limits: Vector | None = None
    """Absolute ``resource_limits`` when the element specifies any."""
    tolerance: float = 1.0
    timeout: float = 0.0
    """Effective ``fair_share_starvation_timeout``, seconds."""
    aggressive_starvation_enabled: bool = False
    aggressive_preemption_allowed: bool = True
    allow_normal_preemption: bool = True
    threshold_config: ResourceAmounts | None = None
    starvation: StarvationState = field(default_factory=StarvationState)
    status: SchedulableStatus = SchedulableStatus.NORMAL
    lowest_starving: ElementState | None = None
    lowest_aggressively_starving: ElementState | None = None
    tag_filter: TagFilter | None = None
    schedulable: bool = False
    children: list[ElementState] = field(default_factory=list)
    node: SelectorNode | None = None
    operation: ScheduledOperation | None = None
    fifo: bool = False
    order_key: float = 0.0

    def path(self) -> list[ElementState]:
        """This element and its ancestors up to (not including) the root."""
        result: list[ElementState] = []
        element: ElementState | None = self
        while element is not None and element.parent is not None:
            result.append(element)
            element = element.parent
        return result

    def update_local_sat(self) -> None:
        """``local_sat`` from the view and usage (``ShareView.local_satisfaction``'s native
        body, called directly: one Python frame less for each pool at every update)."""
        self.local_sat = local_satisfaction(self.view, self.usage)

    def live_status(self) -> SchedulableStatus:
        """The scheduling status on live usage (with the operation tolerance rule)."""
        if self.parent is None:
            return SchedulableStatus.NORMAL
        if self.operation is not None and not self.schedulable:
            return SchedulableStatus.NORMAL
        tolerance = self.tolerance
        if self.is_operation:
            tolerance = operation_tolerance(self.view, tolerance)
        return schedulable_status(self.view, tolerance, self.view.share(self.usage))

    def limits_violated(self) -> bool:
        limits = self.specified_limits
        if limits is None:
            return False
        usage = self.usage
        return any(usage[i] > limits[i] + 1e-6 for i in range(5))


@dataclass(eq=False, slots=True)
class ScheduledOperation:
    """An operation's scheduling data for one tree until the next update."""

    element: ElementState
    operation: Operation
    entry: TreeOperation
    record: OperationRecord
    demand: Vector
    """Absolute resource demand at the update (``CheckAvailableDemand``)."""
    limited: list[ElementState]
    """The operation and its ancestors that specify ``resource_limits``."""
    graceful: bool
    preemption_timeout: float
    graceful_preemption_timeout: float
    unschedulable_reason: str | None
    pending_allocation_count: int
    tasks: list[Task]
    """The operation's tasks in spec order (the "controller" tries them in this order)."""
    template: OperationTemplate | None = None
    """What the update derived from the operation's inputs (``None`` when built by hand)."""
    static_priority: PreemptionPriority = PreemptionPriority.NONE
    eligible: bool = False
    preemptive_nodes: list[tuple[Selector, SelectorNode]] = field(default_factory=list)
    """Its places in the selectors of the preemptive stages it may take part in."""


@dataclass(eq=False, slots=True)
class TreeState:
    """Everything heartbeats of one tree's nodes need between two updates."""

    name: str
    tree: PoolTree
    config: TreeConfig
    result: UpdateResult
    update_time: float
    total: Vector
    root: ElementState
    elements: dict[str, ElementState]
    operations: dict[str, ScheduledOperation]
    selector: Selector
    tag_filtered: list[ElementState]
    preemptive_selectors: dict[PreemptionPriority, Selector]
    """Per preemptive stage target, a selector over the operations of that priority (by the
    starvation flags of the update), kept current like the regular one."""
    has_graceful_operations: bool
    limited_elements: list[ElementState]
    """Pools and operations with specified ``resource_limits``."""
    composites: list[ElementState]
    """The root's and the pools' elements: every element that is not an operation's (those
    are the :attr:`operations`' elements), for :meth:`dispose`."""
    pool_keys: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """Per pool with operations, the settings-key part of its operations (see
    ``post_update._pool_key``), handed on to the next state: an unchanged part is passed on
    as the very same object, so that comparing operations' keys finds it by identity."""
    eligibility_changes: int = 0
    """How many times :meth:`refresh_eligibility` turned an operation's ``eligible`` flag
    (only grows): with the same count, the regular selector's active operations are the same
    between heartbeats (stage-local deactivations are undone at each stage's end)."""
    fail_to_fit: dict[tuple[Vector, Vector], list[ScheduledOperation] | None] = field(
        default_factory=dict
    )
    """``Scheduler._stages_idle``'s memo: per node ``(limits, usage)``, the active operations
    none of whose waiting jobs fits (``None``: not all of them fail so), valid for
    :attr:`fail_to_fit_epoch`."""
    level_memo: tuple[int, int] | None = None
    """``scheduler.activity_level``'s answer with the :attr:`eligibility_changes` it was
    computed at."""
    fail_to_fit_epoch: tuple[int, int] = (-1, -1)
    """``(WAITING_EMPTINESS_CHANGES, eligibility_changes)`` when :attr:`fail_to_fit` was
    filled."""

    def dispose(self, keep: dict[str, ScheduledOperation] | None = None) -> None:
        """Break the reference cycles of a replaced state (parents, selector heaps) so that
        reference counting frees it at once instead of a full garbage collection later, which
        would otherwise stall some heartbeat for as long as it takes to walk every object.

        ``keep``: the operations of the state that replaced this one; those that are the very
        objects of this one (reused by the build, ``post_update._reset``) and their elements
        belong to the new state now and are left as they are."""
        for _ in self.dispose_in_slices(None, keep):
            pass

    def dispose_in_slices(
        self, per_slice: int | None, keep: dict[str, ScheduledOperation] | None = None
    ) -> Iterator[None]:
        """:meth:`dispose` with a ``yield`` after the selectors and after every ``per_slice``
        elements and operations (``None``: no yield), for a caller that serves requests in
        between (nothing reads a replaced state, so its half-disposed state is unobserved)."""
        kept = keep if keep is not None else {}
        selectors = [self.selector, *self.preemptive_selectors.values()]
        for selector in selectors:
            selector.dispose()
        if per_slice is not None:
            yield
        # Every element is a composite or an operation's: the operations reused by the new
        # state (the very objects, with their elements) are skipped in one lookup each.
        count = 0
        for element in self.composites:
            _detach(element)
            count += 1
            if count == per_slice:
                count = 0
                yield
        for name, op in self.operations.items():
            if kept.get(name) is op:
                continue
            _detach(op.element)
            op.preemptive_nodes = []
            op.limited = []
            count += 1
            if count == per_slice:
                count = 0
                yield

    def any_limits_violated(self) -> bool:
        return any(element.limits_violated() for element in self.limited_elements)

    def apply_usage_delta(self, op: ScheduledOperation, delta: Vector) -> None:
        """Live usage of ``op`` (and its ancestors) changed by ``delta``.

        Runs for every start and end of an allocation: the walk up the ancestors
        (:func:`~ytsched.scheduling.selector.add_usage`, the same additions in the same
        order), the operation's new satisfaction (:meth:`ElementState.update_local_sat`) and
        the regular selector's refresh (which does nothing when that satisfaction did not
        change, the same test :meth:`Selector.refresh` starts with) are one native call
        (``apply_usage`` in ``src/native/usage_sums.cpp``); the preemptive selectors' loop
        runs only for an operation that has places there."""
        # One native call: ``add_usage(own, delta)``, ``own.local_sat = sat =
        # local_satisfaction(own.view, own.usage)``, and when ``own.node`` is not None
        # ``self.selector.core.refresh(own.node.id, sat)`` (which returns at once when the
        # satisfaction did not change).
        apply_usage(op.element, delta, self.selector.core)
        if op.preemptive_nodes:
            for preemptive_selector, preemptive_node in op.preemptive_nodes:
                preemptive_selector.refresh(preemptive_node)
        if op.graceful:
            self.refresh_eligibility(op)

    def refresh_eligibility(self, op: ScheduledOperation) -> None:
        """Keep the operation's activity in the persistent selector in line with
        :func:`is_eligible`."""
        eligible = is_eligible(op)
        if eligible == op.eligible:
            return
        op.eligible = eligible
        self.eligibility_changes += 1
        places = list(op.preemptive_nodes)
        if op.element.node is not None:
            places.append((self.selector, op.element.node))
        for selector, node in places:
            if eligible:
                selector.activate(node)
            else:
                selector.deactivate(node)


def _detach(element: ElementState) -> None:
    """Break an element's references into its state (see :meth:`TreeState.dispose`)."""
    element.parent = None
    element.children = []
    element.node = None
    element.operation = None
    element.lowest_starving = None
    element.lowest_aggressively_starving = None


_RUNNING = OperationState.RUNNING
_BELOW_FAIR_SHARE = SchedulableStatus.BELOW_FAIR_SHARE
"""Enum members as module constants (the same objects; an Enum class attribute costs ~10x
a global load in Python 3.11, and :func:`is_eligible` runs per operation and update)."""


def is_eligible(op: ScheduledOperation) -> bool:
    """May the operation schedule at all (independently of the node)?

    It must have been schedulable at the update, still run and have a waiting job; a
    ``graceful`` operation additionally only while below its fair share (YTsaurus deactivates
    it with ``fair_share_exceeded`` otherwise).  We check that on live usage, where YTsaurus
    uses the status of the last update (see ``docs/scheduling.md``).
    """
    if not op.element.schedulable or op.operation.state is not _RUNNING:
        return False
    if not any(task.waiting for task in op.tasks):
        return False
    return not (op.graceful and op.element.live_status() is not _BELOW_FAIR_SHARE)
