"""What the UI pages show, gathered from the same functions that build the API's answers.

Every number on a page is an orchid attribute (``fair_share_ratio``, ``usage_ratio``,
``starvation_status``, ``max_running_operation_count``, ...), taken from the per-tree orchid
view that ``//sys/scheduler/orchid/scheduler/pool_trees/<tree>`` shows: the pool tree's view
(:meth:`PoolTree.orchid`) plus the scheduling layer's attributes
(:func:`ytsched.scheduling.orchid.tree_attributes`), merged exactly as the scheduler's orchid
merges them.  Only the requested tree is built, once per page, so a page costs O(its tree)
whatever else the cluster holds.  Operations, jobs and explanations come from the command
modules (``get_operation``, ``list_jobs``, ``explain_operation``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.resources import RESOURCE_NAMES, ZERO, amounts_to_map, vadd
from ytsched.scheduling.orchid import tree_attributes
from ytsched.server import explain, operations
from ytsched.server.errors import ApiError
from ytsched.server.ui.render import amount, bar_width, pct, resources

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

STARVING = frozenset({"starving", "aggressively_starving"})
OPERATION_STATES = (
    "starting",
    "pending",
    "running",
    "completing",
    "completed",
    "failing",
    "failed",
    "aborting",
    "aborted",
)
SHOWN_RESOURCES = ("cpu", "memory", "gpu", "user_slots")
"""Resources the UI tabulates (``network`` is shown only where a value names it)."""


def no_such_tree(cluster: Cluster, name: str) -> ApiError:
    return ApiError(
        "NoSuchPoolTree",
        f"pool tree {name!r} does not exist (trees: {', '.join(sorted(cluster.trees.trees))})",
        tree=name,
    )


def tree_orchid(cluster: Cluster, name: str) -> dict[str, Any]:
    """``//sys/scheduler/orchid/scheduler/pool_trees/<name>`` for one tree.

    Built at most once per orchid version (every open page refreshes itself; at thousands of
    operations a build takes a good part of a second of the event loop).  Do not modify it.
    """
    if name not in cluster.trees.trees:
        raise no_such_tree(cluster, name)
    view: dict[str, Any] = cluster.orchid_cache.memo(
        ("ui_tree", name), lambda: _build_tree_orchid(cluster, name)
    )
    return view


def _build_tree_orchid(cluster: Cluster, name: str) -> dict[str, Any]:
    tree = cluster.trees.trees[name]
    view = tree.orchid()
    state = cluster.scheduler.ledger.tree_states.get(name)
    if state is not None:
        pools, ops = tree_attributes(state)
        for pool_name, attributes in pools.items():
            if pool_name in view["pools"]:
                view["pools"][pool_name].update(attributes)
        for op_id, attributes in ops.items():
            if op_id in view["operations"]:
                view["operations"][op_id].update(attributes)
    usage = ZERO
    for entry in tree.operations.values():
        usage = vadd(usage, entry.operation.resource_usage(name))
    view["resource_limits"] = amounts_to_map(cluster.trees.tree_resource_limits(name))
    view["resource_usage"] = amounts_to_map(usage)
    view["node_count"] = sum(
        1 for n in cluster.trees.nodes.values() if n.tree == name and n.state == "online"
    )
    return view


@dataclass(frozen=True, slots=True)
class PoolCells:
    """A pool-table row's texts, formatted once in Python.

    The Scheduling page re-renders hundreds of rows on every refresh; formatting here instead
    of through template filters and macros makes the table several times cheaper to render.
    """

    fair: float
    usage: float
    demand: float
    fair_text: str
    usage_text: str
    demand_text: str
    fair_width: str
    usage_width: str
    demand_width: str
    mode: str
    weight: str
    guarantee: str
    limits: str
    operations: str
    operation_limits: str
    pending: int
    starvation: str
    integral: str | None
    ephemeral: bool


def pool_cells(a: dict[str, Any]) -> PoolCells:
    fair = float(a.get("fair_share_ratio", 0.0))
    usage = float(a.get("usage_ratio", 0.0))
    demand = float(a.get("demand_ratio", 0.0))
    integral = a.get("integral_guarantee_type")
    return PoolCells(
        fair=fair,
        usage=usage,
        demand=demand,
        fair_text=pct(fair),
        usage_text=pct(usage),
        demand_text=pct(demand),
        fair_width=bar_width(fair),
        usage_width=bar_width(usage),
        demand_width=bar_width(demand),
        mode=str(a.get("mode", "")),
        weight=amount(a.get("weight")),
        guarantee=resources(a.get("strong_guarantee_resources"), ""),
        limits=resources(a.get("specified_resource_limits"), ""),
        operations=f"{a.get('running_operation_count', 0)} / {a.get('operation_count', 0)}",
        operation_limits=(
            f"≤ {a.get('max_running_operation_count')} / {a.get('max_operation_count')}"
        ),
        pending=int(a.get("pending_operation_count", 0)),
        starvation=str(a.get("starvation_status") or "—").replace("_", " "),
        integral=integral if integral not in (None, "none") else None,
        ephemeral=bool(a.get("is_ephemeral")),
    )


@dataclass(slots=True)
class PoolRow:
    """One line of the pool table: the pool's orchid attributes and its place in the tree."""

    name: str
    depth: int
    parent: str | None
    has_children: bool
    attributes: dict[str, Any]
    cells: PoolCells

    @property
    def starving(self) -> bool:
        return self.attributes.get("starvation_status") in STARVING


def pool_rows(view: dict[str, Any], top: str = ROOT_POOL_NAME) -> list[PoolRow]:
    """The subtree of ``top`` in pre-order, children by name: one pass, O(pools log pools)."""
    pools: dict[str, dict[str, Any]] = view["pools"]
    children: dict[str, list[str]] = view.get("child_pools_by_pool", {})
    rows: list[PoolRow] = []
    stack: list[tuple[str, int, str | None]] = [(top, 0, None)]
    while stack:
        name, depth, parent = stack.pop()
        attributes = pools.get(name)
        if attributes is None:
            continue
        kids = sorted(children.get(name, ()))
        rows.append(PoolRow(name, depth, parent, bool(kids), attributes, pool_cells(attributes)))
        stack.extend((child, depth + 1, name) for child in reversed(kids))
    return rows


@dataclass(slots=True)
class ResourceTotal:
    name: str
    limit: float
    usage: float

    @property
    def utilization(self) -> float | None:
        return self.usage / self.limit if self.limit > 0 else None


@dataclass(slots=True)
class TreeSummary:
    """Cluster totals at the top of the Scheduling page."""

    name: str
    node_count: int
    pool_count: int
    resources: list[ResourceTotal]
    running_operations: int
    pending_operations: int
    starving_operations: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    starving_pools: int = 0
    last_update_time: float | None = None
    alerts: list[dict[str, Any]] = field(default_factory=list)


def tree_summary(view: dict[str, Any], name: str, rows: list[PoolRow]) -> TreeSummary:
    limits = view.get("resource_limits", {})
    usage = view.get("resource_usage", {})
    resources = [
        ResourceTotal(r, float(limits.get(r, 0.0)), float(usage.get(r, 0.0)))
        for r in RESOURCE_NAMES
        if r in SHOWN_RESOURCES or limits.get(r)
    ]
    ops: dict[str, dict[str, Any]] = view.get("operations", {})
    root = view["pools"].get(ROOT_POOL_NAME, {})
    starving_ops = sorted(
        (op_id, attrs) for op_id, attrs in ops.items() if attrs.get("starvation_status") in STARVING
    )
    return TreeSummary(
        name=name,
        node_count=int(view.get("node_count", 0)),
        pool_count=int(view.get("pool_count", 0)),
        resources=resources,
        running_operations=int(root.get("running_operation_count", 0)),
        pending_operations=sum(1 for a in ops.values() if a.get("state") == "pending"),
        starving_operations=starving_ops,
        starving_pools=sum(1 for row in rows if row.starving),
        last_update_time=view.get("last_update_time"),
        alerts=list(view.get("alerts", [])),
    )


def pool_of(view: dict[str, Any], tree: str, pool: str) -> dict[str, Any]:
    attributes = view["pools"].get(pool)
    if attributes is None:
        raise ApiError(
            "ResolveError",
            f"pool {pool!r} does not exist in tree {tree!r}",
            path=f"//sys/pool_trees/{tree}/{pool}",
        )
    return dict(attributes)


def ancestors(view: dict[str, Any], pool: str) -> list[str]:
    """From the root down to the pool's parent (for breadcrumbs)."""
    chain: list[str] = []
    parent = view["pools"].get(pool, {}).get("parent")
    while parent is not None and len(chain) < 1000:
        chain.append(parent)
        parent = view["pools"].get(parent, {}).get("parent")
    return list(reversed(chain))


def explicit_config(cluster: Cluster, tree: str, pool: str) -> dict[str, Any]:
    """The pool's own attributes, as ``get //sys/pool_trees/<tree>/<pool>/@`` shows them."""
    live = cluster.trees.trees[tree].pools.get(pool)
    if live is None or live.is_root:
        return {}
    return live.config.model_dump(mode="json", exclude_unset=True)


def pool_operations(view: dict[str, Any], pool: str) -> list[tuple[str, dict[str, Any]]]:
    """Operations placed directly in the pool, with their orchid attributes."""
    ops: dict[str, dict[str, Any]] = view.get("operations", {})
    ids = view.get("operations_by_pool", {}).get(pool, [])
    return [(op_id, ops[op_id]) for op_id in ids if op_id in ops]


# --- operations ------------------------------------------------------------------------------


@dataclass(slots=True)
class OperationPage:
    view: dict[str, Any]
    per_tree: dict[str, dict[str, Any]]
    """Tree -> the operation's orchid attributes there (absent once finished)."""
    jobs: list[dict[str, Any]]
    job_total: int
    explanation: dict[str, Any]
    preemptions: list[dict[str, Any]]
    chart_trees: list[str]


JOB_LIMIT = 500


def operation_page(cluster: Cluster, operation_id: str) -> OperationPage:
    """Everything the operation page shows (``NoSuchOperation`` for an unknown id)."""
    op_id = operations.resolve_id(cluster, operation_id)
    view = operations.get_operation(cluster, op_id, None)
    per_tree: dict[str, dict[str, Any]] = {}
    for name, tree in cluster.trees.trees.items():
        if op_id in tree.operations:
            attributes = tree_orchid(cluster, name)["operations"].get(op_id)
            if attributes is not None:
                per_tree[name] = attributes
    listed = operations.list_jobs(cluster, op_id, None, JOB_LIMIT)
    explanation = explain.explain(cluster, op_id)
    preemptions = [
        job
        for job in cluster.store.jobs_of(op_id)
        if (job.interruption or {}).get("reason") in explain.PREEMPTION_REASONS
    ]
    events = [
        {
            "job_id": job.id,
            "state": job.state,
            "node": job.node,
            "time": job.finish_time,
            "reason": (job.interruption or {}).get("reason"),
            "explanation": (job.interruption or {}).get("explanation"),
            "preempted_for": (job.interruption or {}).get("preempted_for_operation"),
        }
        for job in preemptions
    ]
    trees = sorted(set(per_tree) | set(cluster.history.operation_trees(op_id)))
    return OperationPage(
        view=view,
        per_tree=per_tree,
        jobs=list(reversed(listed["jobs"])),
        job_total=int(listed["total_count"]),
        explanation=explanation,
        preemptions=events,
        chart_trees=trees,
    )


@dataclass(slots=True)
class OperationFilter:
    state: str | None = None
    pool: str | None = None
    user: str | None = None
    limit: int = 200


def parse_operation_filter(params: dict[str, str]) -> OperationFilter:
    """Query parameters of the operations page (``InvalidArgument`` for a bad one)."""
    unknown = sorted(set(params) - {"state", "pool", "user", "limit"})
    if unknown:
        raise ApiError("InvalidArgument", f"unknown query parameters: {', '.join(unknown)}")
    state = params.get("state") or None
    if state is not None and state not in OPERATION_STATES:
        raise ApiError(
            "InvalidArgument",
            f"state {state!r} is not an operation state ({', '.join(OPERATION_STATES)})",
            field="state",
        )
    text = params.get("limit") or "200"
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise ApiError("InvalidArgument", f"limit {text!r} must be a whole number from 1 to 10000")
    for name in ("pool", "user"):
        value = params.get(name)
        if value is not None and len(value) > 1024:
            raise ApiError("InvalidArgument", f"{name} is too long")
    return OperationFilter(
        state=state,
        pool=params.get("pool") or None,
        user=params.get("user") or None,
        limit=int(text),
    )


def list_operations(cluster: Cluster, selection: OperationFilter) -> dict[str, Any]:
    """``list_operations`` as the API answers it, plus each operation's ``spec/title``."""
    listed = operations.list_operations(
        cluster,
        user=selection.user,
        state=selection.state,
        pool=selection.pool,
        limit=selection.limit,
    )
    for view in listed["operations"]:
        record = cluster.operations.get(view["id"])
        title = record.row.spec.get("title") if record is not None else None
        view["title"] = title if isinstance(title, str) else None
    return listed


# --- nodes -----------------------------------------------------------------------------------


@dataclass(slots=True)
class NodeLine:
    address: str
    state: str
    tree: str | None
    tags: list[str]
    user_tags: list[str]
    limits: dict[str, float]
    usage: dict[str, float]
    running_jobs: int
    last_seen: float
    error: str | None = None

    @property
    def utilization(self) -> float | None:
        """Dominant utilization: the largest usage/limit over resources."""
        ratios = [
            self.usage.get(name, 0.0) / limit for name, limit in self.limits.items() if limit > 0
        ]
        return max(ratios) if ratios else None


def node_lines(cluster: Cluster) -> list[NodeLine]:
    """Every node the service knows, online or offline, with its usage by running jobs."""
    lines: list[NodeLine] = []
    for address in sorted(cluster.nodes.nodes):
        info = cluster.nodes.nodes[address]
        live = cluster.trees.nodes.get(address)
        usage = ZERO
        running = cluster.jobs.running_on(address)
        for job_id in running:
            job = cluster.jobs.live_job(job_id)
            if job is not None:
                usage = vadd(usage, job.resources)
        lines.append(
            NodeLine(
                address=address,
                state=info.state if live is None or live.state == "online" else live.state,
                tree=live.tree if live is not None else None,
                tags=cluster.nodes.all_tags(info),
                user_tags=list(cluster.nodes.user_tags.get(address, [])),
                limits={k: float(v) for k, v in info.resource_limits.items()},
                usage=amounts_to_map(usage),
                running_jobs=len(running),
                last_seen=info.last_seen,
                error=(live.error if live is not None else info.extra.get("offline_reason")),
            )
        )
    return lines
