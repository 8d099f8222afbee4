"""All pool trees of a scheduler: trees, the default tree, nodes, operations and their jobs.

Behaviour of ``TStrategy`` (``yt/yt/server/scheduler/strategy/strategy.cpp``: tree set,
``ParsePoolTrees``, ``InitOperationRuntimeParameters``, node -> tree mapping) and of the
scheduler's ``StartOperation`` (``yt/yt/server/scheduler/scheduler.cpp``):

* each node belongs to the one tree whose ``node_tag_filter`` matches its tags (its address is
  a tag too).  A node matching no tree is not scheduled (alert ``NodesWithoutPoolTree``); a node
  matching several is kept in an error state, unscheduled; a tree change that would make a
  healthy node match several trees is refused; a node that changes tree loses its jobs;
* an operation runs in the trees of ``pool_trees``, else the default tree, with per-tree pool,
  weight and resource limits from ``scheduling_options_per_pool_tree`` (per-tree values win);
* a start is checked in every tree before anything changes, so a refused start leaves every
  tree as it was.  With ``erase_trees_with_pool_limit_violations`` the trees whose pool limits
  refuse it are dropped instead, unless that would leave none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ytsched.config.base import ConfigError, parse_config, patched
from ytsched.config.operation import OPERATION_TYPES, OperationSpec, RuntimeParametersUpdate
from ytsched.config.resources import ResourceAmounts
from ytsched.config.strategy import StrategyConfig
from ytsched.config.tagfilter import TagFilter
from ytsched.config.tree import TreeConfig
from ytsched.fairshare.update import UpdateResult
from ytsched.pooltree import admission
from ytsched.pooltree.ephemeral import Placement
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.operations import Job, Operation, OperationState
from ytsched.pooltree.tree import PoolTree
from ytsched.resources import RESOURCE_NAMES, Vector, amounts_to_map

POOL_LIMIT_VIOLATIONS = frozenset({"TooManyOperations", "TooManyEphemeralPools"})


@dataclass(slots=True)
class Node:
    """An exec node as the scheduler sees it."""

    address: str
    tags: frozenset[str]
    resource_limits: Vector
    tree: str | None = None
    state: str = "online"
    """``online``, or ``error`` when its tags match several trees."""
    error: str | None = None

    def __setattr__(self, name: str, value: object) -> None:
        # Every assignment (construction included) counts as a change of some node, so that
        # PoolTrees.tree_resource_limits can tell that no node changed since its last sum.
        object.__setattr__(self, name, value)
        _NODE_CHANGES[0] += 1

    @property
    def all_tags(self) -> frozenset[str]:
        """Tags a filter sees: the user tags plus the node's address."""
        return self.tags | {self.address}


_NODE_CHANGES = [0]
"""How many attribute assignments any :class:`Node` had, and nodes registered or unregistered
(a process-wide count: it only ever grows, so an equal count means nothing changed)."""


class PoolTrees:
    """The scheduler's pool trees, nodes and operations."""

    def __init__(self, strategy: StrategyConfig | Mapping[str, Any] | None = None) -> None:
        self.strategy: StrategyConfig = parse_config(StrategyConfig, strategy, "scheduler config")
        self.trees: dict[str, PoolTree] = {}
        self.default_tree: str | None = None
        self.nodes: dict[str, Node] = {}
        self.operations: dict[str, Operation] = {}
        self.unfinished_operation_count = 0
        """Operations in :attr:`operations` not in a final state (``max_operation_count``)."""
        self.finished_operation_count = 0
        """How many operations reached a final state so far (only grows): a caller compares
        it before and after a call to learn whether any operation finished meanwhile."""
        self.user_to_default_pool: dict[str, str] = {}
        self.clock = 0.0
        self._limits_memo: dict[str, tuple[int, Vector]] = {}
        """Per tree, :meth:`tree_resource_limits` with the node change count it was summed at."""

    def _now(self, now: float | None) -> float:
        if now is not None:
            self.clock = max(self.clock, now)
            return now
        return self.clock

    # --- trees ---------------------------------------------------------------------------

    def tree(self, name: str) -> PoolTree:
        tree = self.trees.get(name)
        if tree is None:
            known = ", ".join(repr(t) for t in self.trees) or "none"
            raise SchedulerError(
                "NoSuchPoolTree", f"pool tree {name!r} does not exist (trees: {known})", tree=name
            )
        return tree

    def create_tree(
        self, name: str, config: TreeConfig | Mapping[str, Any] | None = None
    ) -> PoolTree:
        if not isinstance(name, str) or re.fullmatch(r"[-_a-zA-Z0-9]+", name) is None:
            raise SchedulerError(
                "InvalidPoolTreeName",
                f"pool tree name {name!r} must be non-empty letters, digits, '-' or '_'",
            )
        if name in self.trees:
            raise SchedulerError(
                "PoolTreeAlreadyExists", f"pool tree {name!r} already exists", tree=name
            )
        tree = PoolTree(name, config, strategy=self.strategy)
        filters = self._filters()
        filters[name] = TagFilter.parse(tree.config.node_tag_filter)
        self._check_node_filters(filters)
        tree.user_default_parent_pools = self.user_to_default_pool
        tree.clock = self.clock
        tree.tag_filter_resource_limits = lambda text: self.tag_filter_resource_limits(name, text)
        self.trees[name] = tree
        self._reassign_nodes()
        return tree

    def remove_tree(self, name: str) -> None:
        tree = self.tree(name)
        if tree.operations:
            raise SchedulerError(
                "PoolTreeHasOperations",
                f"pool tree {name!r} cannot be removed: {len(tree.operations)} operation(s) run"
                " in it",
                tree=name,
            )
        if self.default_tree == name:
            raise SchedulerError(
                "CannotRemoveDefaultPoolTree",
                f"pool tree {name!r} is the default tree; change the default first",
                tree=name,
            )
        del self.trees[name]
        self._reassign_nodes()

    def set_default_tree(self, name: str | None) -> None:
        if name is not None:
            self.tree(name)
        self.default_tree = name

    def set_tree_config(
        self, name: str, config: TreeConfig | Mapping[str, Any], *, now: float | None = None
    ) -> None:
        tree = self.tree(name)
        parsed = parse_config(TreeConfig, config, f"tree {name!r}: config")
        self._apply_tree_config(tree, parsed, self._now(now))

    def update_tree_config(
        self, name: str, patch: Mapping[str, Any], *, now: float | None = None
    ) -> None:
        tree = self.tree(name)
        parsed = patched(TreeConfig, tree.config, patch, f"tree {name!r}: config")
        self._apply_tree_config(tree, parsed, self._now(now))

    def _apply_tree_config(self, tree: PoolTree, config: TreeConfig, now: float) -> None:
        filters = self._filters()
        filters[tree.name] = TagFilter.parse(config.node_tag_filter)
        self._check_node_filters(filters)
        tree.set_config(config, now=now)
        self._reassign_nodes()

    def set_user_default_parent_pool(
        self, user: str, pool: str | None, *, now: float | None = None
    ) -> None:
        """The scheduler's user -> default parent pool map (``user_to_default_pool``).

        The user's existing ephemeral pools move under the new default parent in every tree
        that uses the map (``use_user_default_parent_pool_map``), as in YTsaurus.
        """
        moment = self._now(now)
        if pool is None:
            self.user_to_default_pool.pop(user, None)
        else:
            self.user_to_default_pool[user] = pool
        for tree in self.trees.values():
            if tree.config.use_user_default_parent_pool_map:
                tree.move_user_ephemeral_pools(user, now=moment)

    # --- nodes ---------------------------------------------------------------------------

    def _filters(self) -> dict[str, TagFilter]:
        return {name: TagFilter.parse(t.config.node_tag_filter) for name, t in self.trees.items()}

    @staticmethod
    def _matching(node: Node, filters: Mapping[str, TagFilter]) -> list[str]:
        tags = node.all_tags
        return [name for name, tag_filter in filters.items() if tag_filter.matches(tags)]

    def tag_filter_resource_limits(self, tree: str, text: str) -> Vector:
        """Summed ``resource_limits`` of the online nodes of ``tree`` that match the scheduling
        tag filter ``text`` (``GetResourceLimits(NodeTagFilter & SchedulingTagFilter)``)."""
        tag_filter = TagFilter.parse(text)
        total = [0.0] * len(RESOURCE_NAMES)
        for node in self.nodes.values():
            if node.tree == tree and node.state == "online" and tag_filter.matches(node.all_tags):
                for index, value in enumerate(node.resource_limits):
                    total[index] += value
        return (total[0], total[1], total[2], total[3], total[4])

    def _check_node_filters(self, filters: Mapping[str, TagFilter]) -> None:
        """Refuse tree filters that would make a healthy node match several trees."""
        for node in self.nodes.values():
            if node.state == "error":
                continue
            matching = self._matching(node, filters)
            if len(matching) > 1:
                raise SchedulerError(
                    "NodeMatchesSeveralPoolTrees",
                    f"node {node.address!r} would belong to several pool trees:"
                    f" {', '.join(repr(t) for t in matching)}",
                    node=node.address,
                    trees=matching,
                )

    def _assign(self, node: Node, filters: Mapping[str, TagFilter]) -> None:
        matching = self._matching(node, filters)
        previous = node.tree
        if len(matching) > 1:
            node.state = "error"
            node.tree = None
            node.error = (
                f"node {node.address!r} matches several pool trees:"
                f" {', '.join(repr(t) for t in matching)}"
            )
        else:
            node.state = "online"
            node.error = None
            node.tree = matching[0] if matching else None
        if previous is not None and previous != node.tree:
            self._abort_jobs_on_node(node.address, f"node moved from tree {previous!r}")

    def _reassign_nodes(self) -> None:
        filters = self._filters()
        for node in self.nodes.values():
            self._assign(node, filters)

    def register_node(
        self,
        address: str,
        tags: Iterable[str] = (),
        resource_limits: ResourceAmounts | Mapping[str, Any] | None = None,
    ) -> Node:
        """Add a node; it joins the tree whose filter matches (or an error state)."""
        if address in self.nodes:
            raise SchedulerError(
                "NodeAlreadyExists", f"node {address!r} is already registered", node=address
            )
        limits = parse_config(
            ResourceAmounts, resource_limits, f"node {address!r}: resource_limits"
        )
        node = Node(address=address, tags=frozenset(tags), resource_limits=limits.to_vector(0.0))
        self._assign(node, self._filters())
        self.nodes[address] = node
        _NODE_CHANGES[0] += 1
        return node

    def node(self, address: str) -> Node:
        node = self.nodes.get(address)
        if node is None:
            raise SchedulerError("NoSuchNode", f"node {address!r} is not registered", node=address)
        return node

    def set_node_tags(self, address: str, tags: Iterable[str]) -> Node:
        node = self.node(address)
        node.tags = frozenset(tags)
        self._assign(node, self._filters())
        return node

    def set_node_resource_limits(
        self, address: str, resource_limits: ResourceAmounts | Mapping[str, Any]
    ) -> Node:
        """Change what a node offers (its heartbeat reports new limits); totals follow at the
        next update."""
        node = self.node(address)
        limits = parse_config(
            ResourceAmounts, resource_limits, f"node {address!r}: resource_limits"
        )
        node.resource_limits = limits.to_vector(0.0)
        return node

    def unregister_node(self, address: str) -> None:
        self.node(address)
        self._abort_jobs_on_node(address, "node unregistered")
        del self.nodes[address]
        _NODE_CHANGES[0] += 1

    def tree_resource_limits(self, name: str) -> Vector:
        """Total resources of the tree: the sum over its online nodes."""
        self.tree(name)
        # The sum reads the nodes in order and their tree, state and limits alone: with no
        # node assigned to, registered or unregistered since (_NODE_CHANGES), it is the same.
        changes = _NODE_CHANGES[0]
        known = self._limits_memo.get(name)
        if known is not None and known[0] == changes:
            return known[1]
        total = self._sum_limits(name)
        self._limits_memo[name] = (changes, total)
        return total

    def _sum_limits(self, name: str) -> Vector:
        """:meth:`tree_resource_limits` from scratch."""
        # vadd from ZERO written out: the same additions in the same order, without a call
        # and a tuple per node.
        t0 = t1 = t2 = t3 = t4 = 0.0
        for node in self.nodes.values():
            if node.tree == name and node.state == "online":
                limits = node.resource_limits
                t0 = t0 + limits[0]
                t1 = t1 + limits[1]
                t2 = t2 + limits[2]
                t3 = t3 + limits[3]
                t4 = t4 + limits[4]
        return (t0, t1, t2, t3, t4)

    def _abort_jobs_on_node(self, address: str, reason: str) -> None:
        for operation in self.operations.values():
            for job in list(operation.running_jobs.values()):
                if job.node == address:
                    operation.abort_job(job.id, self.clock, reason)

    # --- operations ----------------------------------------------------------------------

    def operation(self, operation_id: str) -> Operation:
        operation = self.operations.get(operation_id)
        if operation is None:
            raise SchedulerError(
                "NoSuchOperation",
                f"operation {operation_id!r} does not exist",
                operation_id=operation_id,
            )
        return operation

    def _active(self, operation_id: str) -> Operation:
        operation = self.operation(operation_id)
        if operation.state.is_final:
            raise SchedulerError(
                "InvalidOperationState",
                f"operation {operation_id!r} is already {operation.state.value}",
                operation_id=operation_id,
            )
        return operation

    def start_operation(
        self,
        operation_id: str,
        *,
        user: str,
        spec: OperationSpec | Mapping[str, Any] | None = None,
        operation_type: str = "vanilla",
        now: float | None = None,
    ) -> Operation:
        """Admit an operation into its trees: it runs, waits (pending), or is refused."""
        moment = self._now(now)
        if operation_id in self.operations:
            raise SchedulerError(
                "OperationAlreadyExists",
                f"operation {operation_id!r} already exists",
                operation_id=operation_id,
            )
        parsed = parse_config(OperationSpec, spec, f"operation {operation_id!r}: spec")
        if operation_type not in OPERATION_TYPES:
            raise ConfigError(
                "InvalidConfig",
                f"operation {operation_id!r}: unknown operation type {operation_type!r}"
                f" (expected one of {', '.join(OPERATION_TYPES)})",
                field="operation_type",
            )
        if operation_type == "vanilla" and not parsed.tasks:
            raise ConfigError(
                "InvalidConfig",
                f"operation {operation_id!r}: spec: tasks: a vanilla operation needs a task",
                field="tasks",
            )
        if self.unfinished_operation_count >= self.strategy.max_operation_count:
            raise SchedulerError(
                "TooManyOperations",
                f"Limit for the total number of concurrent operations"
                f" {self.strategy.max_operation_count} has been reached",
                limit=self.strategy.max_operation_count,
            )
        tree_names = self._operation_trees(parsed)
        tentative = self._tentative_trees(parsed, operation_type, tree_names)
        tree_names = (*tree_names, *tentative)
        operation = Operation(
            operation_id, user=user, operation_type=operation_type, spec=parsed, start_time=moment
        )
        plans: dict[str, Placement] = {}
        erased: dict[str, SchedulerError] = {}
        for name in tree_names:
            tree = self.trees[name]
            requested = parsed.tree_options(name).pool or parsed.pool or user
            try:
                plans[name] = admission.plan_start(tree, operation, requested)
            except SchedulerError as error:
                if (
                    parsed.erase_trees_with_pool_limit_violations
                    and error.code in POOL_LIMIT_VIOLATIONS
                ):
                    erased[name] = error
                    continue
                raise
        if not plans:
            raise next(iter(erased.values()))
        for name, placement in plans.items():
            tree = self.trees[name]
            tree.clock = max(tree.clock, moment)
            options = parsed.tree_options(name)
            admission.register(
                tree,
                operation,
                placement,
                weight=options.weight if options.weight is not None else parsed.weight,
                resource_limits=(
                    options.resource_limits
                    if options.resource_limits is not None
                    else parsed.resource_limits
                ),
                now=moment,
            )
        operation.erased_trees = {name: error.message for name, error in erased.items()}
        operation.pool_trees = list(plans)
        operation.tentative_trees = {name for name in tentative if name in plans}
        operation.finish_starting(moment)
        self.operations[operation_id] = operation
        if not operation.state.is_final:
            self.unfinished_operation_count += 1
        return operation

    def _operation_trees(self, spec: OperationSpec) -> tuple[str, ...]:
        if spec.pool_trees is None:
            if self.default_tree is None:
                raise SchedulerError(
                    "PoolTreesAreUnspecified",
                    "Pool trees are not specified and no default pool tree is configured",
                )
            return (self.default_tree,)
        for name in spec.pool_trees:
            self.tree(name)
        return spec.pool_trees

    def _tentative_trees(
        self, spec: OperationSpec, operation_type: str, regular: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The operation's tentative trees (``ytsched.pooltree.tentative``): its own plus, with
        ``use_default_tentative_pool_trees``, the scheduler's defaults; none for the types in
        ``operations_without_tentative_pool_trees``; a tree that is also regular stays regular.
        A missing tree refuses the start unless ``ignore_missing_pool_trees``."""
        names = list(spec.tentative_pool_trees or ())
        if spec.use_default_tentative_pool_trees:
            names += [n for n in self.strategy.default_tentative_pool_trees if n not in names]
        if not names or operation_type in self.strategy.operations_without_tentative_pool_trees:
            return ()
        result: list[str] = []
        for name in names:
            if name in regular or name in result:
                continue
            if name not in self.trees:
                if spec.tentative_tree_eligibility.ignore_missing_pool_trees:
                    continue
                self.tree(name)
            result.append(name)
        return tuple(result)

    def _ban_tentative_trees(self, operation: Operation, now: float) -> None:
        """Take the operation out of the tentative trees its jobs proved too slow in: its jobs
        there are aborted (``banned_in_tentative_tree``) and it leaves the tree."""
        while operation.newly_banned_trees:
            name = operation.newly_banned_trees.pop(0)
            if name not in operation.tree_states or operation.state.is_final:
                continue
            reason = f"banned_in_tentative_tree: tree {name!r} is too slow for the operation"
            for job in list(operation.running_jobs.values()):
                if job.tree == name:
                    operation.abort_job(job.id, now, reason)
            operation.banned_tentative_trees.append(name)
            if name in operation.pool_trees:
                operation.pool_trees.remove(name)
            tree = self.trees[name]
            tree.clock = max(tree.clock, now)
            admission.unregister(tree, operation.id, now, reason)

    def _finish(self, operation_id: str, state: OperationState, now: float, reason: str) -> None:
        operation = self._active(operation_id)
        operation.finish(state, now, reason)
        self.unfinished_operation_count -= 1
        self.finished_operation_count += 1
        for name in list(operation.tree_states):
            tree = self.trees[name]
            tree.clock = max(tree.clock, now)
            admission.unregister(tree, operation_id, now, reason)

    def forget_operation(self, operation_id: str) -> bool:
        """Drop a finished operation from :attr:`operations`; returns whether it was dropped.

        A finished operation is already out of every tree (admission unregistered it); only
        this map still holds it, for its history (``explain``).  Its owner drops it once it
        has recorded it elsewhere, so that a long-running scheduler does not keep every
        operation it ever ran.  An operation that is not finished is kept.
        """
        operation = self.operations.get(operation_id)
        if operation is None or not operation.state.is_final:
            return False
        del self.operations[operation_id]
        return True

    def complete_operation(
        self, operation_id: str, *, now: float | None = None, reason: str = "completed"
    ) -> Operation:
        self._finish(operation_id, OperationState.COMPLETED, self._now(now), reason)
        return self.operations[operation_id]

    def fail_operation(
        self, operation_id: str, *, now: float | None = None, reason: str = "failed"
    ) -> Operation:
        self._finish(operation_id, OperationState.FAILED, self._now(now), reason)
        return self.operations[operation_id]

    def abort_operation(
        self, operation_id: str, *, now: float | None = None, reason: str = "aborted by user"
    ) -> Operation:
        self._finish(operation_id, OperationState.ABORTED, self._now(now), reason)
        return self.operations[operation_id]

    def update_operation_parameters(
        self,
        operation_id: str,
        parameters: RuntimeParametersUpdate | Mapping[str, Any],
        *,
        now: float | None = None,
    ) -> Operation:
        """``update_op_parameters``: pool, weight and per-tree pool/weight/limits.

        All trees are checked before any changes; a refused update changes nothing.  A pool
        change re-accounts every counter up both the old and the new ancestor chains; the
        operation runs in its new pool (``must be running``).
        """
        moment = self._now(now)
        operation = self._active(operation_id)
        parsed = parse_config(
            RuntimeParametersUpdate, parameters, f"operation {operation_id!r}: parameters"
        )
        for name in parsed.scheduling_options_per_pool_tree:
            if name not in operation.tree_states:
                raise SchedulerError(
                    "NoSuchPoolTree",
                    f"operation {operation_id!r} does not run in pool tree {name!r}",
                    tree=name,
                )
        plans: dict[str, Placement | None] = {}
        for name in operation.tree_states:
            tree = self.trees[name]
            entry = tree.operation(operation_id)
            options = parsed.scheduling_options_per_pool_tree.get(name)
            requested = (options.pool if options is not None else None) or parsed.pool
            if requested is not None:
                plans[name] = admission.plan_pool_change(tree, entry, requested)
        for name in list(operation.tree_states):
            tree = self.trees[name]
            tree.clock = max(tree.clock, moment)
            entry = tree.operation(operation_id)
            options = parsed.scheduling_options_per_pool_tree.get(name)
            placement = plans.get(name)
            if placement is not None:
                admission.apply_pool_change(tree, entry, placement, moment)
            if parsed.weight is not None:
                entry.weight = parsed.weight
            elif options is not None and options.weight is not None:
                entry.weight = options.weight
            if options is not None and options.resource_limits is not None:
                entry.resource_limits = options.resource_limits
        if parsed.annotations is not None:
            operation.annotations = dict(parsed.annotations)
        return operation

    def scan_pending_operations(self, *, now: float | None = None) -> None:
        """The periodic re-check of pending operations in every tree."""
        moment = self._now(now)
        for tree in self.trees.values():
            tree.scan_pending_operations(moment)

    # --- jobs ----------------------------------------------------------------------------

    def start_job(
        self, operation_id: str, task: str, *, node: str | None = None, now: float | None = None
    ) -> Job:
        """Start the next waiting job of a task, on ``node`` (which must be in its trees)."""
        moment = self._now(now)
        operation = self._active(operation_id)
        tree: str | None = next(iter(operation.tree_states), None)
        if node is not None:
            found = self.node(node)
            if found.tree is None or found.tree not in operation.tree_states:
                where = f"tree {found.tree!r}" if found.tree else "no tree"
                raise SchedulerError(
                    "NodeNotInOperationPoolTrees",
                    f"node {node!r} is in {where}, not in a tree of operation {operation_id!r}",
                    node=node,
                )
            tree = found.tree
        return operation.start_job(task, moment, node=node, tree=tree)

    def complete_job(self, operation_id: str, job_id: str, *, now: float | None = None) -> Job:
        """A job completed; the operation completes with its last job."""
        moment = self._now(now)
        operation = self._active(operation_id)
        job = operation.running_job(job_id)
        self.complete_running_job(operation, job, moment)
        return job

    def complete_running_job(self, operation: Operation, job: Job, now: float) -> None:
        """:meth:`complete_job` for a caller that holds the operation (one of
        :attr:`operations`, not in a final state), its running job and a time: the
        scheduler's heartbeat path, for every job that ends, without looking either up again.
        """
        if now > self.clock:
            self.clock = now
        operation.complete_running_job(job, now)
        if operation.newly_banned_trees:
            self._ban_tentative_trees(operation, now)
        # ``all_jobs_completed`` is false while a job runs (the common case): tested first.
        if not operation.running_jobs and operation.all_jobs_completed:
            count = sum(task.spec.job_count for task in operation.tasks.values())
            self._finish(operation.id, OperationState.COMPLETED, now, f"all {count} jobs completed")

    def fail_job(
        self,
        operation_id: str,
        job_id: str,
        *,
        now: float | None = None,
        reason: str = "job failed",
    ) -> Job:
        """A job failed; it is retried unless more than ``max_failed_job_count`` failed."""
        moment = self._now(now)
        operation = self._active(operation_id)
        job = operation.fail_job(job_id, moment, reason)
        if operation.newly_banned_trees:
            self._ban_tentative_trees(operation, moment)
        if operation.too_many_failed_jobs:
            self._finish(
                operation_id,
                OperationState.FAILED,
                moment,
                f"failed jobs limit exceeded: {operation.failed_job_count} jobs failed"
                f" (max_failed_job_count = {operation.spec.max_failed_job_count}); last: {reason}",
            )
        return job

    def abort_job(
        self, operation_id: str, job_id: str, *, now: float | None = None, reason: str = "aborted"
    ) -> Job:
        """Abort a job (e.g. preemption); it waits to be started again."""
        moment = self._now(now)
        return self._active(operation_id).abort_job(job_id, moment, reason)

    # --- update and views ---------------------------------------------------------------

    def update(self, now: float) -> dict[str, UpdateResult]:
        """Run the fair-share update of every tree at ``now``."""
        moment = self._now(now)
        return {
            name: tree.update(moment, self.tree_resource_limits(name))
            for name, tree in self.trees.items()
        }

    def alerts(self) -> list[dict[str, object]]:
        result: list[dict[str, object]] = []
        homeless = sorted(
            a for a, n in self.nodes.items() if n.state == "online" and n.tree is None
        )
        if homeless:
            result.append(
                {
                    "code": "NodesWithoutPoolTree",
                    "message": f"{len(homeless)} node(s) match no pool tree and are not scheduled",
                    "nodes": homeless,
                }
            )
        for node in self.nodes.values():
            if node.state == "error":
                result.append({"code": "NodeMatchesSeveralPoolTrees", "message": node.error or ""})
        for tree in self.trees.values():
            result.extend(tree.alerts())
        return result

    def orchid(self) -> dict[str, Any]:
        """``//sys/scheduler/orchid/scheduler``-shaped view of everything."""
        trees: dict[str, Any] = {}
        for name, tree in self.trees.items():
            view = tree.orchid()
            addresses = sorted(a for a, n in self.nodes.items() if n.tree == name)
            view["resource_limits"] = amounts_to_map(self.tree_resource_limits(name))
            view["node_count"] = len(addresses)
            view["node_addresses"] = addresses
            trees[name] = view
        return {
            "default_pool_tree": self.default_tree,
            "pool_trees": trees,
            "nodes": {
                address: {
                    "tags": sorted(node.tags),
                    "tree": node.tree,
                    "state": node.state,
                    "error": node.error,
                    "resource_limits": amounts_to_map(node.resource_limits),
                }
                for address, node in self.nodes.items()
            },
            "operations": {
                operation_id: self.operation_orchid(operation_id)
                for operation_id in self.operations
            },
            "user_to_default_pool": dict(self.user_to_default_pool),
            "alerts": self.alerts(),
        }

    def operation_orchid(self, operation_id: str) -> dict[str, Any]:
        """``operations/<id>`` of the orchid (KeyError if the operation is not live)."""
        operation = self.operations[operation_id]
        return {
            "state": operation.state.value,
            "user": operation.user,
            "type": operation.type,
            "pool_trees": list(operation.pool_trees),
            "tentative_pool_trees": sorted(operation.tentative_trees),
            "banned_tentative_trees": list(operation.banned_tentative_trees),
            "start_time": operation.start_time,
            "finish_time": operation.finish_time,
        }

    def explain(self, operation_id: str) -> dict[str, object]:
        """The story of an operation (state, per-tree state and every transition)."""
        return self.operation(operation_id).explain()
