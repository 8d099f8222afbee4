"""Operations: vanilla tasks, jobs, demand, the state machine and its history."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import GIB, scheduler, vanilla
from ytsched.pooltree import JobState, OperationState, SchedulerError


def test_demand_from_pending_and_running_jobs() -> None:
    trees, _ = scheduler()
    spec = {
        "pool": "p",
        "tasks": {
            "server": {
                "job_count": 2,
                "cpu_limit": 10,
                "memory_limit": 60 * GIB,
                "interruption_signal": "SIGINT",
            },
            "gpu": {"job_count": 1, "cpu_limit": 2, "gpu_limit": 1, "memory_limit": GIB},
        },
    }
    operation = trees.start_operation("clique", user="u", spec=spec, now=1)
    assert operation.resource_demand() == (3.0, 22.0, 1.0, 121.0 * GIB, 0.0)
    assert operation.resource_usage() == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert operation.pending_job_count == 3
    job = trees.start_job("clique", "server", node="node1", now=2)
    assert job.id == "clique/server/0/0" and job.tree == "physical"
    assert operation.resource_usage() == (1.0, 10.0, 0.0, 60.0 * GIB, 0.0)
    assert operation.resource_demand() == (3.0, 22.0, 1.0, 121.0 * GIB, 0.0)
    assert operation.pending_job_count == 2


def test_pending_operation_demands_nothing_and_cannot_start_jobs() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    waiting = trees.start_operation("b", user="u", spec=vanilla("p"), now=1)
    assert waiting.resource_demand() == (0.0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(SchedulerError) as caught:
        trees.start_job("b", "main", now=2)
    assert caught.value.code == "InvalidOperationState"


def test_completes_with_last_job() -> None:
    trees, tree = scheduler()
    operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=2), now=1)
    first = trees.start_job("op", "main", now=2)
    second = trees.start_job("op", "main", now=2)
    with pytest.raises(SchedulerError) as caught:
        trees.start_job("op", "main", now=2)
    assert caught.value.code == "NoPendingJobs"
    with pytest.raises(SchedulerError) as caught:
        trees.start_job("op", "nope", now=2)
    assert caught.value.code == "NoSuchTask"
    trees.complete_job("op", first.id, now=3)
    with pytest.raises(SchedulerError) as caught:
        trees.complete_job("op", first.id, now=3)
    assert caught.value.code == "InvalidJobState"
    with pytest.raises(SchedulerError) as caught:
        trees.complete_job("op", "op/main/9/0", now=3)
    assert caught.value.code == "NoSuchJob"
    assert operation.state is OperationState.RUNNING
    trees.complete_job("op", second.id, now=4)
    assert operation.state is OperationState.COMPLETED
    assert operation.finish_time == 4
    assert operation.transitions[-1].reason == "all 2 jobs completed"
    assert "op" not in tree.operations and "p" not in tree.pools


def test_aborted_jobs_restart_and_failed_jobs_fail_the_operation() -> None:
    trees, _ = scheduler()
    operation = trees.start_operation(
        "op", user="u", spec=vanilla("p", jobs=1, max_failed_job_count=1), now=1
    )
    job = trees.start_job("op", "main", now=2)
    trees.abort_job("op", job.id, now=3, reason="preemption")
    assert job.state is JobState.ABORTED and operation.pending_job_count == 1
    retry = trees.start_job("op", "main", now=4)
    assert retry.attempt == 1
    trees.fail_job("op", retry.id, now=5, reason="exit code 1")
    assert operation.state is OperationState.RUNNING
    third = trees.start_job("op", "main", now=6)
    trees.fail_job("op", third.id, now=7, reason="exit code 2")
    assert operation.state is OperationState.FAILED
    assert "max_failed_job_count = 1" in (operation.error or "")


def test_finishing_aborts_running_jobs_and_is_final() -> None:
    trees, _ = scheduler()
    operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=3), now=1)
    job = trees.start_job("op", "main", now=2)
    trees.abort_operation("op", now=3, reason="user asked")
    assert operation.state is OperationState.ABORTED
    assert job.state is JobState.ABORTED and job.reason == "operation aborted"
    for finish in (trees.complete_operation, trees.fail_operation, trees.abort_operation):
        with pytest.raises(SchedulerError) as caught:
            finish("op", now=4)
        assert caught.value.code == "InvalidOperationState"
    with pytest.raises(SchedulerError) as caught:
        trees.complete_operation("ghost", now=4)
    assert caught.value.code == "NoSuchOperation"


def test_restart_completed_jobs_never_completes() -> None:
    trees, _ = scheduler()
    spec = {"pool": "p", "tasks": {"svc": {"job_count": 1, "restart_completed_jobs": True}}}
    operation = trees.start_operation("op", user="u", spec=spec, now=1)
    job = trees.start_job("op", "svc", now=2)
    trees.complete_job("op", job.id, now=3)
    assert operation.state is OperationState.RUNNING and operation.pending_job_count == 1


def test_explain_keeps_every_transition_with_reasons() -> None:
    trees, tree = scheduler()
    tree.create_pool("p", config={"max_running_operation_count": 1})
    trees.start_operation("a", user="u", spec=vanilla("p"), now=1)
    trees.start_operation("b", user="u", spec=vanilla("p"), now=2)
    trees.complete_operation("a", now=3)
    trees.abort_operation("b", now=4, reason="no longer needed")
    story = trees.explain("b")
    assert story["state"] == "aborted"
    assert [(t["from"], t["to"], t["time"]) for t in story["transitions"]] == [  # type: ignore[union-attr]
        ("starting", "pending", 2),
        ("pending", "running", 3),
        ("running", "aborted", 4),
    ]
    reasons = [t["reason"] for t in story["transitions"]]  # type: ignore[union-attr]
    assert "limit for the number of running operations (1) of pool 'p'" in reasons[0]
    assert "promoted: pool 'p' has room" in reasons[1]
    assert reasons[2] == "no longer needed"
    assert trees.orchid()["operations"]["b"]["state"] == "aborted"


def test_forget_job_drops_only_ended_jobs() -> None:
    trees, _ = scheduler()
    operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=3), now=1)
    first = trees.start_job("op", "main", node="node1", now=2)
    second = trees.start_job("op", "main", node="node1", now=2)
    assert not operation.forget_job(first.id)  # running: kept
    trees.complete_job("op", first.id, now=3)
    assert operation.forget_job(first.id)
    assert first.id not in operation.jobs and second.id in operation.jobs
    assert not operation.forget_job(first.id) and not operation.forget_job("nope")
    assert operation.tasks["main"].completed_count == 1  # the totals stay
    with pytest.raises(SchedulerError) as refused:
        trees.complete_job("op", first.id, now=4)
    assert refused.value.code == "NoSuchJob"


def test_forget_operation_drops_only_finished_operations() -> None:
    trees, _ = scheduler()
    trees.start_operation("done", user="u", spec=vanilla("p", jobs=1), now=1)
    trees.start_operation("busy", user="u", spec=vanilla("p", jobs=1), now=1)
    trees.complete_operation("done", now=2)
    assert not trees.forget_operation("busy") and not trees.forget_operation("nope")
    assert trees.forget_operation("done")
    assert "done" not in trees.operations and "busy" in trees.operations
    tree = trees.trees["physical"]
    assert "done" not in tree.operations and "busy" in tree.operations


def test_complete_running_job_is_complete_job() -> None:
    """The heartbeat path's ``complete_running_job`` (the operation and job at hand) ends
    jobs, moves the clock and completes the operation exactly as ``complete_job`` does."""
    states = []
    for direct in (False, True):
        trees, _ = scheduler()
        operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=2), now=1)
        first = trees.start_job("op", "main", now=2)
        second = trees.start_job("op", "main", now=2)
        for job, now in ((first, 5.0), (second, 4.0)):
            if direct:
                trees.complete_running_job(operation, job, now)
            else:
                trees.complete_job("op", job.id, now=now)
        states.append(
            (
                trees.clock,
                operation.state,
                operation.finish_time,
                [(j.id, j.state, j.finish_time) for j in operation.jobs.values()],
                operation.tasks["main"].completed_count,
                operation.job_changes,
            )
        )
    assert states[0] == states[1]
    assert states[0][0] == 5.0 and states[0][1] is OperationState.COMPLETED


def test_start_task_job_is_start_job() -> None:
    """The heartbeat path's ``start_task_job`` (the task at hand) starts the same jobs as
    ``start_job`` by name, and refuses the same way once no job waits or the operation ended."""
    runs = []
    for direct in (False, True):
        trees, _ = scheduler()
        operation = trees.start_operation("op", user="u", spec=vanilla("p", jobs=2), now=1)
        task = operation.tasks["main"]
        jobs = [
            operation.start_task_job(task, 2.0, "n", "physical")
            if direct
            else operation.start_job("main", 2.0, "n", "physical")
            for _ in range(2)
        ]
        with pytest.raises(SchedulerError, match="no waiting jobs"):
            operation.start_task_job(task, 3.0) if direct else operation.start_job("main", 3.0)
        runs.append(
            (
                [(j.id, j.index, j.attempt, j.resources, j.node, j.tree) for j in jobs],
                list(operation.running_jobs),
                operation.job_changes,
                operation.resource_usage("physical"),
            )
        )
        trees.abort_operation("op", now=4.0)
        with pytest.raises(SchedulerError, match="jobs start only when it runs"):
            operation.start_task_job(task, 5.0) if direct else operation.start_job("main", 5.0)
        with pytest.raises(SchedulerError, match="jobs start only when it runs"):
            operation.start_job("nope", 5.0)
    assert runs[0] == runs[1]


def test_finished_operation_count_grows_with_every_final_state() -> None:
    """``PoolTrees.finished_operation_count`` moves exactly when an operation reaches a final
    state (the simulator compares it around a heartbeat), whatever the way."""
    trees, _ = scheduler(cpu=100)
    spec = {"tasks": {"main": {"job_count": 1, "cpu_limit": 1}}}
    for name in ("a", "b", "c", "d"):
        trees.start_operation(name, user="u", spec=spec, now=0.0)
    assert trees.finished_operation_count == 0
    job = trees.operations["a"].start_job("main", 1.0, tree="physical")
    trees.complete_job("a", job.id, now=2.0)  # its last job: the operation completes
    assert trees.finished_operation_count == 1
    trees.abort_operation("b", now=3.0)
    trees.fail_operation("c", now=3.0)
    assert trees.finished_operation_count == 3
    job = trees.operations["d"].start_job("main", 4.0, tree="physical")
    trees.abort_job("d", job.id, now=5.0)  # back to pending: not finished
    assert trees.finished_operation_count == 3
    assert trees.unfinished_operation_count == 1
