"""Converting YTsaurus's list_operations + list_jobs output into a trace."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ytsched.cli.main import main
from ytsched.simulator import ScenarioError
from ytsched.simulator.trace import parse_trace, write_jsonl
from ytsched.simulator.ytrecords import _plain, convert
from ytsched.snapshot.files import read_document

TRACES = Path(__file__).resolve().parents[2] / "examples" / "traces"
EXPORT = TRACES / "yt-export"
GIB = 2**30


def ts(minute: float) -> str:
    """A timestamp as YTsaurus writes it, ``minute`` minutes after 12:00."""
    seconds = int(minute * 60)
    return f"2026-11-16T12:{seconds // 60:02d}:{seconds % 60:02d}.000000Z"


def op(op_id: str, minute: float, **fields: Any) -> dict[str, Any]:
    base = {
        "id": op_id,
        "type": "map",
        "state": "completed",
        "authenticated_user": "alice",
        "start_time": ts(minute),
        "spec": {"pool": "adhoc", "mapper": {"cpu_limit": 2, "memory_limit": 4 * GIB}},
    }
    base.update(fields)
    return base


def job(minute: float, until: float | None, state: str = "completed", **fields: Any) -> Any:
    item = {"id": f"j{minute}-{state}", "type": "map", "state": state, "start_time": ts(minute)}
    if until is not None:
        item["finish_time"] = ts(until)
    item.update(fields)
    return item


def run_convert(ops: list[Any], jobs: dict[str, list[Any]], **options: Any) -> Any:
    return convert(
        [("ops.yson", {"operations": ops})],
        [(f"jobs/{key}.yson", {"jobs": items}) for key, items in jobs.items()],
        **options,
    )


def test_completed_jobs_become_durations_and_submit_times_start_at_zero() -> None:
    records, report = run_convert(
        [op("b", 5), op("a", 1)],
        {"a": [job(3, 5), job(2, 4.5)], "b": [job(6, 7), job(6, 6.5, "aborted")]},
    )
    assert [r["id"] for r in records] == ["a", "b"]
    assert [r["submit_time"] for r in records] == [0, 240_000]
    assert records[0]["tasks"]["map"]["job_durations"] == [150_000, 120_000]  # by start time
    assert records[0]["tasks"]["map"]["resources"] == {
        "cpu": 2,
        "memory": 4 * GIB,
        "gpu": 0,
        "network": 0,
    }
    assert records[1]["tasks"]["map"]["job_durations"] == [60_000]
    assert report.jobs_by_state == {"completed": 3, "aborted": 1}
    assert report.origin == "2026-11-16T12:01:00+00:00"


def test_running_jobs_run_until_the_end_of_the_recording_or_are_skipped() -> None:
    ops = [op("a", 0, state="running"), op("b", 1)]
    jobs = {"a": [job(1, None, "running")], "b": [job(1, 30)]}
    records, _ = run_convert(ops, jobs)
    assert records[0]["tasks"]["map"]["job_durations"] == [29 * 60_000]
    end = datetime(2026, 11, 16, 13, 1, tzinfo=UTC)
    records, _ = run_convert(ops, jobs, end=end)
    assert records[0]["tasks"]["map"]["job_durations"] == [60 * 60_000]
    records, report = run_convert(ops, jobs, include_running=False)
    assert [r["id"] for r in records] == ["b"]
    assert report.skipped == {"no completed or running jobs": ["a"]}


def test_resources_and_interruption_come_from_the_spec_of_each_task() -> None:
    vanilla = op(
        "v",
        0,
        type="vanilla",
        spec={
            "pool": "chyt",
            "preemption_mode": "graceful",
            "tasks": {
                "instances": {
                    "cpu_limit": 8,
                    "gpu_limit": 1,
                    "interruption_signal": "SIGINT",
                    "restart_completed_jobs": True,
                },
                "plain": {},
            },
        },
    )
    sort = op("s", 1, type="sort", spec={"title": "x"}, brief_spec={"pool": "etl"})
    records, _ = run_convert(
        [vanilla, sort],
        {
            "v": [
                job(0, 2, type="vanilla", task_name="instances"),
                job(0, 1, type="vanilla", task_name="plain"),
            ],
            "s": [job(1, 2, type="partition", task_name="partition")],
        },
        finish_after_interruption=20_000,
    )
    tasks = records[0]["tasks"]
    assert (
        tasks["instances"]["resources"]["cpu"] == 8 and tasks["instances"]["resources"]["gpu"] == 1
    )
    assert tasks["instances"]["interruption_signal"] == "SIGINT"
    assert tasks["instances"]["finish_after_interruption"] == 20_000
    assert tasks["instances"]["restart_completed_jobs"] is True
    assert "finish_after_interruption" not in tasks["plain"]  # no signal: cannot be told
    assert tasks["plain"]["resources"] == {
        "cpu": 1.0,
        "memory": 512 * 2**20,
        "gpu": 0,
        "network": 0,
    }
    assert records[0]["spec"] == {"preemption_mode": "graceful"}
    assert records[1]["pool"] == "etl"  # from brief_spec when spec has none
    assert records[1]["tasks"]["partition"]["finish_after_interruption"] == 20_000
    parse_trace(write_jsonl(records), source="t", kind="jsonl")


def test_jobs_may_name_their_operation_and_unknown_ones_are_refused() -> None:
    records, _ = convert(
        [("ops", {"operations": [op("a", 0)]})],
        [("all.json", {"jobs": [job(0, 1, operation_id="a")]})],
    )
    assert records[0]["tasks"]["map"]["job_durations"] == [60_000]
    with pytest.raises(ScenarioError, match="not in the list_operations output"):
        convert([("ops", {"operations": [op("a", 0)]})], [("zzz.yson", {"jobs": [job(0, 1)]})])
    with pytest.raises(ScenarioError, match="cannot parse timestamp"):
        convert([("ops", {"operations": [op("a", 0, start_time="yesterday")]})], [])
    with pytest.raises(ScenarioError, match="expected list_operations output"):
        convert([("ops", {"nothing": 1})], [])


def test_spec_options_ytsched_refuses_are_dropped_and_reported() -> None:
    spec = {"pool": "adhoc", "weight": -5, "preemption_mode": "graceful", "mapper": {}}
    records, report = run_convert([op("a", 0, spec=spec)], {"a": [job(0, 1)]})
    assert records[0]["spec"] == {"preemption_mode": "graceful"}
    assert report.dropped_options == {"a": ["weight"]}


def test_the_example_export_converts_to_the_shipped_trace() -> None:
    operations = [("list_operations.yson", read_document(EXPORT / "list_operations.yson"))]
    jobs = [(path.name, read_document(path)) for path in sorted((EXPORT / "jobs").iterdir())]
    records, report = convert(operations, jobs, finish_after_interruption=20_000)
    assert write_jsonl(records) == (TRACES / "last-6h.jsonl").read_text(encoding="utf-8")
    assert report.skipped == {
        "no completed or running jobs": ["d063518e-9fa07c85-5b9f2968-33ef095d"]
    }
    assert report.jobs_by_state["failed"] == 2 and report.jobs_by_state["aborted"] == 2
    # The client's JSON output (`--format json`) holds the same values.
    as_json = [(name, json.loads(json.dumps(_plain(doc)))) for name, doc in operations]
    jobs_json = [(name, json.loads(json.dumps(_plain(doc)))) for name, doc in jobs]
    again, _ = convert(as_json, jobs_json, finish_after_interruption=20_000)
    assert again == records


def test_output_printed_by_the_official_client_is_read(tmp_path: Path) -> None:
    helpers = pytest.importorskip("yt.wrapper.cli_helpers")
    yson = pytest.importorskip("yt.yson")
    ops = {"operations": [op("a-b-c-d", 0)], "incomplete": False}
    jobs = {"jobs": [job(0, 2, job_cookie=yson.YsonUint64(0), is_stale=False)], "errors": []}
    for form, dump in (("yson", helpers.DUMPERS["yson"]), ("json", helpers.DUMPERS["json"])):
        (tmp_path / form / "jobs").mkdir(parents=True)
        (tmp_path / form / f"ops.{form}").write_text(dump(ops))
        (tmp_path / form / "jobs" / f"a-b-c-d.{form}").write_text(dump(jobs))
        out = tmp_path / form / "trace.jsonl"
        args = ["trace", "convert", "--operations", str(tmp_path / form / f"ops.{form}")]
        args += ["--jobs", str(tmp_path / form / "jobs"), "--out", str(out)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        (line,) = out.read_text().splitlines()
        assert json.loads(line)["tasks"]["map"]["job_durations"] == [120_000]


def test_cli_convert_check_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    report = tmp_path / "report.json"
    args = ["trace", "convert", "--operations", str(EXPORT / "list_operations.yson")]
    args += ["--jobs", str(EXPORT / "jobs"), "--out", str(out), "--report", str(report)]
    result = CliRunner().invoke(main, [*args, "--finish-after-interruption", "20s"])
    assert result.exit_code == 0, result.output
    assert "14 of 15 operations (416 jobs)" in result.output
    assert out.read_text() == (TRACES / "last-6h.csv").read_text()
    assert json.loads(report.read_text())["operations_written"] == 14
    result = CliRunner().invoke(main, ["trace", "check", str(out)])
    assert result.exit_code == 0 and "14 operations, 416 jobs" in result.output
    bad = CliRunner().invoke(main, [*args[:-4], "--out", str(tmp_path / "t.txt")])
    assert bad.exit_code == 2 and "must be named .jsonl or .csv" in bad.output
    bad = CliRunner().invoke(main, [*args, "--finish-after-interruption", "soon"])
    assert bad.exit_code == 2 and "--finish-after-interruption" in bad.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x"}\n')
    bad = CliRunner().invoke(main, ["trace", "check", str(broken)])
    assert bad.exit_code == 2 and "broken.jsonl:1: submit_time: Field required" in bad.output


def test_what_if_replays_the_example_trace(tmp_path: Path) -> None:
    args = ["what-if", str(TRACES / "cluster.yson"), "--trace", str(TRACES / "last-6h.jsonl")]
    args += ["--pools-a", str(TRACES / "pools_today.yson")]
    args += ["--pools-b", str(TRACES / "pools_proposed.yson")]
    args += ["--out", str(tmp_path / "w"), "--until", "90m", "--no-plots", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    adhoc = report["pools"]["physical/adhoc"]
    assert adhoc["average_strong_guarantee"] == {"a": 0.0, "b": 32.0, "difference": 32.0}
    assert not report["pools"]["physical/research"]["in_a"]
    assert report["pools"]["physical/research"]["in_b"]  # carol's training lands under it


def test_pages_of_one_operation_may_sit_in_its_directory(tmp_path: Path) -> None:
    (tmp_path / "jobs" / "a").mkdir(parents=True)
    (tmp_path / "ops.json").write_text(json.dumps({"operations": [op("a", 0)]}))
    (tmp_path / "jobs" / "a" / "1.json").write_text(json.dumps({"jobs": [job(0, 1)]}))
    (tmp_path / "jobs" / "a" / "2.json").write_text(json.dumps({"jobs": [job(1, 3)]}))
    out = tmp_path / "t.jsonl"
    args = ["trace", "convert", "--operations", str(tmp_path / "ops.json")]
    result = CliRunner().invoke(main, [*args, "--jobs", str(tmp_path / "jobs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["tasks"]["map"]["job_durations"] == [60_000, 120_000]


def test_incomplete_jobs_and_unreplayable_operations_are_skipped_and_reported() -> None:
    vanilla = op(
        "v",
        0,
        type="vanilla",
        spec={"tasks": {"t": {"cpu_limit": -1}}},
    )
    records, report = run_convert(
        [op("a", 0), vanilla],
        {
            "a": [job(0, 1), job(0, None), {"id": "j", "state": "completed", "type": "map"}],
            "v": [job(0, 1, type="vanilla", task_name="t")],
        },
    )
    assert [r["id"] for r in records] == ["a"]
    assert records[0]["tasks"]["map"]["job_durations"] == [60_000]
    assert report.jobs_without_times == 2
    assert report.jobs_written == 1
    (reason,) = report.skipped
    assert reason.startswith("not replayable: operation v: tasks.t.resources.cpu")


def test_simulate_replays_a_trace_and_refuses_a_bad_one(tmp_path: Path) -> None:
    args = ["simulate", str(TRACES / "cluster.yson"), "--trace", str(TRACES / "last-6h.csv")]
    out = tmp_path / "run"
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--until", "30m", "--no-plots"])
    assert result.exit_code == 0, result.output
    rows = (out / "operations.csv").read_text().splitlines()
    assert len(rows) == 1 + 14
    assert any(",robot-chyt,physical,chyt,running," in row for row in rows)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "submit_time": 0, "tasks": {"t": {"job_durations": [-5]}}}\n')
    args = ["simulate", str(TRACES / "cluster.yson"), "--trace", str(bad), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "bad.jsonl:1: tasks.t.job_durations.0" in result.output
    assert "[InvalidTrace]" in result.output
