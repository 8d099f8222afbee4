"""Convert YTsaurus's own records into a trace: ``list_operations`` plus ``list_jobs`` output.

An operator exports a period of a real cluster with the official client::

    yt list-operations --from-time ... --to-time ... --include-archive \\
        --attribute id --attribute type --attribute state --attribute authenticated_user \\
        --attribute start_time --attribute finish_time --attribute spec > operations.yson
    yt list-jobs --operation-id <id> --include-archive > jobs/<id>.yson     # per operation
    # (or pages: --limit/--offset into jobs/<id>/1.yson, jobs/<id>/2.yson, ...)

(pretty YSON, the client's default, or ``--format json``), and :func:`convert` turns that into
trace records (:mod:`ytsched.simulator.trace`).  What is read, and from where:

* ``list_operations`` (``yt/yt/client/api/operation_client.h``; attribute names from
  ``SupportedOperationAttributes`` in ``yt/yt/ytlib/api/native/client_operations_impl.cpp``):
  ``id``, ``type`` (or the older ``operation_type``), ``authenticated_user``, ``start_time``
  (the submit time) and ``spec``: its ``pool``, ``pool_trees``, the scheduling options
  ytsched models (weight, resource limits, preemption mode, ...), and the per-job resources of
  the user job of each task (``cpu_limit``, ``memory_limit``, ``gpu_limit``,
  ``network_limit`` of ``tasks/<name>``, ``mapper``, ``reducer`` or ``reduce_combiner``,
  with YTsaurus's defaults 1 core and 512 MiB, ``yt/yt/server/lib/scheduler/config.h``,
  ``TUserJobSpec``).  Without ``spec``, ``brief_spec/pool`` names the pool.
* ``list_jobs`` (one output per operation; the operation is the job's ``operation_id`` when
  requested with ``--attribute operation_id``, else the file's name, else its directory's name
  for pages in ``jobs/<id>/``): ``type``, ``state``,
  ``task_name``, ``start_time``, ``finish_time``.  Completed jobs become the trace's jobs,
  with their run time; running jobs run until the end of the recording (a lower bound);
  aborted, failed and lost jobs are not replayed (the simulated scheduler makes its own
  aborts), only counted in the report.

Jobs are grouped into tasks by ``task_name`` (or their job type when it is missing); jobs of
types without user code (sort, merge, partition) ask for the defaults (1 core, 512 MiB).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from pydantic import ValidationError

from ytsched.config.operation import DEFAULT_JOB_MEMORY, OperationSpec
from ytsched.simulator.scenario import ScenarioError
from ytsched.simulator.trace import to_scenario_operation, trace_error
from ytsched.yson import WithAttributes

USER_JOB_SPEC = {
    "map": "mapper",
    "ordered_map": "mapper",
    "partition_map": "mapper",
    "sorted_reduce": "reducer",
    "partition_reduce": "reducer",
    "join_reduce": "reducer",
    "reduce_combiner": "reduce_combiner",
}
"""Job type (``EJobType``, ``yt/yt/ytlib/scheduler/public.h``) -> the spec section of its
user job; vanilla jobs take ``tasks/<task_name>``."""

SCHEDULING_SPEC_KEYS = (
    "weight",
    "resource_limits",
    "scheduling_tag_filter",
    "scheduling_options_per_pool_tree",
    "preemption_mode",
    "allocation_preemption_timeout",
    "allocation_graceful_preemption_timeout",
    "fair_share_starvation_timeout",
    "fair_share_starvation_tolerance",
    "max_unpreemptible_job_count",
    "non_preemptible_resource_usage_threshold",
    "is_gang",
)
"""Spec options the scheduler reads and the trace keeps (the rest is about data and code)."""

REPLAYED_STATES = frozenset({"completed"})
RUNNING_STATES = frozenset({"running", "waiting", "aborting", "completing"})


@dataclass(slots=True)
class ConversionReport:
    """What the conversion kept and dropped, for the operator to check."""

    operations_read: int = 0
    operations_written: int = 0
    jobs_written: int = 0
    jobs_by_state: Counter[str] = field(default_factory=Counter)
    jobs_without_times: int = 0
    """Completed or running jobs without a start (or finish) time: not replayed."""
    skipped: dict[str, list[str]] = field(default_factory=dict)
    """Reason -> operation ids not written."""
    dropped_options: dict[str, list[str]] = field(default_factory=dict)
    """Operation id -> spec options ytsched refused (written without them)."""
    origin: str | None = None
    """Timestamp of submit time 0 (the earliest operation start)."""
    end: str | None = None
    """End of the recording (where running jobs stop)."""

    def skip(self, reason: str, operation_id: str) -> None:
        self.skipped.setdefault(reason, []).append(operation_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operations_read": self.operations_read,
            "operations_written": self.operations_written,
            "jobs_written": self.jobs_written,
            "jobs_by_state": dict(sorted(self.jobs_by_state.items())),
            "jobs_without_times": self.jobs_without_times,
            "skipped": {reason: ids for reason, ids in sorted(self.skipped.items())},
            "dropped_options": self.dropped_options,
            "origin": self.origin,
            "end": self.end,
        }


def parse_time(value: object, where: str) -> datetime:
    """A YTsaurus timestamp (``2024-05-14T10:21:33.123456Z``, ISO 8601 in UTC)."""
    if not isinstance(value, str):
        raise trace_error(where, f"expected a timestamp string, got {value!r}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise trace_error(where, f"cannot parse timestamp {value!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _plain(value: Any) -> Any:
    """Drop YSON attributes and the unsigned wrapper (``1u``) so values compare and dump."""
    if isinstance(value, WithAttributes):
        return _plain(value.value)
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value


def _operations(document: Any, source: str) -> list[dict[str, Any]]:
    document = _plain(document)
    if isinstance(document, Mapping) and "operations" in document:
        document = document["operations"]
    if not isinstance(document, list):
        raise trace_error(source, "expected list_operations output (a map with 'operations')")
    for index, item in enumerate(document):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise trace_error(f"{source}: operations[{index}]", "expected an operation with an id")
    return list(document)


def _jobs(document: Any, source: str) -> list[dict[str, Any]]:
    document = _plain(document)
    if isinstance(document, Mapping) and "jobs" in document:
        document = document["jobs"]
    if not isinstance(document, list):
        raise trace_error(source, "expected list_jobs output (a map with 'jobs')")
    for index, item in enumerate(document):
        if not isinstance(item, Mapping):
            raise trace_error(f"{source}: jobs[{index}]", "expected a job map")
    return list(document)


def _user_job(spec: Mapping[str, Any], job_type: str, task: str) -> Mapping[str, Any] | None:
    if job_type == "vanilla":
        tasks = spec.get("tasks")
        found = tasks.get(task) if isinstance(tasks, Mapping) else None
        return found if isinstance(found, Mapping) else None
    key = USER_JOB_SPEC.get(job_type)
    section = spec.get(key) if key is not None else None
    return section if isinstance(section, Mapping) else None


def _resources(user_job: Mapping[str, Any] | None) -> dict[str, Any]:
    job = user_job or {}
    return {
        "cpu": job.get("cpu_limit", 1.0),
        "memory": job.get("memory_limit", DEFAULT_JOB_MEMORY),
        "gpu": job.get("gpu_limit", 0),
        "network": job.get("network_limit", 0),
    }


def _scheduling_spec(
    spec: Mapping[str, Any], operation_id: str, report: ConversionReport
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in SCHEDULING_SPEC_KEYS:
        if key not in spec:
            continue
        value = spec[key]
        if key == "scheduling_options_per_pool_tree" and isinstance(value, Mapping):
            allowed = ("pool", "weight", "resource_limits", "scheduling_tag_filter")
            value = {
                tree: {k: v for k, v in options.items() if k in allowed}
                for tree, options in value.items()
                if isinstance(options, Mapping)
            }
        try:
            OperationSpec.model_validate({key: value})
        except ValidationError:
            report.dropped_options.setdefault(operation_id, []).append(key)
            continue
        kept[key] = value
    return kept


def convert(
    operations: Sequence[tuple[str, Any]],
    jobs: Sequence[tuple[str, Any]],
    *,
    finish_after_interruption: int | None = None,
    end: datetime | None = None,
    include_running: bool = True,
) -> tuple[list[dict[str, Any]], ConversionReport]:
    """Trace records from ``(source name, parsed document)`` pairs of ``list_operations``
    and ``list_jobs`` output.  ``finish_after_interruption`` (ms) is given to every task that
    can take an interruption (vanilla tasks with a signal, tasks of other operation types);
    ``end`` is where running jobs stop (default: the latest time in the records)."""
    report = ConversionReport()
    by_id: dict[str, dict[str, Any]] = {}
    for source, document in operations:
        for operation in _operations(document, source):
            by_id.setdefault(operation["id"], operation)
    report.operations_read = len(by_id)
    jobs_of: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for source, document in jobs:
        stem = PurePath(source).stem
        if stem not in by_id:
            stem = PurePath(source).parent.name  # pages in jobs/<operation id>/
        for index, job in enumerate(_jobs(document, source)):
            operation_id = job.get("operation_id", stem)
            if operation_id not in by_id:
                raise trace_error(
                    f"{source}: jobs[{index}]",
                    f"job of operation {operation_id!r}, which is not in the list_operations"
                    " output (name the file <operation id>.yson or request --attribute"
                    " operation_id)",
                )
            jobs_of.setdefault(operation_id, []).append((f"{source}: jobs[{index}]", job))
    latest = _latest_time(by_id.values(), jobs_of)
    stop = end if end is not None else latest
    starts = {
        operation_id: parse_time(operation.get("start_time"), f"operation {operation_id}")
        for operation_id, operation in by_id.items()
    }
    records: list[tuple[datetime, str, dict[str, Any]]] = []
    for operation_id, operation in by_id.items():
        record = _record(
            operation,
            jobs_of.get(operation_id, []),
            report,
            stop=stop,
            include_running=include_running,
            finish_after_interruption=finish_after_interruption,
        )
        if record is None:
            continue
        try:
            to_scenario_operation(record, f"operation {operation_id}")
        except ScenarioError as error:
            # One operation ytsched cannot replay (an option it refuses in a task, say)
            # must not cost the operator the rest of the week: skip it, say why.
            report.skip(f"not replayable: {error.message}", operation_id)
            report.jobs_written -= sum(len(t["job_durations"]) for t in record["tasks"].values())
            continue
        records.append((starts[operation_id], operation_id, record))
    records.sort(key=lambda item: (item[0], item[1]))
    if records:
        origin = records[0][0]
        report.origin = origin.isoformat()
        for start, _, record in records:
            record["submit_time"] = round((start - origin).total_seconds() * 1000)
    report.end = stop.isoformat() if stop is not None else None
    report.operations_written = len(records)
    return [record for _, _, record in records], report


def _latest_time(
    operations: Iterable[Mapping[str, Any]],
    jobs_of: Mapping[str, list[tuple[str, dict[str, Any]]]],
) -> datetime | None:
    latest: datetime | None = None
    stamps: list[tuple[str, Any]] = []
    for operation in operations:
        where = f"operation {operation['id']}"
        stamps += [(where, operation.get(key)) for key in ("start_time", "finish_time")]
    for entries in jobs_of.values():
        for where, job in entries:
            stamps += [(where, job.get(key)) for key in ("start_time", "finish_time")]
    for where, value in stamps:
        if value is None:
            continue
        moment = parse_time(value, where)
        if latest is None or moment > latest:
            latest = moment
    return latest


def _record(
    operation: Mapping[str, Any],
    jobs: Sequence[tuple[str, Mapping[str, Any]]],
    report: ConversionReport,
    *,
    stop: datetime | None,
    include_running: bool,
    finish_after_interruption: int | None,
) -> dict[str, Any] | None:
    operation_id = operation["id"]
    operation_type = operation.get("type", operation.get("operation_type", "vanilla"))
    spec = operation.get("spec")
    if not isinstance(spec, Mapping):
        spec = {}
    brief = operation.get("brief_spec")
    tasks: dict[str, dict[str, Any]] = {}
    durations: dict[str, list[tuple[datetime, str, int]]] = {}
    for where, job in jobs:
        state = str(job.get("state", "unknown"))
        report.jobs_by_state[state] += 1
        if state not in REPLAYED_STATES and not (include_running and state in RUNNING_STATES):
            continue
        start = job.get("start_time")
        if start is None or (state in REPLAYED_STATES and job.get("finish_time") is None):
            report.jobs_without_times += 1
            continue
        started = parse_time(start, f"{where}.start_time")
        if state in REPLAYED_STATES:
            finished = parse_time(job.get("finish_time"), f"{where}.finish_time")
        elif stop is not None:
            finished = max(stop, started)
        else:
            continue
        job_type = str(job.get("type", operation_type))
        task = str(job.get("task_name") or job_type)
        if task not in tasks:
            user_job = _user_job(spec, job_type, task)
            entry: dict[str, Any] = {"resources": _resources(user_job)}
            signal = (user_job or {}).get("interruption_signal") if job_type == "vanilla" else None
            if signal is not None:
                entry["interruption_signal"] = signal
            interruptible = signal is not None or operation_type != "vanilla"
            if finish_after_interruption is not None and interruptible:
                entry["finish_after_interruption"] = finish_after_interruption
            if job_type == "vanilla" and (user_job or {}).get("restart_completed_jobs"):
                entry["restart_completed_jobs"] = True
            tasks[task] = entry
            durations[task] = []
        milliseconds = max(0, round((finished - started).total_seconds() * 1000))
        durations[task].append((started, str(job.get("id", "")), milliseconds))
    if not tasks:
        report.skip("no completed or running jobs", operation_id)
        return None
    for task, entries in durations.items():
        entries.sort()
        tasks[task]["job_durations"] = [milliseconds for _, _, milliseconds in entries]
        report.jobs_written += len(entries)
    record: dict[str, Any] = {
        "id": operation_id,
        "submit_time": 0,
        "user": operation.get("authenticated_user", "root"),
        "type": operation_type,
    }
    pool = spec.get("pool")
    if pool is None and isinstance(brief, Mapping):
        pool = brief.get("pool")
    if pool is not None:
        record["pool"] = pool
    if isinstance(spec.get("pool_trees"), list):
        record["pool_trees"] = spec["pool_trees"]
    scheduling = _scheduling_spec(spec, operation_id, report)
    if scheduling:
        record["spec"] = scheduling
    record["tasks"] = {name: tasks[name] for name in sorted(tasks)}
    recorded = {
        key: operation[key] for key in ("start_time", "finish_time", "state") if key in operation
    }
    if recorded:
        record["recorded"] = recorded
    return record
