"""What the idle-heartbeat tests remember, checked against what they compute.

``Scheduler._stages_idle`` remembers the fail-to-fit answer per node limits and usage while
neither the regular selector's eligible operations nor the emptiness of any waiting list
changed (``scheduler._failing_to_fit``); ``scheduler.activity_level`` (the simulator's
heartbeat levels) remembers its answer per state while no eligible flag turned.  Every
remembered answer must be the computed one at that moment: checked on every call in the
random scenarios of the fast-path tests (starvation, preemption, graceful operations, tag
filters, limits, FIFO pools, aborts, operations and nodes that come and go)."""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import scheduler
from tests.simulator.test_fast_paths import _random_document
from ytsched.pooltree.operations import WAITING_EMPTINESS_CHANGES
from ytsched.resources import Vector
from ytsched.scheduling import scheduler as scheduler_module
from ytsched.scheduling.state import ScheduledOperation, TreeState
from ytsched.simulator import load_scenario
from ytsched.simulator.engine import Simulation


def _ids(answer: list[ScheduledOperation] | None) -> list[int] | None:
    return None if answer is None else sorted(id(op) for op in answer)


@pytest.mark.parametrize("seed", range(24))
def test_remembered_answers_are_the_walks(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    walk = scheduler_module._all_fail_to_fit
    remembered = scheduler_module._failing_to_fit
    calls = [0, 0]  # answers checked, walks they needed

    def walked(state: TreeState, limits: Vector, usage: Vector) -> list[ScheduledOperation] | None:
        calls[1] += 1
        return walk(state, limits, usage)

    def checked(state: TreeState, limits: Vector, usage: Vector) -> list[ScheduledOperation] | None:
        answer = remembered(state, limits, usage)
        assert _ids(answer) == _ids(walk(state, limits, usage))
        calls[0] += 1
        return answer

    monkeypatch.setattr(scheduler_module, "_all_fail_to_fit", walked)
    monkeypatch.setattr(scheduler_module, "_failing_to_fit", checked)
    Simulation(load_scenario(_random_document(seed))).run()
    assert calls[1] <= calls[0]


def test_the_memo_is_used() -> None:
    """Over the random scenarios, some answers come from the memo (not every call walks)."""
    walk = scheduler_module._all_fail_to_fit
    calls = [0, 0]

    def walked(state: TreeState, limits: Vector, usage: Vector) -> list[ScheduledOperation] | None:
        calls[1] += 1
        return walk(state, limits, usage)

    remembered = scheduler_module._failing_to_fit

    def counted(state: TreeState, limits: Vector, usage: Vector) -> list[ScheduledOperation] | None:
        calls[0] += 1
        return remembered(state, limits, usage)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler_module, "_all_fail_to_fit", walked)
        patch.setattr(scheduler_module, "_failing_to_fit", counted)
        for seed in range(8):
            Simulation(load_scenario(_random_document(seed))).run()
    assert 0 < calls[1] < calls[0]


def test_waiting_lists_count_turning_empty_and_back() -> None:
    """``WAITING_EMPTINESS_CHANGES`` moves when a task's last waiting job starts and when a
    job of a task with none waiting returns to waiting, and not otherwise."""
    trees, _ = scheduler(cpu=100)
    operation = trees.start_operation(
        "op", user="u", spec={"tasks": {"main": {"job_count": 2}}}, now=0.0
    )
    before = WAITING_EMPTINESS_CHANGES[0]
    first = operation.start_job("main", 1.0, tree="physical")
    assert WAITING_EMPTINESS_CHANGES[0] == before  # one still waits
    second = operation.start_job("main", 1.0, tree="physical")
    assert WAITING_EMPTINESS_CHANGES[0] == before + 1  # none waits now
    trees.abort_job("op", first.id, now=2.0)
    assert WAITING_EMPTINESS_CHANGES[0] == before + 2  # one waits again
    trees.abort_job("op", second.id, now=2.0)
    assert WAITING_EMPTINESS_CHANGES[0] == before + 2  # the list was not empty
    trees.complete_job("op", operation.start_job("main", 3.0, tree="physical").id, now=4.0)
    assert WAITING_EMPTINESS_CHANGES[0] == before + 2  # one still waited throughout


@pytest.mark.parametrize("seed", range(24))
def test_remembered_activity_levels_are_computed_ones(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``activity_level`` keeps its answer per state while ``eligibility_changes`` stays:
    every answer it gives must be the one computed at that moment."""
    remembered = scheduler_module.activity_level
    computed = scheduler_module._activity_level
    calls = [0]

    def checked(state: TreeState) -> int:
        level = remembered(state)
        assert level == computed(state)
        calls[0] += 1
        return level

    monkeypatch.setattr(scheduler_module, "activity_level", checked)
    Simulation(load_scenario(_random_document(seed))).run()
    assert calls[0] > 0
