"""The documented behaviours behind the figures, asserted numerically on short runs.

The figures in docs/figures come from the full-length scenarios of examples/scenarios; these
tests run shortened versions (an integral "day" of one or two hours, coarse heartbeats) that
exercise the same mechanisms.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.helpers import document, example, node_group, operation, pool, run, tree
from ytsched.simulator import ListRecorder, SimulationResult, load_scenario, simulate

HOUR = 3600.0


def samples(result: SimulationResult, name: str, start: float, end: float, *, op: bool = False):
    table = result.sampler.operations if op else result.sampler.pools
    series = table[("physical", name)]
    return [
        (t, u, f, v)
        for t, u, f, v in zip(
            series.times, series.usage, series.fair_share, series.volume, strict=True
        )
        if start <= t < end
    ]


# --- a burst pool: burst 500, flow 100 ----------------------------------------------------


def burst_document() -> dict[str, Any]:
    """The burst pool of burst_pool.yson with an integral "day" of one hour."""
    pools = tree(
        {
            "burst": pool(
                {
                    "integral_guarantees": {
                        "guarantee_type": "burst",
                        "resource_flow": {"cpu": 100},
                        "burst_guarantee_resources": {"cpu": 500},
                    }
                }
            ),
            "batch": pool({"weight": 4}),
        },
        {"integral_guarantees": {"pool_capacity_saturation_period": "1h"}},
    )
    return document(
        duration="3h",
        orchid_period=0,
        cluster={"heartbeat_period": "10s", "node_groups": [node_group(10, 100)]},
        scheduler={"fair_share_update_period": "10s"},
        pool_trees=pools,
        operations=[
            operation("backfill", "batch", jobs=150, cpu=10, duration="infinite"),
            operation("etl", "burst", jobs=240, cpu=10, duration="5m", start="70m"),
        ],
    )


def test_burst_pool_volume_drains_while_it_runs_and_refills_to_capacity() -> None:
    result, _ = run(burst_document())
    capacity = 100 * HOUR  # flow x one-hour saturation period, core-seconds
    series = result.sampler.pools[("physical", "burst")]
    assert series.capacity[-1] == pytest.approx(capacity)

    # Idle: the volume grows by the flow (100 cores) and stops at the capacity.
    filling = samples(result, "burst", 0, 3500)
    volumes = [v for _, _, _, v in filling]
    assert volumes == sorted(volumes)
    assert samples(result, "burst", 1800, 1810)[0][3] == pytest.approx(100 * 1800, rel=0.01)
    full = samples(result, "burst", 3700, 70 * 60)
    assert all(v == pytest.approx(capacity) for _, _, _, v in full)

    # Running with volume: its fair share is the burst guarantee plus its weight share of the
    # rest (500 + 500 / 5); batch is preempted until the pool is no longer starving (usage at
    # least fair share x tolerance 0.8).  The volume falls by 500 - 100 a second: it is charged
    # for the integral share granted, not for usage.
    bursting = samples(result, "burst", 70 * 60 + 120, 70 * 60 + 600)
    assert all(f == pytest.approx(600) for _, _, f, _ in bursting)
    assert all(u >= 0.8 * 600 for _, u, _, _ in bursting)
    (t0, _, _, v0), (t1, _, _, v1) = bursting[0], bursting[-1]
    assert (v0 - v1) / (t1 - t0) == pytest.approx(400, rel=0.05)

    # The volume runs out after about capacity / 400 s; usage falls back below the burst.
    empty = samples(result, "burst", 70 * 60 + 1000, 70 * 60 + 1300)
    assert all(v < 0.02 * capacity for _, _, _, v in empty)
    assert all(u < 400 for _, u, _, _ in empty)

    # The ETL completes, and the volume refills to capacity by the end.
    etl = next(r for r in result.operations if r.id == "etl")
    assert etl.state == "completed"
    assert etl.finish_time is not None
    after = samples(result, "burst", etl.finish_time + 60, 3 * HOUR)
    volumes = [v for _, _, _, v in after]
    assert volumes == sorted(volumes)
    assert volumes[-1] == pytest.approx(capacity)


# --- production and research on 2000 cores -----------------------------------------------


def production_research_document(day: float = 2 * HOUR, days: int = 3) -> dict[str, Any]:
    """production_research.yson with a two-hour integral "day"."""
    pools = tree(
        {
            "production": pool(
                {
                    "integral_guarantees": {
                        "guarantee_type": "burst",
                        "resource_flow": {"cpu": 1000},
                        "burst_guarantee_resources": {"cpu": 2000},
                    }
                }
            ),
            "research": pool(
                {
                    "integral_guarantees": {
                        "guarantee_type": "relaxed",
                        "resource_flow": {"cpu": 1000},
                    }
                }
            ),
        },
        {"integral_guarantees": {"pool_capacity_saturation_period": int(day * 1000)}},
    )
    pipeline = operation("pipeline", "production", jobs=200, cpu=10, duration="infinite")
    pipeline["repeat"] = {"count": days, "interval": int(day * 1000)}
    return document(
        duration=int(days * day * 1000),
        orchid_period=0,
        cluster={"heartbeat_period": "30s", "node_groups": [node_group(20, 100)]},
        scheduler={"fair_share_update_period": "30s"},
        pool_trees=pools,
        operations=[
            operation("training", "research", jobs=400, cpu=10, duration="infinite"),
            pipeline,
        ],
        actions=[
            {
                "time": int((k * day + day / 2) * 1000),
                "action": "complete_operation",
                "operation": f"pipeline-{k + 1}",
            }
            for k in range(days)
        ],
    )


def test_production_and_research_are_both_served_on_2000_cores() -> None:
    day = 2 * HOUR
    result, _ = run(production_research_document(day))
    total = result.sampler.trees["physical"].total
    assert set(total) == {2000.0}

    # Day 1: production has no volume yet; the pools split the cluster.
    first = samples(result, "production", 0.25 * day, 0.5 * day)
    assert all(u == pytest.approx(1000, abs=10) for _, u, _, _ in first)

    for k in (1, 2):
        # Production's busy half-day: all 2000 cores (after the first minutes of preemption).
        busy = samples(result, "production", k * day, (k + 0.5) * day)
        served = [u for _, u, _, _ in busy if u >= 1990]
        assert len(served) >= 0.9 * len(busy)
        # Research averages its 1000-core flow over the day.  (It keeps its cores for the few
        # minutes production needs to starve and preempt them: 5% of a two-hour "day", 0.3% of
        # the real one, see docs/simulator.md.)
        research = samples(result, "research", k * day, (k + 1) * day)
        average = sum(u for _, u, _, _ in research) / len(research)
        assert average == pytest.approx(1000, rel=0.08)
    # The cluster stays busy: nothing is reserved idle, as a strong guarantee would.
    root = samples(result, "<Root>", day / 4, 3 * day)
    assert sum(u for _, u, _, _ in root) / len(root) >= 0.99 * 2000


# --- a query service with graceful preemption, and regular preemption for contrast --------


def clique_document(mode: str) -> dict[str, Any]:
    """chyt_graceful.yson / chyt_regular.yson, shortened."""
    clique_spec: dict[str, Any] = {"preemption_mode": mode}
    if mode == "graceful":
        clique_spec["allocation_graceful_preemption_timeout"] = "10m"
    else:
        clique_spec["allocation_preemption_timeout"] = "15s"
    clique = operation(
        "clique",
        "chyt",
        jobs=40,
        cpu=10,
        duration="infinite",
        user="chyt",
        task={
            "restart_completed_jobs": True,
            "interruption_signal": "SIGINT",
            "finish_after_interruption": {"distribution": "uniform", "min": "5s", "max": "1m"},
        },
        **clique_spec,
    )
    batch = operation("batch", "chyt", jobs=60, cpu=10, duration="10m", start="10m")
    return document(
        duration="50m",
        orchid_period=0,
        trace_operations=["clique", "batch"],
        cluster={"heartbeat_period": "5s", "node_groups": [node_group(10, 40, memory_gib=256)]},
        scheduler={"fair_share_update_period": "5s"},
        pool_trees=tree({"chyt": pool()}),
        operations=[clique, batch],
    )


def test_graceful_clique_follows_its_fair_share_down_without_aborts() -> None:
    result, recorder = run(clique_document("graceful"))
    before = samples(result, "clique", 60, 600, op=True)
    assert all(u == pytest.approx(400) for _, u, _, _ in before)
    # After the batch starts (10 min), the clique's fair share is half the pool; within three
    # minutes its usage is down to it and stays there while the batch runs.
    after = samples(result, "clique", 13 * 60, 30 * 60, op=True)
    assert all(f == pytest.approx(200) for _, _, f, _ in after)
    assert all(u <= f + 1e-6 for _, u, f, _ in after)
    assert all(u >= f - 10 for _, u, f, _ in after)
    clique_aborts = [
        e
        for e in recorder.events
        if e["event_type"] == "job_aborted" and e["operation_id"] == "clique"
    ]
    assert clique_aborts == []
    assert result.counters.aborted_after_interruption_in_time == 0
    interrupted = [
        e
        for e in recorder.events
        if e["event_type"] == "job_interrupted" and e["operation_id"] == "clique"
    ]
    assert len(interrupted) == 20
    assert {e["reason"] for e in interrupted} == {"graceful_preemption"}
    assert {e["timeout"] for e in interrupted} == {600.0}
    assert result.operations[0].interrupted_job_count == 20


def test_regular_preemption_aborts_clique_instances() -> None:
    result, recorder = run(clique_document("normal"))
    aborted = [
        e
        for e in recorder.events
        if e["event_type"] == "job_aborted" and e["operation_id"] == "clique"
    ]
    # Instances need 5 to 60 s to finish their queries but get 15 s: most are aborted.
    assert len(aborted) >= 5
    assert {e["reason"] for e in aborted} == {"interruption_timeout"}
    assert {e["interruption_reason"] for e in aborted} == {"preemption"}
    assert all(e["preempted_for"] == "batch" for e in aborted)
    assert all(e["interruption_finish_time"] > e["interruption_deadline"] for e in aborted)
    assert result.counters.aborted_after_interruption_in_time == 0
    # Preemption only serves a starving batch: the clique stays above its fair share.
    after = samples(result, "clique", 15 * 60, 30 * 60, op=True)
    assert any(u > f + 5 for _, u, f, _ in after)


# --- the pool settings page example --------------------------------------------------------


def test_pool_settings_example() -> None:
    scenario = load_scenario(example("pool_settings"))

    recorder = ListRecorder()
    result = simulate(scenario, recorder=recorder, until=75 * 60.0, orchid_period=0)

    # adhoc and backup get their guarantees at full load; batch is preempted to nothing.
    def usage(pool_name: str, start: float, end: float) -> list[float]:
        return [u for _, u, _, _ in samples(result, pool_name, start, end)]

    assert all(u == pytest.approx(80) for u in usage("adhoc", 12 * 60, 30 * 60))
    assert all(u == pytest.approx(20) for u in usage("backup", 12 * 60, 30 * 60))
    assert all(u == 0 for u in usage("batch", 12 * 60, 30 * 60))
    batch = result.operations[0]
    assert batch.preempted_job_count > 0

    # adhoc done: what it leaves goes to batch first, weight 10 against backup's 1 on top of
    # backup's guarantee of 20: batch 80 x 10/11, backup 20 + 80/11.
    shares = {
        name: [f for _, _, f, _ in samples(result, name, 42 * 60, 58 * 60)]
        for name in ("batch", "backup")
    }
    assert all(f == pytest.approx(800 / 11, rel=1e-3) for f in shares["batch"])
    assert all(f == pytest.approx(20 + 80 / 11, rel=1e-3) for f in shares["backup"])

    # Running limits: 8 small adhoc operations run, 2 wait at project-root, and so does a
    # batch operation although batch runs one of its 4.
    started = {
        e["operation_id"]: e for e in recorder.events if e["event_type"] == "operation_started"
    }
    pending = sorted(k for k, e in started.items() if e["state"] == "pending")
    assert pending == ["adhoc-small-10", "adhoc-small-9", "batch-2"]
    assert "'project-root'" in started["batch-2"]["reason"]
    promoted = [
        e["operation_id"] for e in recorder.events if e["event_type"] == "operation_running"
    ]
    assert sorted(promoted) == pending
