"""Operations as a model: tasks, jobs, demand, and the operation state machine.

An operation of type ``vanilla`` has named tasks, each with ``job_count`` identical jobs whose
resources are ``{user_slots: 1, cpu: cpu_limit, gpu: gpu_limit, memory: memory_limit,
network: network_limit}``.  Its *usage* in a tree is the sum of its running jobs there; its
*demand* is that usage plus the resources of the jobs still waiting (the controller's "needed
resources", ``yt/yt/server/scheduler/strategy/pool_tree_element.cpp``).

States follow YTsaurus's ``EOperationState`` subset the scheduler shows: ``starting`` (being
registered), ``pending`` (waiting for a running-operation limit in some tree), ``running``,
and the final ``completed``, ``failed`` and ``aborted``.  Every transition keeps its time and
reason, so ``explain`` can tell the whole story of an operation.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field
from enum import Enum

from ytsched.config.operation import OperationSpec, TaskSpec
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.exact_usage import ExactUsage
from ytsched.pooltree.tentative import TentativeTreeEligibility
from ytsched.resources import ZERO, Vector, vadd, vscale


class OperationState(str, Enum):
    STARTING = "starting"
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"

    @property
    def is_final(self) -> bool:
        # Identity tests, not ``self in frozenset``: hashing an Enum member calls
        # ``Enum.__hash__`` in Python, and this runs for every job that ends.  Against module
        # constants (see below), not ``OperationState.COMPLETED``.
        return self is _OP_COMPLETED or self is _OP_FAILED or self is _OP_ABORTED


class JobState(str, Enum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


# Members read on every job start and end, as module constants: in Python 3.11 an attribute of
# an Enum class goes through ``EnumType.__getattr__``'s type slot (about four times the cost
# of reading a global).  The same objects, so every identity test is unchanged.
_OP_RUNNING = OperationState.RUNNING
_OP_COMPLETED = OperationState.COMPLETED
_OP_FAILED = OperationState.FAILED
_OP_ABORTED = OperationState.ABORTED
_JOB_COMPLETED = JobState.COMPLETED
_JOB_FAILED = JobState.FAILED


@dataclass(frozen=True, slots=True)
class Transition:
    """One state change of an operation."""

    time: float
    from_state: OperationState
    to_state: OperationState
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "time": self.time,
            "from": self.from_state.value,
            "to": self.to_state.value,
            "reason": self.reason,
        }


class EndWatch:
    """A count of watched jobs that ended: the scheduler's ledger gives the jobs on one node
    the node's watch, and counts down the ended ones it drops, so the count says at once
    whether an allocation there belongs to a job that ended elsewhere (its operation was
    aborted, its node left the tree) without visiting the node's allocations."""

    __slots__ = ("ended", "parent")

    def __init__(self, parent: EndWatch | None = None) -> None:
        self.ended = 0
        self.parent = parent
        """A watch that counts the ends this one counts, too (all nodes' jobs, say)."""

    def add(self, count: int) -> None:
        """Count ``count`` more ended jobs (negative: fewer) here and in the parents."""
        watch: EndWatch | None = self
        while watch is not None:
            watch.ended += count
            watch = watch.parent


@dataclass(slots=True)
class Job:
    """One run (attempt) of one job of a task."""

    id: str
    task: str
    index: int
    attempt: int
    resources: Vector
    start_time: float
    node: str | None = None
    tree: str | None = None
    state: JobState = JobState.RUNNING
    finish_time: float | None = None
    reason: str | None = None
    usage_released: bool = False
    """The scheduler preempted the job and no longer counts its resources as usage while the
    job finishes (YTsaurus zeroes a preempted allocation's usage at once); it still runs.
    Set through :meth:`Operation.release_job_usage` (which counts the changes)."""
    watch: EndWatch | None = field(default=None, compare=False, repr=False)
    """Counts this job's end (see :class:`EndWatch`); the job state changes only in
    :meth:`Operation._end_job`, which counts it."""


WAITING_EMPTINESS_CHANGES = [0]
"""How many times any task's waiting list turned empty or non-empty (a process-wide count:
it only ever grows, so an equal count means every task that had waiting jobs still has some,
and every one that had none still has none).  ``Scheduler._stages_idle`` reuses a
fail-to-fit answer, which reads only that of the waiting lists, while it stays equal."""


def _wait_again(task: Task, index: int) -> None:
    """Job ``index`` of ``task`` waits to run again: to its place in the sorted ``waiting``
    (as appending and sorting would put it), counted in :data:`WAITING_EMPTINESS_CHANGES`
    when the list was empty."""
    if not task.waiting:
        WAITING_EMPTINESS_CHANGES[0] += 1
    insort(task.waiting, index)


def job_resources(spec: TaskSpec) -> Vector:
    """Resources one job of the task asks for (user_slots, cpu, gpu, memory, network)."""
    return (
        1.0,
        float(spec.cpu_limit),
        float(spec.gpu_limit),
        float(spec.memory_limit),
        float(spec.network_limit),
    )


@dataclass(slots=True)
class Task:
    """A task's jobs: which indices wait, which run, how many ended how."""

    name: str
    spec: TaskSpec
    resources: Vector
    waiting: list[int] = field(default_factory=list)
    attempts: dict[int, int] = field(default_factory=dict)
    completed_count: int = 0
    failed_count: int = 0
    aborted_count: int = 0

    @staticmethod
    def create(name: str, spec: TaskSpec) -> Task:
        return Task(
            name=name,
            spec=spec,
            resources=job_resources(spec),
            waiting=list(range(spec.job_count)),
        )


class _NoMarks(set[str]):
    """:data:`NO_MARKS`: a set that stays empty (``add`` does nothing)."""

    __slots__ = ()

    def add(self, element: str) -> None:
        """Nothing: no tree reads the operation's changes yet."""


NO_MARKS: set[str] = _NoMarks()
"""The change marks of an operation no tree's snapshot has registered (shared, always empty)."""


class Operation:
    """An operation: spec, tasks and jobs, state and history."""

    def __init__(
        self,
        operation_id: str,
        *,
        user: str,
        operation_type: str,
        spec: OperationSpec,
        start_time: float,
    ) -> None:
        self.id = operation_id
        self.user = user
        self.type = operation_type
        self.spec = spec
        self.start_time = start_time
        self.finish_time: float | None = None
        self.state = OperationState.STARTING
        self.transitions: list[Transition] = []
        self.tasks: dict[str, Task] = {
            name: Task.create(name, task) for name, task in spec.tasks.items()
        }
        self.jobs: dict[str, Job] = {}
        self.running_jobs: dict[str, Job] = {}
        self.tree_states: dict[str, str] = {}
        """Per tree: ``"pending"`` or ``"running"`` (kept by the trees)."""
        self.tree_reasons: dict[str, str] = {}
        self.failed_job_count = 0
        self.usage_releases = 0
        self.job_changes = 0
        """How many times a job started or ended (never decreases): :meth:`start_job` and
        :meth:`_end_job` are the only changes of the tasks' waiting lists and counters and of
        :attr:`running_jobs`, so with the same count (and the same operation object) they are
        as they were; ``ytsched.pooltree.snapshot`` then reuses the operation's engine input."""
        """How many times :meth:`release_job_usage` released a running job's usage (never
        decreases): with the same count, no job's ``usage_released`` changed in between, which
        lets ``ytsched.pooltree.snapshot`` reuse a usage sum without visiting the jobs."""
        self.change_marks: set[str] = NO_MARKS
        """Where this operation's id is added whenever an input of its engine input changes
        (a job starts or ends, a usage is released, the state changes): the marks of the
        tree whose snapshot reads it (``ytsched.pooltree.input_marks``, which rebuilds the
        engine input of the marked operations only, registers them), a set forwarding to
        several trees' marks, or :data:`NO_MARKS` before any snapshot.  One C call per
        change on the job paths."""
        self.exact_usage = ExactUsage()
        """The running jobs' usage as exact integer sums (kept by :meth:`start_job`,
        :meth:`_end_job` and :meth:`release_job_usage`; read by ``ytsched.pooltree.snapshot``)."""
        self.error: str | None = None
        self.pool_trees: list[str] = []
        """Trees the operation was admitted to."""
        self.erased_trees: dict[str, str] = {}
        """Trees dropped at start because their pool limits refused the operation."""
        self.annotations: dict[str, object] = dict(spec.annotations)
        self.tentative_trees: set[str] = set()
        """Trees the operation runs in tentatively (``ytsched.pooltree.tentative``)."""
        self.eligibility: dict[str, TentativeTreeEligibility] = {}
        """Per task, its tentative-tree sample and bans (only with tentative trees)."""
        self.tentative_saturation_times: dict[str, float] = {}
        """Per tentative tree, when the controller last declined a job there (saturation)."""
        self.banned_tentative_trees: list[str] = []
        """Tentative trees banned for the operation (it left them), in ban order."""
        self.newly_banned_trees: list[str] = []
        """Banned since the trees last looked (:meth:`PoolTrees` removes it from them)."""

    # --- tentative trees ----------------------------------------------------------------------

    def _eligibility(self, task: str) -> TentativeTreeEligibility:
        found = self.eligibility.get(task)
        if found is None:
            found = TentativeTreeEligibility(self.spec.tentative_tree_eligibility)
            self.eligibility[task] = found
        return found

    def can_start_in(self, task: str, tree: str) -> bool:
        """Whether a job of ``task`` may start in ``tree`` (always, unless it is tentative)."""
        if tree not in self.tentative_trees:
            return True
        return self._eligibility(task).can_start(tree, True)

    def on_tentative_tree_declined(self, tree: str, now: float) -> None:
        """A scheduling attempt in ``tree`` started nothing and the controller declined at
        least one task because the tree is tentative for it (``TentativeTreeDeclined``): the
        operation is saturated there (``TStrategyOperationController::OnScheduleAllocation
        Failed`` in ``yt/yt/server/scheduler/strategy/operation_controller.cpp``)."""
        self.tentative_saturation_times[tree] = now

    def is_saturated_in_tentative_tree(self, tree: str, now: float, period: float) -> bool:
        """Whether the operation was saturated in ``tree`` less than ``period`` seconds ago
        (``IsSaturatedInTentativeTree``; a strict comparison, as upstream)."""
        since = self.tentative_saturation_times.get(tree)
        return since is not None and since + period > now

    # --- state machine ----------------------------------------------------------------------

    def _transition(self, to: OperationState, now: float, reason: str) -> None:
        if self.state is to:
            return
        self.transitions.append(Transition(now, self.state, to, reason))
        self.state = to
        self.change_marks.add(self.id)

    def set_tree_state(self, tree: str, state: str, now: float, reason: str) -> None:
        """Record the state in one tree; the overall state follows once started.

        The operation runs when it runs in every tree; otherwise it is pending.
        """
        self.tree_states[tree] = state
        self.tree_reasons[tree] = reason
        if self.state in (OperationState.PENDING, OperationState.RUNNING):
            self._refresh(now, f"tree {tree!r}: {reason}")

    def forget_tree(self, tree: str, now: float, reason: str) -> None:
        self.tree_states.pop(tree, None)
        self.tree_reasons.pop(tree, None)
        if self.state in (OperationState.PENDING, OperationState.RUNNING):
            self._refresh(now, reason)

    def _refresh(self, now: float, reason: str) -> None:
        if self.runs_in_some_tree:
            self._transition(OperationState.RUNNING, now, reason)
        else:
            self._transition(OperationState.PENDING, now, reason)

    @property
    def runs_in_some_tree(self) -> bool:
        """Whether some tree admitted it to run.

        YTsaurus keeps the pending state per tree (``pool_tree.cpp``: an operation waits for a
        running-operation limit only in the tree whose pool reached it): the operation runs in
        the trees that admitted it and is held back only in the limited ones.  It is pending
        as a whole only when it runs in no tree.
        """
        states = self.tree_states.values()
        return not states or any(state == "running" for state in states)

    def runs_in(self, tree: str) -> bool:
        """Whether it runs, and runs in ``tree`` (not pending at a limit there)."""
        return self.state is OperationState.RUNNING and self.tree_states.get(tree) == "running"

    def finish_starting(self, now: float) -> None:
        """Leave ``starting``: running where some tree admitted it, else pending with the
        trees' reasons."""
        waiting = [t for t, s in self.tree_states.items() if s != "running"]
        reasons = "; ".join(f"tree {t!r}: {self.tree_reasons[t]}" for t in waiting)
        if self.runs_in_some_tree:
            trees = ", ".join(repr(t) for t, s in self.tree_states.items() if s == "running")
            suffix = f" (pending in {reasons})" if waiting else ""
            self._transition(OperationState.RUNNING, now, f"started in tree(s) {trees}{suffix}")
        else:
            self._transition(OperationState.PENDING, now, reasons)

    def finish(self, state: OperationState, now: float, reason: str) -> None:
        """Move to a final state; running jobs are aborted."""
        if not state.is_final:
            raise ValueError(f"{state.value} is not a final state")
        if self.state.is_final:
            raise SchedulerError(
                "InvalidOperationState",
                f"operation {self.id!r} is already {self.state.value}",
                operation_id=self.id,
            )
        for job in list(self.running_jobs.values()):
            self._end_job(job, JobState.ABORTED, now, f"operation {state.value}")
        if state is OperationState.FAILED:
            self.error = reason
        self.finish_time = now
        self._transition(state, now, reason)

    # --- jobs ------------------------------------------------------------------------------

    def _task(self, name: str) -> Task:
        task = self.tasks.get(name)
        if task is None:
            raise SchedulerError(
                "NoSuchTask",
                f"operation {self.id!r} has no task {name!r}"
                f" (tasks: {', '.join(sorted(self.tasks)) or 'none'})",
                operation_id=self.id,
            )
        return task

    def start_job(
        self, task_name: str, now: float, node: str | None = None, tree: str | None = None
    ) -> Job:
        """Start the next waiting job of a task (:meth:`start_task_job` by the task's name)."""
        task = self.tasks.get(task_name)
        if task is None:
            if self.state is not _OP_RUNNING:
                raise self._not_running()
            task = self._task(task_name)  # raises
        return self.start_task_job(task, now, node, tree)

    def _not_running(self) -> SchedulerError:
        return SchedulerError(
            "InvalidOperationState",
            f"operation {self.id!r} is {self.state.value}; jobs start only when it runs",
            operation_id=self.id,
        )

    def start_task_job(
        self, task: Task, now: float, node: str | None = None, tree: str | None = None
    ) -> Job:
        """Start the next waiting job of ``task``, one of :attr:`tasks`' values.

        The heartbeat path holds the task already (``ScheduledOperation.tasks`` are these
        objects) and passes it, for every start, instead of its name to look up again;
        ``node`` and ``tree`` by position (a call with keywords takes Python 3.11's slower
        generic call path)."""
        if self.state is not _OP_RUNNING:
            raise self._not_running()
        task_name = task.name
        if not task.waiting:
            raise SchedulerError(
                "NoPendingJobs",
                f"operation {self.id!r}: task {task_name!r} has no waiting jobs",
                operation_id=self.id,
            )
        index = task.waiting.pop(0)
        if not task.waiting:
            WAITING_EMPTINESS_CHANGES[0] += 1
        attempt = task.attempts.get(index, 0)
        task.attempts[index] = attempt + 1
        job_id = f"{self.id}/{task_name}/{index}/{attempt}"
        # Positional: (id, task, index, attempt, resources, start_time, node, tree).
        job = Job(job_id, task_name, index, attempt, task.resources, now, node, tree)
        self.jobs[job_id] = job
        self.running_jobs[job_id] = job
        self.job_changes += 1
        self.change_marks.add(self.id)
        self.exact_usage.started(job)
        if self.tentative_trees and tree is not None:
            self._eligibility(task_name).on_started(tree, tree in self.tentative_trees, now)
        return job

    def release_job_usage(self, job: Job) -> None:
        """Stop counting a running job's resources as usage (the scheduler preempted it).

        The only way ``usage_released`` turns true, so that :attr:`usage_releases` counts
        every change of the flag."""
        if not job.usage_released:
            self.exact_usage.released(job)
            job.usage_released = True
            self.usage_releases += 1
            self.change_marks.add(self.id)

    def running_job(self, job_id: str) -> Job:
        job = self.running_jobs.get(job_id)
        if job is None:
            if job_id in self.jobs:
                raise SchedulerError(
                    "InvalidJobState",
                    f"job {job_id!r} of operation {self.id!r} is {self.jobs[job_id].state.value}",
                    job_id=job_id,
                )
            raise SchedulerError(
                "NoSuchJob", f"operation {self.id!r} has no job {job_id!r}", job_id=job_id
            )
        return job

    def forget_job(self, job_id: str) -> bool:
        """Drop an ended job from :attr:`jobs` (a running job is kept); returns whether it was
        dropped.

        The model needs ended jobs only until their owner recorded them (the service writes
        them to its store; the per-task counters keep the totals), and a long-running service
        starts millions of jobs: without this, every job ever started stays in memory.
        """
        job = self.jobs.get(job_id)
        if job is None or job.state is JobState.RUNNING:
            return False
        del self.jobs[job_id]
        return True

    def _end_job(self, job: Job, state: JobState, now: float, reason: str | None) -> None:
        self.job_changes += 1
        self.change_marks.add(self.id)
        job.state = state
        watch = job.watch
        if watch is not None:
            watch.add(1)
        job.finish_time = now
        job.reason = reason
        del self.running_jobs[job.id]
        self.exact_usage.ended(job)
        if self.tentative_trees and job.tree is not None:
            banned = self._eligibility(job.task).on_finished(
                job.tree,
                job.tree in self.tentative_trees,
                state is _JOB_COMPLETED,
                now - job.start_time,
                now,
            )
            self.newly_banned_trees.extend(t for t in banned if t in self.tentative_trees)
        task = self.tasks[job.task]
        # ``waiting`` stays sorted: the index goes to its place (as appending and sorting
        # would put it) only when the job waits again.
        if state is _JOB_COMPLETED:
            task.completed_count += 1
            if task.spec.restart_completed_jobs:
                _wait_again(task, job.index)
        elif state is _JOB_FAILED:
            task.failed_count += 1
            self.failed_job_count += 1
            _wait_again(task, job.index)
        else:
            task.aborted_count += 1
            _wait_again(task, job.index)

    def complete_job(self, job_id: str, now: float) -> Job:
        job = self.running_job(job_id)
        self._end_job(job, _JOB_COMPLETED, now, None)
        return job

    def complete_running_job(self, job: Job, now: float) -> None:
        """:meth:`complete_job` for a caller that holds the job and knows it runs (one of
        :attr:`running_jobs`): the scheduler's heartbeat path, for every job that completes,
        without looking it up again."""
        self._end_job(job, _JOB_COMPLETED, now, None)

    def fail_job(self, job_id: str, now: float, reason: str = "job failed") -> Job:
        job = self.running_job(job_id)
        self._end_job(job, JobState.FAILED, now, reason)
        return job

    def abort_job(self, job_id: str, now: float, reason: str = "aborted") -> Job:
        """Abort a running job; it waits to be started again (YTsaurus restarts aborted jobs)."""
        job = self.running_job(job_id)
        self._end_job(job, JobState.ABORTED, now, reason)
        return job

    @property
    def all_jobs_completed(self) -> bool:
        """Every job of every task completed (never true with restart_completed_jobs)."""
        if not self.tasks:
            return False
        return not self.running_jobs and all(
            not task.waiting and not task.spec.restart_completed_jobs
            for task in self.tasks.values()
        )

    @property
    def too_many_failed_jobs(self) -> bool:
        return self.failed_job_count > self.spec.max_failed_job_count

    # --- resources --------------------------------------------------------------------------

    @property
    def pending_job_count(self) -> int:
        return sum(len(task.waiting) for task in self.tasks.values())

    @property
    def running_job_count(self) -> int:
        return len(self.running_jobs)

    def resource_usage(self, tree: str | None = None) -> Vector:
        """Resources of running jobs (in ``tree`` only, when given), except jobs whose usage
        the scheduler released on preemption."""
        usage = ZERO
        for job in self.running_jobs.values():
            if job.usage_released:
                continue
            if tree is None or job.tree is None or job.tree == tree:
                usage = vadd(usage, job.resources)
        return usage

    def needed_resources(self) -> Vector:
        """Resources of the jobs still waiting to start."""
        needed = ZERO
        for task in self.tasks.values():
            if task.waiting:
                needed = vadd(needed, vscale(task.resources, float(len(task.waiting))))
        return needed

    def resource_demand(self, tree: str | None = None) -> Vector:
        """Usage plus needed resources; only usage unless the operation runs (in ``tree``,
        when given)."""
        usage = self.resource_usage(tree)
        if self.state is not OperationState.RUNNING:
            return usage
        if tree is not None and self.tree_states.get(tree, "running") != "running":
            return usage
        return vadd(usage, self.needed_resources())

    # --- explain -----------------------------------------------------------------------------

    def explain(self) -> dict[str, object]:
        """The operation's story: state, per-tree state and reason, every transition."""
        return {
            "id": self.id,
            "user": self.user,
            "type": self.type,
            "state": self.state.value,
            "start_time": self.start_time,
            "finish_time": self.finish_time,
            "pool_trees": list(self.pool_trees),
            "erased_trees": dict(self.erased_trees),
            "tentative_pool_trees": sorted(self.tentative_trees),
            "banned_tentative_trees": list(self.banned_tentative_trees),
            "trees": {
                tree: {"state": state, "reason": self.tree_reasons.get(tree)}
                for tree, state in self.tree_states.items()
            },
            "transitions": [t.to_dict() for t in self.transitions],
            "jobs": {
                "running": self.running_job_count,
                "pending": self.pending_job_count,
                "failed": self.failed_job_count,
            },
        }
