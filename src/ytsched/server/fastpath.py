"""A direct ASGI path for node heartbeats, the one request every node sends every second.

Through FastAPI a heartbeat crosses about ten middleware and routing layers and the dependency
solver before our code runs; on a 1,000-node cluster that overhead was a third of the server's
time and pushed heartbeat latency into seconds (docs/performance.md, "Service").  This
middleware sits outermost and answers ``POST /api/v4/node_heartbeat`` itself with exactly the
semantics of the FastAPI route (which stays registered, so the OpenAPI document still
describes the request and answer):

* the bearer token is checked and the caller must be a superuser, as for the route;
* the body is validated by the same pydantic model (``model_validate_json``, no detour through
  Python objects); a malformed body gets the same 400 ``InvalidArgument`` answer;
* the answer is sent only after the store committed what the heartbeat wrote, as
  ``CommitBeforeAnswer`` guarantees for every other request;
* refusals are the usual ``{code, message, attributes}`` bodies with the usual statuses.

Every other request passes through untouched.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from ytsched.errors import YtschedError
from ytsched.server import heartbeats
from ytsched.server.asgi import header, read_body, send_json
from ytsched.server.errors import ApiError, client_disconnected, http_status
from ytsched.server.models import HeartbeatRequest

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

log = logging.getLogger("ytsched.server")

HEARTBEAT_PATH = "/api/v4/node_heartbeat"
MAX_HEARTBEAT_BODY = 16 * 1024 * 1024
"""Bytes; a node with thousands of jobs sends well under a megabyte."""


def malformed_request_body(problems: list[dict[str, Any]]) -> dict[str, Any]:
    """The 400 body for a request that fails validation (shared with the FastAPI handler)."""
    first = problems[0] if problems else {"field": "", "message": "malformed request"}
    return {
        "code": "InvalidArgument",
        "message": f"malformed request: {first['field']}: {first['message']}",
        "attributes": {"errors": jsonable(problems)},
    }


def validation_problems(errors: list[Any]) -> list[dict[str, Any]]:
    """pydantic's error list as ``[{field, message}]``."""
    return [
        {"field": ".".join(str(p) for p in item.get("loc", ())), "message": item.get("msg")}
        for item in errors
    ]


def jsonable(value: Any) -> Any:
    """Validation errors may carry arbitrary input; keep the body JSON-safe."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class HeartbeatFastPath:
    """ASGI middleware answering node heartbeats without the framework's layers."""

    def __init__(self, app: ASGIApp, cluster: Cluster) -> None:
        self.app = app
        self.cluster = cluster

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != HEARTBEAT_PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        status, payload = await self._answer(scope, receive)
        await self.cluster.flush()
        await send_json(send, status, payload)

    async def _answer(self, scope: Scope, receive: Receive) -> tuple[int, bytes]:
        try:
            body = await read_body(receive, MAX_HEARTBEAT_BODY, _too_large, client_disconnected)
            user = self.cluster.auth.authenticate(header(scope, b"authorization"))
            self.cluster.auth.require_superuser(user, "node heartbeats")
            try:
                request = HeartbeatRequest.model_validate_json(body)
            except ValidationError as error:
                problems = validation_problems(error.errors(include_url=False))
                return 400, _dump(malformed_request_body(problems))
            return 200, _dump(heartbeats.process(self.cluster, request))
        except YtschedError as error:
            return http_status(error), _dump(error.to_dict())
        except Exception:  # a bug: log it, answer like the framework would
            log.exception("node heartbeat failed")
            failure = {
                "code": "InternalError",
                "message": "internal server error",
                "attributes": {},
            }
            return 500, _dump(failure)


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
"""What ``json.dumps(value, separators=(",", ":"), allow_nan=False)`` builds on every call
(same output), built once: ~4 us per answer, half of encoding an idle node's answer."""


def _dump(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


def _too_large(size: int) -> ApiError:
    return ApiError(
        "RequestTooLarge",
        f"heartbeat body exceeds {MAX_HEARTBEAT_BODY} bytes",
        limit=MAX_HEARTBEAT_BODY,
    )
