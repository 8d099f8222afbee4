"""A direct ASGI path for ``get``, the read dashboards poll (the orchid above all).

A ``get`` of one orchid attribute costs microseconds in :mod:`ytsched.server.orchid_cache`,
but through FastAPI it crossed about ten middleware and routing layers, the dependency solver
(bearer token, body model) and the response validation: ~1.5 ms of the event loop per read
(py-spy on ``benchmarks/orchid_load.py``, 3,000 operations, 32 clients polling every 0.1 s:
the framework's share of those reads was about half of everything the loop did, so every
heartbeat and read queued behind them).  This middleware sits outermost and answers
``POST /api/v4/get`` itself when the request is an ordinary one, with the answer the route
gives, byte for byte:

* the body is parsed with the same strict parser (``limits.strict_json``) and validated by
  the same model (``GetRequest``), the token is read as FastAPI's ``HTTPBearer`` reads it
  and checked by the same ``Auth.authenticate``; the value comes from the same
  ``cypress.get`` and is encoded by pydantic's serializer for ``dict[str, Any]``, as the
  route's return annotation makes FastAPI encode it;
* the answer starts only after the store committed (``CommitBeforeAnswer``'s guarantee; a
  ``get`` changes nothing, so the orchid's version stays);
* **anything else goes the usual way**: a YTsaurus-protocol request, a body without a
  ``Content-Length`` or larger than :data:`MAX_FAST_BODY`, a content type other than
  ``application/json``, a body the
  strict parser, the model or the token check refuses, and every error ``cypress.get``
  raises.  The full app then receives the very messages read here (replayed) and answers as
  it always did (its error bodies, statuses and logging included); a ``get`` reads only, so
  doing it again there is harmless.

Every other request passes through untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ytsched.errors import YtschedError
from ytsched.server import cypress
from ytsched.server.asgi import header, send_json
from ytsched.server.limits import RequestLimits, strict_json
from ytsched.server.models import GetRequest
from ytsched.server.ytapi.protocol import is_yt_request

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

GET_PATH = "/api/v4/get"
MAX_FAST_BODY = 64 * 1024
"""Bytes: a ``get`` body is a path and a few names; larger ones take the usual way."""

_ANSWER: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
"""The route's return annotation, which FastAPI serializes with pydantic's ``dump_json``."""


class _Fallback(Exception):
    """The request is not an ordinary ``get``: the full app answers it."""


class GetFastPath:
    """ASGI middleware answering ordinary ``get`` requests without the framework's layers."""

    def __init__(self, app: ASGIApp, cluster: Cluster, limits: RequestLimits) -> None:
        self.app = app
        self.cluster = cluster
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != GET_PATH
            or scope["method"] != "POST"
            or not _plain(scope, min(MAX_FAST_BODY, self.limits.max_request_body_size))
        ):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        try:
            body = await _read(receive, messages)
            payload = self._answer(scope, body)
        except _Fallback:
            await self.app(scope, _replay(messages, receive), send)
            return
        await self.cluster.flush()
        await send_json(send, 200, payload)

    def _answer(self, scope: Scope, body: bytes) -> bytes:
        cluster = self.cluster
        try:
            value = strict_json(body, self.limits)
            if not isinstance(value, dict):
                raise _Fallback
            request = GetRequest.model_validate(value)
            user = cluster.auth.authenticate(_bearer(scope))
            result = cypress.get(cluster, user, request.path, request.attributes, request.fields)
            return _ANSWER.dump_json({"value": result})
        except (YtschedError, ValidationError):
            raise _Fallback from None
        except _Fallback:
            raise
        except Exception:  # a bug: the full app logs it and answers 500, as it always did
            raise _Fallback from None


def _plain(scope: Scope, limit: int) -> bool:
    """Not the YTsaurus protocol, and a body of content type ``application/json`` whose
    announced length is within ``limit`` (FastAPI reads a body without a content type as
    bytes, which the model refuses: such requests take the usual way)."""
    if is_yt_request(scope):
        return False
    length = header(scope, b"content-length")
    if length is None or not length.isdigit() or int(length) > limit:
        return False
    content_type = header(scope, b"content-type")
    return content_type is not None and content_type.split(";", 1)[0].lower() == "application/json"


def _bearer(scope: Scope) -> str:
    """The ``Authorization`` header as FastAPI's ``HTTPBearer`` hands it to ``user_of``:
    ``Bearer <credentials>`` for a ``bearer`` scheme (any case), else no token at all."""
    raw = header(scope, b"authorization")
    if not raw:
        raise _Fallback
    scheme, _, credentials = raw.partition(" ")
    credentials = credentials.strip()
    if not scheme or scheme.lower() != "bearer" or not credentials:
        raise _Fallback
    return f"Bearer {credentials}"


async def _read(receive: Receive, messages: list[Message]) -> bytes:
    """The whole body (the announced length is bounded), every message kept for a replay."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            raise _Fallback  # the client went away: the full app sees it too
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FAST_BODY:
            raise _Fallback
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` as if nothing had been read from it."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
