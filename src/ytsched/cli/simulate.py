"""``ytsched simulate`` and ``ytsched what-if``: run scenarios in virtual time.

The commands read files, show a progress bar and write the output directory; the simulation
itself is :mod:`ytsched.simulator` (pure).  Bad input (an unreadable file, an invalid
scenario) is one line on stderr and exit status 2, as for every ytsched command.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ytsched.errors import YtschedError


def _read(path: Path) -> Any:
    from ytsched.snapshot.files import read_document

    return read_document(path)


def _load(path: Path, trace: Path | None = None) -> Any:
    """The scenario, with the operations of a recorded ``trace`` added when given."""
    from ytsched.simulator import ScenarioError, load_scenario
    from ytsched.simulator.trace import read_trace

    document = _read(path)
    recorded = read_trace(trace) if trace is not None else ()
    try:
        return load_scenario(document, recorded)
    except ScenarioError as error:
        raise ScenarioError(error.code, f"{path}: {error.message}", **error.attributes) from None


TRACE_OPTION = click.option(
    "--trace",
    "trace",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Replay a recorded workload (JSONL or CSV trace) besides the scenario's operations.",
)


def _fail(error: YtschedError) -> None:
    from ytsched.cli.main import fail

    fail(error)


@contextmanager
def _progress(enabled: bool, label: str) -> Iterator[Any]:
    """A rich progress bar over simulated time; yields the engine's progress callback."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[simulated]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(label, total=1.0, simulated="")
        state = {"last": -1.0}

        def callback(now: float, end: float) -> None:
            fraction = now / end if end > 0 else 1.0
            if fraction - state["last"] < 0.002 and now < end:
                return
            state["last"] = fraction
            bar.update(task, completed=min(fraction, 1.0), simulated=f"{now / 3600:.2f} h")

        yield callback


def _seconds(value: str | None, option: str) -> float | None:
    if value is None:
        return None
    from ytsched.config.base import parse_duration

    try:
        number = float(value)
    except ValueError:
        try:
            number = parse_duration(value) / 1000.0
        except ValueError as error:
            raise YtschedError("InvalidArgument", f"{option}: {error}") from None
    if not math.isfinite(number):
        raise YtschedError("InvalidArgument", f"{option}: {value!r} is not a finite time")
    if number < 0:
        raise YtschedError("InvalidArgument", f"{option}: must not be negative")
    return number


TIME_HELP = "seconds, or a duration with a unit ('90m', '1d')"


@click.command("simulate")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (created).",
)
@click.option(
    "--until", help=f"Stop at this simulated time instead of the scenario's duration; {TIME_HELP}."
)
@click.option("--seed", type=int, help="Override the scenario's seed.")
@click.option("--orchid-period", help=f"Orchid snapshot period ({TIME_HELP}); 0 disables.")
@TRACE_OPTION
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
@click.option("--no-events", is_flag=True, help="Skip the event log.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary line.")
def simulate(
    scenario: Path,
    out: Path,
    until: str | None,
    seed: int | None,
    orchid_period: str | None,
    trace: Path | None,
    no_plots: bool,
    no_events: bool,
    quiet: bool,
) -> None:
    """Run a SCENARIO (YSON or JSON, see docs/simulator.md) in virtual time.

    Writes events.jsonl, orchid.jsonl, operations.csv, summary.json and plots/ to --out.
    """
    from ytsched.simulator import simulate as run
    from ytsched.simulator.limits import check_run
    from ytsched.simulator.outputs import DirectoryRecorder, write_results

    try:
        loaded = _load(scenario, trace)
        end = _seconds(until, "--until")
        period = _seconds(orchid_period, "--orchid-period")
        # Refused before --out is created: a refusal changes nothing.
        check_run(
            loaded.duration if end is None else end,
            loaded.document.orchid_period / 1000.0 if period is None else period,
            "--until" if end is not None else "duration",
        )
        with (
            DirectoryRecorder(out, events=not no_events, orchid=period != 0) as recorder,
            _progress(not quiet, f"simulating {scenario.name}") as progress,
        ):
            result = run(
                loaded,
                recorder=recorder,
                seed=seed,
                until=end,
                orchid_period=period,
                progress=progress,
            )
        write_results(result, out, plots=not no_plots)
    except YtschedError as error:
        _fail(error)
        return
    except OSError as error:
        _fail(YtschedError("InvalidOutput", f"{out}: cannot write: {error.strerror or error}"))
        return
    if not quiet:
        counters = result.counters
        click.echo(
            f"simulated {result.end_time:g} s: {len(result.operations)} operations,"
            f" {counters.jobs_started} jobs started, {counters.jobs_aborted} aborted;"
            f" results in {out}"
        )


@click.command("what-if")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--pools-a",
    "pools_a",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Pool trees A: a //sys/pool_trees export (YSON or JSON).",
)
@click.option(
    "--pools-b",
    "pools_b",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Pool trees B, compared with A.",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (created).",
)
@click.option("--until", help=f"Stop at this simulated time; {TIME_HELP}.")
@click.option("--seed", type=int, help="Override the scenario's seed.")
@TRACE_OPTION
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def what_if(
    scenario: Path,
    pools_a: Path,
    pools_b: Path,
    out: Path,
    until: str | None,
    seed: int | None,
    trace: Path | None,
    no_plots: bool,
    quiet: bool,
) -> None:
    """Run the SCENARIO's workload under two pool configurations and compare them.

    Writes a/ and b/ (each run's operations.csv and summary.json), report.md, report.json and
    side-by-side plots/ to --out.
    """
    from ytsched.simulator.limits import check_run
    from ytsched.simulator.outputs import write_what_if
    from ytsched.simulator.whatif import render_markdown, run_what_if

    try:
        loaded = _load(scenario, trace)
        document_a = _read(pools_a)
        document_b = _read(pools_b)
        end = _seconds(until, "--until")
        check_run(loaded.duration if end is None else end, 0.0, "--until")
        labels = (pools_a.stem, pools_b.stem)
        if labels[0] == labels[1]:
            labels = ("A", "B")
        with _progress(not quiet, f"what-if {scenario.name}") as progress:
            study = run_what_if(
                loaded,
                document_a,
                document_b,
                labels=labels,
                sources=(str(pools_a), str(pools_b)),
                seed=seed,
                until=end,
                progress=progress,
            )
        write_what_if(study, out, plots=not no_plots)
    except YtschedError as error:
        _fail(error)
        return
    except OSError as error:
        _fail(YtschedError("InvalidOutput", f"{out}: cannot write: {error.strerror or error}"))
        return
    if not quiet:
        click.echo(render_markdown(study.report), nl=False)
