"""``ytsched simulate`` and ``ytsched what-if``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from tests.simulator.helpers import EXAMPLES, document, operation
from ytsched.cli.main import main


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_simulate_writes_every_output(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.json", document(trace_operations=["op"]))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["simulate", str(scenario), "--out", str(out), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "results in" in result.output
    names = {p.name for p in out.iterdir()}
    assert {"events.jsonl", "orchid.jsonl", "operations.csv", "summary.json", "plots"} <= names
    assert (out / "plots" / "physical" / "a.png").stat().st_size > 1000
    assert (out / "plots" / "physical" / "operations" / "op.png").exists()
    rows = list(csv.DictReader((out / "operations.csv").open()))
    assert rows[0]["id"] == "op" and rows[0]["pool"] == "a" and rows[0]["state"] == "completed"
    assert rows[0]["job_count"] == "20"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3
    assert summary["pools"]["physical"]["a"]["operation_count"] == 1
    first = json.loads((out / "events.jsonl").read_text().splitlines()[0])
    assert first["event_type"] == "node_added"


def test_until_and_orchid_period_options(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.json", document())
    out = tmp_path / "out"
    args = [
        "simulate",
        str(scenario),
        "--out",
        str(out),
        "--until",
        "2m",
        "--orchid-period",
        "30s",
        "--no-plots",
        "-q",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    times = [json.loads(line)["time"] for line in (out / "orchid.jsonl").read_text().splitlines()]
    assert times == [0.0, 30.0, 60.0, 90.0, 120.0]
    assert not (out / "plots").exists()


def test_invalid_scenario_exits_2_naming_file_and_path(tmp_path: Path) -> None:
    bad = document(operations=[operation("x", "a", jobs=1, task={"cpu_limit": "lots"})])
    scenario = write(tmp_path / "bad.json", bad)
    result = CliRunner().invoke(main, ["simulate", str(scenario), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert f"{scenario}: operations[0].spec.tasks.main.cpu_limit:" in result.output
    assert "[InvalidScenario]" in result.output


def test_syntax_errors_exit_2(tmp_path: Path) -> None:
    scenario = tmp_path / "broken.yson"
    scenario.write_text("{duration = ", encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(scenario), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "broken.yson" in result.output


def test_what_if_compares_two_pool_configurations(tmp_path: Path) -> None:
    pools = EXAMPLES / "what-if"
    out = tmp_path / "out"
    args = [
        "what-if",
        str(EXAMPLES / "pool_settings.yson"),
        "--pools-a",
        str(pools / "pools_documented.yson"),
        "--pools-b",
        str(pools / "pools_more_backup.yson"),
        "--out",
        str(out),
        "--until",
        "40m",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "# What-if: pools_documented vs pools_more_backup" in result.output
    report = json.loads((out / "report.json").read_text())
    guarantee = report["pools"]["physical/backup"]["average_strong_guarantee"]
    assert (guarantee["a"], guarantee["b"], guarantee["difference"]) == (20.0, 40.0, 20.0)
    fair = report["pools"]["physical/backup"]["average_fair_share"]
    assert fair["b"] > fair["a"]
    for side in ("a", "b"):
        assert (out / side / "operations.csv").exists()
        assert (out / side / "summary.json").exists()
    assert (out / "plots" / "physical" / "backup.png").exists()
    assert (out / "report.md").read_text().startswith("# What-if")


def test_what_if_errors_name_the_pools_file(tmp_path: Path) -> None:
    pools = EXAMPLES / "what-if" / "pools_documented.yson"
    bad = tmp_path / "bad_pools.yson"
    bad.write_text(
        pools.read_text().replace(
            "adhoc = <strong_guarantee_resources = {cpu = 80}",
            "adhoc = <strong_guarantee_resources = {cpu = 180}",
        ),
        encoding="utf-8",
    )
    args = [
        "what-if",
        str(EXAMPLES / "pool_settings.yson"),
        "--pools-a",
        str(pools),
        "--pools-b",
        str(bad),
        "--out",
        str(tmp_path / "out"),
        "-q",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert f"{bad}: physical.project-root.adhoc: " in result.output
    assert "[GuaranteesExceedParent]" in result.output
