"""Operation commands: ``start_op``, ``abort_op``, ``complete_op``, ``suspend_op``,
``resume_op``, ``update_op_parameters``, ``get_operation``, ``list_operations``, and the job
commands ``list_jobs``, ``get_job``, ``get_job_stderr``, ``abort_job``.

Admission, limits and states are the live model's (``PoolTrees``); this module adds what
YTsaurus keeps outside the strategy: who may start and manage an operation (pool ``use``,
operation ``acl``), the ``suspended`` flag, aliases, the ``@events`` list, ``@result``, time
limits, and the records in the store.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ytsched.config.base import ConfigError, parse_config
from ytsched.config.operation import OperationSpec
from ytsched.pooltree import Operation, OperationState
from ytsched.pooltree.ephemeral import EPHEMERAL_SUBPOOL_DELIMITER, default_parent
from ytsched.server import crashpoints
from ytsched.server.auth import validate_acl
from ytsched.server.cluster import OperationRecord, iso
from ytsched.server.errors import ApiError
from ytsched.server.jobs import job_view
from ytsched.server.limits import check_spec, check_vanilla_limits
from ytsched.store import OperationRow

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

SERVER_SPEC_KEYS = frozenset(
    {"acl", "alias", "owners", "description", "started_by", "unrecognized_spec"}
)
"""Spec keys the service keeps itself; the rest is the scheduler's ``OperationSpec``."""
FINAL_STATES = frozenset({"completed", "failed", "aborted"})


def new_operation_id() -> str:
    """A YTsaurus-looking id: four hex parts."""
    return "-".join(f"{secrets.randbits(32):x}" for _ in range(4))


def resolve_id(cluster: Cluster, operation_id: object) -> str:
    """An operation id, or ``*alias`` of an operation started with ``spec/alias``."""
    if not isinstance(operation_id, str) or not operation_id:
        raise ApiError("InvalidArgument", "operation_id must be a non-empty string")
    if operation_id.startswith("*"):
        for op_id, record in cluster.operations.items():
            if record.row.spec.get("alias") == operation_id:
                return op_id
        raise ApiError(
            "NoSuchOperation", f"no operation has alias {operation_id!r}", alias=operation_id
        )
    cluster.record(operation_id)
    return operation_id


# --- records --------------------------------------------------------------------------------


def runtime_parameters(
    cluster: Cluster, record: OperationRecord, live: Operation
) -> dict[str, Any]:
    """``@runtime_parameters`` of a live operation."""
    per_tree: dict[str, Any] = {}
    for name in live.tree_states:
        tree = cluster.trees.trees.get(name)
        entry = tree.operations.get(live.id) if tree is not None else None
        if entry is None:
            continue
        options: dict[str, Any] = {"pool": entry.pool.name}
        if entry.weight is not None:
            options["weight"] = entry.weight
        if entry.resource_limits is not None:
            options["resource_limits"] = entry.resource_limits.as_map()
        per_tree[name] = options
    return {
        "scheduling_options_per_pool_tree": per_tree,
        "annotations": dict(live.annotations),
        "acl": record.acl,
        "erased_trees": sorted(live.erased_trees),
    }


def _result(live: Operation) -> dict[str, Any]:
    reason = live.transitions[-1].reason if live.transitions else ""
    if live.state is OperationState.FAILED:
        return {
            "error": {
                "code": "OperationFailed",
                "message": "Operation has failed",
                "inner_errors": [{"code": "OperationFailed", "message": live.error or reason}],
            }
        }
    if live.state is OperationState.ABORTED:
        return {
            "error": {
                "code": "OperationAborted",
                "message": "Operation aborted",
                "inner_errors": [{"code": "OperationAborted", "message": reason}],
            }
        }
    return {}


def sync_record(cluster: Cluster, record: OperationRecord, live: Operation) -> None:
    """Bring a record (and its row in the store) up to date with the live operation."""
    row = record.row
    changed = False
    if len(live.transitions) > record.seen_transitions:
        for transition in live.transitions[record.seen_transitions :]:
            row.events.append(
                {
                    "state": transition.to_state.value,
                    "time": iso(transition.time),
                    "attributes": {"reason": transition.reason},
                }
            )
        record.seen_transitions = len(live.transitions)
        changed = True
    if live.state.value != row.state:
        row.state = live.state.value
        changed = True
    if live.state.is_final:
        if row.finish_time is None:
            row.finish_time = live.finish_time
            row.result = _result(live)
            cluster.jobs.reconcile_operation(live.id)
            changed = True
    else:
        runtime = runtime_parameters(cluster, record, live)
        if runtime != row.runtime:
            row.runtime = runtime
            changed = True
    if changed:
        cluster.store.update_operation(row)


# --- permissions ------------------------------------------------------------------------------


def _target_pool(cluster: Cluster, tree_name: str, requested: str, user: str) -> str | None:
    """The pool whose ``use`` a start or move into ``requested`` needs (None: the tree)."""
    tree = cluster.tree(tree_name)
    if requested in tree.pools and not tree.pools[requested].is_ephemeral:
        return requested
    base = requested.split(EPHEMERAL_SUBPOOL_DELIMITER, 1)[0]
    if base != requested and base in tree.pools:
        return base
    parent = default_parent(tree, user)
    return None if parent.is_root else parent.name


def check_use(cluster: Cluster, user: str, spec: OperationSpec) -> None:
    """``use`` on the pool of every tree the operation would run in."""
    trees = spec.pool_trees
    if trees is None:
        trees = (cluster.trees.default_tree,) if cluster.trees.default_tree else ()
    for name in trees:
        if name not in cluster.trees.trees:
            continue  # the live model reports the unknown tree
        requested = spec.tree_options(name).pool or spec.pool or user
        pool = _target_pool(cluster, name, requested, user)
        cluster.require_pool_permission(user, "use", name, pool)


def can_manage(cluster: Cluster, user: str, record: OperationRecord) -> bool:
    from ytsched.server.auth import AclNode

    if user == record.row.user or cluster.auth.is_superuser(user):
        return True
    owners = record.row.spec.get("owners") or []
    if isinstance(owners, list) and user in owners:
        return True
    return cluster.auth.allowed(user, "manage", [AclNode(record.acl, inherit=False)])


def require_manage(cluster: Cluster, user: str, record: OperationRecord) -> None:
    if not can_manage(cluster, user, record):
        raise ApiError(
            "AuthorizationError",
            f"Access denied: user {user!r} may not manage operation {record.row.id!r}"
            " (not its owner, not in its acl with 'manage')",
            user=user,
            operation_id=record.row.id,
        )


# --- commands ---------------------------------------------------------------------------------


def start_operation(
    cluster: Cluster,
    user: str,
    operation_type: object,
    spec: object,
    mutation_id: str | None = None,
) -> str:
    """Start an operation; its id.

    With ``mutation_id`` a repeated request (a client retrying after the answer was lost, e.g.
    with a leader that died) returns the operation the first one started instead of starting
    another — what YTsaurus's response keeper does for retried mutations
    (``yt/yt/core/rpc/response_keeper.h``).  The id is kept in the store with the operation,
    committed in the same transaction.
    """
    if mutation_id is not None:
        known = cluster.store.get_meta(f"mutation:{mutation_id}")
        if isinstance(known, dict):
            if known.get("user") != user:
                raise ApiError(
                    "InvalidArgument",
                    f"mutation id {mutation_id!r} was used by another user",
                    mutation_id=mutation_id,
                )
            return str(known["operation_id"])
    if not isinstance(operation_type, str):
        raise ApiError("InvalidArgument", "operation_type must be a string")
    if not isinstance(spec, Mapping):
        raise ConfigError("InvalidConfig", "operation spec must be a map", field="spec")
    spec = dict(spec)
    acl = validate_acl(spec.get("acl", []), "spec")
    alias = spec.get("alias")
    if alias is not None and (not isinstance(alias, str) or not alias.startswith("*")):
        raise ConfigError("InvalidConfig", "spec/alias must be a string starting with '*'")
    if alias is not None and any(
        r.row.spec.get("alias") == alias
        for r in cluster.operations.values()
        if r.row.state not in FINAL_STATES
    ):
        raise ApiError("AlreadyExists", f"operation alias {alias!r} is already in use")
    limits = cluster.config.limits
    check_spec(spec, limits)
    scheduling = {k: v for k, v in spec.items() if k not in SERVER_SPEC_KEYS}
    parsed = parse_config(OperationSpec, scheduling, "operation spec")
    check_vanilla_limits({n: t.job_count for n, t in parsed.tasks.items()}, limits)
    check_use(cluster, user, parsed)
    operation_id = new_operation_id()
    now = cluster.now()
    live = cluster.trees.start_operation(
        operation_id, user=user, spec=parsed, operation_type=operation_type, now=now
    )
    row = OperationRow(
        id=operation_id,
        seq=0,
        type=operation_type,
        user=user,
        spec=spec,
        state=OperationState.STARTING.value,
        suspended=False,
        start_time=now,
        finish_time=None,
        runtime={},
        events=[{"state": "starting", "time": iso(now), "attributes": {}}],
        result=None,
    )
    record = OperationRecord(row, acl)
    with cluster.store.transaction():
        row.seq = cluster.store.next_seq("operation")
        cluster.store.insert_operation(row)
        if mutation_id is not None:
            cluster.store.set_meta(
                f"mutation:{mutation_id}", {"operation_id": operation_id, "user": user}
            )
        cluster.operations[operation_id] = record
        sync_record(cluster, record, live)
    if crashpoints.ARMED:
        crashpoints.reach("operation_start")
    return operation_id


def _finish(
    cluster: Cluster, user: str, operation_id: object, action: str, message: object
) -> None:
    op_id = resolve_id(cluster, operation_id)
    record = cluster.record(op_id)
    require_manage(cluster, user, record)
    if record.row.state in FINAL_STATES:
        raise ApiError(
            "InvalidOperationState",
            f"operation {op_id!r} is already {record.row.state}",
            operation_id=op_id,
        )
    now = cluster.now()
    reason = str(message) if message else f"Operation {action} by user {user!r}"
    if action == "aborted":
        cluster.trees.abort_operation(op_id, now=now, reason=reason)
    else:
        cluster.trees.complete_operation(op_id, now=now, reason=reason)
    with cluster.store.transaction():
        cluster.jobs.reconcile_operation(op_id)
        cluster.sync_operations()


def abort_operation(cluster: Cluster, user: str, operation_id: object, message: object) -> None:
    _finish(cluster, user, operation_id, "aborted", message)


def complete_operation(cluster: Cluster, user: str, operation_id: object) -> None:
    _finish(cluster, user, operation_id, "completed", None)


def suspend_operation(
    cluster: Cluster, user: str, operation_id: object, abort_running_jobs: bool
) -> None:
    """No new jobs start while suspended; running jobs go on unless asked to abort them."""
    op_id = resolve_id(cluster, operation_id)
    record = cluster.record(op_id)
    require_manage(cluster, user, record)
    _require_active(record)
    record.row.suspended = True
    live = cluster.live_operation(op_id)
    now = cluster.now()
    with cluster.store.transaction():
        if abort_running_jobs and live is not None:
            for job_id in list(live.running_jobs):
                cluster.trees.abort_job(op_id, job_id, now=now, reason="operation suspended")
            cluster.jobs.reconcile_operation(op_id)
        record.row.events.append(
            {"state": record.row.state, "time": iso(now), "attributes": {"suspended": True}}
        )
        cluster.store.update_operation(record.row)


def resume_operation(cluster: Cluster, user: str, operation_id: object) -> None:
    op_id = resolve_id(cluster, operation_id)
    record = cluster.record(op_id)
    require_manage(cluster, user, record)
    _require_active(record)
    record.row.suspended = False
    with cluster.store.transaction():
        record.row.events.append(
            {
                "state": record.row.state,
                "time": iso(cluster.now()),
                "attributes": {"suspended": False},
            }
        )
        cluster.store.update_operation(record.row)


def _require_active(record: OperationRecord) -> None:
    if record.row.state in FINAL_STATES:
        raise ApiError(
            "InvalidOperationState",
            f"operation {record.row.id!r} is already {record.row.state}",
            operation_id=record.row.id,
        )


def update_parameters(
    cluster: Cluster, user: str, operation_id: object, parameters: object
) -> None:
    op_id = resolve_id(cluster, operation_id)
    record = cluster.record(op_id)
    require_manage(cluster, user, record)
    _require_active(record)
    if not isinstance(parameters, Mapping):
        raise ConfigError("InvalidConfig", "parameters must be a map", field="parameters")
    params = dict(parameters)
    acl = validate_acl(params.pop("acl"), "parameters") if "acl" in params else None
    live = cluster.live_operation(op_id)
    if live is None:
        raise ApiError("InvalidOperationState", f"operation {op_id!r} is not active")
    for tree in live.tree_states:
        per_tree = params.get("scheduling_options_per_pool_tree") or {}
        options = per_tree.get(tree) if isinstance(per_tree, Mapping) else None
        pool = (options.get("pool") if isinstance(options, Mapping) else None) or params.get("pool")
        if isinstance(pool, str):
            target = _target_pool(cluster, tree, pool, live.user)
            cluster.require_pool_permission(user, "use", tree, target)
    if params:
        cluster.trees.update_operation_parameters(op_id, params, now=cluster.now())
    if acl is not None:
        record.acl = acl
    with cluster.store.transaction():
        cluster.sync_operations()
        record.row.runtime = runtime_parameters(cluster, record, live)
        cluster.store.update_operation(record.row)


def enforce_time_limits(cluster: Cluster, now: float) -> None:
    """Fail operations running longer than ``spec/time_limit`` (as YTsaurus does).

    Runs before every update: one pass over the live operations finds the expired ones
    (none, nearly always), and only then are they failed in the records' order."""
    due = {
        live.id
        for live in cluster.trees.operations.values()
        if live.spec.time_limit is not None
        and not live.state.is_final
        and (now - live.start_time) * 1000.0 > live.spec.time_limit
    }
    if not due:
        return
    expired = []
    for op_id in cluster.active_operation_ids():
        live = cluster.live_operation(op_id)
        if op_id in due and live is not None and live.spec.time_limit is not None:
            expired.append((op_id, live.spec.time_limit))
    for op_id, limit in expired:
        cluster.trees.fail_operation(
            op_id,
            now=now,
            reason=f"Operation is running for too long (time_limit {limit} ms), failed",
        )
    if expired:
        with cluster.store.transaction():
            cluster.sync_operations()


# --- views ----------------------------------------------------------------------------------


def _job_counts(cluster: Cluster, op_id: str) -> dict[str, Any]:
    counts = cluster.store.job_state_counts(op_id)
    live = cluster.live_operation(op_id)
    pending = live.pending_job_count if live is not None and not live.state.is_final else 0
    if live is not None:
        total: int | None = sum(task.spec.job_count for task in live.tasks.values())
    else:  # finished and no longer live (e.g. after a restart): the spec still says it
        total = _spec_job_count(cluster, op_id)
    return {
        "running": counts.get("running", 0),
        "pending": pending,
        "completed": {"total": counts.get("completed", 0)},
        "failed": counts.get("failed", 0),
        "aborted": {"total": counts.get("aborted", 0)},
        "total": total,
    }


def _spec_job_count(cluster: Cluster, op_id: str) -> int | None:
    record = cluster.operations.get(op_id)
    tasks = record.row.spec.get("tasks") if record is not None else None
    if not isinstance(tasks, dict):
        return None
    counts = [task.get("job_count", 1) for task in tasks.values() if isinstance(task, dict)]
    return sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool))


def operation_view(
    cluster: Cluster, record: OperationRecord, *, brief: bool = False
) -> dict[str, Any]:
    row = record.row
    runtime = row.runtime
    per_tree = runtime.get("scheduling_options_per_pool_tree", {})
    view: dict[str, Any] = {
        "id": row.id,
        "operation_type": row.type,
        "type": row.type,
        "state": row.state,
        "authenticated_user": row.user,
        "user": row.user,
        "start_time": iso(row.start_time),
        "finish_time": iso(row.finish_time),
        "suspended": row.suspended,
        "pool": next((o.get("pool") for o in per_tree.values()), row.spec.get("pool")),
        "pool_trees": sorted(per_tree),
        "brief_progress": {"jobs": _job_counts(cluster, row.id)},
    }
    if row.spec.get("alias"):
        view["alias"] = row.spec["alias"]
    if brief:
        return view
    live = cluster.live_operation(row.id)
    view.update(
        {
            "spec": row.spec,
            "runtime_parameters": runtime,
            "events": row.events,
            "result": row.result or {},
            "progress": {"jobs": view["brief_progress"]["jobs"]},
            "slot_index_per_pool_tree": _slot_indices(cluster, row.id),
            "alerts": {},
        }
    )
    if live is not None:
        view["erased_trees"] = sorted(live.erased_trees)
    return view


def _slot_indices(cluster: Cluster, op_id: str) -> dict[str, int]:
    result = {}
    for name, tree in cluster.trees.trees.items():
        entry = tree.operations.get(op_id)
        if entry is not None:
            result[name] = entry.slot_index
    return result


def filter_attributes(view: dict[str, Any], attributes: object) -> dict[str, Any]:
    if attributes is None:
        return view
    if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
        raise ApiError("InvalidArgument", "attributes must be a list of names")
    return {key: view[key] for key in attributes if key in view}


def get_operation(cluster: Cluster, operation_id: object, attributes: object) -> dict[str, Any]:
    record = cluster.record(resolve_id(cluster, operation_id))
    return filter_attributes(operation_view(cluster, record), attributes)


def list_operations(
    cluster: Cluster,
    *,
    user: str | None,
    state: str | None,
    pool: str | None,
    limit: int,
) -> dict[str, Any]:
    selected = []
    for record in reversed(list(cluster.operations.values())):
        row = record.row
        if user is not None and row.user != user:
            continue
        if state is not None and row.state != state:
            continue
        if pool is not None:
            pools = {
                o.get("pool")
                for o in row.runtime.get("scheduling_options_per_pool_tree", {}).values()
            }
            if pool not in pools and row.spec.get("pool") != pool:
                continue
        selected.append(record)
    limited = selected[:limit]
    return {
        "operations": [operation_view(cluster, r, brief=True) for r in limited],
        "incomplete": len(selected) > len(limited),
        "count": len(selected),
    }


def list_jobs(
    cluster: Cluster, operation_id: object, state: str | None, limit: int
) -> dict[str, Any]:
    op_id = resolve_id(cluster, operation_id)
    rows = cluster.store.jobs_of(op_id)
    if state is not None:
        rows = [row for row in rows if row.state == state]
    return {"jobs": [job_view(row) for row in rows[:limit]], "total_count": len(rows)}


def _job_row(cluster: Cluster, job_id: object) -> Any:
    if not isinstance(job_id, str) or not job_id:
        raise ApiError("InvalidArgument", "job_id must be a non-empty string")
    row = cluster.store.job(job_id)
    if row is None:
        raise ApiError("NoSuchJob", f"job {job_id!r} does not exist", job_id=job_id)
    return row


def get_job(cluster: Cluster, job_id: object) -> dict[str, Any]:
    return job_view(_job_row(cluster, job_id))


def get_job_output(cluster: Cluster, job_id: object, stream: str) -> str:
    row = _job_row(cluster, job_id)
    text = row.stderr if stream == "stderr" else row.stdout
    return text or ""


def abort_job(cluster: Cluster, user: str, job_id: object, interrupt_timeout: float | None) -> None:
    """Abort a running job now, or interrupt it with ``interrupt_timeout`` (ms) to finish."""
    row = _job_row(cluster, job_id)
    record = cluster.record(row.operation_id)
    require_manage(cluster, user, record)
    if row.state != "running" or row.id not in cluster.jobs.running:
        raise ApiError("InvalidJobState", f"job {row.id!r} is {row.state}", job_id=row.id)
    live = cluster.live_operation(row.operation_id)
    signal = None
    if live is not None and row.task in live.tasks:
        signal = live.tasks[row.task].spec.interruption_signal
    explanation = (
        f"{'interrupted' if interrupt_timeout is not None else 'aborted'} by user {user!r}"
    )
    command: dict[str, Any] = {
        "operation_id": row.operation_id,
        "job_id": row.id,
        "reason": "user_request",
        "explanation": explanation,
    }
    if interrupt_timeout is not None:
        if row.node is not None:
            command.update(kind="interrupt", timeout=interrupt_timeout / 1000.0, signal=signal)
            cluster.jobs.queue(row.node, command)
        with cluster.store.transaction():
            cluster.store.set_job_interruption(
                row.id, {"reason": "user_request", "explanation": explanation}
            )
        return
    cluster.trees.abort_job(row.operation_id, row.id, now=cluster.now(), reason="user_request")
    if row.node is not None:
        cluster.jobs.queue(row.node, {**command, "kind": "abort"})
    with cluster.store.transaction():
        cluster.store.set_job_interruption(
            row.id, {"reason": "user_request", "explanation": explanation}
        )
        cluster.jobs.reconcile([row.id])
        cluster.sync_operations([row.operation_id])
