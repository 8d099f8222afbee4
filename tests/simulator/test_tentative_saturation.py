"""``tentative_tree_saturation_deactivation_period`` in the simulator.

YTsaurus: when the controller declines to start a job in a tree that is tentative for the
operation (``TentativeTreeDeclined``: the tree's sample is running), the strategy remembers
the moment (``TStrategyOperationController::OnScheduleAllocationFailed``) and, for the tree's
``tentative_tree_saturation_deactivation_period`` after it, deactivates the operation there
with ``saturated_in_tentative_tree`` (``TScheduleAllocationsContext::CheckForDeactivation``).
So after the sample completes, new jobs start in the tentative tree only once the period
since the last decline has passed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.helpers import document, node_group, operation, pool, run
from ytsched.scheduling.placement import DeactivationReason


def saturation_document(
    period: str | None, *, cpu: float = 1, extra_nodes: int = 1
) -> dict[str, Any]:
    extra_config: dict[str, Any] = {"node_tag_filter": "extra"}
    if period is not None:
        extra_config["tentative_tree_saturation_deactivation_period"] = period
    trees = {
        "$attributes": {"default_tree": "main"},
        "$value": {
            "main": {
                "$attributes": {"config": {"node_tag_filter": "main"}},
                "$value": {"a": pool({"weight": 1})},
            },
            "extra": {"$attributes": {"config": extra_config}, "$value": {"a": pool()}},
        },
    }
    job = operation(
        "op",
        "a",
        jobs=200,
        cpu=cpu,
        duration="1m",
        pool_trees=["main"],
        tentative_pool_trees=["extra"],
        tentative_tree_eligibility={"sample_job_count": 2, "min_job_duration": 0},
    )
    return document(
        duration="3m",
        cluster={
            "heartbeat_period": "5s",
            "node_groups": [
                {**node_group(1, 4, name="main"), "tags": ["main"]},
                {**node_group(extra_nodes, 4, name="extra"), "tags": ["extra"]},
            ],
        },
        pool_trees=trees,
        operations=[job],
    )


def extra_starts(period: str | None) -> list[float]:
    _, recorder = run(saturation_document(period))
    return sorted(
        e["time"]
        for e in recorder.events
        if e["event_type"] == "job_started" and e["node"].startswith("extra")
    )


def first_start_after_sample(starts: list[float]) -> float:
    """Seconds from the sample's start (the first heartbeat of the tentative node, where both
    sample jobs start) to the next tentative start."""
    assert len(starts) > 2 and starts[0] == starts[1] < 5.0
    return starts[2] - starts[0]


@pytest.mark.parametrize(("period", "delay"), [("45s", 90.0), ("75s", 75.0), ("20s", 60.0)])
def test_a_saturated_operation_waits_out_the_period_in_the_tentative_tree(
    period: str, delay: float
) -> None:
    """The sample (2 one-minute jobs) starts at the tentative node's first heartbeat, where the
    controller also declines the third job: the operation is deactivated in the tree for the
    period, declines again when it ends, and so on.  The sample completes after 60 s; the next
    job starts at the end of the period running then (heartbeats are 5 s apart, so periods that
    are multiples of 5 s end on a heartbeat)."""
    assert first_start_after_sample(extra_starts(period)) == pytest.approx(delay)


def test_without_a_period_jobs_start_as_soon_as_the_sample_completes() -> None:
    assert first_start_after_sample(extra_starts("0s")) == pytest.approx(60.0)


def test_the_default_period_is_ten_seconds() -> None:
    """10 s divides 60 s: the period ends as the sample completes."""
    assert first_start_after_sample(extra_starts(None)) == pytest.approx(60.0)
    assert first_start_after_sample(extra_starts("15s")) == pytest.approx(60.0)
    assert first_start_after_sample(extra_starts("25s")) == pytest.approx(75.0)


def test_a_scheduler_restart_forgets_the_saturation() -> None:
    """The saturation time lives in the strategy's operation controller, in memory: after a
    restart at 30 s the next heartbeat (32 s) declines again, so the 45 s period now ends at
    77 s instead of 92 s."""
    document = saturation_document("45s")
    document["actions"] = [{"time": "30s", "action": "restart_scheduler"}]
    _, recorder = run(document)
    starts = sorted(
        e["time"]
        for e in recorder.events
        if e["event_type"] == "job_started" and e["node"].startswith("extra")
    )
    assert first_start_after_sample(starts) == pytest.approx(75.0)


def test_saturation_is_reported_as_a_deactivation_reason_only_in_the_tentative_tree() -> None:
    result, _ = run(saturation_document("45s"))
    reasons = {
        tree: result.scheduler.ledger.records[tree]["op"].deactivation_reasons
        for tree in ("main", "extra")
    }
    saturated = DeactivationReason.SATURATED_IN_TENTATIVE_TREE.value
    assert reasons["extra"].get(saturated, 0) > 0
    assert saturated not in reasons["main"]


def test_the_idle_heartbeat_shortcuts_stay_exact_with_a_saturated_operation() -> None:
    """A heartbeat of a node that has room but no job fitting it is answered without its
    stages; a saturated tentative operation must still count its own deactivation reason."""
    from tests.simulator.test_fast_paths import _outputs

    # Two tentative nodes: the sample (2 jobs of 1.5 cpu) fills the first to 1 cpu free, the
    # second declines the third job (saturation); then the first one's heartbeats have room
    # but no job fitting it.
    document = saturation_document("45s", cpu=1.5, extra_nodes=2)
    fast = _outputs(document, fast=True)
    slow = _outputs(document, fast=False)
    for key in slow:
        if key != "real_heartbeats":
            assert fast[key] == slow[key], key
