"""Recorded workloads: the trace format (JSONL or CSV) and its reading into scenario operations.

A scenario's ``operations`` describe a workload with distributions; a *trace* is a workload
that happened: when each operation was submitted, by whom, into which pool, and for each of
its tasks how many jobs ran, what each job asked for and how long each one ran.  Replaying a
trace under another pool configuration (``ytsched what-if --trace``) answers "what would last
week have looked like with these pools".

The format is documented in ``docs/simulator.md`` ("Trace replay").  Each trace record becomes
one :class:`~ytsched.simulator.scenario.ScenarioOperation` (explicit ``job_durations``), so it is
validated exactly like an operation written in a scenario file, and everything downstream (job
work, interruption, outputs) is the same code.  Errors name the file, the line and the field
(``week.jsonl:17: tasks.map.job_durations: ...``) with the stable code ``InvalidTrace``.

:mod:`ytsched.simulator.ytrecords` writes traces from YTsaurus's ``list_operations`` and
``list_jobs`` output.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ytsched.config.base import ConfigModel, Duration, option
from ytsched.config.operation import DEFAULT_JOB_MEMORY, OperationType
from ytsched.simulator.scenario import (
    DurationDistribution,
    ScenarioError,
    ScenarioOperation,
)

TRACE_ERROR = "InvalidTrace"


def trace_error(where: str, message: str) -> ScenarioError:
    return ScenarioError(TRACE_ERROR, f"{where}: {message}", path=where)


class JobResources(ConfigModel):
    """What each job of a task asks the scheduler for (one user slot is implied)."""

    cpu: float = option(1.0, "Cores.", ge=0, allow_inf_nan=False)
    memory: int = option(DEFAULT_JOB_MEMORY, "Bytes of memory.", ge=0)
    gpu: int = option(0, "GPUs.", ge=0)
    network: int = option(0, "Network units.", ge=0)


class TraceTask(ConfigModel):
    """The jobs of one task: their count, resources, durations and interruption behaviour."""

    job_count: int | None = option(
        None, "Number of jobs; default: the length of job_durations.", ge=1
    )
    resources: JobResources = option(JobResources(), "Resources of each job.")
    job_durations: tuple[Duration, ...] | None = option(
        None, "How long each job ran (ms), one entry per job."
    )
    job_duration: DurationDistribution | None = option(
        None, "Instead of job_durations: one duration or distribution for every job."
    )
    interruption_signal: str | None = option(
        None, "Signal a vanilla job gets when interrupted (e.g. 'SIGINT')."
    )
    finish_after_interruption: DurationDistribution | None = option(
        None, "How long a job needs to finish after its interruption signal; unset: it ignores it."
    )
    restart_completed_jobs: bool = option(False, "A completed job is started again (services).")


class TraceOperation(ConfigModel):
    """One recorded operation (a JSONL line, or the CSV rows sharing an ``id``)."""

    id: str = option(..., "Operation id.", min_length=1)
    submit_time: Duration = option(..., "When it was submitted (ms from the trace's origin).")
    user: str = option("root", "User who started it.", min_length=1)
    type: OperationType = option("vanilla", "Operation type.")
    pool: str | None = option(None, "Pool requested in the spec; unset: the user's pool.")
    pool_trees: tuple[str, ...] | None = option(None, "Pool trees requested in the spec.")
    spec: dict[str, Any] = option(
        {}, "Other scheduling options of the spec (weight, resource_limits, preemption_mode...)."
    )
    tasks: dict[str, TraceTask] = option(..., "Tasks by name.", min_length=1)
    recorded: dict[str, Any] = option(
        {}, "What the source recorded (start time, state, ...): kept for people, not replayed."
    )

    def scenario_entry(self) -> dict[str, Any]:
        """The operation as a scenario file would write it."""
        spec: dict[str, Any] = dict(self.spec)
        if self.pool is not None:
            spec["pool"] = self.pool
        if self.pool_trees is not None:
            spec["pool_trees"] = list(self.pool_trees)
        tasks: dict[str, Any] = {}
        for name, task in self.tasks.items():
            entry: dict[str, Any] = {
                "cpu_limit": task.resources.cpu,
                "memory_limit": task.resources.memory,
                "gpu_limit": task.resources.gpu,
                "network_limit": task.resources.network,
                "restart_completed_jobs": task.restart_completed_jobs,
            }
            if task.job_durations is not None:
                entry["job_durations"] = list(task.job_durations)
                entry["job_count"] = task.job_count or len(task.job_durations)
            else:
                entry["job_count"] = task.job_count or 1
            if task.job_duration is not None:
                entry["job_duration"] = task.job_duration
            if task.interruption_signal is not None:
                entry["interruption_signal"] = task.interruption_signal
            if task.finish_after_interruption is not None:
                entry["finish_after_interruption"] = task.finish_after_interruption
            tasks[name] = entry
        spec["tasks"] = tasks
        return {
            "id": self.id,
            "start_time": self.submit_time,
            "user": self.user,
            "type": self.type,
            "spec": spec,
        }


def _format_errors(error: ValidationError) -> str:
    item = error.errors(include_url=False)[0]
    location = ".".join(str(part) for part in item.get("loc", ()))
    message = str(item.get("msg", "invalid value")).removeprefix("Value error, ")
    return f"{location}: {message}" if location else message


def to_scenario_operation(record: Mapping[str, Any], where: str) -> ScenarioOperation:
    """Validate one trace record (a parsed JSONL line) and turn it into a scenario operation;
    errors start with ``where`` (file and line)."""
    if not isinstance(record, Mapping):
        raise trace_error(where, f"expected an object, got {type(record).__name__}")
    try:
        operation = TraceOperation.model_validate(dict(record))
    except ValidationError as error:
        raise trace_error(where, _format_errors(error)) from None
    for key in ("tasks", "pool", "pool_trees"):
        if key in operation.spec:
            raise trace_error(where, f"spec.{key}: write it as the record's own '{key}' field")
    try:
        return ScenarioOperation.model_validate(operation.scenario_entry())
    except ValidationError as error:
        raise trace_error(where, _format_errors(error).replace("spec.tasks.", "tasks.")) from None


# --- reading ---------------------------------------------------------------------------------


def read_trace(path: str | Path) -> tuple[ScenarioOperation, ...]:
    """Read a ``.jsonl`` or ``.csv`` trace (other names: CSV when the first line has commas
    and does not start with ``{``)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise trace_error(str(file), f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise trace_error(str(file), f"not UTF-8 text (byte {error.start})") from None
    return parse_trace(text, source=str(file), kind=_kind(file, text))


def _kind(file: Path, text: str) -> str:
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def parse_trace(text: str, *, source: str, kind: str) -> tuple[ScenarioOperation, ...]:
    """Parse a trace's text; ``kind`` is ``jsonl`` or ``csv``."""
    if kind == "jsonl":
        records = list(_jsonl_records(text, source))
    elif kind == "csv":
        records = _csv_records(text, source)
    else:
        raise trace_error(source, f"unknown trace format {kind!r} (jsonl or csv)")
    operations: list[ScenarioOperation] = []
    seen: dict[str, str] = {}
    for where, record in records:
        operation = to_scenario_operation(record, where)
        assert operation.id is not None
        if operation.id in seen:
            raise trace_error(
                where, f"id: operation {operation.id!r} is also recorded at {seen[operation.id]}"
            )
        seen[operation.id] = where
        operations.append(operation)
    return tuple(operations)


def _jsonl_records(text: str, source: str) -> Iterable[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as error:
            raise trace_error(where, f"not JSON: {error.msg} (column {error.colno})") from None


CSV_COLUMNS = (
    "id",
    "submit_time",
    "user",
    "type",
    "pool",
    "pool_trees",
    "task",
    "job_count",
    "cpu",
    "memory",
    "gpu",
    "network",
    "job_durations",
    "interruption_signal",
    "finish_after_interruption",
    "restart_completed_jobs",
    "spec",
)
"""Columns of a CSV trace, one row per task; only ``id``, ``submit_time`` and ``task`` are
required, with ``job_durations`` or ``job_count``."""

_OPERATION_COLUMNS = ("submit_time", "user", "type", "pool", "pool_trees", "spec")
_TRUE = frozenset({"true", "1", "yes", "%true"})
_FALSE = frozenset({"false", "0", "no", "%false", ""})


def _csv_records(text: str, source: str) -> list[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    unknown = [name for name in header if name not in CSV_COLUMNS]
    if unknown:
        raise trace_error(f"{source}:1", f"unknown columns {unknown} (known: {list(CSV_COLUMNS)})")
    for required in ("id", "submit_time", "task"):
        if required not in header:
            raise trace_error(f"{source}:1", f"missing column {required!r}")
    records: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {}
    for row in reader:
        where = f"{source}:{reader.line_num}"
        if None in row:
            raise trace_error(where, "more fields than columns")
        cells = {key: (value or "").strip() for key, value in row.items() if key is not None}
        operation_id = cells.get("id", "")
        if not operation_id:
            raise trace_error(where, "id: empty")
        if operation_id not in records:
            records[operation_id] = (where, _csv_operation(cells, where), cells)
        else:
            first_where, _, first = records[operation_id]
            for column in _OPERATION_COLUMNS:
                if cells.get(column, "") != first.get(column, ""):
                    raise trace_error(
                        where,
                        f"{column}: {cells.get(column)!r} differs from {first.get(column)!r}"
                        f" on the first row of operation {operation_id!r} ({first_where})",
                    )
        record = records[operation_id][1]
        task = cells["task"]
        if not task:
            raise trace_error(where, "task: empty")
        if task in record["tasks"]:
            raise trace_error(where, f"task: {task!r} appears twice in operation {operation_id!r}")
        record["tasks"][task] = _csv_task(cells, where)
    return [(where, record) for where, record, _ in records.values()]


def _csv_operation(cells: Mapping[str, str], where: str) -> dict[str, Any]:
    record: dict[str, Any] = {"id": cells["id"], "submit_time": cells["submit_time"], "tasks": {}}
    for column in ("user", "type", "pool"):
        if cells.get(column):
            record[column] = cells[column]
    if cells.get("pool_trees"):
        record["pool_trees"] = [tree for tree in cells["pool_trees"].split(";") if tree]
    if cells.get("spec"):
        try:
            record["spec"] = json.loads(cells["spec"])
        except json.JSONDecodeError as error:
            raise trace_error(where, f"spec: not a JSON map: {error.msg}") from None
    return record


def _csv_number(text: str) -> int | float | str:
    """A CSV cell holding a number, as the number (the config models type scalars strictly);
    anything else stays text, for the model to refuse with the field's name."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _csv_task(cells: Mapping[str, str], where: str) -> dict[str, Any]:
    task: dict[str, Any] = {}
    resources = {
        name: _csv_number(cells[name])
        for name in ("cpu", "memory", "gpu", "network")
        if cells.get(name)
    }
    if resources:
        task["resources"] = resources
    if cells.get("job_count"):
        task["job_count"] = _csv_number(cells["job_count"])
    if cells.get("job_durations"):
        task["job_durations"] = [item for item in cells["job_durations"].split(";") if item]
    if cells.get("interruption_signal"):
        task["interruption_signal"] = cells["interruption_signal"]
    response = cells.get("finish_after_interruption", "")
    if response.startswith("{"):
        try:
            task["finish_after_interruption"] = json.loads(response)
        except json.JSONDecodeError as error:
            raise trace_error(
                where, f"finish_after_interruption: not a JSON distribution: {error.msg}"
            ) from None
    elif response:
        task["finish_after_interruption"] = response
    flag = cells.get("restart_completed_jobs", "").lower()
    if flag in _TRUE:
        task["restart_completed_jobs"] = True
    elif flag not in _FALSE:
        raise trace_error(where, f"restart_completed_jobs: expected true or false, got {flag!r}")
    if "job_durations" not in task and "job_count" in task:
        raise trace_error(where, "job_durations: a CSV task needs its jobs' durations")
    return task


# --- writing ---------------------------------------------------------------------------------


def write_jsonl(records: Sequence[Mapping[str, Any]]) -> str:
    """Trace records as JSONL text, one compact object per line, keys in record order."""
    return "".join(json.dumps(record, separators=(", ", ": ")) + "\n" for record in records)


def write_csv(records: Sequence[Mapping[str, Any]]) -> str:
    """Trace records as CSV text (one row per task); ``recorded`` is dropped."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        for name, task in record["tasks"].items():
            resources = task.get("resources", {})
            durations = task.get("job_durations")
            response = task.get("finish_after_interruption")
            if isinstance(response, Mapping):
                response = json.dumps(response)
            writer.writerow(
                {
                    "id": record["id"],
                    "submit_time": record["submit_time"],
                    "user": record.get("user", ""),
                    "type": record.get("type", ""),
                    "pool": record.get("pool") or "",
                    "pool_trees": ";".join(record.get("pool_trees") or ()),
                    "task": name,
                    "job_count": task.get("job_count", ""),
                    "cpu": resources.get("cpu", ""),
                    "memory": resources.get("memory", ""),
                    "gpu": resources.get("gpu", ""),
                    "network": resources.get("network", ""),
                    "job_durations": ";".join(str(d) for d in durations) if durations else "",
                    "interruption_signal": task.get("interruption_signal") or "",
                    "finish_after_interruption": response if response is not None else "",
                    "restart_completed_jobs": "true" if task.get("restart_completed_jobs") else "",
                    "spec": json.dumps(record["spec"]) if record.get("spec") else "",
                }
            )
    return out.getvalue()
