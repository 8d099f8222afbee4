"""Operations' usages reused across updates from checkpoints (``snapshot._memoized_usage``):
whatever jobs start, end or release their usage between two updates, the memoized usage is
bit for bit the sum from scratch (``Operation.resource_usage``'s fold in job order)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pooltree.helpers import GIB, scheduler
from ytsched.pooltree import PoolTrees, snapshot
from ytsched.pooltree.operations import Operation

# Resources whose sums round differently in different orders.
_CPUS = (0.1, 0.7, 1.3, 3.0)

_ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["start", "start", "start", "complete", "abort", "release"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=25,
)


def _operation() -> tuple[PoolTrees, Operation]:
    trees, _ = scheduler(cpu=10_000)
    spec = {
        "tasks": {
            f"t{index}": {"job_count": 60, "cpu_limit": cpu, "memory_limit": GIB}
            for index, cpu in enumerate(_CPUS)
        },
        "max_failed_job_count": 10_000,
    }
    operation = trees.start_operation("op", user="u", spec=spec, now=0.0)
    # The checkpoints are what this tests: the exact integer sums (which the whole-core
    # jobs would allow until a fractional one starts) are turned off.
    operation.exact_usage.exact = False
    return trees, operation


def _apply(trees: PoolTrees, operation: Operation, action: str, value: int) -> None:
    running = list(operation.running_jobs.values())
    if action == "start":
        waiting = [task for task in operation.tasks.values() if task.waiting]
        if waiting:
            task = waiting[value % len(waiting)]
            operation.start_job(task.name, 1.0, tree="physical")
    elif running:
        job = running[value % len(running)]
        if action == "release":
            operation.release_job_usage(job)
        else:
            getattr(trees, f"{action}_job")(operation.id, job.id, now=1.0)


@pytest.mark.parametrize("every", [1, 3, 32])
@settings(max_examples=40, deadline=None)
@given(updates=st.lists(_ACTIONS, min_size=1, max_size=10))
def test_memoized_usage_is_the_sum_from_scratch(
    every: int, updates: list[list[tuple[str, int]]]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(snapshot, "CHECKPOINT_EVERY", every)
        _check(every, updates)


def _check(every: int, updates: list[list[tuple[str, int]]]) -> None:
    trees, operation = _operation()
    memo: snapshot.UsageMemo = {}
    for actions in updates:
        for action, value in actions:
            _apply(trees, operation, action, value)
        ended, _, _ = snapshot.task_figures(operation)
        fresh: snapshot.UsageMemo = {}
        usage = snapshot._memoized_usage(operation, "physical", memo, fresh, ended)
        assert usage == operation.resource_usage("physical")
        assert repr(usage) == repr(operation.resource_usage("physical"))
        checkpoints = fresh["op"][5]
        assert checkpoints is not None
        jobs = list(operation.running_jobs.values())
        assert [job for job, _ in checkpoints] == jobs[::every]
        for index, (_, partial) in enumerate(checkpoints):
            assert partial == snapshot._fold_usage(
                (0.0, 0.0, 0.0, 0.0, 0.0), jobs[: index * every], "physical"
            )
        memo = fresh


def test_an_end_keeps_the_checkpoints_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job that ends after the first checkpoints leaves them (the very tuples) in place."""
    monkeypatch.setattr(snapshot, "CHECKPOINT_EVERY", 4)
    trees, operation = _operation()
    for _ in range(20):
        operation.start_job("t1", 1.0, tree="physical")
    memo: snapshot.UsageMemo = {}
    ended, _, _ = snapshot.task_figures(operation)
    snapshot._memoized_usage(operation, "physical", memo, memo, ended)
    before = memo["op"][5]
    assert before is not None
    running = list(operation.running_jobs.values())
    trees.complete_job("op", running[13].id, now=2.0)
    ended, _, _ = snapshot.task_figures(operation)
    usage = snapshot._memoized_usage(operation, "physical", memo, memo, ended)
    assert usage == operation.resource_usage("physical")
    after = memo["op"][5]
    assert after is not None
    assert all(after[index][1] is before[index][1] for index in range(4))
    assert after[4][0] is running[17]
