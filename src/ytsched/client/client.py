"""``Client(url, token)``: the service's commands as methods with YTsaurus names.

Methods mirror the YTsaurus Python client and its test library (``get``, ``set``, ``list``,
``exists``, ``create("scheduler_pool", attributes=...)``, ``remove``, ``start_op``,
``run_vanilla``, ``abort_op``, ``get_operation``, ``list_jobs``, ...).  A refused request raises
:class:`ResponseError` carrying the service's error code, message and attributes.

Without arguments the URL and token come from ``YTSCHED_PROXY`` and ``YTSCHED_TOKEN``.

Several URLs (comma-separated) name instances that share one store: a standby answers
``NotLeader`` with the leader's URL and the client follows it; an instance that cannot be
reached is skipped.  A command is sent again only when the first attempt certainly did nothing
(a ``NotLeader`` answer, a refused connection), when it only reads, or when it carries a
``mutation_id`` (``start_op`` does): the server answers a repeated mutation id with the operation
the first attempt started, so an operation never starts twice.
"""

from __future__ import annotations

import builtins
import os
import time
import uuid
from collections.abc import Mapping
from typing import Any

import httpx

from ytsched.errors import YtschedError

FINAL_STATES = ("completed", "failed", "aborted")
_MISSING: Any = object()


class ResponseError(YtschedError):
    """The service refused a request (4xx) or could not be reached."""

    def __init__(self, code: str, message: str, status: int = 0, **attributes: object) -> None:
        super().__init__(code, message, **attributes)
        self.status = status


READ_ONLY = frozenset(
    {
        "get",
        "list",
        "exists",
        "check_permission",
        "get_operation",
        "list_operations",
        "list_jobs",
        "get_job",
        "get_job_stderr",
        "get_job_stdout",
        "explain_operation",
    }
)
"""Commands that change nothing, so an attempt whose answer was lost may simply be repeated."""


def find_urls(url: str | None = None) -> list[str]:
    """The service URLs: ``url`` or ``YTSCHED_PROXY``, comma-separated, scheme optional."""
    value = url or os.environ.get("YTSCHED_PROXY")
    urls = [part.strip().rstrip("/") for part in (value or "").split(",") if part.strip()]
    if not urls:
        raise ResponseError(
            "NoProxy", "no service URL: pass --proxy or set YTSCHED_PROXY (see `ytsched local`)"
        )
    return [item if "://" in item else f"http://{item}" for item in urls]


def find_url(url: str | None = None) -> str:
    return find_urls(url)[0]


def not_leader(response: httpx.Response) -> tuple[bool, str | None]:
    """Whether a standby refused the request, and the leader it named (if any)."""
    if response.status_code != 503:
        return False, None
    try:
        payload = response.json()
    except ValueError:
        return False, None
    if not isinstance(payload, Mapping) or payload.get("code") != "NotLeader":
        return False, None
    leader = (payload.get("attributes") or {}).get("leader")
    return True, leader if isinstance(leader, str) and leader else None


def find_token(token: str | None = None) -> str:
    value = token or os.environ.get("YTSCHED_TOKEN")
    if not value:
        raise ResponseError("NoToken", "no token: pass --token or set YTSCHED_TOKEN")
    value = value.strip()
    if not value or any(not c.isprintable() or c.isspace() for c in value):
        # An HTTP header cannot carry it (a newline would even split the request).
        raise ResponseError(
            "InvalidToken", "the token contains whitespace or control characters (a newline?)"
        )
    return value


class Client:
    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        failover_timeout: float = 30.0,
    ):
        self.urls = find_urls(url)
        self.url = self.urls[0]
        self.failover_timeout = failover_timeout
        """Seconds one command keeps looking for the leader before it gives up."""
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {find_token(token)}"},
            timeout=timeout,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, command: str, **params: Any) -> Any:
        body = {key: value for key, value in params.items() if value is not None}
        deadline = time.monotonic() + self.failover_timeout
        tried = 0
        while True:
            try:
                response = self._http.post(f"/api/v4/{command}", json=body)
            except httpx.HTTPError as error:
                unsent = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)
                may_repeat = unsent or command in READ_ONLY or "mutation_id" in body
                if len(self.urls) > 1 and may_repeat and time.monotonic() < deadline:
                    tried = self._switch(None, tried)
                    continue
                raise ResponseError(
                    "ConnectionError", f"cannot reach {self.url}: {error}", url=self.url
                ) from None
            refused, leader = not_leader(response)
            if refused and time.monotonic() < deadline:
                tried = self._switch(leader, tried)
                continue
            return self._decode(response)

    def _switch(self, leader: str | None, tried: int) -> int:
        """Point at ``leader`` (named by a standby) or the next URL; pause after a full round."""
        tried += 1
        if tried % max(len(self.urls), 2) == 0:
            time.sleep(0.1)
        if leader is not None and leader.rstrip("/") != self.url:
            self.url = leader.rstrip("/")
        else:
            self.url = self.urls[(self._index() + 1) % len(self.urls)]
        self._http.base_url = httpx.URL(self.url)
        return tried

    def _index(self) -> int:
        return self.urls.index(self.url) if self.url in self.urls else -1

    @staticmethod
    def _decode(response: httpx.Response) -> Any:
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code >= 400:
            if isinstance(payload, Mapping) and "code" in payload:
                attributes = payload.get("attributes") or {}
                raise ResponseError(
                    str(payload["code"]),
                    str(payload.get("message", "")),
                    response.status_code,
                    **{str(k): v for k, v in attributes.items()},
                )
            raise ResponseError(
                "HttpError",
                f"HTTP {response.status_code}: {response.text[:500]}",
                response.status_code,
            )
        return payload

    # --- Cypress -------------------------------------------------------------------------

    def get(
        self,
        path: str,
        attributes: list[str] | None = None,
        fields: list[str] | None = None,
        default: Any = _MISSING,
    ) -> Any:
        try:
            return self._call("get", path=path, attributes=attributes, fields=fields)["value"]
        except ResponseError as error:
            if default is not _MISSING and error.status == 404:
                return default
            raise

    def set(self, path: str, value: Any, *, recursive: bool = False, force: bool = False) -> None:
        self._call("set", path=path, value=value, recursive=recursive, force=force)

    def list(self, path: str, attributes: builtins.list[str] | None = None) -> list[Any]:
        result: list[Any] = self._call("list", path=path, attributes=attributes)["value"]
        return result

    def exists(self, path: str) -> bool:
        return bool(self._call("exists", path=path)["value"])

    def create(
        self,
        type: str,
        path: str | None = None,
        *,
        attributes: Mapping[str, Any] | None = None,
        ignore_existing: bool = False,
        recursive: bool = False,
    ) -> str:
        result = self._call(
            "create",
            type=type,
            path=path,
            attributes=dict(attributes or {}),
            ignore_existing=ignore_existing,
            recursive=recursive,
        )
        return str(result["object_id"])

    def remove(self, path: str, *, recursive: bool = False, force: bool = False) -> None:
        self._call("remove", path=path, recursive=recursive, force=force)

    def check_permission(self, user: str, permission: str, path: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "check_permission", user=user, permission=permission, path=path
        )
        return result

    def transfer_pool_resources(
        self,
        source_pool: str,
        destination_pool: str,
        pool_tree: str,
        resource_delta: Mapping[str, Any],
    ) -> None:
        """Move guarantees and operation-count limits between two pools of a tree."""
        self._call(
            "transfer_pool_resources",
            source_pool=source_pool,
            destination_pool=destination_pool,
            pool_tree=pool_tree,
            resource_delta=dict(resource_delta),
        )

    def issue_token(self, user: str) -> str:
        return str(self._call("issue_token", user=user)["token"])

    # --- operations ---------------------------------------------------------------------

    def start_op(self, operation_type: str, spec: Mapping[str, Any]) -> str:
        # A mutation id makes the start safe to send again when its answer is lost.
        result = self._call(
            "start_op",
            operation_type=operation_type,
            spec=dict(spec),
            mutation_id=str(uuid.uuid4()),
        )
        return str(result["operation_id"])

    def run_vanilla(
        self,
        command: str,
        *,
        job_count: int = 1,
        pool: str | None = None,
        task_name: str = "task",
        cpu_limit: float | None = None,
        memory_limit: int | None = None,
        gpu_limit: int | None = None,
        interruption_signal: str | None = None,
        task_patch: Mapping[str, Any] | None = None,
        spec: Mapping[str, Any] | None = None,
        track: bool = False,
        timeout: float = 600.0,
    ) -> str:
        """``run_test_vanilla``: one task of ``job_count`` jobs running ``command``."""
        task: dict[str, Any] = {"job_count": job_count, "command": command}
        for key, value in (
            ("cpu_limit", cpu_limit),
            ("memory_limit", memory_limit),
            ("gpu_limit", gpu_limit),
            ("interruption_signal", interruption_signal),
        ):
            if value is not None:
                task[key] = value
        task.update(task_patch or {})
        full: dict[str, Any] = dict(spec or {})
        full["tasks"] = {**dict(full.get("tasks") or {}), task_name: task}
        if pool is not None:
            full["pool"] = pool
        operation_id = self.start_op("vanilla", full)
        if track:
            self.track(operation_id, timeout=timeout)
        return operation_id

    def abort_op(self, operation_id: str, abort_message: str | None = None) -> None:
        self._call("abort_op", operation_id=operation_id, abort_message=abort_message)

    def complete_op(self, operation_id: str) -> None:
        self._call("complete_op", operation_id=operation_id)

    def suspend_op(self, operation_id: str, *, abort_running_jobs: bool = False) -> None:
        self._call("suspend_op", operation_id=operation_id, abort_running_jobs=abort_running_jobs)

    def resume_op(self, operation_id: str) -> None:
        self._call("resume_op", operation_id=operation_id)

    def update_op_parameters(self, operation_id: str, parameters: Mapping[str, Any]) -> None:
        self._call("update_op_parameters", operation_id=operation_id, parameters=dict(parameters))

    def get_operation(
        self, operation_id: str, attributes: builtins.list[str] | None = None
    ) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "get_operation", operation_id=operation_id, attributes=attributes
        )
        return result

    def list_operations(
        self,
        *,
        user: str | None = None,
        state: str | None = None,
        pool: str | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "list_operations", user=user, state=state, pool=pool, limit=limit
        )
        return result

    def explain_operation(self, operation_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("explain_operation", operation_id=operation_id)
        return result

    def track(
        self,
        operation_id: str,
        *,
        timeout: float = 600.0,
        poll: float = 0.2,
        raise_on_failure: bool = True,
    ) -> str:
        """Wait until the operation finishes; raise if it failed or was aborted."""
        deadline = time.monotonic() + timeout
        while True:
            state = str(self.get_operation(operation_id, attributes=["state"])["state"])
            if state in FINAL_STATES:
                if raise_on_failure and state != "completed":
                    result = self.get_operation(operation_id, attributes=["result"])
                    raise ResponseError(
                        "OperationFailed",
                        f"operation {operation_id} {state}",
                        result=result.get("result"),
                    )
                return state
            if time.monotonic() >= deadline:
                raise ResponseError(
                    "Timeout", f"operation {operation_id} is still {state} after {timeout}s"
                )
            time.sleep(poll)

    # --- jobs ------------------------------------------------------------------------------

    def list_jobs(
        self, operation_id: str, *, job_state: str | None = None, limit: int = 1000
    ) -> builtins.list[dict[str, Any]]:
        result = self._call(
            "list_jobs", operation_id=operation_id, job_state=job_state, limit=limit
        )
        jobs: builtins.list[dict[str, Any]] = result["jobs"]
        return jobs

    def get_job(self, job_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("get_job", job_id=job_id)
        return result

    def get_job_stderr(self, job_id: str) -> str:
        return str(self._call("get_job_stderr", job_id=job_id)["value"])

    def get_job_stdout(self, job_id: str) -> str:
        return str(self._call("get_job_stdout", job_id=job_id)["value"])

    def abort_job(self, job_id: str, interrupt_timeout: int | None = None) -> None:
        self._call("abort_job", job_id=job_id, interrupt_timeout=interrupt_timeout)

    # --- service ---------------------------------------------------------------------------

    def metrics(self) -> str:
        response = self._http.get("/metrics")
        if response.status_code >= 400:
            self._decode(response)
        return response.text

    def ping(self) -> bool:
        try:
            return self._http.get("/ping").status_code == 200
        except httpx.HTTPError:
            return False
