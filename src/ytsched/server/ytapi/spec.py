"""Operation specs from YTsaurus clients: keep what ytsched schedules, report the rest.

The official client fills specs with keys ytsched does not model (``started_by``, task
``file_paths`` and ``environment``, ``stderr_table_path``, ...).  YTsaurus itself does not refuse
unknown spec keys: it starts the operation and lists them in the operation's
``unrecognized_spec`` attribute (``yt/yt/server/scheduler/operation.cpp``), which the client
logs.  We do the same at the top level and in each task; inside known options (``resource_limits``,
``scheduling_options_per_pool_tree/<tree>``) validation stays strict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ytsched.config.operation import OperationSpec, TaskSpec
from ytsched.server.operations import SERVER_SPEC_KEYS

UNRECOGNIZED = "unrecognized_spec"


def _names(model: type[BaseModel]) -> frozenset[str]:
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(name)
        if field.alias:
            names.add(field.alias)
        choices = getattr(field.validation_alias, "choices", None)
        if choices:
            names.update(str(choice) for choice in choices)
    return frozenset(names)


SPEC_KEYS = _names(OperationSpec) | SERVER_SPEC_KEYS
TASK_KEYS = _names(TaskSpec)


def split_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec with unknown keys moved under ``unrecognized_spec``."""
    known: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "tasks" and isinstance(value, Mapping):
            tasks: dict[str, Any] = {}
            for name, task in value.items():
                if not isinstance(task, Mapping):
                    tasks[name] = task
                    continue
                tasks[name] = {k: v for k, v in task.items() if k in TASK_KEYS}
                extra = {k: v for k, v in task.items() if k not in TASK_KEYS}
                if extra:
                    unknown.setdefault("tasks", {})[name] = extra
            known["tasks"] = tasks
        elif key in SPEC_KEYS:
            known[key] = value
        else:
            unknown[key] = value
    if unknown:
        known[UNRECOGNIZED] = unknown
    return known
