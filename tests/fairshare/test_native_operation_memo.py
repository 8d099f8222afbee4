"""Operations with the same inputs: the native core builds their functions once (op_memo.hpp).

The simulator's leaf pools hold many operations with equal demand, usage, limits and
guarantees, so the core copies the functions of the first such operation to the others (per
update and worker thread).  These trees are built to have many such repeats (a small palette of
jobs, zero usage and zero demand, gangs for the step function, ``-0.0`` beside ``0.0``) and
compared with the Python reference double for double, on one thread and on two, and on a tree
whose first 600 operations are all different (past the memo's trial) before repeats follow.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.test_native_differential import OPTION_SETS, assert_identical
from treegen import generate_tree  # type: ignore[import-not-found]
from ytsched.fairshare import native

PALETTE = [
    ({"cpu": 1.0, "memory": 2.0**31, "user_slots": 1}, 0),
    ({"cpu": 1.0, "memory": 2.0**31, "user_slots": 1}, 1),
    ({"cpu": 4.0, "gpu": 1.0, "memory": 2.0**33, "user_slots": 1}, 2),
    ({"cpu": 0.0, "memory": 0.0, "user_slots": 1}, 1),
    ({"cpu": -0.0, "memory": 0.0, "user_slots": 1}, 1),
]


def _repeated(document: dict[str, Any], seed: int, distinct_first: int = 0) -> dict[str, Any]:
    """The document with every operation's demand and usage taken from ``PALETTE``.

    The first ``distinct_first`` operations keep their generated (mostly distinct) amounts.
    """
    rng = random.Random(seed)
    operations = [e for e in document["elements"] if e["type"] == "operation"]
    for operation in operations[distinct_first:]:
        per_job, running = rng.choice(PALETTE)
        jobs = rng.choice([1, 2, 2, 3])
        operation["resource_demand"] = {k: v * jobs for k, v in per_job.items()}
        operation["resource_usage"] = {k: v * min(running, jobs) for k, v in per_job.items()}
        operation["weight"] = 1.0
        operation["is_gang"] = "gpu" in per_job
    return document


@pytest.fixture(params=[1, 2], ids=["one-thread", "two-threads"])
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Runs a test on one engine thread, and on two with every level shared out."""
    build = native.set_parallel_build_min(0)
    previous = native.threads()
    native.set_threads(request.param)
    try:
        yield request.param
    finally:
        native.set_threads(previous)
        native.set_parallel_build_min(build)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 10**6), st.sampled_from(OPTION_SETS))
def test_repeated_operations_match_the_reference(
    threads: int, seed: int, options: dict[str, Any]
) -> None:
    document = generate_tree(8, 80, depth=2, seed=seed, options=options)
    assert_identical(_repeated(document, seed))


def test_repeats_after_many_distinct_operations(threads: int) -> None:
    document = generate_tree(20, 700, depth=3, seed=7)
    assert_identical(_repeated(document, 7, distinct_first=600))
