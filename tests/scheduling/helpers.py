"""A tiny simulated cluster for scheduling tests: nodes that run what they are told.

A simulated node keeps the jobs the scheduler started on it, reports them on every heartbeat,
finishes jobs when a test says so, and reacts to interruptions the way a test configures:
finish the job (``interrupted=True``) some seconds after the signal, or ignore it (the
scheduler then aborts it at the deadline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ytsched.pooltree import PoolTree, PoolTrees
from ytsched.resources import Vector
from ytsched.scheduling import (
    FinishedJob,
    HeartbeatResponse,
    InterruptJob,
    JobOutcome,
    NodeHeartbeat,
    Scheduler,
)

GIB = 2**30


def limits(cpu: float = 10.0, slots: float | None = None, memory_gib: float = 100.0) -> Vector:
    """Node resource limits: ``slots`` defaults to ``cpu``."""
    return (float(slots if slots is not None else cpu), float(cpu), 0.0, memory_gib * GIB, 0.0)


def vanilla(
    pool: str | None = None, jobs: int = 10, cpu: float = 1.0, memory_gib: float = 1.0, **extra: Any
) -> dict[str, Any]:
    # Interruptible jobs (a signal), so that preemption interrupts them with a timeout; a job
    # without a signal is aborted at once (``test_preemption.py`` checks both).
    spec: dict[str, Any] = {
        "tasks": {
            "main": {
                "job_count": jobs,
                "cpu_limit": cpu,
                "memory_limit": int(memory_gib * GIB),
                "interruption_signal": "SIGINT",
            }
        }
    }
    if pool is not None:
        spec["pool"] = pool
    spec.update(extra)
    return spec


@dataclass
class SimNode:
    address: str
    resource_limits: Vector
    tags: frozenset[str] = frozenset()
    running: dict[str, str] = field(default_factory=dict)
    """job -> operation."""
    interrupts: dict[str, tuple[InterruptJob, float]] = field(default_factory=dict)
    """Interrupted jobs still running: the order and when it arrived."""
    finished: list[FinishedJob] = field(default_factory=list)
    """Reports for the next heartbeat."""
    interrupt_delay: float | None = None
    """Finish an interrupted job this long after the signal; ``None``: ignore the signal."""


class Cluster:
    """A pool tree ``physical`` (the default tree), a scheduler and simulated nodes."""

    def __init__(
        self,
        tree_config: dict[str, Any] | None = None,
        *,
        nodes: int = 1,
        node_limits: Vector | None = None,
        strategy: dict[str, Any] | None = None,
        interrupt_delay: float | None = None,
    ) -> None:
        self.trees = PoolTrees(strategy)
        self.tree: PoolTree = self.trees.create_tree("physical", tree_config)
        self.trees.set_default_tree("physical")
        self.scheduler = Scheduler(self.trees)
        self.now = 0.0
        self.nodes: dict[str, SimNode] = {}
        self.responses: list[tuple[str, float, HeartbeatResponse]] = []
        for index in range(nodes):
            self.add_node(f"n{index + 1}", node_limits or limits(), interrupt_delay=interrupt_delay)

    # --- setup ---------------------------------------------------------------------------

    def add_node(
        self,
        address: str,
        resource_limits: Vector,
        *,
        tags: frozenset[str] = frozenset(),
        interrupt_delay: float | None = None,
    ) -> SimNode:
        node = SimNode(address, resource_limits, tags, interrupt_delay=interrupt_delay)
        self.nodes[address] = node
        self.scheduler.process_heartbeat(NodeHeartbeat(address, self.now, resource_limits, tags))
        return node

    def pool(self, name: str, parent: str | None = None, **config: Any) -> None:
        self.tree.create_pool(name, parent, config)

    def operation(self, operation_id: str, spec: dict[str, Any], user: str = "u") -> None:
        self.trees.start_operation(operation_id, user=user, spec=spec, now=self.now)

    # --- time ------------------------------------------------------------------------------

    def update(self, now: float | None = None) -> None:
        if now is not None:
            self.now = now
        self.scheduler.update(self.now)

    def heartbeat(self, address: str = "n1", now: float | None = None) -> HeartbeatResponse:
        if now is not None:
            self.now = now
        node = self.nodes[address]
        for job_id, (_, received) in list(node.interrupts.items()):
            if node.interrupt_delay is not None and self.now >= received + node.interrupt_delay:
                operation_id = node.running.pop(job_id)
                del node.interrupts[job_id]
                node.finished.append(
                    FinishedJob(operation_id, job_id, JobOutcome.COMPLETED, interrupted=True)
                )
        request = NodeHeartbeat(
            address=address,
            now=self.now,
            resource_limits=node.resource_limits,
            tags=node.tags,
            running_job_ids=tuple(node.running),
            finished_jobs=tuple(node.finished),
        )
        node.finished = []
        response = self.scheduler.process_heartbeat(request)
        for job in response.start:
            node.running[job.job_id] = job.operation_id
        for abort in response.abort:
            node.running.pop(abort.job_id, None)
            node.interrupts.pop(abort.job_id, None)
        for interrupt in response.interrupt:
            node.interrupts[interrupt.job_id] = (interrupt, self.now)
        self.responses.append((address, self.now, response))
        return response

    def heartbeat_all(self, now: float | None = None) -> dict[str, HeartbeatResponse]:
        if now is not None:
            self.now = now
        return {address: self.heartbeat(address) for address in self.nodes}

    def finish(self, job_id: str, outcome: JobOutcome = JobOutcome.COMPLETED) -> None:
        for node in self.nodes.values():
            if job_id in node.running:
                operation_id = node.running.pop(job_id)
                node.interrupts.pop(job_id, None)
                node.finished.append(FinishedJob(operation_id, job_id, outcome))
                return
        raise KeyError(job_id)

    # --- views -----------------------------------------------------------------------------

    def running(self, operation_id: str | None = None) -> list[str]:
        """Jobs the simulated nodes run (including interrupted ones)."""
        return [
            job
            for node in self.nodes.values()
            for job, op in node.running.items()
            if operation_id is None or op == operation_id
        ]

    def usage(self, operation_id: str) -> int:
        """Allocations the scheduler counts for the operation (not preempted)."""
        return sum(
            1
            for node in self.scheduler.ledger.nodes.values()
            for allocation in node.allocations.values()
            if allocation.operation_id == operation_id and allocation.preemption is None
        )

    def op_orchid(self, operation_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.scheduler.orchid()["pool_trees"]["physical"]["operations"][
            operation_id
        ]
        return result

    def pool_orchid(self, pool: str) -> dict[str, Any]:
        result: dict[str, Any] = self.scheduler.orchid()["pool_trees"]["physical"]["pools"][pool]
        return result
