"""The event loop: jobs, interruptions, operations, actions, outputs and determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.simulator.helpers import document, node_group, operation, pool, run, tree
from ytsched.scheduling import JobOutcome
from ytsched.simulator import load_scenario, simulate
from ytsched.simulator.cluster import SimJob, SimNode
from ytsched.simulator.events import EventQueue
from ytsched.simulator.outputs import DirectoryRecorder, write_results
from ytsched.simulator.summary import build_summary, percentile

ROOT = Path(__file__).resolve().parents[2]


def job(work: float = 100.0) -> SimJob:
    node = SimNode("n", "node", 0, (1.0, 1.0, 0.0, 0.0, 0.0), frozenset(), 0.0)
    return SimJob("op/main/0/0", "op", "main", 0, node, (1.0, 1.0, 0.0, 0.0, 0.0), 0.0, work, work)


# --- building blocks ----------------------------------------------------------------------


def test_event_queue_orders_by_time_then_kind_then_push_order() -> None:
    queue = EventQueue()
    queue.push(5.0, 3, "update")
    queue.push(5.0, 0, "job end")
    queue.push(1.0, 5, "heartbeat")
    queue.push(5.0, 0, "second job end")
    assert [queue.pop()[2] for _ in range(4)] == [
        "heartbeat",
        "job end",
        "second job end",
        "update",
    ]


def test_interrupted_job_that_finishes_in_time_completes_as_interrupted() -> None:
    j = job()
    j.interrupt(now=10.0, timeout=30.0, finish_after=5.0)
    assert (j.end_time, j.outcome, j.interrupted) == (15.0, JobOutcome.COMPLETED, True)


def test_interrupted_job_that_is_too_slow_is_aborted_at_the_deadline() -> None:
    j = job()
    j.interrupt(now=10.0, timeout=15.0, finish_after=40.0)
    assert (j.end_time, j.outcome, j.interrupted) == (25.0, JobOutcome.ABORTED, False)


def test_job_ignoring_the_signal_completes_if_its_work_ends_first() -> None:
    j = job(work=20.0)
    j.interrupt(now=10.0, timeout=15.0, finish_after=None)
    assert (j.end_time, j.outcome, j.interrupted) == (20.0, JobOutcome.COMPLETED, False)


def test_second_interruption_keeps_the_earlier_deadline() -> None:
    j = job()
    j.interrupt(now=10.0, timeout=15.0, finish_after=None)
    j.interrupt(now=12.0, timeout=60.0, finish_after=None)
    assert (j.end_time, j.outcome) == (25.0, JobOutcome.ABORTED)


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([0.0, 10.0], 90) == 9.0


# --- runs ---------------------------------------------------------------------------------


def test_all_jobs_run_and_the_operation_completes() -> None:
    result, recorder = run(document())
    record = result.operations[0]
    assert record.state == "completed"
    assert record.completed_job_count == 20
    assert record.waiting_time is not None and record.waiting_time < 5.0
    # 20 jobs of 2 minutes on 40 slots: done shortly after 2 minutes.
    assert record.finish_time is not None and 120.0 <= record.finish_time < 130.0
    kinds = [e["event_type"] for e in recorder.events]
    assert kinds.count("job_started") == 20 and kinds.count("job_completed") == 20
    assert kinds.index("operation_started") < kinds.index("operation_finished")
    assert recorder.orchids and recorder.orchids[0]["time"] == 0.0
    assert "op" in recorder.orchids[0]["pool_trees"]["physical"]["operations"]
    assert "op" not in recorder.orchids[1]["pool_trees"]["physical"]["operations"]


def test_explicit_durations_are_used_per_job() -> None:
    op = operation("op", "a", jobs=3, duration=None, task={"job_durations": ["10s", "20s", "30s"]})
    _, recorder = run(document(operations=[op]))
    durations = sorted(e["duration"] for e in recorder.events if e["event_type"] == "job_completed")
    assert durations == [10.0, 20.0, 30.0]


def test_preempted_jobs_return_to_pending_and_lost_work_is_counted() -> None:
    pools = tree({"guaranteed": pool({"strong_guarantee_resources": {"cpu": 30}}), "other": pool()})
    ops = [
        operation("hog", "other", jobs=80, duration="10m"),
        operation("late", "guaranteed", jobs=30, duration="5m", start="2m"),
    ]
    result, recorder = run(document(pool_trees=pools, operations=ops, duration="45m"))
    hog, late = result.operations
    assert hog.preempted_job_count > 0
    assert hog.lost_job_seconds > 0
    assert hog.state == "completed" and hog.completed_job_count == 80
    assert late.state == "completed"
    aborted = [e for e in recorder.events if e["event_type"] == "job_aborted"]
    assert aborted and all(e["preempted_for"] == "late" for e in aborted)
    summary = build_summary(result)
    assert summary["preemptions"]["preempted_jobs"] == hog.preempted_job_count
    assert summary["lost_job_seconds"] == pytest.approx(hog.lost_job_seconds)


def test_actions_change_pools_operations_and_nodes() -> None:
    ops = [
        operation("long", "a", jobs=40, duration="infinite"),
        operation("other", "b", jobs=40, duration="infinite", start="1m"),
    ]
    actions = [
        {
            "time": "3m",
            "action": "set_pool_attribute",
            "pool": "b",
            "attribute": "weight",
            "value": 3,
        },
        {"time": "5m", "action": "add_nodes", "group": node_group(2, 10, name="extra")},
        {"time": "8m", "action": "remove_nodes", "group": "extra", "count": 1},
        {"time": "9m", "action": "abort_operation", "operation": "long"},
        {
            "time": "9m",
            "action": "set_pool_attribute",
            "pool": "missing",
            "attribute": "weight",
            "value": 1,
        },
    ]
    result, recorder = run(document(operations=ops, actions=actions, duration="12m"))
    assert result.counters.actions_applied == 4
    assert result.counters.actions_failed == 1
    failed = [e for e in recorder.events if e["event_type"] == "action_failed"]
    assert failed[0]["code"] == "NoSuchPool"
    removed = [e for e in recorder.events if e["event_type"] == "node_removed"]
    assert [e["node"] for e in removed] == ["extra-0001"]
    assert result.operations[0].state == "aborted"
    assert sorted(result.trees.nodes) == ["extra-0000", *[f"node-{i:04d}" for i in range(4)]]
    # weight 3 against 1 for b at 3 minutes: b's fair share becomes 3/4 of the cluster.
    series = result.sampler.pools[("physical", "b")]
    at = [i for i, t in enumerate(series.times) if 240 <= t < 290]
    assert all(series.fair_share[i] == pytest.approx(30.0) for i in at)


def test_refused_operations_are_recorded() -> None:
    pools = tree({"a": pool({"max_operation_count": 1, "max_running_operation_count": 1})})
    ops = [operation("one", "a", jobs=1, duration="5m"), operation("two", "a", jobs=1)]
    result, recorder = run(document(pool_trees=pools, operations=ops, duration="2m"))
    assert result.operations[1].state == "refused"
    assert "TooManyOperations" in (result.operations[1].error or "")
    assert [e["code"] for e in recorder.events if e["event_type"] == "operation_refused"] == [
        "TooManyOperations"
    ]


def test_until_stops_early() -> None:
    result, _ = run(document(), until=60.0)
    assert result.end_time == 60.0
    assert result.operations[0].state == "running"


# --- determinism ------------------------------------------------------------------------


def _write(directory: Path, seed: int | None = None) -> dict[str, bytes]:
    scenario = load_scenario(document(duration="10m"))
    with DirectoryRecorder(directory) as recorder:
        result = simulate(scenario, recorder=recorder, seed=seed)
    write_results(result, directory)
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_same_seed_gives_byte_identical_outputs(tmp_path: Path) -> None:
    first = _write(tmp_path / "one")
    second = _write(tmp_path / "two")
    assert set(first) >= {"events.jsonl", "orchid.jsonl", "operations.csv", "summary.json"}
    assert any(name.endswith(".png") for name in first)
    assert first == second
    other = _write(tmp_path / "three", seed=2)
    assert other["events.jsonl"] != first["events.jsonl"]


def test_cli_outputs_do_not_depend_on_hash_seeds(tmp_path: Path) -> None:
    import json

    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(document(duration="5m")), encoding="utf-8")
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"out{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ytsched.cli.main",
                "simulate",
                str(scenario),
                "--out",
                str(out),
                "--quiet",
                "--no-plots",
            ],
            check=True,
            env=env,
            cwd=ROOT,
        )
        outputs.append(
            {
                name: (out / name).read_bytes()
                for name in ("events.jsonl", "orchid.jsonl", "operations.csv", "summary.json")
            }
        )
    assert outputs[0] == outputs[1]
