"""Node heartbeats: what a node reports in, and the start/interrupt/abort decisions out.

One heartbeat, in order:

1. the node is (re-)registered or refreshed (:mod:`ytsched.server.nodes`);
2. reports of finished jobs are de-duplicated (a node resends them until an answer reaches
   it, so a report of a job the service already closed is dropped) and their output stored;
3. the scheduling layer decides (``Scheduler.process_heartbeat``): it records finished jobs,
   drops jobs the node no longer lists, starts, interrupts and aborts jobs in the live model;
4. everything that changed is written in one transaction *before* the answer leaves, so a
   job the node is told to start is always in the store;
5. the answer gets what users asked for this node (``abort_job``) and an abort for every job
   the node runs that the service does not consider running (e.g. of an aborted operation,
   or unknown after a restart).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ytsched.resources import RESOURCE_NAMES, Vector
from ytsched.scheduling.api import (
    FinishedJob,
    HeartbeatResponse,
    InterruptJob,
    JobOutcome,
    NodeHeartbeat,
    StartJob,
)
from ytsched.server import crashpoints

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster
    from ytsched.server.models import HeartbeatRequest


def _resources(vector: Vector) -> dict[str, float]:
    return dict(zip(RESOURCE_NAMES, vector, strict=True))


def _tail(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[-limit:]


def process(cluster: Cluster, request: HeartbeatRequest) -> dict[str, Any]:
    scheduler = cluster.scheduler
    started = time.perf_counter()
    now = cluster.now()
    limits_map, limits_vector = cluster.nodes.parsed_limits(
        request.address, request.resource_limits
    )
    info = cluster.nodes.on_heartbeat(request.address, request.tags, limits_map, now)
    tracker = cluster.jobs
    finished: list[FinishedJob] = []
    outputs = []
    for report in request.finished_jobs:
        if report.job_id not in tracker.running:
            continue
        finished.append(
            FinishedJob(
                operation_id=report.operation_id,
                job_id=report.job_id,
                outcome=JobOutcome(report.outcome),
                error=report.error,
                interrupted=report.interrupted,
            )
        )
        outputs.append(report)
    heartbeat = NodeHeartbeat(
        address=request.address,
        now=now,
        resource_limits=limits_vector,
        tags=frozenset(cluster.nodes.all_tags(info)),
        running_job_ids=tuple(request.running_job_ids),
        finished_jobs=tuple(finished),
    )
    lost = _lost_jobs(cluster, request, finished)
    response = _veto_suspended(cluster, scheduler.process_heartbeat(heartbeat), now)
    limit = cluster.config.job_output_limit
    touched = set(tracker.running_on(request.address))
    touched.update(f.job_id for f in finished)
    touched.update(a.job_id for a in response.abort)
    if outputs or response.start or response.interrupt or response.abort or finished or lost:
        with cluster.store.transaction():
            for job_id in lost:
                cluster.store.set_job_interruption(
                    job_id,
                    {"reason": NODE_OFFLINE, "explanation": f"node {request.address} lost the job"},
                )
            for report in outputs:
                if report.exit_code is not None or report.stdout or report.stderr:
                    cluster.store.set_job_output(
                        report.job_id,
                        report.exit_code,
                        _tail(report.stdout, limit),
                        _tail(report.stderr, limit),
                    )
            if response.start:
                tracker.started_many(
                    [
                        (s.operation_id, cluster.trees.operations[s.operation_id].jobs[s.job_id])
                        for s in response.start
                    ]
                )
            for interrupt in response.interrupt:
                cluster.store.set_job_interruption(interrupt.job_id, _interruption(interrupt))
            for abort in response.abort:
                record: dict[str, Any] = {
                    "reason": abort.reason.value,
                    "explanation": abort.explanation,
                }
                if abort.preempted_for_operation is not None:
                    # a job that could not be interrupted, aborted at once by a preemption
                    record["preempted_for_operation"] = abort.preempted_for_operation
                cluster.store.set_job_interruption(abort.job_id, record)
            changed = tracker.reconcile(touched)
            if changed:
                cluster.sync_operations(sorted(set(changed)))
        if crashpoints.ARMED:
            crashpoints.reach("heartbeat")
    else:
        tracker.reconcile(touched)
    answer = _answer(cluster, request, response)
    cluster.metrics.observe_heartbeat(time.perf_counter() - started, len(response.start))
    return answer


NODE_OFFLINE = "node_offline"
"""The abort reason of jobs lost with their node (``EAbortReason::NodeOffline``,
``yt/yt/ytlib/scheduler/public.h``)."""


def _lost_jobs(
    cluster: Cluster, request: HeartbeatRequest, finished: list[FinishedJob]
) -> list[str]:
    """Jobs the service runs on this node that the node neither runs nor reports finished.

    Our agent reports every job that ends, so a job missing from its heartbeat was lost with
    a previous agent process (killed, or its machine restarted): for YTsaurus that job's node
    went offline.  The scheduling layer aborts these; they are recorded as ``node_offline``.
    """
    on_node = cluster.jobs.running_on(request.address)
    if not on_node:
        return []
    missing = on_node.difference(request.running_job_ids)
    if missing:
        missing.difference_update(f.job_id for f in finished)
    return sorted(missing)


def _veto_suspended(cluster: Cluster, response: HeartbeatResponse, now: float) -> HeartbeatResponse:
    """Suspended operations start no jobs: a start the scheduler chose is taken back at once.

    The scheduling layer has no notion of suspension; the job it started is aborted in the
    live model (it waits again) and the scheduler drops the allocation at its next look at
    the node.  See ``docs/service.md`` (deviations).
    """
    if not any(cluster.operations[s.operation_id].row.suspended for s in response.start):
        return response
    kept = []
    for start in response.start:
        if cluster.operations[start.operation_id].row.suspended:
            cluster.trees.abort_job(
                start.operation_id, start.job_id, now=now, reason="operation suspended"
            )
        else:
            kept.append(start)
    return HeartbeatResponse(tuple(kept), response.interrupt, response.abort)


def _interruption(interrupt: InterruptJob) -> dict[str, Any]:
    return {
        "reason": interrupt.reason.value,
        "explanation": interrupt.explanation,
        "timeout": interrupt.timeout,
        "preempted_for_operation": interrupt.preempted_for_operation,
    }


def _answer(
    cluster: Cluster, request: HeartbeatRequest, response: HeartbeatResponse
) -> dict[str, Any]:
    interrupts = [_interrupt_view(i) for i in response.interrupt]
    aborts = [
        _abort_view(a.operation_id, a.job_id, a.reason.value, a.explanation) for a in response.abort
    ]
    for command in cluster.jobs.take_commands(request.address):
        kind = command.pop("kind")
        (interrupts if kind == "interrupt" else aborts).append(command)
    told = {a["job_id"] for a in aborts}
    running = cluster.jobs.running
    for job_id in request.running_job_ids:
        if job_id not in running and job_id not in told:
            aborts.append(
                _abort_view(
                    "",
                    job_id,
                    "operation_finished",
                    "the job is not running"
                    " in the scheduler (its operation ended or it was aborted)",
                )
            )
            told.add(job_id)
    return {
        "start": [_start_view(cluster, s) for s in response.start],
        "interrupt": interrupts,
        "abort": aborts,
        "heartbeat_period": cluster.config.heartbeat_period,
    }


def _start_view(cluster: Cluster, start: StartJob) -> dict[str, Any]:
    return {
        "operation_id": start.operation_id,
        "job_id": start.job_id,
        "task": start.task,
        "resources": _resources(start.resources),
        "command": start.command,
        "interruption_signal": start.interruption_signal,
        "environment": dict(start.environment),
    }


def _interrupt_view(interrupt: InterruptJob) -> dict[str, Any]:
    return {
        "operation_id": interrupt.operation_id,
        "job_id": interrupt.job_id,
        "reason": interrupt.reason.value,
        "timeout": interrupt.timeout,
        "signal": interrupt.signal,
        "explanation": interrupt.explanation,
    }


def _abort_view(operation_id: str, job_id: str, reason: str, explanation: str) -> dict[str, Any]:
    return {
        "operation_id": operation_id,
        "job_id": job_id,
        "reason": reason,
        "explanation": explanation,
    }
