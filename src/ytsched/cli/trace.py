"""``ytsched trace``: write and check recorded workloads for ``simulate --trace``.

``convert`` reads what the official YTsaurus client prints for ``list-operations`` and
``list-jobs`` (pretty YSON or JSON) and writes a trace; ``check`` validates a trace and prints
what it holds.  The conversion itself is :mod:`ytsched.simulator.ytrecords` (pure).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ytsched.errors import YtschedError


def _fail(error: YtschedError) -> None:
    from ytsched.cli.main import fail

    fail(error)


def _job_files(paths: tuple[Path, ...]) -> list[Path]:
    """Files given, and the ``.yson``/``.json`` files of directories given and of their
    subdirectories (pages of one operation in ``jobs/<operation id>/``), sorted."""
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        for child in sorted(path.iterdir()):
            if child.is_dir():
                files += sorted(c for c in child.iterdir() if _is_document(c))
            elif _is_document(child):
                files.append(child)
    return files


def _is_document(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in (".yson", ".json")


@click.group("trace")
def trace() -> None:
    """Recorded workloads for `ytsched simulate --trace` and `ytsched what-if --trace`."""


@trace.command("convert")
@click.option(
    "--operations",
    "operations",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output of `yt list-operations ... --attribute spec` (YSON or JSON); repeatable.",
)
@click.option(
    "--jobs",
    "jobs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Output of `yt list-jobs --operation-id ID` (a file named ID.yson, or a directory of"
    " them); repeatable.",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Trace to write: .jsonl or .csv.",
)
@click.option(
    "--finish-after-interruption",
    help="How long an interruptible job needs to finish after its signal ('30s'); default: it"
    " ignores interruptions.",
)
@click.option(
    "--end",
    help="End of the recording (ISO timestamp), where running jobs stop; default: the latest"
    " time in the records.",
)
@click.option("--skip-running", is_flag=True, help="Do not replay jobs that were still running.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the conversion report (JSON) here.",
)
def convert(
    operations: tuple[Path, ...],
    jobs: tuple[Path, ...],
    out: Path,
    finish_after_interruption: str | None,
    end: str | None,
    skip_running: bool,
    report_path: Path | None,
) -> None:
    """Convert YTsaurus's list_operations + list_jobs output into a trace."""
    from ytsched.config.base import parse_duration
    from ytsched.simulator.trace import trace_error, write_csv, write_jsonl
    from ytsched.simulator.ytrecords import convert as run_convert
    from ytsched.simulator.ytrecords import parse_time
    from ytsched.snapshot.files import read_document

    try:
        if out.suffix.lower() not in (".jsonl", ".csv"):
            raise trace_error(str(out), "the trace must be named .jsonl or .csv")
        response = None
        if finish_after_interruption is not None:
            try:
                response = parse_duration(finish_after_interruption)
            except ValueError as error:
                raise trace_error("--finish-after-interruption", str(error)) from None
        stop = parse_time(end, "--end") if end is not None else None
        operation_documents = [(str(path), read_document(path)) for path in operations]
        job_documents = [(str(path), read_document(path)) for path in _job_files(jobs)]
        records, report = run_convert(
            operation_documents,
            job_documents,
            finish_after_interruption=response,
            end=stop,
            include_running=not skip_running,
        )
        text = write_csv(records) if out.suffix.lower() == ".csv" else write_jsonl(records)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        summary: dict[str, Any] = report.to_dict()
        if report_path is not None:
            report_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    except YtschedError as error:
        _fail(error)
        return
    skipped = sum(len(ids) for ids in report.skipped.values())
    click.echo(
        f"{report.operations_written} of {report.operations_read} operations"
        f" ({report.jobs_written} jobs) written to {out}; {skipped} skipped;"
        f" origin {report.origin}"
    )
    if report.jobs_without_times:
        click.echo(f"  {report.jobs_without_times} jobs without start or finish time not replayed")
    for reason, ids in report.skipped.items():
        click.echo(f"  skipped ({reason}): {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}")
    for operation_id, keys in report.dropped_options.items():
        click.echo(f"  {operation_id}: spec options not understood, dropped: {', '.join(keys)}")


@trace.command("check")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def check(path: Path) -> None:
    """Validate a trace and print what it holds."""
    from ytsched.simulator.trace import read_trace

    try:
        operations = read_trace(path)
    except YtschedError as error:
        _fail(error)
        return
    jobs = sum(task.job_count for op in operations for task in op.spec.tasks.values())
    last = max((op.start_time for op in operations), default=0)
    click.echo(
        f"{path}: {len(operations)} operations, {jobs} jobs, last submit at {last / 1000:g} s"
    )
