"""Hostile files through ``fair-share`` and ``simulate``: exit 0, or exit 2 and one line.

Never a traceback, never a hang.  Inputs are the shipped examples with tokens replaced by hostile
ones (NaN, infinities, 5,000-digit and beyond-uint64 integers, wrong types, huge counts and
durations, deep nesting), with random bytes inserted or the file cut short, plus pure noise.
Each run is in-process under an alarm, so a hang fails the example instead of the suite.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ytsched import yson
from ytsched.cli.main import main

REPO = Path(__file__).resolve().parents[2]
TREE = (REPO / "examples" / "small_tree.yson").read_text(encoding="utf-8")
TREE_JSON = json.dumps(yson.strip_attributes(yson.loads(TREE)), indent=1)
SCENARIO = (REPO / "examples" / "scenarios" / "burst_pool.yson").read_text(encoding="utf-8")
TOKEN = re.compile(r'"[^"\n]*"|[A-Za-z0-9_.%+\-]+')
HOSTILE = [
    "%nan", "%inf", "-%inf", "NaN", "Infinity", "1e5000", "-1e5000", "9" * 5000,
    "18446744073709551616", "-9223372036854775809", "-1", "0", "17", "0.5", "#", "%true",
    "[]", "{}", '""', '"x"', "1000000000", "100000000000000000", '"1ms"', '"100000000d"',
    "<a=1>", "[" * 200 + "]" * 200, "fifo", "operation", "pool", '"<Root>"', '"\\xff"',
    "[" * 5000 + "]" * 5000, "{" * 3000, "null", "true",
]  # fmt: skip
TIMEOUT = 60


class Hang(Exception):
    pass


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def _raise(*_: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    spans = [m.span() for m in TOKEN.finditer(text)]
    for _ in range(draw(st.integers(1, 3))):
        start, end = spans[draw(st.integers(0, len(spans) - 1))]
        text = text[:start] + draw(st.sampled_from(HOSTILE)) + text[end:]
        spans = [m.span() for m in TOKEN.finditer(text)]
    edit = draw(st.sampled_from(["none", "none", "cut", "insert"]))
    if edit == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif edit == "insert":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    return text


def files(text: str) -> st.SearchStrategy[bytes]:
    noise = st.binary(max_size=200)
    return st.one_of(mutated(text).map(lambda t: t.encode("utf-8", "surrogatepass")), noise)


def check(arguments: list[str]) -> None:
    with alarm(TIMEOUT):
        result = CliRunner().invoke(main, arguments, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{arguments}: {result.exception!r}") from result.exception
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ytsched: error: "), result.stderr
        assert lines[0].endswith("]"), lines[0]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    content=st.one_of(files(TREE), files(TREE_JSON)),
    suffix=st.sampled_from([".yson", ".json", ""]),
)
def test_fair_share_survives_hostile_files(tmp_path: Path, content: bytes, suffix: str) -> None:
    snapshot = tmp_path / f"snapshot{suffix}"
    snapshot.write_bytes(content)
    check(["fair-share", str(snapshot), "--format", "table"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=files(SCENARIO))
def test_simulate_survives_hostile_files(tmp_path: Path, content: bytes) -> None:
    scenario = tmp_path / "scenario.yson"
    scenario.write_bytes(content)
    out = tmp_path / "out"
    check(["simulate", str(scenario), "--out", str(out), "--until", "300", "--no-plots", "-q"])


def test_hostile_command_lines_are_one_line(tmp_path: Path) -> None:
    scenario = REPO / "examples" / "scenarios" / "burst_pool.yson"
    for until in ("nan", "inf", "-5", "1e400", "100000000d", "soon"):
        check(["simulate", str(scenario), "--out", str(tmp_path / "o"), "--until", until, "-q"])
        assert not (tmp_path / "o").exists()  # refused before anything was written
    check(["simulate", str(scenario), "--out", str(tmp_path / "o"), "--orchid-period", "1ms"])
    assert not (tmp_path / "o").exists()
    tree = REPO / "examples" / "small_tree.yson"
    check(["fair-share", str(tree), "-o", str(tmp_path / "missing" / "dir" / "out.json")])
    assert not (tmp_path / "missing").exists()
