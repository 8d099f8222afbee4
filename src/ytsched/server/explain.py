"""``explain_operation``: why an operation is where it is, as a paragraph and as JSON.

It combines four sources: the operation's state history (the live model's ``explain``), its
fair-share attributes per tree (orchid), the scheduling layer's own explanation (starvation,
placement, preemption), and the job records (which jobs were preempted, for whom, why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ytsched.server.operations import resolve_id

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

PREEMPTION_REASONS = frozenset(
    {"preemption", "aggressive_preemption", "graceful_preemption", "resource_overcommit"}
)


def _pct(value: object) -> str:
    return f"{100.0 * float(value):.1f}%" if isinstance(value, int | float) else "n/a"


def explain(cluster: Cluster, operation_id: object) -> dict[str, Any]:
    op_id = resolve_id(cluster, operation_id)
    record = cluster.record(op_id)
    row = record.row
    live = cluster.live_operation(op_id)
    story = live.explain() if live is not None else {}
    # Only the operation's own per-tree entries are read: the orchid cache builds just those
    # (the whole orchid costs seconds at thousands of operations, all of it on the event loop).
    per_tree: dict[str, Any] = {}
    for tree, attributes in cluster.orchid_cache.operation_per_tree(op_id).items():
        if attributes is not None:
            per_tree[tree] = {
                key: attributes.get(key)
                for key in (
                    "pool",
                    "fair_share_ratio",
                    "usage_ratio",
                    "demand_ratio",
                    "starvation_status",
                    "scheduling_status",
                    "dominant_resource",
                    "pending_in_pool",
                    "unschedulable_reason",
                )
                if key in attributes
            }
    scheduler_view: Any = None
    if cluster.scheduler is not None and live is not None and not live.state.is_final:
        try:
            scheduler_view = cluster.scheduler.explain_operation(op_id)
        except Exception as error:  # the explanation is best effort; never fail the request
            scheduler_view = {"error": str(error)}
    preempted = [
        {
            "job_id": job.id,
            "reason": (job.interruption or {}).get("reason"),
            "explanation": (job.interruption or {}).get("explanation"),
            "preempted_for_operation": (job.interruption or {}).get("preempted_for_operation"),
            "state": job.state,
        }
        for job in cluster.store.jobs_of(op_id)
        if (job.interruption or {}).get("reason") in PREEMPTION_REASONS
    ]
    result: dict[str, Any] = {
        "operation_id": op_id,
        "state": row.state,
        "suspended": row.suspended,
        "user": row.user,
        "trees": per_tree,
        "tree_states": story.get("trees", {}),
        "jobs": story.get("jobs", {}),
        "preempted_jobs": preempted,
        "history": story.get("transitions", [e for e in row.events]),
        "scheduler": scheduler_view,
    }
    result["text"] = _paragraph(result, row.result or {})
    return result


def _scheduler_text(view: Any) -> str | None:
    """The scheduling layer's reasons per tree, as sentences."""
    if not isinstance(view, dict):
        return None
    sentences = []
    for tree, info in (view.get("scheduling") or {}).items():
        if not isinstance(info, dict):
            continue
        reasons = [r.get("message") for r in info.get("reasons", []) if r.get("message")]
        if reasons:
            sentences.append(f"Scheduler, tree {tree!r}: " + "; ".join(reasons))
        failed = info.get("deactivation_reasons") or {}
        if failed:
            counts = ", ".join(f"{code} x{count}" for code, count in sorted(failed.items()))
            sentences.append(f"Attempts to place its jobs failed with: {counts}")
    return ". ".join(sentences) if sentences else None


def _paragraph(data: dict[str, Any], result: dict[str, Any]) -> str:
    op_id = data["operation_id"]
    state = data["state"]
    parts: list[str] = []
    if state in ("completed", "failed", "aborted"):
        error = result.get("error") or {}
        inner = (error.get("inner_errors") or [{}])[0].get("message") if error else None
        parts.append(
            f"Operation {op_id} of user {data['user']} is {state}"
            + (f": {inner}." if inner else ".")
        )
    elif state == "pending":
        reasons = [
            f"in tree {tree!r}: {info.get('reason')}"
            for tree, info in data["tree_states"].items()
            if info.get("state") != "running"
        ]
        parts.append(
            f"Operation {op_id} is pending (it waits for a running-operation slot): "
            + "; ".join(reasons or ["a running-operation limit is reached"])
            + ". It starts as soon as an operation in that pool finishes or the limit is raised."
        )
    else:
        parts.append(f"Operation {op_id} of user {data['user']} is {state}.")
    if data["suspended"]:
        parts.append("It is suspended: no new jobs start until it is resumed.")
    jobs = data["jobs"]
    for tree, info in data["trees"].items():
        if state in ("completed", "failed", "aborted"):
            break
        fair, usage, demand = (
            info.get("fair_share_ratio"),
            info.get("usage_ratio"),
            info.get("demand_ratio"),
        )
        sentence = (
            f"In tree {tree!r}, pool {info.get('pool')!r}, it uses {_pct(usage)} of the cluster"
            f" against a fair share of {_pct(fair)} and a demand of {_pct(demand)}"
        )
        if info.get("starvation_status") in ("starving", "aggressively_starving"):
            sentence += (
                f"; it is {info['starvation_status'].replace('_', ' ')}: its usage stayed below its"
                " fair share longer than the starvation timeout, so jobs of operations above their"
                " fair share may be preempted for it"
            )
        elif (
            isinstance(fair, int | float) and isinstance(usage, int | float) and usage + 1e-6 < fair
        ):
            pending = jobs.get("pending", 0)
            sentence += (
                f"; it is below its fair share with {pending} job(s) waiting (not starving yet:"
                " the starvation timeout has not passed, or nodes with free resources will start"
                " its jobs at their next heartbeats)"
            )
        elif (
            isinstance(fair, int | float) and isinstance(usage, int | float) and usage > fair + 1e-6
        ):
            sentence += (
                "; it is above its fair share, so its jobs may be preempted when another"
                " operation starves (or, in graceful mode, interrupted until it is back at its"
                " fair share)"
            )
        elif (
            isinstance(fair, int | float)
            and isinstance(demand, int | float)
            and fair + 1e-6 < demand
        ):
            sentence += (
                "; its fair share is below its demand because the pool's share is divided among"
                " its operations and pools by weight, guarantees and limits"
            )
        parts.append(sentence + ".")
    scheduler_text = _scheduler_text(data["scheduler"])
    if scheduler_text:
        parts.append(scheduler_text.rstrip(".") + ".")
    preempted = data["preempted_jobs"]
    if preempted:
        last = preempted[-1]
        why = last.get("explanation") or last.get("reason")
        target = last.get("preempted_for_operation")
        parts.append(
            f"{len(preempted)} of its jobs were preempted; the latest, {last['job_id']}, by"
            f" {last.get('reason')}" + (f" for operation {target}" if target else "") + f": {why}."
        )
    return " ".join(parts)
