"""The HTTP API: ``POST /api/v4/<command>`` with JSON parameters, like the YTsaurus proxy.

Every command needs ``Authorization: Bearer <token>``.  Answers are JSON; a refusal is a 4xx
with ``{"code", "message", "attributes"}``, the same error the CLI prints.  Handlers are
``async`` and call the (synchronous, fast) cluster directly, so every command and heartbeat
runs on the event loop one at a time: the live model is never touched concurrently.

``/ping`` (liveness, no data) is the only path without authentication; ``/metrics`` needs a
token like everything else (Prometheus sends one with ``authorization`` in its scrape config).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ytsched import __version__
from ytsched.errors import YtschedError
from ytsched.server import cypress, explain, heartbeats, operations, pool_transfer
from ytsched.server.cluster import Cluster
from ytsched.server.errors import http_status
from ytsched.server.fastpath import (
    HeartbeatFastPath,
    malformed_request_body,
    validation_problems,
)
from ytsched.server.get_fastpath import GetFastPath
from ytsched.server.limits import BoundedRequests
from ytsched.server.models import (
    AbortJobRequest,
    AbortOperationRequest,
    CheckPermissionRequest,
    CreateRequest,
    GetOperationRequest,
    GetRequest,
    HeartbeatRequest,
    IssueTokenRequest,
    JobRequest,
    ListJobsRequest,
    ListOperationsRequest,
    ListRequest,
    OperationRequest,
    PathRequest,
    RemoveRequest,
    SetRequest,
    StartOperationRequest,
    SuspendOperationRequest,
    TransferPoolResourcesRequest,
    UpdateParametersRequest,
)
from ytsched.server.openapi import install as install_openapi
from ytsched.server.ui import mount as mount_ui
from ytsched.server.ytapi import YtApiProtocol
from ytsched.store.write_behind import WriteBehindStore

log = logging.getLogger("ytsched.server")
bearer = HTTPBearer(auto_error=False, description="A token issued by the service")


READ_ONLY_COMMANDS = frozenset(
    {
        "get", "list", "exists", "check_permission", "get_operation", "list_operations",
        "explain_operation", "list_jobs", "get_job", "get_job_stderr", "get_job_stdout",
    }
)  # fmt: skip
"""Commands that change nothing: everything else may, and makes the orchid's version new."""


def changes_model(scope: Scope) -> bool:
    """Whether a request may change the model (so orchid reads must not serve older values).

    Decided from the request, not from whether the store has uncommitted writes: heartbeats
    write all the time, and their writes must not throw the orchid cache away.
    """
    if scope["method"] in ("GET", "HEAD", "OPTIONS"):
        return False
    return str(scope["path"]).rsplit("/", 1)[-1] not in READ_ONLY_COMMANDS


class CommitBeforeAnswer:
    """ASGI middleware: a response starts only after the request's writes are committed."""

    def __init__(self, app: ASGIApp, cluster: Cluster) -> None:
        self.app = app
        self.cluster = cluster

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        changes = changes_model(scope)

        async def send_after_commit(message: Message) -> None:
            if message["type"] == "http.response.start":
                if changes:
                    self.cluster.orchid_changed()
                await self.cluster.flush()
            await send(message)

        await self.app(scope, receive, send_after_commit)


async def user_of(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    """The authenticated user of a request (401 without a valid bearer token).

    ``async`` on purpose: FastAPI runs a plain ``def`` dependency in a worker thread, which
    would cost a thread hand-off per request and touch the live model off the event loop.
    """
    header = f"Bearer {credentials.credentials}" if credentials is not None else None
    cluster: Cluster = request.app.state.cluster
    return cluster.auth.authenticate(header)


User = Annotated[str, Depends(user_of)]


async def periodic(cluster: Cluster) -> None:
    """The fair-share update, node liveness and time limits, every update period."""
    while True:
        await asyncio.sleep(cluster.update_period)
        try:
            await cluster.tick_concurrently()
        except Exception:  # keep the loop alive; the error is a bug to be logged
            log.exception("periodic update failed")


class ServiceApp(FastAPI):
    """The FastAPI app with the direct paths in front of it.

    Installed as middleware, the direct paths still ran inside the framework's own outer
    layers (``FastAPI.__call__``, ``Starlette.__call__``, the server-error, telemetry and
    body-limit middleware, each wrapping ``send`` once more): ~5% of the server's time at
    2,000 heartbeats a second.  Here every HTTP request meets :attr:`front` first, which
    answers heartbeats and ordinary gets itself and hands everything else to
    :meth:`framework` (the whole FastAPI app, exactly as before).  Both direct paths catch
    their own failures and answer them as the routes would.
    """

    front: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        front = self.front
        if front is not None and scope["type"] == "http":
            await front(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def framework(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The request through FastAPI and its middleware."""
        await super().__call__(scope, receive, send)


def create_app(cluster: Cluster, *, background: bool = True) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(periodic(cluster)) if background else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    app = ServiceApp(
        title="ytsched",
        version=__version__,
        description="Hierarchical fair-share scheduler with YTsaurus semantics: Cypress-style"
        " commands over pool trees, operations, jobs and node heartbeats.",
        lifespan=lifespan,
    )
    app.state.cluster = cluster
    cluster.store.deferred = True
    if isinstance(cluster.store, WriteBehindStore):
        cluster.store.write_behind = True
    # Innermost: the YTsaurus HTTP proxy protocol beside our own API (docs/yt-compatibility.md).
    app.add_middleware(YtApiProtocol, cluster=cluster)
    app.add_middleware(CommitBeforeAnswer, cluster=cluster)
    app.add_middleware(BoundedRequests, limits=cluster.config.limits)
    # In front of the framework: heartbeats skip it (see fastpath's docstring), and so do
    # ordinary gets (dashboards polling the orchid; see get_fastpath's docstring).
    app.front = HeartbeatFastPath(
        GetFastPath(app.framework, cluster=cluster, limits=cluster.config.limits),
        cluster=cluster,
    )

    @app.exception_handler(YtschedError)
    async def _refused(_: Request, error: YtschedError) -> JSONResponse:
        return JSONResponse(error.to_dict(), status_code=http_status(error))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, error: StarletteHTTPException) -> JSONResponse:
        codes = {400: "InvalidArgument", 404: "NoSuchCommand", 405: "MethodNotAllowed"}
        body = {
            "code": codes.get(error.status_code, "HttpError"),
            "message": str(error.detail),
            "attributes": {},
        }
        return JSONResponse(body, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def _malformed(_: Request, error: RequestValidationError) -> JSONResponse:
        body = malformed_request_body(validation_problems(list(error.errors())))
        return JSONResponse(body, status_code=400)

    @app.get("/ping", tags=["service"])
    async def ping() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", tags=["service"])
    async def metrics(user: User) -> Response:
        return Response(cluster.metrics.render(), media_type="text/plain; version=0.0.4")

    @app.post("/api/v4/get", tags=["cypress"])
    async def get(body: GetRequest, user: User) -> dict[str, Any]:
        return {"value": cypress.get(cluster, user, body.path, body.attributes, body.fields)}

    @app.post("/api/v4/set", tags=["cypress"])
    async def set_(body: SetRequest, user: User) -> dict[str, Any]:
        cypress.set_(cluster, user, body.path, body.value)
        return {}

    @app.post("/api/v4/list", tags=["cypress"])
    async def list_(body: ListRequest, user: User) -> dict[str, Any]:
        return {"value": cypress.list_(cluster, user, body.path, body.attributes)}

    @app.post("/api/v4/exists", tags=["cypress"])
    async def exists(body: PathRequest, user: User) -> dict[str, Any]:
        return {"value": cypress.exists(cluster, user, body.path)}

    @app.post("/api/v4/create", tags=["cypress"])
    async def create(body: CreateRequest, user: User) -> dict[str, Any]:
        object_id = cypress.create(
            cluster, user, body.type, body.path, body.attributes, body.ignore_existing
        )
        return {"object_id": object_id}

    @app.post("/api/v4/remove", tags=["cypress"])
    async def remove(body: RemoveRequest, user: User) -> dict[str, Any]:
        cypress.remove(cluster, user, body.path, body.recursive, body.force)
        return {}

    @app.post("/api/v4/check_permission", tags=["cypress"])
    async def check_permission(body: CheckPermissionRequest, user: User) -> dict[str, Any]:
        action = cypress.check_permission(cluster, body.user, body.permission, body.path)
        return {"action": action}

    @app.post("/api/v4/transfer_pool_resources", tags=["cypress"])
    async def transfer_pool_resources(
        body: TransferPoolResourcesRequest, user: User
    ) -> dict[str, Any]:
        pool_transfer.transfer(
            cluster,
            user,
            body.pool_tree,
            body.source_pool,
            body.destination_pool,
            body.resource_delta,
        )
        return {}

    @app.post("/api/v4/issue_token", tags=["security"])
    async def issue_token(body: IssueTokenRequest, user: User) -> dict[str, Any]:
        cluster.auth.require_superuser(user, "issuing tokens")
        return {"token": cluster.auth.issue_token(body.user)}

    @app.post("/api/v4/start_op", tags=["operations"])
    async def start_op(body: StartOperationRequest, user: User) -> dict[str, Any]:
        op_id = operations.start_operation(
            cluster, user, body.operation_type, body.spec, body.mutation_id
        )
        return {"operation_id": op_id}

    @app.post("/api/v4/abort_op", tags=["operations"])
    async def abort_op(body: AbortOperationRequest, user: User) -> dict[str, Any]:
        operations.abort_operation(cluster, user, body.operation_id, body.abort_message)
        return {}

    @app.post("/api/v4/complete_op", tags=["operations"])
    async def complete_op(body: OperationRequest, user: User) -> dict[str, Any]:
        operations.complete_operation(cluster, user, body.operation_id)
        return {}

    @app.post("/api/v4/suspend_op", tags=["operations"])
    async def suspend_op(body: SuspendOperationRequest, user: User) -> dict[str, Any]:
        operations.suspend_operation(cluster, user, body.operation_id, body.abort_running_jobs)
        return {}

    @app.post("/api/v4/resume_op", tags=["operations"])
    async def resume_op(body: OperationRequest, user: User) -> dict[str, Any]:
        operations.resume_operation(cluster, user, body.operation_id)
        return {}

    @app.post("/api/v4/update_op_parameters", tags=["operations"])
    async def update_op_parameters(body: UpdateParametersRequest, user: User) -> dict[str, Any]:
        operations.update_parameters(cluster, user, body.operation_id, body.parameters)
        return {}

    @app.post("/api/v4/get_operation", tags=["operations"])
    async def get_operation(body: GetOperationRequest, user: User) -> dict[str, Any]:
        return operations.get_operation(cluster, body.operation_id, body.attributes)

    @app.post("/api/v4/list_operations", tags=["operations"])
    async def list_operations(body: ListOperationsRequest, user: User) -> dict[str, Any]:
        return operations.list_operations(
            cluster, user=body.user, state=body.state, pool=body.pool, limit=body.limit
        )

    @app.post("/api/v4/explain_operation", tags=["operations"])
    async def explain_operation(body: OperationRequest, user: User) -> dict[str, Any]:
        return explain.explain(cluster, body.operation_id)

    @app.post("/api/v4/list_jobs", tags=["jobs"])
    async def list_jobs(body: ListJobsRequest, user: User) -> dict[str, Any]:
        return operations.list_jobs(cluster, body.operation_id, body.job_state, body.limit)

    @app.post("/api/v4/get_job", tags=["jobs"])
    async def get_job(body: JobRequest, user: User) -> dict[str, Any]:
        return operations.get_job(cluster, body.job_id)

    @app.post("/api/v4/get_job_stderr", tags=["jobs"])
    async def get_job_stderr(body: JobRequest, user: User) -> dict[str, Any]:
        return {"value": operations.get_job_output(cluster, body.job_id, "stderr")}

    @app.post("/api/v4/get_job_stdout", tags=["jobs"])
    async def get_job_stdout(body: JobRequest, user: User) -> dict[str, Any]:
        return {"value": operations.get_job_output(cluster, body.job_id, "stdout")}

    @app.post("/api/v4/abort_job", tags=["jobs"])
    async def abort_job(body: AbortJobRequest, user: User) -> dict[str, Any]:
        operations.abort_job(cluster, user, body.job_id, body.interrupt_timeout)
        return {}

    @app.post("/api/v4/node_heartbeat", tags=["nodes"])
    async def node_heartbeat(body: HeartbeatRequest, user: User) -> JSONResponse:
        cluster.auth.require_superuser(user, "node heartbeats")
        # A ready response skips FastAPI's generic encoder: this is the hot path.
        return JSONResponse(heartbeats.process(cluster, body))

    mount_ui(app)  # the Web UI under /ui (docs/ui.md)
    install_openapi(app)  # the error answers in /openapi.json
    return app
