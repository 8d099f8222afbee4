"""`ytsched fair-share`: output formats, files, and the exit-2 contract for bad input."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ytsched import yson
from ytsched.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "small_tree.yson"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_output_is_orchid_shaped() -> None:
    code, out, _ = run("fair-share", str(EXAMPLE))
    assert code == 0
    orchid = json.loads(out)
    assert set(orchid) == {"pools", "operations", "errors"}
    batch = orchid["pools"]["batch"]
    assert batch["parent"] == "project-root"
    assert set(batch["detailed_fair_share"]) == {
        "strong_guarantee",
        "integral_guarantee",
        "weight_proportional",
        "total",
    }
    # adhoc and backup take what they need within their guarantees; batch gets the rest.
    assert abs(orchid["pools"]["adhoc"]["fair_share_ratio"] - 0.6) < 1e-9
    assert abs(orchid["pools"]["backup"]["fair_share_ratio"] - 0.1) < 1e-9
    assert abs(batch["fair_share_ratio"] - 0.3) < 1e-9
    assert orchid["operations"]["train-a"]["fifo_index"] == 0


def test_yson_output_parses_back_to_the_same_document() -> None:
    _, as_json, _ = run("fair-share", str(EXAMPLE))
    code, as_yson, _ = run("fair-share", str(EXAMPLE), "--format", "yson")
    assert code == 0
    assert yson.loads(as_yson) == json.loads(as_json)


def test_table_output_lists_the_tree(tmp_path: Path) -> None:
    code, out, _ = run("fair-share", str(EXAMPLE), "--format", "table")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["element", "mode"]
    assert any(line.startswith("    batch ") and "weight share" in line for line in lines)
    _, pools_only, _ = run("fair-share", str(EXAMPLE), "--format", "table", "--pools-only")
    assert "nightly-etl" in out and "nightly-etl" not in pools_only
    target = tmp_path / "out.txt"
    assert run("fair-share", str(EXAMPLE), "--format", "table", "-o", str(target))[0] == 0
    assert "project-root" in target.read_text()


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yson"
    bad.write_text('{elements = [{type = pool; name = "<Root>"; parent = #; weight = 0}]}')
    code, out, err = run("fair-share", str(bad))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("ytsched: error: ") and "[InvalidElement]" in err
    assert "Traceback" not in err
    code, _, err = run("fair-share", str(tmp_path / "absent.yson"))
    assert code == 2 and "[UnreadableFile]" in err


def test_option_overrides_and_compare(tmp_path: Path) -> None:
    dump = tmp_path / "dump.yson"
    dump.write_text(
        "["
        '{type = pool; name = "<Root>"; parent = #;'
        " resource_limits = {cpu = 10; user_slots = 10};"
        " total_fair_share = {cpu = 1.; user_slots = 0.5}};"
        '{type = operation; name = op; parent = "<Root>"; operation_type = vanilla;'
        " resource_demand = {cpu = 20; user_slots = 10};"
        " resource_usage = {cpu = 2; user_slots = 1};"
        " total_fair_share = {cpu = 0.5; user_slots = 0.5}}"
        "]"
    )
    code, out, _ = run("compare", str(dump))
    assert code == 0
    assert "2 elements compared" in out
    code, out, _ = run(
        "fair-share",
        str(dump),
        "--option",
        "consider_vanilla_operations_as_gang=%true",
    )
    assert code == 0 and json.loads(out)["operations"]["op"]["is_gang"] is True
    code, _, err = run("fair-share", str(dump), "--option", "novalue")
    assert code == 2 and "[InvalidOption]" in err
    code, _, err = run("compare", str(EXAMPLE))
    assert code == 2 and "[NothingToCompare]" in err
