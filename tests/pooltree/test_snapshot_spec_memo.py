"""Operations' engine inputs reused across updates (``snapshot.SpecMemo``): whatever happens
between two updates, the memoized snapshot equals one built from scratch, and an operation
nothing happened to keeps its very spec object."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pooltree.helpers import scheduler, vanilla
from ytsched.pooltree import PoolTrees, snapshot
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.input_marks import FanOutMarks, OperationInputs
from ytsched.pooltree.operations import NO_MARKS, OperationState

_ACTIONS_LIST = [
    "start",
    "complete",
    "abort",
    "fail",
    "release",
    "weight",
    "limits",
    "pool",
    "swap",
    "abort_operation",
    "arrive",
    "rename",
    "state",
]
_ACTIONS = st.tuples(
    st.sampled_from(_ACTIONS_LIST),
    st.integers(min_value=0, max_value=5),
    st.integers(min_value=0, max_value=50),
)


def _trees() -> PoolTrees:
    trees, tree = scheduler(cpu=100)
    tree.create_pool("a", config={"max_operation_count": 50})
    tree.create_pool("b", config={"max_operation_count": 50})
    for index in range(6):
        trees.start_operation(
            f"op{index}",
            user="u",
            spec={**vanilla("a" if index % 2 else "b", jobs=8), "max_failed_job_count": 1000},
            now=0.0,
        )
    return trees


def _apply(trees: PoolTrees, action: str, pick: int, value: int, now: float) -> None:
    if action == "arrive":
        # A new operation (appended to the tree's operations) or, for a finished id, none.
        name = f"new{pick}-{value}"
        if name not in trees.operations:
            trees.start_operation(name, user="u", spec=vanilla("ab"[value % 2], jobs=4), now=now)
        return
    if action == "rename":
        # Pools renamed under their operations (their parent names change).
        tree = trees.tree("physical")
        old, new = ("a", "c") if "c" not in tree.pools else ("c", "a")
        with contextlib.suppress(SchedulerError):  # "a" became ephemeral meanwhile
            tree.rename_pool(old, new, now=now)
        return
    operation = trees.operations.get(f"op{pick}")
    if operation is None:
        return
    if operation.state is not OperationState.RUNNING:
        return
    running = list(operation.running_jobs.values())
    task = next(iter(operation.tasks.values()))
    if action == "start":
        if task.waiting:
            operation.start_job(task.name, now, tree="physical")
    elif action == "release":
        if running:
            operation.release_job_usage(running[value % len(running)])
    elif action == "weight":
        trees.update_operation_parameters(operation.id, {"weight": 1 + value % 3}, now=now)
    elif action == "limits":
        trees.update_operation_parameters(
            operation.id,
            {"scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"cpu": value}}}},
            now=now,
        )
    elif action == "pool":
        trees.update_operation_parameters(operation.id, {"pool": "ab"[value % 2]}, now=now)
    elif action == "swap":
        # One job ends and another starts: the same running count, other jobs (only the
        # operation's job change count tells).
        if running and task.waiting:
            trees.complete_job(operation.id, running[value % len(running)].id, now=now)
            operation.start_job(task.name, now, tree="physical")
    elif action == "state":
        # The operation's state alone (the tree's entry still says running): pending.
        operation.set_tree_state("physical", "pending", now, "test")
    elif action == "abort_operation":
        trees.abort_operation(operation.id, now=now)
    elif running:
        job = running[value % len(running)]
        getattr(trees, f"{action}_job")(operation.id, job.id, now=now)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_ACTIONS, max_size=6), min_size=1, max_size=12))
def test_memoized_specs_equal_fresh_ones(updates: list[list[tuple[str, int, int]]]) -> None:
    trees = _trees()
    tree = trees.tree("physical")
    total = trees.tree_resource_limits("physical")
    now = 1.0
    previous: dict[str, object] = {}
    for actions in updates:
        touched = set()
        for action, pick, value in actions:
            _apply(trees, action, pick, value, now)
            touched.add(f"op{pick}")
        memoized = snapshot.update_snapshot(tree, now, total)
        fresh = snapshot.to_snapshot(tree, now, tree.last_update_time, total)
        assert repr(memoized.operations) == repr(fresh.operations)
        # The memos are kept in place: they hold exactly the tree's operations.
        assert set(tree.usage_memo) == set(tree.operations)
        assert set(tree.operation_spec_memo) == set(tree.operations)
        for spec in memoized.operations:
            if spec.name not in touched and spec.name in previous:
                assert spec is previous[spec.name]
        previous = {spec.name: spec for spec in memoized.operations}
        now += 1.0


def test_memos_drop_operations_that_left() -> None:
    """An operation that leaves the tree leaves the memos at the next snapshot (they are
    updated in place, not replaced); one that arrives is added, the others keep their
    specs."""
    trees = _trees()
    tree = trees.tree("physical")
    total = trees.tree_resource_limits("physical")
    first = snapshot.update_snapshot(tree, 1.0, total)
    assert len(tree.usage_memo) == len(tree.operation_spec_memo) == 6
    trees.abort_operation("op0", now=2.0)
    trees.abort_operation("op3", now=2.0)
    second = snapshot.update_snapshot(tree, 2.0, total)
    fresh = snapshot.to_snapshot(tree, 2.0, tree.last_update_time, total)
    assert repr(second.operations) == repr(fresh.operations)
    assert set(tree.usage_memo) == set(tree.operations) == set(tree.operation_spec_memo)
    assert "op0" not in tree.usage_memo and "op3" not in tree.operation_spec_memo
    trees.start_operation("op9", user="u", spec=vanilla("a", jobs=3), now=3.0)
    third = snapshot.update_snapshot(tree, 3.0, total)
    fresh = snapshot.to_snapshot(tree, 3.0, tree.last_update_time, total)
    assert repr(third.operations) == repr(fresh.operations)
    old = {spec.name: spec for spec in first.operations}
    new = {spec.name: spec for spec in third.operations}
    assert set(tree.usage_memo) == set(tree.operations) == set(tree.operation_spec_memo)
    assert "op9" in new and "op0" not in new
    assert new["op1"] is old["op1"]


@pytest.mark.parametrize("action", _ACTIONS_LIST)
def test_each_change_alone_reaches_the_snapshot(action: str) -> None:
    """One change between two updates, to an operation with running jobs: the next snapshot,
    which visits only the operations marked changed (``input_marks``), equals a fresh one."""
    trees = _trees()
    tree = trees.tree("physical")
    total = trees.tree_resource_limits("physical")
    for index in range(6):
        for _ in range(3):
            _apply(trees, "start", index, 0, 0.5)
    snapshot.update_snapshot(tree, 1.0, total)
    _apply(trees, action, 1, 1, 2.0)
    memoized = snapshot.update_snapshot(tree, 2.0, total)
    fresh = snapshot.to_snapshot(tree, 2.0, tree.last_update_time, total)
    assert repr(memoized.operations) == repr(fresh.operations)
    assert repr(memoized.pools) == repr(fresh.pools)


def test_marks_reach_every_tree_that_registered_the_operation() -> None:
    """An operation whose spec two trees' snapshots read marks both (``FanOutMarks``);
    registering again changes nothing; before any registration nothing is marked."""
    trees = _trees()
    entry = trees.tree("physical").operations["op1"]
    operation = entry.operation
    assert operation.change_marks is NO_MARKS
    operation.change_marks.add("op1")
    assert not NO_MARKS
    first, second = OperationInputs(), OperationInputs()
    first.register(entry)
    assert operation.change_marks is first.marks
    second.register(entry)
    second.register(entry)
    first.register(entry)
    assert isinstance(operation.change_marks, FanOutMarks)
    assert len(operation.change_marks.targets) == 2
    task = next(iter(operation.tasks.values()))
    operation.start_job(task.name, 1.0, tree="physical")
    assert first.marks == second.marks == {"op1"}
    entry.weight = 3.0
    assert first.marks == second.marks == {"op1"}
