"""Re-attaching revived running jobs to the scheduler's allocation ledger.

After a restart the live model has the jobs that were running (restored from the store) but
the scheduler's ledger, which accounts node usage and receives finished-job reports, is empty.
This adds one allocation per running job exactly as ``Ledger.start`` records a new one (node
usage and the operation's preemptible list; tree states are rebuilt by the next update), so a
node that heartbeats again finds its jobs attached, and one that does not has them aborted.

The scheduling layer has no public call for this yet (see the report to its owner); this is the
only place the service reaches into the ledger.
"""

from __future__ import annotations

from ytsched.pooltree import PoolTrees
from ytsched.resources import vadd
from ytsched.scheduling.nodes import Allocation, NodeState
from ytsched.scheduling.scheduler import Scheduler


def adopt_running_jobs(scheduler: Scheduler, trees: PoolTrees) -> int:
    ledger = scheduler.ledger
    count = 0
    jobs = [
        (operation.id, job)
        for operation in trees.operations.values()
        for job in operation.running_jobs.values()
        if job.node is not None and job.tree is not None
    ]
    jobs.sort(key=lambda item: (item[1].start_time, item[1].id))
    for operation_id, job in jobs:
        assert job.node is not None and job.tree is not None
        pool_node = trees.nodes.get(job.node)
        if pool_node is None:
            continue
        node = ledger.nodes.get(job.node)
        if node is None:
            node = NodeState(
                address=job.node, resource_limits=pool_node.resource_limits, tags=pool_node.all_tags
            )
            ledger.nodes[job.node] = node
        if job.id in node.allocations:
            continue
        ledger._sequence += 1
        allocation = Allocation(
            id=job.id,
            operation_id=operation_id,
            tree=job.tree,
            node=job.node,
            task=job.task,
            resources=job.resources,
            usage=job.resources,
            start_time=job.start_time,
            sequence=ledger._sequence,
            job=job,
            preemptible_progress_start_time=job.start_time,
        )
        node.allocations[job.id] = allocation
        node.usage = vadd(node.usage, job.resources)
        ledger.record(job.tree, operation_id).allocations.append(allocation)
        count += 1
    return count
