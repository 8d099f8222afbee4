"""Tentative pool trees (``tentative_pool_trees``, ``tentative_tree_eligibility``).

Mirrors ``TTentativeTreeEligibility``
(``yt/yt/server/controller_agent/controllers/tentative_tree_eligibility.cpp``) and the
scheduler tests in ``yt/yt/tests/integration/scheduler/test_scheduler_pool_trees.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pooltree.helpers import vanilla
from ytsched.config.operation import TentativeTreeEligibilityConfig
from ytsched.pooltree import PoolTrees, SchedulerError
from ytsched.pooltree.tentative import TentativeTreeEligibility


def _trees(**strategy: object) -> PoolTrees:
    trees = PoolTrees(strategy)
    trees.create_tree("main", {"node_tag_filter": "main"})
    trees.create_tree("extra", {"node_tag_filter": "extra"})
    trees.set_default_tree("main")
    for tag in ("main", "extra"):
        trees.register_node(
            f"{tag}-node",
            tags=[tag],
            resource_limits={"cpu": 100, "user_slots": 100, "memory": 10**12},
        )
    return trees


def _spec(jobs: int = 40, **extra: object) -> dict[str, object]:
    return vanilla(jobs=jobs, pool_trees=["main"], tentative_pool_trees=["extra"], **extra)


def test_operation_runs_tentatively_in_its_tentative_trees() -> None:
    trees = _trees()
    operation = trees.start_operation("op", user="u", spec=_spec(), now=0)
    assert operation.pool_trees == ["main", "extra"]
    assert operation.tentative_trees == {"extra"}
    assert trees.tree("extra").orchid()["operations"]["op"]["tentative"] is True
    assert trees.tree("main").orchid()["operations"]["op"]["tentative"] is False


def test_sample_limits_jobs_in_a_tentative_tree_until_they_complete() -> None:
    trees = _trees()
    operation = trees.start_operation(
        "op", user="u", spec=_spec(tentative_tree_eligibility={"sample_job_count": 3}), now=0
    )
    started = [trees.start_job("op", "main", node="extra-node", now=0) for _ in range(3)]
    assert not operation.can_start_in("main", "extra")
    assert operation.can_start_in("main", "main")  # regular trees are never limited
    # Running tentative jobs may not exceed what is left of the sample: 2 running, 1 of 3
    # completed -> still blocked; the sample must complete before more jobs start there.
    trees.complete_job("op", started[0].id, now=10)
    assert not operation.can_start_in("main", "extra")
    trees.complete_job("op", started[1].id, now=11)
    assert not operation.can_start_in("main", "extra")
    trees.complete_job("op", started[2].id, now=12)
    assert operation.can_start_in("main", "extra")


def test_slow_tentative_tree_is_banned_and_left() -> None:
    trees = _trees()
    eligibility = {
        "sample_job_count": 2,
        "max_tentative_job_duration_ratio": 2.0,
        "min_job_duration": 0,
    }
    operation = trees.start_operation(
        "op", user="u", spec=_spec(tentative_tree_eligibility=eligibility), now=0
    )
    slow = [trees.start_job("op", "main", node="extra-node", now=0) for _ in range(2)]
    fast = [trees.start_job("op", "main", node="main-node", now=0) for _ in range(2)]
    for job in fast:
        trees.complete_job("op", job.id, now=10)
    assert operation.tentative_trees == {"extra"} and "extra" in operation.tree_states
    # The tentative jobs have run 25 s against an average of 10 s: ratio 2.5 >= 2.
    trees.complete_job("op", slow[0].id, now=25)
    assert operation.banned_tentative_trees == ["extra"]
    assert "extra" not in operation.tree_states and operation.pool_trees == ["main"]
    assert "op" not in trees.tree("extra").operations
    assert operation.jobs[slow[1].id].state.value == "aborted"
    assert (operation.jobs[slow[1].id].reason or "").startswith("banned_in_tentative_tree")
    assert operation.state.value == "running"


def test_fast_tentative_tree_is_kept() -> None:
    trees = _trees()
    eligibility = {"sample_job_count": 2, "min_job_duration": 0}
    operation = trees.start_operation(
        "op", user="u", spec=_spec(tentative_tree_eligibility=eligibility), now=0
    )
    jobs = [
        trees.start_job("op", "main", node=n, now=0)
        for n in ("main-node",) * 2 + ("extra-node",) * 2
    ]
    for job in jobs:
        trees.complete_job("op", job.id, now=10)
    assert operation.banned_tentative_trees == []
    assert operation.can_start_in("main", "extra")


def test_types_without_tentative_trees_and_default_trees() -> None:
    trees = _trees(default_tentative_pool_trees=["extra"])
    sort = trees.start_operation(
        "s",
        user="u",
        spec={"pool_trees": ["main"], "tentative_pool_trees": ["extra"]},
        operation_type="sort",
        now=0,
    )
    assert sort.pool_trees == ["main"] and sort.tentative_trees == set()
    default = trees.start_operation(
        "d",
        user="u",
        spec=vanilla(pool_trees=["main"], use_default_tentative_pool_trees=True),
        now=0,
    )
    assert default.tentative_trees == {"extra"}


def test_missing_tentative_tree_refuses_unless_ignored() -> None:
    trees = _trees()
    spec = vanilla(pool_trees=["main"], tentative_pool_trees=["nowhere"])
    with pytest.raises(SchedulerError) as caught:
        trees.start_operation("op", user="u", spec=spec, now=0)
    assert caught.value.code == "NoSuchPoolTree"
    assert "op" not in trees.operations
    spec["tentative_tree_eligibility"] = {"ignore_missing_pool_trees": True}
    operation = trees.start_operation("op", user="u", spec=spec, now=0)
    assert operation.pool_trees == ["main"]


@given(
    sample=st.integers(1, 5),
    events=st.lists(st.tuples(st.booleans(), st.booleans()), max_size=30),
)
def test_sample_never_exceeded_while_incomplete(
    sample: int, events: list[tuple[bool, bool]]
) -> None:
    """Running tentative jobs never exceed what is left of the sample (hypothesis)."""
    state = TentativeTreeEligibility(TentativeTreeEligibilityConfig(sample_job_count=sample))
    running = 0
    for start, complete in events:
        if start and state.can_start("t", True):
            state.on_started("t", True, 0.0)
            running += 1
        elif running:
            state.on_finished("t", True, complete, 1.0, 1.0)
            running -= 1
        remaining = sample - state.completed.get("t", 0)
        if remaining > 0:
            assert running <= remaining
