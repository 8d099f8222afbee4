"""Preemptive scheduling: starving operations take resources from others.

Follows ``DoPreemptiveAllocationScheduling``, ``BuildPreemptiveSchedulingStageList``,
``RunPreemptiveSchedulingStage``, ``AnalyzePreemptibleAllocations``,
``FindPreemptionBlockingAncestor`` and ``PreemptAllocationsAfterScheduling`` in
``yt/yt/server/scheduler/strategy/policy/scheduling_policy_detail.cpp``.

* Preemptive scheduling runs on a node at its first heartbeat and then at most once per
  ``preemptive_scheduling_backoff``.
* Stages, in order: ``preemptive_aggressive`` (operations of priority *aggressive*; victims at
  least aggressively preemptible) and ``preemptive_normal`` (priority *normal*; victims
  preemptible; it runs even without such operations, to fix violated resource limits).  An
  operation takes part only in the stage whose target equals its priority.
* Across both stages at most one allocation starts via preemption per heartbeat.
* A stage collects the candidate victims on the node whose preemption is not blocked (the
  victim operation is ``graceful``; for the normal stage, some pool on its path sets
  ``allow_normal_preemption = false``; or ``allow_preemption_from_starving_operations`` is off
  and the victim is starving).  Their usage is a *discount*: it counts as free while the stage
  looks for one allocation to start.
* Then the candidates are sorted (:func:`~ytsched.scheduling.preemptible.preemption_sort_key`),
  reversed, and preempted in that order *only while the node's usage exceeds its limits*: the
  smallest sufficient suffix of the most preemptible, newest allocations.  Remaining candidates
  of operations or pools that exceed their specified ``resource_limits`` are preempted too.

One deliberate addition (see ``docs/scheduling.md``): a starvation flag, set at the last
update, makes an operation a preemptor only while the starving element is still below its fair
share on *live* usage.  YTsaurus refreshes flags every 200 ms update, which bounds overshoot;
our callers may update much less often, and without this check two starving operations could
preempt each other back and forth between updates.
"""

from __future__ import annotations

from ytsched.resources import ZERO, vadd
from ytsched.scheduling.api import InterruptionReason
from ytsched.scheduling.context import HeartbeatContext
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.placement import DeactivationReason, restore, schedule
from ytsched.scheduling.preemptible import (
    PreemptionLevel,
    PreemptionStatus,
    preemption_sort_key,
)
from ytsched.scheduling.selector import SelectorNode
from ytsched.scheduling.starvation import PreemptionPriority, SchedulableStatus, StarvationStatus
from ytsched.scheduling.state import ElementState, ScheduledOperation

Candidate = tuple[Allocation, ScheduledOperation, PreemptionStatus]

STAGES: tuple[tuple[str, PreemptionPriority, PreemptionLevel, bool], ...] = (
    (
        "preemptive_aggressive",
        PreemptionPriority.AGGRESSIVE,
        PreemptionLevel.AGGRESSIVELY_PREEMPTIBLE,
        False,
    ),
    ("preemptive_normal", PreemptionPriority.NORMAL, PreemptionLevel.PREEMPTIBLE, True),
)
"""(stage, target priority, minimal victim level, attempt preemption without candidates)."""


# Members read per preemptive attempt and per element of its path, as module constants (an
# Enum class attribute costs ``EnumType.__getattr__``'s type slot in Python 3.11); the same
# objects, so every identity test is unchanged.
_AGGRESSIVELY_STARVING = StarvationStatus.AGGRESSIVELY_STARVING
_NON_STARVING = StarvationStatus.NON_STARVING
_BELOW_FAIR_SHARE = SchedulableStatus.BELOW_FAIR_SHARE
_AGGRESSIVE = PreemptionPriority.AGGRESSIVE
_NORMAL = PreemptionPriority.NORMAL
_NONE = PreemptionPriority.NONE


def preemptive_scheduling_due(ctx: HeartbeatContext, backoff: float) -> bool:
    """First heartbeat of the node, or the backoff passed since the last preemptive pass."""
    node = ctx.node
    last = node.last_preemptive_scheduling_time
    if last is None or ctx.now > last + backoff:
        node.last_preemptive_scheduling_time = ctx.now
        return True
    return False


def live_priority(
    op: ScheduledOperation, operation_only: bool
) -> tuple[PreemptionPriority, ElementState | None]:
    """The operation's preemption priority, counting only starving elements that are still
    below their fair share on live usage; also returns the (lowest) starving element."""
    element = op.element
    path = [element] if operation_only else element.path()
    for candidate in path:
        if (
            candidate.starvation.status is _AGGRESSIVELY_STARVING
            and candidate.live_status() is _BELOW_FAIR_SHARE
        ):
            return _AGGRESSIVE, candidate
    for candidate in path:
        if (
            candidate.starvation.status is not _NON_STARVING
            and candidate.live_status() is _BELOW_FAIR_SHARE
        ):
            return _NORMAL, candidate
    return _NONE, None


def blocking_reason(
    ctx: HeartbeatContext, op: ScheduledOperation, target: PreemptionPriority
) -> str | None:
    """``FindPreemptionBlockingAncestor`` (Gen C rules)."""
    if op.graceful:
        return "graceful_preemption_mode"
    if target is _NORMAL:
        for element in op.element.path():
            if not element.allow_normal_preemption:
                return f"allow_normal_preemption is false at {element.name!r}"
    if (
        not ctx.tree.config.allow_preemption_from_starving_operations
        and op.element.starvation.status is not _NON_STARVING
    ):
        return "victim is starving"
    return None


def analyze(
    ctx: HeartbeatContext, target: PreemptionPriority, min_level: PreemptionLevel
) -> list[Candidate]:
    """``AnalyzePreemptibleAllocations``: candidates and the discount they give."""
    candidates: list[Candidate] = []
    discount = ZERO
    operations = ctx.tree.operations
    tree = ctx.tree.name
    # Per operation, whether :func:`blocking_reason` blocks it (the same for each of its
    # allocations here: it reads only the operation, the stage's target and the tree).
    blocked: dict[str, bool] = {}
    for allocation in ctx.node.allocations.values():
        if allocation.preemption is not None or allocation.tree != tree:
            continue
        operation_id = allocation.operation_id
        op = operations.get(operation_id)
        if op is None:
            continue
        status, level = op.record.allocations.classify(
            allocation, op.element.aggressive_preemption_allowed
        )
        if level < min_level:
            continue
        is_blocked = blocked.get(operation_id)
        if is_blocked is None:
            is_blocked = blocking_reason(ctx, op, target) is not None
            blocked[operation_id] = is_blocked
        if is_blocked:
            continue
        candidates.append((allocation, op, status))
        discount = vadd(discount, allocation.usage)
    ctx.discount = discount
    return candidates


def run_stage(
    ctx: HeartbeatContext,
    stage: str,
    target: PreemptionPriority,
    min_level: PreemptionLevel,
    force: bool,
) -> None:
    """``RunPreemptiveSchedulingStage``: analyze, start at most one allocation, preempt.

    The stage's selector holds the operations whose starvation flags give them the stage's
    priority; an operation whose starving element is no longer below its fair share on live
    usage is refused (``is_not_eligible_for_preemptive_scheduling``) for the stage.  The
    descent visits the least satisfied first, which are the ones still below their share.
    """
    selector = ctx.tree.preemptive_selectors.get(target)
    should_schedule = selector is not None and selector.best_leaf() is not None
    if not should_schedule and (
        not force or (ctx.node_fits() and not ctx.tree.any_limits_violated())
    ):
        return  # nothing to start, nothing to fix: the stage cannot change anything
    candidates = analyze(ctx, target, min_level)
    started: Allocation | None = None
    starving: dict[str, ElementState | None] = {}
    if selector is not None and should_schedule:
        operation_only = ctx.tree.config.scheduling_preemption_priority_scope == "operation_only"
        not_eligible = (
            DeactivationReason.NOT_ELIGIBLE_FOR_AGGRESSIVELY_PREEMPTIVE_SCHEDULING
            if target is PreemptionPriority.AGGRESSIVE
            else DeactivationReason.NOT_ELIGIBLE_FOR_PREEMPTIVE_SCHEDULING
        )

        def check(op: ScheduledOperation) -> DeactivationReason | None:
            priority, element = live_priority(op, operation_only)
            if priority is not target:
                return not_eligible
            starving[op.operation.id] = element
            return None

        deactivated: list[SelectorNode] = []
        try:
            for element in ctx.tree.tag_filtered:
                node = selector.node_for(element)
                if node is not None and node.self_active and not ctx.matches(element):
                    selector.deactivate(node)
                    deactivated.append(node)
            started = schedule(ctx, selector, deactivated, one_allocation=True, check=check)
        finally:
            restore(selector, deactivated)
    ctx.discount = ZERO
    starving_element: ElementState | None = None
    if started is not None:
        ctx.started_by_preemption = started
        starving_element = starving.get(started.operation_id)
    preempt_after_scheduling(ctx, stage, target, candidates, started, starving_element)


def preempt_after_scheduling(
    ctx: HeartbeatContext,
    stage: str,
    target: PreemptionPriority,
    candidates: list[Candidate],
    started: Allocation | None,
    starving: ElementState | None,
) -> None:
    """``PreemptAllocationsAfterScheduling``."""
    ordered = sorted(candidates, key=lambda c: preemption_sort_key(c[0], c[2]), reverse=True)
    reason = (
        InterruptionReason.AGGRESSIVE_PREEMPTION
        if target is PreemptionPriority.AGGRESSIVE
        else InterruptionReason.PREEMPTION
    )
    index = 0
    while index < len(ordered) and not ctx.node_fits():
        allocation, op, status = ordered[index]
        index += 1
        if allocation.id not in ctx.node.allocations:
            continue
        if started is not None:
            where = (
                f"; the deficit was found at {'operation' if starving.is_operation else 'pool'}"
                f" {starving.name!r}"
                if starving is not None
                else ""
            )
            explanation = (
                f"Preempted to start allocation {started.id} of operation"
                f" {started.operation_id}; this allocation had status {status.label!r} and"
                f" stage {stage!r} targets {target.label!r} priority{where}"
            )
        else:
            explanation = "Node resource limits violated"
        ctx.preempt(
            allocation,
            op,
            reason,
            stage=stage,
            status=status.label,
            timeout=op.preemption_timeout,
            explanation=explanation,
            preemptor=started,
            starving_element=starving if started is not None else None,
        )
    for allocation, op, status in ordered[index:]:
        if allocation.id not in ctx.node.allocations:
            continue
        violation: str | None = None
        if op.element.limits_violated():
            violation = (
                f"Preempted due to violation of resource limits of operation {op.operation.id}"
            )
        else:
            parent = op.element.parent
            while parent is not None:
                if parent.limits_violated():
                    violation = f"Preempted due to violation of limits on pool {parent.name!r}"
                    break
                parent = parent.parent
        if violation is None:
            continue
        ctx.preempt(
            allocation,
            op,
            InterruptionReason.RESOURCE_LIMITS_VIOLATED,
            stage=stage,
            status=status.label,
            timeout=op.preemption_timeout,
            explanation=violation,
        )


def run_preemptive_stages(ctx: HeartbeatContext) -> None:
    for stage, target, min_level, force in STAGES:
        if ctx.started_by_preemption is not None:
            break
        run_stage(ctx, stage, target, min_level, force)
