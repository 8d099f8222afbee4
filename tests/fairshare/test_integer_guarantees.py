"""Inferred strong guarantees are stored in YTsaurus's integer / fixed-point resource fields.

``SetResource`` (``yt/yt/library/vector_hdrf/job_resources.cpp``) truncates ``user_slots``,
``gpu``, ``memory`` and ``network`` toward zero and rounds cpu to 0.01 (``TFixedPointNumber``):
a pool with a third of the parent's cpu guarantee gets 1 user slot of 5, not 1.667.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ytsched.fairshare.guarantees import assign_job_resource
from ytsched.snapshot import compute, to_orchid


def _tree() -> dict[str, object]:
    return {
        "total_resource_limits": {
            "cpu": 30,
            "user_slots": 5,
            "memory": 1000,
            "gpu": 4,
            "network": 0,
        },
        "options": {"main_resource": "cpu"},
        "elements": [
            {"type": "pool", "name": "<Root>", "parent": None},
            {
                "type": "pool",
                "name": "parent",
                "parent": "<Root>",
                "strong_guarantee_resources": {"cpu": 30, "user_slots": 5, "gpu": 4},
            },
            {
                "type": "pool",
                "name": "a",
                "parent": "parent",
                "strong_guarantee_resources": {"cpu": 10},
            },
            {
                "type": "pool",
                "name": "b",
                "parent": "parent",
                "strong_guarantee_resources": {"cpu": 20},
            },
        ],
    }


def test_implicit_guarantees_are_truncated_integers() -> None:
    orchid = to_orchid(compute(_tree()))
    a = orchid["pools"]["a"]["effective_strong_guarantee_resources"]
    b = orchid["pools"]["b"]["effective_strong_guarantee_resources"]
    # 10/30 of 5 slots = 1.667 -> 1; 20/30 of 5 = 3.333 -> 3; gpu 1.333 -> 1, 2.667 -> 2.
    assert (a["user_slots"], a["gpu"], a["cpu"]) == (1.0, 1.0, 10.0)
    assert (b["user_slots"], b["gpu"], b["cpu"]) == (3.0, 2.0, 20.0)
    # memory: the parent has no explicit memory guarantee; 1/3 of the root's 1000 -> 333.
    assert a["memory"] == 333.0
    assert orchid["pools"]["a"]["inferred_strong_guarantee_resources"] == a


def test_cpu_keeps_its_fixed_point_grid() -> None:
    assert assign_job_resource(1, 1.666666) == 1.67
    assert assign_job_resource(1, 0.125) == 0.13
    assert assign_job_resource(0, 1.999) == 1.0
    assert assign_job_resource(3, 1e9 + 0.9) == 1e9


@given(st.integers(0, 4), st.floats(0, 1e15, allow_nan=False))
def test_assignment_never_exceeds_the_value_except_cpu_rounding(
    resource: int, value: float
) -> None:
    stored = assign_job_resource(resource, value)
    if resource == 1:
        assert abs(stored - value) <= 0.005 + 1e-9 * value
    else:
        assert stored == int(value) and stored <= value
