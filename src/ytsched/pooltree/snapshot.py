"""The tree as engine input: :class:`~ytsched.fairshare.model.TreeSnapshot` each period.

``to_snapshot`` is pure: pools in pre-order with their effective config and integral state,
operations with usage and demand from their jobs (an operation that is not running demands
only its usage, as in ``TSchedulerOperationElement``), weights and limits per tree.
``update`` runs the engine and carries the integral volumes to the next period, the way
``DoFairShareUpdateAt`` in ``yt/yt/server/scheduler/strategy/pool_tree.cpp`` copies persistent
attributes back to the live tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from ytsched.config.pool import PoolConfig
from ytsched.config.tree import TreeConfig
from ytsched.fairshare import native
from ytsched.fairshare.model import (
    FifoSortParameter,
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    SchedulingMode,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.pooltree.input_marks import OperationInputs
from ytsched.pooltree.operations import Job, Operation, OperationState
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.resources import INFINITE_RESOURCES, ZERO, Vector

if TYPE_CHECKING:
    from ytsched.pooltree.tree import PoolTree

MS = 1000.0


def update_options(config: TreeConfig) -> UpdateOptions:
    """The engine switches of a tree config (the tree config owns their defaults)."""
    integral = config.integral_guarantees
    return UpdateOptions(
        main_resource=config.main_resource,
        integral_pool_capacity_saturation_period=integral.pool_capacity_saturation_period / MS,
        integral_smooth_period=integral.smooth_period / MS,
        relaxed_share_multiplier_limit=integral.relaxed_share_multiplier_limit,
        should_distribute_free_volume_among_children=(
            config.should_distribute_free_volume_among_children
        ),
        enable_step_function_for_gang_operations=config.enable_step_function_for_gang_operations,
        enable_improved_fair_share_by_fit_factor_computation=(
            config.enable_improved_fair_share_by_fit_factor_computation
        ),
        enable_improved_fair_share_by_fit_factor_computation_distribution_gap=(
            config.enable_improved_fair_share_by_fit_factor_computation_distribution_gap
        ),
        enable_fast_fifo_fair_share_by_fit_factor_computation=(
            config.enable_fast_fifo_fair_share_by_fit_factor_computation
        ),
        enable_fifo_children_reordering_for_guarantee_utilization=(
            config.enable_fifo_children_reordering_for_guarantee_utilization
        ),
        infer_weight_from_guarantees_share_multiplier=(
            config.infer_weight_from_guarantees_share_multiplier
        ),
    )


def tree_update_options(tree: PoolTree) -> UpdateOptions:
    """:func:`update_options` of the tree's config, the same object while the config is (tree
    configs are frozen models: a change replaces the object; ``UpdateOptions`` is frozen too,
    and the flat builder then skips checking it again)."""
    config = tree.config
    known = tree.update_options_memo
    if known is not None and known[0] is config:
        return known[1]
    options = update_options(config)
    tree.update_options_memo = (config, options)
    return options


def _integral(config: PoolConfig) -> IntegralGuarantees:
    integral = config.integral_guarantees
    return IntegralGuarantees(
        guarantee_type=IntegralGuaranteeType(integral.guarantee_type),
        resource_flow=integral.resource_flow.to_vector(0.0),
        burst_guarantee_resources=integral.burst_guarantee_resources.to_vector(0.0),
        relaxed_share_multiplier_limit=integral.relaxed_share_multiplier_limit,
        can_accept_free_volume=integral.can_accept_free_volume,
        should_distribute_free_volume_among_children=(
            integral.should_distribute_free_volume_among_children
        ),
    )


def pool_spec(
    pool: Pool, memo: PoolSpecMemo | None = None, fresh: PoolSpecMemo | None = None
) -> PoolSpec:
    """The pool's engine input.  With ``memo`` (the last update's, see :data:`PoolSpecMemo`),
    what comes from the pool's config is reused while the config object is the same (configs
    are frozen models: a change replaces the object); ``fresh`` receives this update's."""
    if pool.is_root:
        return PoolSpec(name=pool.name, parent=None)
    config = pool.effective
    known = memo.get(pool.name) if memo is not None else None
    parts = _config_parts(config) if known is None or known[0] is not config else known[1]
    if fresh is not None:
        fresh[pool.name] = (config, parts)
    return PoolSpec(
        name=pool.name,
        parent=pool.parent_name,
        accumulated_resource_volume=pool.accumulated_resource_volume,
        last_integral_share_ratio=pool.last_integral_share_ratio,
        **parts,
    )


def _config_parts(config: PoolConfig) -> dict[str, Any]:
    """The fields of a pool's :class:`PoolSpec` that depend on its (effective) config alone
    (the engine only reads them)."""
    return {
        "mode": SchedulingMode(config.mode),
        "weight": config.weight,
        "strong_guarantee_resources": config.strong_guarantee_resources.specified(),
        "resource_limits": config.resource_limits.limits_vector(),
        "integral_guarantees": _integral(config),
        "fifo_sort_parameters": tuple(FifoSortParameter(p) for p in config.fifo_sort_parameters),
        "compute_promised_guarantee_fair_share": config.compute_promised_guarantee_fair_share,
        "enable_fifo_children_reordering_for_guarantee_utilization": (
            config.enable_fifo_children_reordering_for_guarantee_utilization
        ),
        "enable_step_function_for_gang_operations": (
            config.enable_step_function_for_gang_operations
        ),
    }


PoolSpecMemo = dict[str, tuple[PoolConfig, dict[str, Any]]]
"""Per pool: its effective config at the last update (kept alive, so compared by identity)
and the :class:`PoolSpec` fields derived from it (:func:`_config_parts`)."""


UsageMemo = dict[str, tuple[Operation, int, int, int, Vector, list[tuple[Job, Vector]] | None]]
"""Per operation: the operation, its running-job count, ended-job count and
``usage_releases`` count, its usage in the tree then, and checkpoints of that sum (``None``
when it came from the exact sums; see :func:`_memoized_usage`)."""

CHECKPOINT_EVERY = 32
"""Running jobs between two checkpoints of an operation's memoized usage sum."""


def _memoized_usage(
    operation: Operation, tree: str, memo: UsageMemo, fresh: UsageMemo, ended: int
) -> Vector:
    """``operation.resource_usage(tree)``, reused from the last update when provably equal.

    The usage is a sum over ``running_jobs`` in order, of ``resources`` of the jobs in the
    tree whose usage is not released.  Jobs enter ``running_jobs`` only when started (at the
    end, always a new ``Job`` object) and leave it only when they end, which adds one to a
    counter of their task (``completed_count``, ``failed_count`` or ``aborted_count``, never
    decreased): with the same running count and the same ended count, no job started or
    ended, so the same jobs are there in the same order.  A job's ``resources`` and ``tree``
    are set when it starts; ``usage_released`` only ever turns true, through
    ``Operation.release_job_usage``, which counts it in ``usage_releases``: with the same
    count, no flag changed.  The sum is then the same, bit for bit, and no job needs a
    visit.  ``ended`` is that ended count (the caller sums it with other per-task figures).

    Otherwise, with the same release count, the running jobs are the old ones that did not
    end, in their old order, followed by new ones.  So when the job at position ``i`` is
    the very object that was at position ``i`` at the last update, no job before it ended
    (the old jobs before it would have moved it to a lower position, and new jobs come
    after every old one): the first ``i`` jobs are the same, with the same flags, and their
    sum, a left fold from ``ZERO``, is the same.  The memo keeps, every
    :data:`CHECKPOINT_EVERY` positions, the job there and the fold of the jobs before it;
    the sum continues from the last checkpoint whose job is still in place (binary search:
    once a checkpoint's job moved, every later one did), which with starts only is the
    memoized sum itself.  Before that, the operation's exact integer sums give the same sum
    when its jobs' resources allow (:mod:`ytsched.pooltree.exact_usage`), with no job
    visited; the memo then holds no checkpoints.  Anything else sums from scratch.
    """
    running = operation.running_jobs
    count = len(running)
    releases = operation.usage_releases
    known = memo.get(operation.id)
    checkpoints: list[tuple[Job, Vector]] | None
    same = known is not None and known[0] is operation and known[3] == releases
    if same and known is not None and known[2] == ended and known[1] == count:
        fresh[operation.id] = known
        return known[4]
    exact = operation.exact_usage.usage(tree, count)
    if exact is not None:
        fresh[operation.id] = (operation, count, ended, releases, exact, None)
        return exact
    if not same or known is None or known[5] is None:
        usage, checkpoints = _checkpointed_usage(list(running.values()), 0, ZERO, tree, [])
    elif known[2] == ended and known[1] < count:
        # Starts only: the old jobs are all in place; continue from their sum.
        usage, checkpoints = _checkpointed_usage(
            list(running.values()), known[1], known[4], tree, known[5]
        )
    else:
        jobs = list(running.values())
        old = known[5]
        every = CHECKPOINT_EVERY
        low, high = 0, min(len(old), (count + every - 1) // every)
        while low < high:
            middle = (low + high) // 2
            if jobs[middle * every] is old[middle][0]:
                low = middle + 1
            else:
                high = middle
        if low == 0:
            usage, checkpoints = _checkpointed_usage(jobs, 0, ZERO, tree, [])
        else:
            kept = low - 1
            usage, checkpoints = _checkpointed_usage(
                jobs, kept * every, old[kept][1], tree, old[:kept]
            )
    fresh[operation.id] = (operation, count, ended, releases, usage, checkpoints)
    return usage


def _checkpointed_usage(
    jobs: list[Job],
    start: int,
    partial: Vector,
    tree: str,
    checkpoints: list[tuple[Job, Vector]],
) -> tuple[Vector, list[tuple[Job, Vector]]]:
    """:func:`_fold_usage` of ``jobs[start:]`` from ``partial`` (the fold of
    ``jobs[:start]``), appending to ``checkpoints`` (those before ``start``) the job at
    every position from ``start`` on that is a multiple of :data:`CHECKPOINT_EVERY`, with
    the fold of the jobs before it; returns the sum and ``checkpoints``."""
    every = CHECKPOINT_EVERY
    count = len(jobs)
    position = start
    usage = partial
    while position < count:
        end = (position // every + 1) * every
        if position % every == 0:
            checkpoints.append((jobs[position], usage))
        usage = _fold_usage(usage, jobs[position:end], tree)
        position = end
    return usage, checkpoints


def task_figures(operation: Operation) -> tuple[int, int, Vector]:
    """The operation's ended-job count (see :func:`_memoized_usage`), ``pending_job_count``
    and ``needed_resources()`` in one pass over its tasks.

    The needed resources are ``vadd(needed, vscale(resources, waiting))`` from ``ZERO`` over
    the tasks with waiting jobs, as ``Operation.needed_resources`` computes them: the same
    multiplications and additions in the same order, written out.
    """
    ended = pending = 0
    n0 = n1 = n2 = n3 = n4 = 0.0
    for task in operation.tasks.values():
        ended += task.completed_count + task.failed_count + task.aborted_count
        waiting = len(task.waiting)
        if waiting:
            pending += waiting
            k = float(waiting)
            r = task.resources
            n0 = n0 + r[0] * k
            n1 = n1 + r[1] * k
            n2 = n2 + r[2] * k
            n3 = n3 + r[3] * k
            n4 = n4 + r[4] * k
    return ended, pending, (n0, n1, n2, n3, n4)


def _resource_usage(operation: Operation, tree: str) -> Vector:
    """``operation.resource_usage(tree)``: the very same additions in the same order, written
    out (no call and no tuple per job; this runs for every running job at every update)."""
    return _fold_usage(ZERO, operation.running_jobs.values(), tree)


def _fold_usage(start: Vector, jobs: Iterable[Job], tree: str) -> Vector:
    """``start`` plus the resources of ``jobs`` in the tree whose usage is not released, in
    order (``vadd`` written out)."""
    u0, u1, u2, u3, u4 = start
    for job in jobs:
        if job.usage_released:
            continue
        job_tree = job.tree
        if job_tree is None or job_tree == tree:
            r = job.resources
            u0 = u0 + r[0]
            u1 = u1 + r[1]
            u2 = u2 + r[2]
            u3 = u3 + r[3]
            u4 = u4 + r[4]
    return (u0, u1, u2, u3, u4)


SpecMemo = dict[str, tuple[Operation, object, object, tuple[object, ...], OperationSpec]]
"""Per operation: the operation, its tree entry's ``resource_limits`` and its spec config
objects, the other inputs its :class:`OperationSpec` was built from (see :func:`_spec_inputs`)
and that spec, from the last update."""


def _spec_inputs(entry: TreeOperation) -> tuple[object, ...]:
    """What an operation's :class:`OperationSpec` is computed from, besides what never changes
    (its id, type and start time) and two config objects compared by identity (the entry's
    ``resource_limits`` and the operation's spec: frozen models, replaced on change; identity
    also keeps ``0.0`` and ``-0.0`` apart, which ``==`` would not):

    * ``job_changes`` and ``len(running_jobs)``: no job started or ended, so the tasks'
      waiting lists and counters (pending count, needed resources, the ended count of the
      usage memo) and the running jobs are as they were; ``usage_releases``: no job's usage
      was released (together: the same usage, see :func:`_memoized_usage`);
    * the tree's view: pool (by name: a renamed pool is another parent), weight (validated
      positive, so ``==`` is bit equality), whether it runs there; the operation's state.

    Equal inputs give an equal spec, field by field and bit for bit, so the previous spec
    object is reused (the engine only reads specs)."""
    operation = entry.operation
    return (
        operation.job_changes,
        len(operation.running_jobs),
        operation.usage_releases,
        entry.pool.name,
        entry.weight,
        entry.running,
        operation.state,
    )


_RUNNING = OperationState.RUNNING
"""The member as a module constant (an Enum class attribute costs ~10x a global load)."""


def _operation_spec(
    entry: TreeOperation, tree: str, memo: UsageMemo | None, spec_memo: SpecMemo | None
) -> OperationSpec:
    """The engine input of the operation of ``entry`` in the tree named ``tree``.

    With ``spec_memo`` (only together with ``memo``), the memoized spec is returned when its
    inputs are unchanged (:func:`_spec_inputs`), and a spec built anew replaces the memo's
    entry; ``memo`` memoizes the usage (:func:`_memoized_usage`)."""
    operation = entry.operation
    inputs: tuple[object, ...] = ()
    if spec_memo is not None:
        assert memo is not None
        known = spec_memo.get(operation.id)
        if (
            known is not None
            and known[0] is operation
            and known[1] is entry.resource_limits
            and known[2] is operation.spec
        ):
            # known[3] == _spec_inputs(entry), element by element without building
            # the tuple (the same ``==`` comparisons a tuple comparison makes).
            inputs = known[3]
            if (
                inputs[0] == operation.job_changes
                and inputs[1] == len(operation.running_jobs)
                and inputs[2] == operation.usage_releases
                and inputs[3] == entry.pool.name
                and inputs[4] == entry.weight
                and inputs[5] == entry.running
                and inputs[6] == operation.state
            ):
                return known[4]
        inputs = _spec_inputs(entry)
    limits = (
        entry.resource_limits.limits_vector()
        if entry.resource_limits is not None
        else INFINITE_RESOURCES
    )
    ended, pending, (n0, n1, n2, n3, n4) = task_figures(operation)
    # ``resource_demand`` is this usage plus, while running, the needed resources: the
    # same sums computed once.
    usage = (
        _resource_usage(operation, tree)
        if memo is None
        else _memoized_usage(operation, tree, memo, memo, ended)
    )
    demand = (
        (usage[0] + n0, usage[1] + n1, usage[2] + n2, usage[3] + n3, usage[4] + n4)
        if operation.state is _RUNNING and entry.running
        else usage
    )
    if operation.spec.apply_specified_resource_limits_to_demand:
        demand = demand_within_specified_limits(demand, usage, limits)
    spec = OperationSpec(
        name=operation.id,
        parent=entry.pool.name,
        resource_demand=demand,
        resource_usage=usage,
        resource_limits=limits,
        weight=entry.weight if entry.weight is not None else 1.0,
        start_time=operation.start_time,
        pending_job_count=pending if entry.running else 0,
        is_gang=operation.spec.is_gang,
        operation_type=operation.type,
    )
    if spec_memo is not None:
        spec_memo[operation.id] = (operation, entry.resource_limits, operation.spec, inputs, spec)
    return spec


def _marked_operations(
    tree: PoolTree,
    pools: list[Pool],
    pool_specs: list[PoolSpec],
    memo: UsageMemo,
    spec_memo: SpecMemo,
    known: OperationInputs,
) -> list[OperationSpec]:
    """The operations' specs, as ``_operation_spec`` of every entry gives them, rebuilding only
    those of operations marked changed since ``known``'s last snapshot and of new entries
    (why the others are equal: :mod:`ytsched.pooltree.input_marks`); ``known`` then records
    this snapshot.  Entries ``==`` compares by identity (``TreeOperation`` has ``eq=False``)."""
    name = tree.name
    entries = list(tree.operations.values())
    previous = known.entries
    known.entries = None  # until this snapshot is complete
    marks = known.marks
    names = [spec.name for spec in pool_specs]
    if previous is None or pools != known.pools or names != known.pool_names:
        for entry in entries:
            known.register(entry)
        specs = [_operation_spec(entry, name, memo, spec_memo) for entry in entries]
        positions = dict(zip(tree.operations, range(len(entries)), strict=True))
        by_entry = dict(zip(entries, specs, strict=True))
    elif entries == previous:
        specs = known.specs.copy()
        positions = known.positions
        by_entry = known.by_entry
        for op_id in marks:
            position = positions.get(op_id)
            if position is not None:  # an operation of another tree of the mark's sets
                entry = entries[position]
                spec = _operation_spec(entry, name, memo, spec_memo)
                specs[position] = spec
                by_entry[entry] = spec
    else:
        kept: list[OperationSpec | None] = list(map(known.by_entry.get, entries))
        positions = dict(zip(tree.operations, range(len(entries)), strict=True))
        for position in [index for index, spec in enumerate(kept) if spec is None]:
            entry = entries[position]
            known.register(entry)
            kept[position] = _operation_spec(entry, name, memo, spec_memo)
        specs = cast(list[OperationSpec], kept)
        for op_id in marks:
            position = positions.get(op_id)
            if position is not None:
                specs[position] = _operation_spec(entries[position], name, memo, spec_memo)
        by_entry = dict(zip(entries, specs, strict=True))
    marks.clear()
    known.specs = specs
    known.positions = positions
    known.by_entry = by_entry
    known.pools = pools
    known.pool_names = names
    known.entries = entries
    return specs.copy()  # the snapshot's own list: a caller may change it


def to_snapshot(
    tree: PoolTree,
    now: float | None,
    previous_update_time: float | None,
    total: Vector,
    memo: UsageMemo | None = None,
    pool_memo: PoolSpecMemo | None = None,
    spec_memo: SpecMemo | None = None,
    known: OperationInputs | None = None,
) -> TreeSnapshot:
    """Engine input for the tree as it is now (nothing is modified but the memos: operations'
    usages, operations' specs and pools' config-derived inputs of the previous call, replaced
    by this call's; see :func:`_memoized_usage`, :func:`_spec_inputs` and :func:`pool_spec`).

    ``spec_memo`` is used only with ``memo`` (an operation whose spec is reused keeps its
    usage memo entry as it was).  A spec is reused on its inputs alone, whatever the usage
    memo holds: equal inputs give an equal usage (:func:`_spec_inputs`), and an operation
    with no usage memo entry (a caller that passes a new ``memo``) gets one the next time
    its spec is built (:func:`_memoized_usage` sums from scratch then).  With both and
    ``known`` (the tree's :class:`~ytsched.pooltree.input_marks.OperationInputs`), only the
    operations marked changed since its last snapshot are visited (:func:`_marked_operations`).
    """
    fresh_pools: PoolSpecMemo | None = None if pool_memo is None else {}
    pool_objects = list(tree.root.descendants())
    pools = [pool_spec(pool, pool_memo, fresh_pools) for pool in pool_objects]
    if pool_memo is not None and fresh_pools is not None:
        pool_memo.clear()
        pool_memo.update(fresh_pools)
    reuse = memo is not None and spec_memo is not None
    operations: list[OperationSpec]
    if reuse and known is not None:
        assert memo is not None and spec_memo is not None
        operations = _marked_operations(tree, pool_objects, pools, memo, spec_memo, known)
    else:
        # The memos are updated in place (an operation's entry replaced when it changed)
        # and the entries of operations no longer in the tree dropped at the end: what
        # replacing them by this call's entries gives, without a store per unchanged one.
        specs = spec_memo if reuse else None
        operations = [
            _operation_spec(entry, tree.name, memo, specs) for entry in tree.operations.values()
        ]
    if spec_memo is not None and not reuse:
        spec_memo.clear()
    count = len(operations)
    for kept in (memo, spec_memo):
        if kept is not None and len(kept) != count:
            present = tree.operations
            for stale in [op_id for op_id in kept if op_id not in present]:
                del kept[stale]
    return TreeSnapshot(
        total_resource_limits=total,
        pools=pools,
        operations=operations,
        options=tree_update_options(tree),
        now=now,
        previous_update_time=previous_update_time,
    )


def demand_within_specified_limits(demand: Vector, usage: Vector, limits: Vector) -> Vector:
    """``apply_specified_resource_limits_to_demand``: per resource ``max(usage, min(demand,
    limits))`` with the operation's own (per-tree) ``resource_limits``.

    What ``test_apply_specified_resource_limits_to_demand``
    (``yt/yt/tests/integration/scheduler/test_scheduler_strategy.py``) reads: 3 one-core jobs
    with limits ``{cpu = 3; user_slots = 2}`` demand 3 cpu and 2 slots; with limits lowered below
    the usage of 2 running jobs the demand is that usage.  The pool's limits are not applied.
    """
    return (
        max(usage[0], min(demand[0], limits[0])),
        max(usage[1], min(demand[1], limits[1])),
        max(usage[2], min(demand[2], limits[2])),
        max(usage[3], min(demand[3], limits[3])),
        max(usage[4], min(demand[4], limits[4])),
    )


def update(tree: PoolTree, now: float, total: Vector) -> UpdateResult:
    """Run one fair-share update at ``now`` and keep its integral state and result."""
    return apply_result(tree, now, run_update(update_snapshot(tree, now, total)))


def update_snapshot(tree: PoolTree, now: float, total: Vector) -> TreeSnapshot:
    """The first step of :func:`update`: the engine input at ``now``.

    The snapshot holds values only (numbers, tuples, frozen configs), never live objects, so
    ``run_update`` may compute on it in another thread while the live tree changes; the
    service does (``ytsched.server.update_steps``)."""
    return to_snapshot(
        tree,
        now,
        tree.last_update_time,
        total,
        tree.usage_memo,
        tree.pool_spec_memo,
        tree.operation_spec_memo,
        tree.operation_inputs,
    )


def apply_result(tree: PoolTree, now: float, result: UpdateResult) -> UpdateResult:
    """The last step of :func:`update`: keep the integral volumes and the result of an update
    computed on :func:`update_snapshot`'s input at ``now`` (pools removed since are skipped).

    A native result's volumes are read from its result arrays by row, the very doubles
    ``element.integral`` would convert (its first six columns, ``IntegralState``'s first two
    fields), without creating the elements or the rest of their integral states."""
    arrays = native.result_arrays(result)
    if arrays is not None:
        computed = cast(native.ElementsByName, result.pools)
        start = native.OUT_INTEGRAL
        rows = computed.rows()
        # Only the pools' rows are converted (the operations' rows, most of the result,
        # have no integral state to keep).
        first = min(rows.values(), default=0)
        stop = max(rows.values(), default=-1) + 1
        volumes = arrays[0][first:stop, start : start + 6].tolist()
        pools = tree.pools
        for name, row in rows.items():
            pool = pools.get(name)
            if pool is not None:
                values = volumes[row - first]
                pool.accumulated_resource_volume = (
                    values[0],
                    values[1],
                    values[2],
                    values[3],
                    values[4],
                )
                pool.last_integral_share_ratio = values[5]
    else:
        for name, element in result.pools.items():
            pool = tree.pools.get(name)
            if pool is not None:
                pool.accumulated_resource_volume = element.integral.accumulated_volume
                pool.last_integral_share_ratio = element.integral.last_share_ratio
    tree.last_result = result
    tree.last_update_time = now
    tree.clock = max(tree.clock, now)
    return result
