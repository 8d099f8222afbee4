"""Rebuilding the live model from the store when the service starts.

Order matters and follows what the model validates: trees with their configs, pools parents
first, the default tree, ACLs and integral volumes; then the nodes that were online (so their
jobs can be attached at once; they have ``node_heartbeat_timeout`` to heartbeat again); then
every unfinished operation, running ones first and each group in start order, so that they take
their running slots back before pending ones are queued.  An operation gets back its pool,
weight and limits from ``@runtime_parameters`` and its jobs from the job rows: completed jobs
stay done, running jobs are running on their node again, the rest wait.

A new data directory is seeded from ``ServiceConfig.initial_pool_trees``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ytsched.errors import YtschedError
from ytsched.pooltree import Job, JobState, Operation
from ytsched.pooltree.ephemeral import EPHEMERAL_SUBPOOL_DELIMITER
from ytsched.pooltree.operations import WAITING_EMPTINESS_CHANGES
from ytsched.server.auth import DEFAULT_POOL_TREES_ACL
from ytsched.server.cluster import OperationRecord, iso
from ytsched.server.errors import ApiError
from ytsched.server.nodes import NodeInfo
from ytsched.server.operations import sync_record
from ytsched.store import JobRow, OperationRow

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

FINAL = ("completed", "failed", "aborted")
log = logging.getLogger("ytsched.server")


def revive(cluster: Cluster) -> None:
    store = cluster.store
    if not store.get_meta("initialized", False):
        with store.transaction():
            store.set_meta(
                "strategy", cluster.trees.strategy.model_dump(mode="json", exclude_unset=True)
            )
            if cluster.config.initial_pool_trees is not None:
                seed_pool_trees(cluster, cluster.config.initial_pool_trees)
            cluster.persist_meta()
            store.set_meta("initialized", True)
        return
    _revive_trees(cluster)
    _revive_nodes(cluster)
    _revive_operations(cluster)
    unfinished = sum(1 for r in cluster.operations.values() if r.row.state not in FINAL)
    log.info(
        "revived from %s: %d pool tree(s), %d node(s) awaiting their heartbeat,"
        " %d unfinished operation(s) with %d running job(s), %d alert(s)",
        cluster.config.data_dir,
        len(cluster.trees.trees),
        len(cluster.nodes.nodes),
        unfinished,
        len(cluster.jobs.running),
        len(cluster.alerts),
    )


def _alert(cluster: Cluster, code: str, message: str) -> None:
    cluster.alerts.append(
        {"code": code, "message": message, "attributes": {"alert_type": "revive"}}
    )


# --- pool trees --------------------------------------------------------------------------------


def seed_pool_trees(cluster: Cluster, document: Mapping[str, Any]) -> None:
    """Create trees and pools from ``{default_tree, pool_trees: {T: {config, pools}}}``.

    Pools are maps of attributes with an optional ``pools`` map of children.
    """
    trees = document.get("pool_trees")
    if not isinstance(trees, Mapping):
        raise ApiError("InvalidConfig", "pool trees document: 'pool_trees' must be a map")
    for name, tree_doc in trees.items():
        if not isinstance(tree_doc, Mapping):
            raise ApiError("InvalidConfig", f"pool trees document: tree {name!r} must be a map")
        tree = cluster.trees.create_tree(name, tree_doc.get("config") or {})
        _seed_pools(cluster, tree.name, None, tree_doc.get("pools") or {})
        cluster.persist_tree(name)
    default = document.get("default_tree")
    if default is not None:
        cluster.trees.set_default_tree(str(default))


def _seed_pools(cluster: Cluster, tree: str, parent: str | None, pools: object) -> None:
    if not isinstance(pools, Mapping):
        raise ApiError("InvalidConfig", f"tree {tree!r}: 'pools' must be a map")
    for name, attributes in pools.items():
        if not isinstance(attributes, Mapping):
            raise ApiError("InvalidConfig", f"tree {tree!r}: pool {name!r} must be a map")
        config = {k: v for k, v in attributes.items() if k not in ("pools", "acl", "inherit_acl")}
        cluster.tree(tree).create_pool(name, parent, config)
        acl = {k: attributes[k] for k in ("acl", "inherit_acl") if k in attributes}
        if acl:
            cluster.pool_acls[(tree, name)] = acl
            cluster.store.save_pool_acl(tree, name, acl)
        _seed_pools(cluster, tree, name, attributes.get("pools") or {})


def _revive_trees(cluster: Cluster) -> None:
    store = cluster.store
    cluster.pool_trees_acl = store.get_meta("pool_trees_acl", DEFAULT_POOL_TREES_ACL)
    for user, pool in (store.get_meta("user_to_default_pool", {}) or {}).items():
        cluster.trees.set_user_default_parent_pool(user, pool)
    for rows in store.load_trees():
        try:
            tree = cluster.trees.create_tree(rows.name, rows.config)
        except YtschedError as error:
            _alert(cluster, "TreeNotRevived", f"pool tree {rows.name!r}: {error.message}")
            continue
        cluster.tree_attributes[rows.name] = rows.attributes
        skipped: set[str] = set()
        for name, parent, config in rows.pools:
            if parent in skipped:
                skipped.add(name)
                continue
            try:
                tree.create_pool(name, parent, config)
            except YtschedError as error:
                skipped.add(name)
                _alert(
                    cluster,
                    "PoolNotRevived",
                    f"pool {name!r} in tree {rows.name!r} could not be revived: {error.message}",
                )
    default = store.get_meta("default_tree")
    if default is not None and default in cluster.trees.trees:
        cluster.trees.set_default_tree(default)
    cluster.pool_acls = store.load_pool_acls()
    for tree_name, volumes in store.load_volumes().items():
        live = cluster.trees.trees.get(tree_name)
        if live is None:
            continue
        for pool_name, (volume, ratio) in volumes.items():
            pool = live.pools.get(pool_name)
            if pool is not None and len(volume) == 5:
                pool.accumulated_resource_volume = (
                    float(volume[0]),
                    float(volume[1]),
                    float(volume[2]),
                    float(volume[3]),
                    float(volume[4]),
                )
                pool.last_integral_share_ratio = float(ratio)


# --- nodes ---------------------------------------------------------------------------------------


def _revive_nodes(cluster: Cluster) -> None:
    tracker = cluster.nodes
    tracker.user_tags = dict(cluster.store.get_meta("node_user_tags", {}) or {})
    now = cluster.now()
    with cluster.store.transaction():
        for row in cluster.store.load_nodes():
            info = NodeInfo(row.address, row.tags, row.resource_limits, now, registered_at=now)
            try:
                tracker.register(info)
            except YtschedError as error:
                _alert(cluster, "NodeNotRevived", f"node {row.address!r}: {error.message}")


# --- operations -----------------------------------------------------------------------------------


def _revival_spec(row: OperationRow) -> dict[str, Any]:
    """The scheduling spec with the operation's runtime pool, weight and limits per tree."""
    from ytsched.server.operations import SERVER_SPEC_KEYS

    spec = {k: v for k, v in row.spec.items() if k not in SERVER_SPEC_KEYS}
    per_tree = row.runtime.get("scheduling_options_per_pool_tree") or {}
    if per_tree:
        options = dict(spec.get("scheduling_options_per_pool_tree") or {})
        for tree, runtime in per_tree.items():
            merged = dict(options.get(tree) or {})
            pool = runtime.get("pool")
            if isinstance(pool, str):
                merged["pool"] = pool.split(EPHEMERAL_SUBPOOL_DELIMITER, 1)[0]
            for key in ("weight", "resource_limits"):
                if key in runtime:
                    merged[key] = runtime[key]
            options[tree] = merged
        spec["scheduling_options_per_pool_tree"] = options
        spec["pool_trees"] = list(per_tree)
    if "annotations" in row.runtime:
        spec["annotations"] = row.runtime["annotations"]
    return spec


def _revive_operations(cluster: Cluster) -> None:
    rows = cluster.store.load_operations()
    for row in rows:
        cluster.operations[row.id] = OperationRecord(row, list(row.runtime.get("acl") or []))
    active = [row for row in rows if row.state not in FINAL]
    active.sort(key=lambda row: (row.state != "running", row.seq))
    now = cluster.now()
    with cluster.store.transaction():
        for row in active:
            record = cluster.operations[row.id]
            try:
                live = cluster.trees.start_operation(
                    row.id,
                    user=row.user,
                    spec=_revival_spec(row),
                    operation_type=row.type,
                    now=row.start_time,
                )
            except YtschedError as error:
                row.state = "failed"
                row.finish_time = now
                row.result = {
                    "error": {
                        "code": "OperationFailed",
                        "message": "Operation could not be revived",
                        "inner_errors": [error.to_dict()],
                    }
                }
                row.events.append({"state": "failed", "time": iso(now), "attributes": {}})
                cluster.store.update_operation(row)
                continue
            _restore_jobs(cluster, live, cluster.store.jobs_of(row.id))
            record.seen_transitions = len(live.transitions)
            row.events.append(
                {"state": live.state.value, "time": iso(now), "attributes": {"revived": True}}
            )
            row.state = live.state.value
            cluster.store.update_operation(row)
            if live.all_jobs_completed:
                cluster.trees.complete_operation(row.id, now=now, reason="all jobs completed")
            sync_record(cluster, record, live)
        for job in cluster.store.running_jobs():
            if job.id not in cluster.jobs.running:
                cluster.store.finish_job(
                    job.id, state="aborted", finish_time=now, reason="operation is not active"
                )


def _restore_jobs(cluster: Cluster, live: Operation, rows: list[JobRow]) -> None:
    """Put an operation's jobs back: done ones done, running ones running, the rest waiting."""
    latest: dict[tuple[str, int], JobRow] = {}
    for row in rows:
        task = live.tasks.get(row.task)
        if task is None:
            continue
        job = Job(
            id=row.id,
            task=row.task,
            index=row.job_index,
            attempt=row.attempt,
            resources=task.resources,
            start_time=row.start_time,
            node=row.node,
            tree=row.tree,
            state=JobState(row.state),
            finish_time=row.finish_time,
            reason=row.reason,
        )
        live.jobs[row.id] = job
        key = (row.task, row.job_index)
        if key not in latest or latest[key].attempt < row.attempt:
            latest[key] = row
        task.attempts[row.job_index] = max(task.attempts.get(row.job_index, 0), row.attempt + 1)
        if row.state == "completed":
            task.completed_count += 1
        elif row.state == "failed":
            task.failed_count += 1
            live.failed_job_count += 1
        elif row.state == "aborted":
            task.aborted_count += 1
        elif row.state == "running":
            live.running_jobs[row.id] = job
            cluster.jobs.adopt(row)
    for name, task in live.tasks.items():
        waiting = []
        for index in range(task.spec.job_count):
            last = latest.get((name, index))
            again = last is not None and last.state == "completed"
            if (
                last is None
                or last.state in ("failed", "aborted")
                or (again and task.spec.restart_completed_jobs)
            ):
                waiting.append(index)
        if bool(waiting) != bool(task.waiting):
            # Kept exact for any tree state alive now (``Scheduler._stages_idle``'s memo).
            WAITING_EMPTINESS_CHANGES[0] += 1
        task.waiting = waiting
