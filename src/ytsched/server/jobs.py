"""Job records: the store's copy of every job, kept in step with the live model.

The live model (``ytsched.pooltree``) knows which jobs run; the store keeps every job ever
started with its node, times, outcome, output and why it was interrupted or aborted.  The
tracker mirrors the running jobs by node and by operation so that after a heartbeat or a
command only the jobs it could have touched are compared with the model, never all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ytsched.pooltree import Job, JobState
from ytsched.store import JobRow

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster


class JobTracker:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.running: dict[str, tuple[str, str | None]] = {}
        """job id -> (operation id, node address)."""
        self.by_node: dict[str, set[str]] = {}
        self.by_operation: dict[str, set[str]] = {}
        self.node_commands: dict[str, list[dict[str, Any]]] = {}
        """Interrupts and aborts asked by users, delivered with the node's next heartbeat."""
        self.started_count = 0

    def _add(self, job_id: str, operation_id: str, node: str | None) -> None:
        self.running[job_id] = (operation_id, node)
        if node is not None:
            self.by_node.setdefault(node, set()).add(job_id)
        self.by_operation.setdefault(operation_id, set()).add(job_id)

    def _remove(self, job_id: str) -> None:
        operation_id, node = self.running.pop(job_id)
        if node is not None:
            self.by_node.get(node, set()).discard(job_id)
        self.by_operation.get(operation_id, set()).discard(job_id)

    def adopt(self, row: JobRow) -> None:
        """A running job found in the store at start-up."""
        self._add(row.id, row.operation_id, row.node)

    def started(self, operation_id: str, job: Job) -> None:
        self.started_many([(operation_id, job)])

    def started_many(self, jobs: list[tuple[str, Job]]) -> None:
        """Record jobs the scheduler just started (inside a transaction)."""
        self.cluster.store.insert_jobs(
            [
                JobRow(
                    id=job.id,
                    operation_id=operation_id,
                    task=job.task,
                    job_index=job.index,
                    attempt=job.attempt,
                    node=job.node,
                    tree=job.tree,
                    state="running",
                    start_time=job.start_time,
                )
                for operation_id, job in jobs
            ]
        )
        for operation_id, job in jobs:
            self._add(job.id, operation_id, job.node)
        self.started_count += len(jobs)

    def live_job(self, job_id: str) -> Job | None:
        entry = self.running.get(job_id)
        if entry is None:
            return None
        operation = self.cluster.trees.operations.get(entry[0])
        return None if operation is None else operation.jobs.get(job_id)

    def reconcile(self, job_ids: Iterable[str]) -> list[str]:
        """Write jobs that stopped running in the model; returns their operations.

        Once written, an ended job is dropped from the live operation (``forget_job``): the
        store is its record from then on, and memory does not grow with every job started.
        """
        touched: list[str] = []
        rows: list[tuple[str, str, float | None, str | None, str | None]] = []
        ended: list[tuple[str, str]] = []
        # Every heartbeat looks at each job of its node: the lookups of ``live_job`` are
        # inlined (this loop was ~5% of the server's time at 2,000 heartbeats a second).
        running = self.running
        operations = self.cluster.trees.operations
        still = JobState.RUNNING
        for job_id in list(job_ids):
            entry = running.get(job_id)
            if entry is None:
                continue
            operation = operations.get(entry[0])
            job = None if operation is None else operation.jobs.get(job_id)
            if job is not None and job.state is still:
                continue
            if job is None:
                rows.append((job_id, "aborted", self.cluster.now(), "operation is gone", None))
            else:
                state = job.state.value
                abort_reason = job.reason if state == "aborted" else None
                rows.append((job_id, state, job.finish_time, job.reason, abort_reason))
                ended.append((entry[0], job_id))
            self._remove(job_id)
            touched.append(entry[0])
        if rows:
            self.cluster.store.finish_jobs(rows)
        for operation_id, job_id in ended:
            operation = operations.get(operation_id)
            if operation is not None:
                operation.forget_job(job_id)
        return touched

    def reconcile_node(self, address: str) -> list[str]:
        return self.reconcile(list(self.by_node.get(address, ())))

    def reconcile_operation(self, operation_id: str) -> list[str]:
        return self.reconcile(list(self.by_operation.get(operation_id, ())))

    def running_on(self, address: str) -> set[str]:
        return self.by_node.get(address, set())

    def queue(self, node: str, command: dict[str, Any]) -> None:
        """``command``: the node's interrupt or abort view with ``kind`` naming which."""
        self.node_commands.setdefault(node, []).append(command)

    def take_commands(self, node: str) -> list[dict[str, Any]]:
        return self.node_commands.pop(node, [])


def job_view(row: JobRow) -> dict[str, Any]:
    """A job as ``list_jobs`` / ``get_job`` return it (YTsaurus field names)."""
    from ytsched.server.cluster import iso

    view: dict[str, Any] = {
        "id": row.id,
        "job_id": row.id,
        "operation_id": row.operation_id,
        "task_name": row.task,
        "job_index": row.job_index,
        "attempt": row.attempt,
        "state": row.state,
        "address": row.node,
        "pool_tree": row.tree,
        "start_time": iso(row.start_time),
        "finish_time": iso(row.finish_time),
        "exit_code": row.exit_code,
    }
    interruption = row.interruption or {}
    if row.state == "aborted":
        abort_reason = interruption.get("reason") or "other"
        view["abort_reason"] = abort_reason
        attributes: dict[str, Any] = {"abort_reason": abort_reason}
        if interruption.get("explanation"):
            attributes["preemption_reason"] = interruption["explanation"]
        if interruption.get("preempted_for_operation"):
            attributes["preempted_for"] = {"operation_id": interruption["preempted_for_operation"]}
        view["error"] = {
            "code": "JobAborted",
            "message": row.reason or "job aborted",
            "attributes": attributes,
        }
    elif row.state == "failed":
        view["error"] = {"code": "JobFailed", "message": row.reason or "job failed"}
    if interruption:
        view["interruption_info"] = interruption
    return view
