"""The YTsaurus API v4 commands ytsched answers, each a thin adapter over our own commands.

Every command has the descriptor YTsaurus registers for it (``yt/yt/client/driver/driver.cpp``:
input and output type, volatile, heavy), which ``GET /api/v4`` publishes and from which the
client chooses the HTTP method (``GET`` for reads, ``POST`` for volatile commands, ``PUT`` for
commands with input).  In v4 every command answers a map (``{}`` for commands that return
nothing, ``{"value": ...}`` for ``get`` / ``list`` / ``exists`` unless ``return_only_value``).
The implementations are the ones our own API uses (:mod:`ytsched.server.cypress`,
:mod:`ytsched.server.operations`, ...): this module only renames parameters and shapes results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ytsched.errors import YtschedError
from ytsched.server import cypress, operations, pool_objects, pool_transfer
from ytsched.server.cluster import iso
from ytsched.server.errors import ApiError
from ytsched.server.ypath import parse
from ytsched.server.ytapi.spec import UNRECOGNIZED, split_spec
from ytsched.server.ytapi.wire import convert_errors, plain

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster


@dataclass(slots=True)
class Call:
    """One command invocation: who, with which parameters and input, on which server."""

    cluster: Cluster
    user: str
    params: dict[str, Any]
    input: Any = None
    proxy: str = ""

    def get(self, name: str, default: Any = None) -> Any:
        return plain(self.params.get(name, default))

    def require(self, name: str) -> Any:
        if name not in self.params or self.params[name] is None:
            raise ApiError(
                "InvalidArgument", f"missing required parameter {name!r}", parameter=name
            )
        return self.get(name)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name, default)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, int):
            return bool(value)
        raise ApiError("InvalidArgument", f"parameter {name!r} must be a boolean", parameter=name)

    def integer(self, name: str, default: int) -> int:
        value = self.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ApiError("InvalidArgument", f"parameter {name!r} must be an integer")
        try:
            return int(value)
        except ValueError:
            raise ApiError("InvalidArgument", f"parameter {name!r} must be an integer") from None

    def strings(self, name: str) -> list[str] | None:
        value = self.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ApiError("InvalidArgument", f"parameter {name!r} must be a list of strings")
        return value

    def operation_id(self) -> str:
        value = self.get("operation_id") or self.get("operation_alias")
        if value is None:
            raise ApiError("InvalidArgument", "operation_id or operation_alias is required")
        return str(value)


Handler = Callable[[Call], Any]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    input_type: str | None
    output_type: str | None
    is_volatile: bool
    is_heavy: bool
    handler: Handler

    def descriptor(self) -> dict[str, Any]:
        """The entry of ``GET /api/v4`` (``null`` types are the string ``"null"``)."""
        return {
            "name": self.name,
            "input_type": self.input_type or "null",
            "output_type": self.output_type or "null",
            "is_volatile": self.is_volatile,
            "is_heavy": self.is_heavy,
        }


# --- Cypress ------------------------------------------------------------------------------------


def _value(call: Call, value: Any) -> Any:
    return value if call.flag("return_only_value") else {"value": value}


def _get(call: Call) -> Any:
    value = cypress.get(
        call.cluster,
        call.user,
        call.require("path"),
        call.strings("attributes"),
        call.strings("fields"),
    )
    return _value(call, value)


def _list(call: Call) -> Any:
    value = cypress.list_(call.cluster, call.user, call.require("path"), call.strings("attributes"))
    return _value(call, value)


def _exists(call: Call) -> Any:
    return {"value": cypress.exists(call.cluster, call.user, call.require("path"))}


def _set(call: Call) -> Any:
    cypress.set_(call.cluster, call.user, call.require("path"), call.input)
    return {}


PLAIN_NODE_TYPES = ("map_node", "document")


def _create(call: Call) -> Any:
    object_type = call.require("type")
    path = call.get("path")
    attributes = call.get("attributes") or {}
    ignore_existing = call.flag("ignore_existing") or call.flag("force")
    if object_type in PLAIN_NODE_TYPES:
        # ytsched has no general Cypress: the nodes it serves (trees, //sys/scheduler/...)
        # always exist, so creating one answers as YTsaurus does for an existing node.
        if path is not None and cypress.exists(call.cluster, call.user, path):
            if ignore_existing:
                return {"node_id": str(path)}
            raise ApiError("AlreadyExists", f"node {path} already exists", path=str(path))
        raise ApiError(
            "NotSupported",
            f"cannot create a {object_type} at {path!r}: ytsched keeps no general Cypress"
            " (create scheduler_pool_tree / scheduler_pool objects instead)",
        )
    object_id = cypress.create(
        call.cluster, call.user, object_type, path, attributes, ignore_existing
    )
    return {"node_id": object_id} if path is not None else {"object_id": object_id}


def _remove(call: Call) -> Any:
    cypress.remove(
        call.cluster, call.user, call.require("path"), call.flag("recursive"), call.flag("force")
    )
    return {}


def _move(call: Call) -> Any:
    """``move`` of a pool inside its tree: a new parent and/or a new name."""
    source = parse(call.require("source_path"))
    destination = parse(call.require("destination_path"))
    cluster = call.cluster
    src_names = cypress._pool_tree_names(cluster, source)
    dst_names = cypress._pool_tree_names(cluster, destination)
    if (
        src_names is None
        or dst_names is None
        or len(src_names) < 2
        or len(dst_names) < 2
        or source.attribute is not None
        or destination.attribute is not None
    ):
        raise ApiError("NotSupported", "move is supported for pools under //sys/pool_trees only")
    if src_names[0] != dst_names[0]:
        raise ApiError("NotSupported", "a pool cannot move to another pool tree")
    target = pool_objects.resolve(cluster, source, src_names)
    parent = pool_objects.resolve(cluster, destination, dst_names[:-1])
    assert target.pool is not None
    new_name = dst_names[-1]
    if cypress.exists(cluster, call.user, destination.text):
        raise ApiError("AlreadyExists", f"{destination.text} already exists", path=destination.text)
    names = tuple(src_names)
    tree = cluster.tree(names[0])

    def at(names: tuple[str, ...], attribute: str) -> Any:
        escaped = "/".join(cypress._escape(name) for name in names)
        return parse(f"//sys/pool_trees/{escaped}/@{attribute}")

    old_parent = tree.pool(target.pool).parent_name or "<Root>"
    wanted = parent.pool or "<Root>"
    if old_parent != wanted:
        pool_objects.set_value(cluster, call.user, at(names, "parent_name"), names, wanted)
        names = (*dst_names[:-1], target.pool)
    if new_name != target.pool:
        try:
            pool_objects.set_value(cluster, call.user, at(names, "name"), names, new_name)
        except YtschedError:
            if old_parent != wanted:  # all or nothing: a refused rename puts the pool back
                pool_objects.set_value(
                    cluster, call.user, at(names, "parent_name"), names, old_parent
                )
            raise
    return {"node_id": destination.text}


def _check_permission(call: Call) -> Any:
    user, permission, path = call.require("user"), call.require("permission"), call.require("path")
    if isinstance(path, str) and path.startswith("//sys/users/"):
        action = _user_permission(call, user, path[len("//sys/users/") :])
    else:
        action = cypress.check_permission(call.cluster, user, permission, path)
    return {"action": action, "subject_name": user}


def _user_permission(call: Call, user: object, name: str) -> str:
    """Permissions on ``//sys/users/<name>``: superusers administer users, nobody else.

    The ``yt`` CLI asks this (``administer``) before ``issue-token`` to decide whether it must
    prompt for a password; ytsched keeps users, not a general ``//sys/users`` map.
    """
    auth = call.cluster.auth
    for who in (user, name):
        if not isinstance(who, str) or who not in auth.users:
            raise ApiError("NoSuchUser", f"user {who!r} does not exist", user=str(who))
    assert isinstance(user, str)
    return "allow" if auth.is_superuser(user) else "deny"


def _get_current_user(call: Call) -> Any:
    return {"user": call.user}


# --- operations ---------------------------------------------------------------------------------


def _start_operation(call: Call) -> Any:
    spec = call.require("spec")
    if not isinstance(spec, Mapping):
        raise ApiError("InvalidArgument", "spec must be a map")
    operation_type = call.get("operation_type", "vanilla")
    if operation_type != "vanilla":
        raise ApiError(
            "NotSupported",
            f"operation type {operation_type!r} is not supported: ytsched runs vanilla"
            " operations (it has no tables to map over)",
        )
    # YTsaurus clients send a mutation id with every mutating command and repeat it when they
    # retry: a repeated start returns the operation the first one started.
    mutation_id = call.get("mutation_id")
    op_id = operations.start_operation(
        call.cluster,
        call.user,
        operation_type,
        split_spec(spec),
        mutation_id if isinstance(mutation_id, str) and mutation_id else None,
    )
    return {"operation_id": op_id}


def _abort_operation(call: Call) -> Any:
    operations.abort_operation(
        call.cluster, call.user, call.operation_id(), call.get("abort_message")
    )
    return {}


def _suspend_operation(call: Call) -> Any:
    operations.suspend_operation(
        call.cluster, call.user, call.operation_id(), call.flag("abort_running_jobs")
    )
    return {}


def _resume_operation(call: Call) -> Any:
    operations.resume_operation(call.cluster, call.user, call.operation_id())
    return {}


def _complete_operation(call: Call) -> Any:
    operations.complete_operation(call.cluster, call.user, call.operation_id())
    return {}


def _update_operation_parameters(call: Call) -> Any:
    operations.update_parameters(
        call.cluster, call.user, call.operation_id(), call.require("parameters")
    )
    return {}


def operation_attributes(call: Call, op_id: str) -> dict[str, Any]:
    """An operation as ``get_operation`` shows it, with integer error codes."""
    record = call.cluster.record(operations.resolve_id(call.cluster, op_id))
    view = operations.operation_view(call.cluster, record)
    view["unrecognized_spec"] = record.row.spec.get(UNRECOGNIZED, {})
    view["spec"] = {k: v for k, v in record.row.spec.items() if k != UNRECOGNIZED}
    view["brief_spec"] = {"pool": view.get("pool"), "title": record.row.spec.get("title")}
    # The client logs progress only when it carries a build time newer than the last one.
    build_time = iso(call.cluster.now())
    for key in ("brief_progress", "progress"):
        progress = view.get(key)
        if isinstance(progress, dict):
            jobs = dict(progress.get("jobs") or {})
            # The client's progress line reads every one of these counters.
            for counter in ("running", "completed", "pending", "failed", "aborted", "lost"):
                jobs.setdefault(counter, 0)
            if jobs.get("total") is None:
                jobs["total"] = 0
            view[key] = {**progress, "jobs": jobs, "build_time": build_time}
    return convert_errors(view)  # type: ignore[no-any-return]


def _get_operation(call: Call) -> Any:
    view = operation_attributes(call, call.operation_id())
    attributes = call.strings("attributes")
    if attributes is not None:
        view = {key: view[key] for key in attributes if key in view}
    return view


def _summary(record: Any) -> dict[str, Any]:
    """What ``list_operations`` filters and counts by, read from the record alone (the job
    counts of a full view cost a query per operation; only the returned page needs them)."""
    row = record.row
    per_tree = row.runtime.get("scheduling_options_per_pool_tree", {})
    return {
        "id": row.id,
        "user": row.user,
        "state": row.state,
        "type": row.type,
        "pool": next((o.get("pool") for o in per_tree.values()), row.spec.get("pool")),
        "pool_trees": sorted(per_tree),
        "start_time": iso(row.start_time),
    }


def _list_operations(call: Call) -> Any:
    cluster = call.cluster
    user, state, pool = call.get("user"), call.get("state"), call.get("pool")
    op_type, pool_tree, text = call.get("type"), call.get("pool_tree"), call.get("filter")
    limit = call.integer("limit", 100)
    if not 1 <= limit <= 1000:
        raise ApiError("InvalidArgument", "limit must be between 1 and 1000")
    cursor = call.get("cursor_time")
    direction = call.get("cursor_direction", "past")
    records = sorted(
        cluster.operations.values(),
        key=lambda r: r.row.start_time,
        reverse=direction != "future",
    )
    by_id = {record.row.id: record for record in records}
    views = [_summary(record) for record in records]

    def matches(view: dict[str, Any], *, skip: str = "") -> bool:
        if user is not None and skip != "user" and view["user"] != user:
            return False
        if state is not None and skip != "state" and view["state"] != state:
            return False
        if pool is not None and skip != "pool" and view["pool"] != pool:
            return False
        if op_type is not None and skip != "type" and view["type"] != op_type:
            return False
        if pool_tree is not None and pool_tree not in view["pool_trees"]:
            return False
        if text and str(text).lower() not in f"{view['id']} {view['user']} {view['pool']}".lower():
            return False
        if cursor is not None and view["start_time"] is not None:
            before = view["start_time"] < cursor
            return before if direction != "future" else not before
        return True

    def counts(key: str) -> dict[str, int]:
        result: dict[str, int] = {}
        for view in views:
            if matches(view, skip=key):
                name = str(view[key])
                result[name] = result.get(name, 0) + 1
        return result

    selected = [v for v in views if matches(v)]
    attributes = call.strings("attributes")
    page = [
        convert_errors(operations.operation_view(cluster, by_id[v["id"]], brief=True))
        for v in selected[:limit]
    ]
    if attributes is not None:
        page = [{k: v[k] for k in attributes if k in v} for v in page]
    result: dict[str, Any] = {"operations": page, "incomplete": len(selected) > limit}
    if call.flag("include_counters", True):
        result.update(
            {
                "pool_counts": counts("pool"),
                "user_counts": counts("user"),
                "state_counts": counts("state"),
                "type_counts": counts("type"),
                "failed_jobs_count": 0,
            }
        )
    return result


# --- jobs ---------------------------------------------------------------------------------------


def _job(view: dict[str, Any], row: Any) -> dict[str, Any]:
    """A job as YTsaurus lists it: integer error codes, ``type``, ``stderr_size``."""
    job = convert_errors(view)
    assert isinstance(job, dict)
    job.setdefault("type", "vanilla")
    job.setdefault("job_type", "vanilla")
    stderr = getattr(row, "stderr", None)
    if stderr:
        job["stderr_size"] = len(stderr.encode("utf-8"))
    return job


def _list_jobs(call: Call) -> Any:
    op_id = operations.resolve_id(call.cluster, call.operation_id())
    result = operations.list_jobs(
        call.cluster, op_id, call.get("job_state"), call.integer("limit", 1000)
    )
    rows = {row.id: row for row in call.cluster.store.jobs_of(op_id)}
    jobs = [_job(job, rows.get(job["id"])) for job in result["jobs"]]
    if call.get("with_stderr") is not None:
        wanted = call.flag("with_stderr")
        jobs = [job for job in jobs if bool(job.get("stderr_size")) == wanted]
    counts: dict[str, int] = {}
    for job in jobs:
        counts[str(job.get("state"))] = counts.get(str(job.get("state")), 0) + 1
    return {
        "jobs": jobs,
        "state_counts": counts,
        "type_counts": {"vanilla": len(jobs)},
        "cypress_job_count": None,
        "controller_agent_job_count": len(jobs),
        "archive_job_count": None,
        "errors": [],
    }


def _get_job(call: Call) -> Any:
    job_id = call.require("job_id")
    view = operations.get_job(call.cluster, job_id)
    return _job(view, call.cluster.store.job(view["id"]))


def _get_job_stderr(call: Call) -> Any:
    text = operations.get_job_output(call.cluster, call.require("job_id"), "stderr")
    return text.encode("utf-8")


def _abort_job(call: Call) -> Any:
    timeout = call.get("interrupt_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        raise ApiError("InvalidArgument", "interrupt_timeout must be an integer (ms)")
    operations.abort_job(call.cluster, call.user, call.require("job_id"), timeout)
    return {}


# --- pools, discovery ---------------------------------------------------------------------------


def _transfer_pool_resources(call: Call) -> Any:
    pool_transfer.transfer(
        call.cluster,
        call.user,
        call.require("pool_tree"),
        call.require("source_pool"),
        call.require("destination_pool"),
        call.require("resource_delta"),
    )
    return {}


def _issue_token(call: Call) -> Any:
    """A new token for ``user`` (superusers only: ytsched keeps no passwords)."""
    call.cluster.auth.require_superuser(call.user, "issuing tokens")
    return call.cluster.auth.issue_token(str(call.require("user")))


def _discover_proxies(call: Call) -> Any:
    return {"proxies": [call.proxy]}


def _get_version(call: Call) -> Any:
    from ytsched import __version__

    return {"version": f"ytsched-{__version__}"}


COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command("get", None, "structured", False, False, _get),
        Command("list", None, "structured", False, False, _list),
        Command("exists", None, "structured", False, False, _exists),
        Command("set", "structured", "structured", True, False, _set),
        Command("create", None, "structured", True, False, _create),
        Command("remove", None, "structured", True, False, _remove),
        Command("move", None, "structured", True, False, _move),
        Command("check_permission", None, "structured", False, False, _check_permission),
        Command("start_operation", None, "structured", True, False, _start_operation),
        Command("abort_operation", None, "structured", True, False, _abort_operation),
        Command("suspend_operation", None, "structured", True, False, _suspend_operation),
        Command("resume_operation", None, "structured", True, False, _resume_operation),
        Command("complete_operation", None, "structured", True, False, _complete_operation),
        Command(
            "update_operation_parameters",
            None,
            "structured",
            True,
            False,
            _update_operation_parameters,
        ),
        Command("get_operation", None, "structured", False, False, _get_operation),
        Command("list_operations", None, "structured", False, False, _list_operations),
        Command("list_jobs", None, "structured", False, False, _list_jobs),
        Command("get_job", None, "structured", False, False, _get_job),
        Command("get_job_stderr", None, "binary", False, True, _get_job_stderr),
        Command("abort_job", None, "structured", False, False, _abort_job),
        Command(
            "transfer_pool_resources", None, "structured", True, False, _transfer_pool_resources
        ),
        Command("issue_token", None, "structured", True, False, _issue_token),
        Command("get_current_user", None, "structured", False, False, _get_current_user),
        Command("discover_proxies", None, "structured", False, False, _discover_proxies),
        Command("get_version", None, "structured", False, False, _get_version),
    )
}
