"""Writing a run to a directory: the only part of the simulator that touches files.

Layout of ``--out DIR``::

    events.jsonl      the event log, one JSON object per line, in simulation order
    orchid.jsonl      orchid snapshots (pools and operations, YTsaurus names) per orchid period
    operations.csv    one row per operation
    summary.json      utilization, per-pool averages, waiting-time percentiles, preemptions
    plots/<tree>/<pool>.png

JSON is written with sorted keys off (insertion order is deterministic) and without
non-standard numbers: an infinite or NaN value is written as ``null``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ytsched.simulator.plots import (
    MAX_POOL_PLOTS,
    comparison_figure,
    plot_operations,
    plot_pools,
    safe_name,
    save,
)
from ytsched.simulator.results import SimulationResult
from ytsched.simulator.summary import CSV_COLUMNS, build_summary, operation_row
from ytsched.simulator.whatif import WhatIf, render_markdown


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def to_json(value: Any, *, indent: int | None = None) -> str:
    """Standard JSON (no ``Infinity``/``NaN``), deterministic."""
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(value, allow_nan=False, indent=indent, separators=separators)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, indent=indent, separators=separators)


class DirectoryRecorder:
    """Streams the event log and orchid snapshots to files as the run goes."""

    def __init__(self, directory: Path, *, events: bool = True, orchid: bool = True) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._events: IO[str] | None = (
            (directory / "events.jsonl").open("w", encoding="utf-8") if events else None
        )
        self._orchid: IO[str] | None = (
            (directory / "orchid.jsonl").open("w", encoding="utf-8") if orchid else None
        )

    def event(self, record: dict[str, Any]) -> None:
        if self._events is not None:
            self._events.write(to_json(record))
            self._events.write("\n")

    def orchid(self, record: dict[str, Any]) -> None:
        if self._orchid is not None:
            self._orchid.write(to_json(record))
            self._orchid.write("\n")

    def close(self) -> None:
        for stream in (self._events, self._orchid):
            if stream is not None:
                stream.close()

    def __enter__(self) -> DirectoryRecorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def operations_csv(result: SimulationResult) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in result.operations:
        row = operation_row(record)
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()


def write_results(result: SimulationResult, directory: Path, *, plots: bool = True) -> list[Path]:
    """``operations.csv``, ``summary.json`` and the plots; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    csv_path = directory / "operations.csv"
    csv_path.write_text(operations_csv(result), encoding="utf-8")
    written.append(csv_path)
    summary_path = directory / "summary.json"
    summary_path.write_text(to_json(build_summary(result), indent=2) + "\n", encoding="utf-8")
    written.append(summary_path)
    if plots:
        resources = {name: tree.config.main_resource for name, tree in result.trees.trees.items()}
        written.extend(
            plot_pools(
                list(result.sampler.pools.values()),
                result.end_time,
                resources,
                directory / "plots",
            )
        )
        written.extend(
            plot_operations(
                list(result.sampler.operations.values()),
                result.end_time,
                resources,
                directory / "plots",
            )
        )
    return written


def write_what_if(study: WhatIf, directory: Path, *, plots: bool = True) -> list[Path]:
    """``a/`` and ``b/`` (each run's results), ``report.json``, ``report.md`` and
    ``plots/<tree>/<pool>.png`` (A left, B right)."""
    written = write_results(study.a, directory / "a", plots=False)
    written += write_results(study.b, directory / "b", plots=False)
    report_json = directory / "report.json"
    report_json.write_text(to_json(study.report, indent=2) + "\n", encoding="utf-8")
    report_md = directory / "report.md"
    report_md.write_text(render_markdown(study.report), encoding="utf-8")
    written += [report_json, report_md]
    if plots:
        labels = (study.report["labels"]["a"], study.report["labels"]["b"])
        series_a = study.a.sampler.pools
        series_b = study.b.sampler.pools
        keys = list(dict.fromkeys([*series_a, *series_b]))
        chosen = [k for k in keys if not (series_a.get(k) or series_b[k]).ephemeral]
        chosen = chosen[:MAX_POOL_PLOTS]
        for key in chosen:
            tree = study.a.trees.trees.get(key[0]) or study.b.trees.trees[key[0]]
            figure = comparison_figure(
                series_a.get(key),
                series_b.get(key),
                study.a.end_time,
                tree.config.main_resource,
                labels,
            )
            path = directory / "plots" / safe_name(key[0]) / f"{safe_name(key[1])}.png"
            save(figure, path)
            written.append(path)
    return written
