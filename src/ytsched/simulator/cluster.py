"""Simulated exec nodes: the jobs they run, and how those jobs end.

A simulated node does what an exec node does between heartbeats: it runs the jobs the scheduler
started on it until their work is done, takes interruption signals and abort orders, and keeps
what ended so that its next heartbeat reports it.  It decides nothing about scheduling.

How a job ends is fixed when something happens to it, as an end time plus an outcome:

* started: it completes when its work is done (``inf`` for a service that never ends);
* interrupted (an :class:`~ytsched.scheduling.api.InterruptJob` with a timeout): if its task
  says how long it takes to finish after the signal (``finish_after_interruption``) and that fits
  in the timeout, it completes then, marked ``interrupted``; otherwise it runs on and the node
  aborts it when the timeout ends (YTsaurus's exec node enforces the interruption timeout), unless
  its work was done earlier;
* aborted by the scheduler: it stops at once;
* with a ``waiting_for_resources_on_node_timeout`` (tree) or ``waiting_job_timeout`` (spec),
  a job that does not fit in what the node's running jobs leave waits until it fits, and is
  aborted by the node (``waiting_timeout``) if that takes longer than the timeout, as
  YTsaurus's exec node does.  Without a timeout it starts at once, as before.

The engine turns end times into events; a job's ``token`` changes whenever its end time does,
so an outdated event is recognised and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ytsched.config.base import ConfigError
from ytsched.errors import YtschedError
from ytsched.pooltree import PoolTrees
from ytsched.resources import Vector
from ytsched.scheduling.api import FinishedJob, InterruptionReason, JobOutcome, finished_job
from ytsched.simulator.scenario import NodeGroup, Scenario, config_error_at

_ABORTED = JobOutcome.ABORTED
"""A module constant: :meth:`SimNode.end` tests it for every job that ends (an Enum class
attribute costs ``EnumType.__getattr__``'s slot)."""


@dataclass(eq=False, slots=True)
class SimJob:
    """One job attempt running on a simulated node."""

    id: str
    operation_id: str
    task: str
    index: int
    node: SimNode
    resources: Vector
    start_time: float
    end_time: float
    """When the job ends if nothing else happens (``inf``: never on its own)."""
    work_end_time: float
    """When its work would be done (the natural completion)."""
    outcome: JobOutcome = JobOutcome.COMPLETED
    """How it ends at ``end_time``."""
    interrupted: bool = False
    """It ends early because of an interruption signal (completes as interrupted)."""
    interruption_reason: InterruptionReason | None = None
    preempted_for: str | None = None
    interrupt_time: float | None = None
    interrupt_deadline: float | None = None
    signal_finish_time: float | None = None
    """When the job finishes after its interruption signal (``None``: it ignores it)."""
    token: int = 0
    waiting: bool = False
    """It waits on its node for resources held by finishing jobs (it does not run yet)."""

    def interrupt(self, now: float, timeout: float, finish_after: float | None) -> None:
        """The job is told to finish within ``timeout``; ``finish_after`` is how long it needs
        after the signal (``None``: it ignores the signal).  The earliest of its natural
        completion, its signal response and the deadline ends it; at the deadline it is
        aborted.  A second interruption keeps the earlier deadline and response."""
        deadline = now + timeout
        if self.interrupt_deadline is not None:
            deadline = min(deadline, self.interrupt_deadline)
        else:
            self.interrupt_time = now
        self.interrupt_deadline = deadline
        if self.signal_finish_time is None and finish_after is not None:
            self.signal_finish_time = now + finish_after
        end, outcome, interrupted = self.work_end_time, JobOutcome.COMPLETED, False
        if self.signal_finish_time is not None and self.signal_finish_time < end:
            end, interrupted = self.signal_finish_time, True
        if deadline < end:
            end, outcome, interrupted = deadline, JobOutcome.ABORTED, False
        self.end_time, self.outcome, self.interrupted = end, outcome, interrupted
        self.token += 1


@dataclass(eq=False, slots=True)
class SimNode:
    """An exec node of the simulated cluster."""

    address: str
    group: str
    index: int
    resource_limits: Vector
    tags: frozenset[str]
    phase: float
    """Offset of its heartbeats within the period (seeded, random)."""
    online: bool = True
    next_tick: int = 0
    """Index of its next heartbeat not yet run or accounted (times: ``phase + k * period``)."""
    parked: bool = False
    """No heartbeat event queued: its heartbeats are idle until something wakes it (see
    :mod:`ytsched.simulator.engine`)."""
    awake_levels: int = -1
    """``Simulation.levels_version`` when its last heartbeat found it would act again."""
    waiting_count: int = 0
    """Jobs on it waiting for resources (see ``waiting_for_resources_on_node_timeout``)."""
    changed: bool = False
    """Its tags or limits changed since its last heartbeat: the next one must run (the
    scheduler learns of the change only from it)."""
    running: dict[str, SimJob] = field(default_factory=dict)
    finished: list[FinishedJob] = field(default_factory=list)
    """Jobs that ended since the last heartbeat (reported by the next one)."""

    def start(self, job: SimJob) -> None:
        self.running[job.id] = job

    def take_finished(self) -> tuple[FinishedJob, ...]:
        finished = tuple(self.finished)
        self.finished.clear()
        return finished

    def end(self, job: SimJob, report: bool) -> None:
        """The job stops running here; ``report``: tell the scheduler at the next heartbeat.

        ``report`` may be passed by position: every job end does (a call with keywords takes
        Python 3.11's slower generic call path)."""
        del self.running[job.id]
        if job.waiting:
            self.waiting_count -= 1
        if report:
            error = None
            if job.outcome is _ABORTED:
                error = (
                    "waiting for resources on the node timed out"
                    if job.waiting
                    else "interruption timeout expired"
                )
            # (operation_id, job_id, outcome, error, interrupted), built through the slots.
            self.finished.append(
                finished_job(job.operation_id, job.id, job.outcome, error, job.interrupted)
            )

    def usage(self) -> Vector:
        """What the jobs running here hold (waiting jobs hold nothing yet)."""
        total = [0.0] * 5
        for job in self.running.values():
            if job.waiting:
                continue
            for i, amount in enumerate(job.resources):
                total[i] += amount
        return (total[0], total[1], total[2], total[3], total[4])


def node_addresses(group: NodeGroup, first_index: int) -> list[tuple[int, str]]:
    """Indices and addresses of a group's nodes, numbered from ``first_index``."""
    width = max(4, len(str(first_index + group.count)))
    return [
        (index, f"{group.name}-{index:0{width}d}")
        for index in range(first_index, first_index + group.count)
    ]


def build_pool_trees(scenario: Scenario) -> PoolTrees:
    """Trees and explicit pools of the scenario (no nodes, no operations)."""
    section = scenario.document.scheduler
    trees = PoolTrees(section.strategy())
    overrides = section.tree_config_overrides
    for tree in scenario.pool_trees.trees:
        tree_path = tree.path
        try:
            created = trees.create_tree(tree.name, tree.config)
        except (ConfigError, YtschedError) as error:
            raise config_error_at(f"{tree_path}.@config", error) from None
        if overrides:
            try:
                trees.update_tree_config(tree.name, overrides)
            except (ConfigError, YtschedError) as error:
                raise config_error_at("scheduler.tree_config_overrides", error) from None
        for pool in tree.pools:
            try:
                created.create_pool(pool.name, pool.parent, pool.config, now=0.0)
            except (ConfigError, YtschedError) as error:
                raise config_error_at(pool.path, error) from None
    trees.set_default_tree(scenario.pool_trees.default_tree)
    return trees
