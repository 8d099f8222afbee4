"""Trace replay: the JSONL/CSV format, its errors, and replaying it in a scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.simulator.helpers import GIB, document, node_group, operation, run
from ytsched.simulator import ScenarioError, load_scenario
from ytsched.simulator.trace import parse_trace, read_trace, write_csv, write_jsonl


def record(op_id: str = "op-1", **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": op_id,
        "submit_time": 60_000,
        "user": "alice",
        "type": "map",
        "pool": "a",
        "tasks": {
            "map": {
                "resources": {"cpu": 2, "memory": 4 * GIB},
                "job_durations": [30_000, 45_000, 90_000],
            }
        },
    }
    base.update(overrides)
    return base


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(item) + "\n" for item in records)


def parse_error(text: str, kind: str = "jsonl") -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        parse_trace(text, source="t", kind=kind)
    assert caught.value.code == "InvalidTrace"
    return caught.value


def test_a_record_becomes_a_scenario_operation() -> None:
    (op,) = parse_trace(jsonl(record()), source="t.jsonl", kind="jsonl")
    assert op.id == "op-1" and op.user == "alice" and op.type == "map"
    assert op.start_time == 60_000
    assert op.spec.pool == "a"
    task = op.spec.tasks["map"]
    assert task.job_count == 3
    assert task.job_durations == (30_000, 45_000, 90_000)
    assert task.cpu_limit == 2 and task.memory_limit == 4 * GIB
    assert task.finish_after_interruption is None


def test_interruption_behaviour_and_spec_options_are_kept() -> None:
    item = record(
        type="vanilla",
        spec={"preemption_mode": "graceful", "weight": 3},
        pool_trees=["physical"],
        tasks={
            "instances": {
                "resources": {"cpu": 8},
                "job_durations": [1000],
                "interruption_signal": "SIGINT",
                "finish_after_interruption": "20s",
                "restart_completed_jobs": True,
            }
        },
    )
    (op,) = parse_trace(jsonl(item), source="t", kind="jsonl")
    assert op.spec.preemption_mode == "graceful" and op.spec.weight == 3
    assert op.spec.pool_trees == ("physical",)
    task = op.spec.tasks["instances"]
    assert task.interruption_signal == "SIGINT" and task.restart_completed_jobs
    assert task.finish_after_interruption is not None
    assert task.memory_limit == 512 * 2**20  # YTsaurus's default user-job memory


def test_csv_and_jsonl_hold_the_same_trace() -> None:
    items = [
        record("op-1"),
        record(
            "op-2",
            submit_time=5,
            type="vanilla",
            spec={"weight": 2.0},
            tasks={
                "a": {"job_durations": [1, 2], "interruption_signal": "SIGTERM"},
                "b": {"resources": {"gpu": 1}, "job_durations": [7]},
            },
        ),
    ]
    from_jsonl = parse_trace(write_jsonl(items), source="t", kind="jsonl")
    from_csv = parse_trace(write_csv(items), source="t", kind="csv")
    assert from_csv == from_jsonl


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json\n", "t:1: not JSON"),
        (jsonl(record(), record()), "t:2: id: operation 'op-1' is also recorded at t:1"),
        (jsonl(record(colour="red")), "colour: Extra inputs are not permitted"),
        (
            jsonl(record(tasks={"map": {"job_count": 2, "job_durations": [1, 2, 3]}})),
            "job_durations has 3 entries but job_count is 2",
        ),
        (jsonl(record(tasks={"map": {"resources": {"cpu": -1}, "job_durations": [1]}})), "cpu"),
        (jsonl(record(spec={"pool": "b"})), "spec.pool: write it as the record's own 'pool'"),
        (
            jsonl(
                record(
                    type="vanilla",
                    tasks={"v": {"job_durations": [1], "finish_after_interruption": "1s"}},
                )
            ),
            "finish_after_interruption needs an interruption_signal",
        ),
        ("\n" + jsonl(record(submit_time="soon")), "t:2: submit_time"),
    ],
)
def test_bad_jsonl_names_line_and_field(text: str, fragment: str) -> None:
    assert fragment in parse_error(text).message


def test_bad_csv_is_refused_with_the_row() -> None:
    header = "id,submit_time,task,job_durations,pool\n"
    message = parse_error(header + "o,0,t,1;2,a\no,0,u,3,b\n", "csv").message
    assert message.startswith("t:3: pool: 'b' differs from 'a'")
    assert (
        "unknown columns ['colour']" in parse_error("id,submit_time,task,colour\n", "csv").message
    )
    assert "missing column 'task'" in parse_error("id,submit_time\n", "csv").message
    assert (
        "task: 't' appears twice" in parse_error(header + "o,0,t,1,a\no,0,t,2,a\n", "csv").message
    )


def test_read_trace_sniffs_the_format_and_reports_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "trace.txt"
    path.write_text(jsonl(record()), encoding="utf-8")
    assert read_trace(path)[0].id == "op-1"
    path.write_text(write_csv([record()]), encoding="utf-8")
    assert read_trace(path)[0].id == "op-1"
    with pytest.raises(ScenarioError, match="cannot read"):
        read_trace(tmp_path / "missing.jsonl")


def test_trace_operations_join_the_scenario_and_actions_may_name_them() -> None:
    trace = parse_trace(jsonl(record("rec")), source="t", kind="jsonl")
    doc = document(actions=[{"time": "2m", "action": "abort_operation", "operation": "rec"}])
    scenario = load_scenario(doc, trace)
    assert [plan.id for plan in scenario.operations] == ["op", "rec"]
    with pytest.raises(ScenarioError, match="'op' is used by the scenario and by the trace"):
        load_scenario(document(), parse_trace(jsonl(record("op")), source="t", kind="jsonl"))


def test_replay_runs_each_recorded_job_for_its_recorded_time() -> None:
    durations = [30_000, 45_000, 90_000, 12_345]
    trace = parse_trace(
        jsonl(record(tasks={"map": {"resources": {"cpu": 1}, "job_durations": durations}})),
        source="t",
        kind="jsonl",
    )
    result, recorder = run_trace(document(operations=[]), trace)
    completed = sorted(
        event["duration"] for event in recorder.events if event["event_type"] == "job_completed"
    )
    assert completed == pytest.approx(sorted(d / 1000 for d in durations))
    (op,) = result.operations
    assert op.state == "completed" and op.start_time == 60.0


def run_trace(doc: dict[str, Any], trace: Any) -> Any:
    from ytsched.simulator import ListRecorder, simulate

    recorder = ListRecorder()
    return simulate(load_scenario(doc, trace), recorder=recorder), recorder


def test_replay_under_contention_keeps_the_work_and_differs_in_waiting() -> None:
    """The same trace on half the cluster: same jobs completed, longer waits."""
    items = [
        record(f"r{i}", submit_time=i * 10_000, tasks={"m": {"job_durations": [60_000] * 20}})
        for i in range(4)
    ]
    trace = parse_trace(jsonl(*items), source="t", kind="jsonl")
    big = document(operations=[operation("op", "b", jobs=1, duration="1s")])
    small = dict(big)
    small["cluster"] = {"heartbeat_period": "5s", "node_groups": [node_group(1, 10)]}
    result_big, _ = run_trace(big, trace)
    result_small, _ = run_trace(small, trace)
    done_big = {op.id: op.completed_job_count for op in result_big.operations}
    done_small = {op.id: op.completed_job_count for op in result_small.operations}
    assert done_big == done_small == {"op": 1, "r0": 20, "r1": 20, "r2": 20, "r3": 20}
    wait_big = max(op.waiting_time or 0 for op in result_big.operations)
    wait_small = max(op.waiting_time or 0 for op in result_small.operations)
    assert wait_small > wait_big


def test_run_helper_still_runs_plain_scenarios() -> None:
    result, _ = run(document())
    assert result.operations[0].state == "completed"


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
_task = st.fixed_dictionaries(
    {
        "resources": st.fixed_dictionaries(
            {
                "cpu": st.integers(0, 6400).map(lambda hundredths: hundredths / 100),
                "memory": st.integers(0, 2**40),
                "gpu": st.integers(0, 8),
                "network": st.integers(0, 100),
            }
        ),
        "job_durations": st.lists(st.integers(0, 10**9), min_size=1, max_size=20),
        "restart_completed_jobs": st.booleans(),
    },
    optional={
        "interruption_signal": st.sampled_from(["SIGINT", "SIGTERM", "SIGUSR1"]),
        "finish_after_interruption": st.integers(0, 10**6),
    },
)
_record = st.fixed_dictionaries(
    {
        "id": _names,
        "submit_time": st.integers(0, 10**10),
        "user": _names,
        "type": st.just("vanilla"),
        "tasks": st.dictionaries(_names, _task, min_size=1, max_size=3),
    },
    optional={
        "pool": _names,
        "pool_trees": st.lists(_names, min_size=1, max_size=2, unique=True),
        "spec": st.fixed_dictionaries({"weight": st.sampled_from([0.5, 1.0, 3.0])}),
    },
)


def _valid(record: dict[str, Any]) -> dict[str, Any]:
    """Vanilla tasks answering interruptions need a signal (the format's own rule)."""
    for task in record["tasks"].values():
        if "finish_after_interruption" in task and "interruption_signal" not in task:
            task["interruption_signal"] = "SIGINT"
    return record


@settings(max_examples=60, deadline=None)
@given(st.lists(_record.map(_valid), min_size=1, max_size=5, unique_by=lambda r: r["id"]))
def test_jsonl_and_csv_writers_round_trip_any_trace(records: list[dict[str, Any]]) -> None:
    """Whatever the converter writes, in either format, reads back as the same operations."""
    from_jsonl = parse_trace(write_jsonl(records), source="t", kind="jsonl")
    from_csv = parse_trace(write_csv(records), source="t", kind="csv")
    assert from_csv == from_jsonl
    assert [op.id for op in from_jsonl] == [r["id"] for r in records]
    for op, item in zip(from_jsonl, records, strict=True):
        assert op.start_time == item["submit_time"]
        for name, task in item["tasks"].items():
            assert op.spec.tasks[name].job_durations == tuple(task["job_durations"])
