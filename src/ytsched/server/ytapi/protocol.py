"""ASGI middleware answering the YTsaurus HTTP proxy protocol beside our own API.

Our API and YTsaurus's share the ``/api/v4/<command>`` prefix (on purpose: the names are the
same), so a request is routed here when it is one only a YTsaurus client sends:

* discovery: ``GET /api``, ``GET /api/v4``, ``GET /hosts`` (heavy-proxy discovery),
  ``/auth/whoami``;
* ``/api/v4/<command>`` with any ``X-YT-*`` header or with ``Authorization: OAuth <token>``;
* ``GET`` / ``PUT`` of a command YTsaurus has (``/api/v4/get?path=//sys``).

Everything else (``POST`` + JSON body + ``Bearer``, our client, node agents, the Web UI) goes on
to the FastAPI app untouched.  Commands run synchronously on the event loop like every other
command; the middleware sits inside ``CommitBeforeAnswer`` so writes are committed before the
answer starts.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ytsched import yson
from ytsched.errors import YtschedError
from ytsched.server.asgi import read_body
from ytsched.server.ytapi import wire
from ytsched.server.ytapi.commands import COMMANDS, Call

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

log = logging.getLogger("ytsched.server.ytapi")

API_VERSION = "v4"
MAX_BODY = 16 * 1024 * 1024
DISCOVERY_PATHS = frozenset({"/api", "/api/", "/api/v4", "/api/v4/", "/hosts", "/hosts/"})
STATUS_BY_CODE = {
    "AuthenticationError": 401,
    "NoSuchCommand": 404,
    "MethodNotAllowed": 405,
}
"""HTTP statuses of refusals; every other refusal is 400, as the YTsaurus proxy answers."""
ACCEPT_FORMATS = {
    "application/json": "json",
    "application/x-yt-yson-text": "yson",
    "application/x-yt-yson-pretty": "<format=pretty>yson",
    "application/x-yt-yson-binary": "yson",
}
"""Output formats named by ``Accept`` when neither ``output_format`` nor ``X-YT-Output-Format``
is given (``yt/yt/server/http_proxy/formats.cpp``, ``InferFormat``); otherwise JSON."""


class ProtocolError(YtschedError):
    """A refusal of the protocol layer itself (unknown command, wrong method, large body)."""


def _headers(scope: Scope) -> dict[str, str]:
    result: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        result[key] = f"{result[key]}, {text}" if key in result else text
    return result


def is_yt_request(scope: Scope) -> bool:
    """Whether a request speaks the YTsaurus protocol (see the module docstring)."""
    path: str = scope.get("path", "")
    if path in DISCOVERY_PATHS or path.startswith("/hosts/") or path == "/auth/whoami":
        return True
    if path.startswith("/api/v") and not path.startswith("/api/v4/"):
        return True  # another API version: answered with a YTsaurus-shaped refusal
    if not path.startswith("/api/v4/"):
        return False
    for name, value in scope.get("headers", []):
        if name.lower().startswith(b"x-yt-"):
            return True
        if name.lower() == b"authorization" and value[:6].lower() == b"oauth ":
            return True
    # No YTsaurus header: a GET/PUT of a YTsaurus command (curl, a browser) is ours to answer;
    # anything else (POST, or a command only our API has) is our own API's.
    return scope.get("method") != "POST" and path[len("/api/v4/") :] in COMMANDS


class YtApiProtocol:
    def __init__(self, app: ASGIApp, cluster: Cluster) -> None:
        self.app = app
        self.cluster = cluster

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_yt_request(scope):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        try:
            body = await read_body(receive, MAX_BODY, _too_large, None)
            status, content_type, payload = self.answer(scope, headers, body)
            extra: list[tuple[bytes, bytes]] = []
        except YtschedError as error:
            status, content_type, payload, extra = _refusal(error)
        except Exception:  # a bug: answer like the proxy would, keep the server up
            log.exception("YTsaurus API request failed")
            internal = YtschedError("InternalError", "internal error in ytsched")
            status, content_type, payload, extra = _refusal(internal)
            status = 500
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type.encode()),
                    (b"content-length", str(len(payload)).encode()),
                    (b"x-yt-proxy", headers.get("host", "").encode("latin-1")),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    def answer(self, scope: Scope, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        path: str = scope["path"]
        host = headers.get("host") or _server_address(scope)
        if path in ("/api", "/api/"):
            return _json([API_VERSION])
        if path in ("/api/v4", "/api/v4/"):
            return _json([command.descriptor() for command in COMMANDS.values()])
        if path.startswith("/hosts"):
            return _json([host])
        user = self.cluster.auth.authenticate(headers.get("authorization"))
        if path == "/auth/whoami":
            return _json({"login": user})
        if not path.startswith("/api/v4/"):
            raise ProtocolError(
                "NoSuchCommand", f"API version of {path!r} is not supported (use /api/v4)"
            )
        name = path[len("/api/v4/") :]
        command = COMMANDS.get(name)
        if command is None:
            raise ProtocolError(
                "NoSuchCommand",
                f"Command {name!r} is not supported by ytsched (see GET /api/v4)",
                command=name,
            )
        method = scope.get("method", "GET")
        if command.is_volatile and method == "GET":
            raise ProtocolError(
                "MethodNotAllowed",
                f"Command {name!r} changes state and must be requested with POST or PUT",
            )
        params = wire.parse_query(scope.get("query_string", b"").decode("latin-1"))
        params.update(wire.parse_header_parameters(headers))
        value = None
        if command.input_type is None:
            params.update(wire.parse_body_parameters(body, headers.get("content-type", "")))
        else:
            value = wire.parse_input(body, params.get("input_format"))
        call = Call(self.cluster, user, params, value, host)
        result = command.handler(call)
        if command.output_type == "binary":
            return 200, "application/octet-stream", bytes(result)
        output_format = params.get("output_format")
        if output_format is None and "x-yt-output-format" in headers:
            output_format = _header_value(headers, "x-yt-output-format")
        if output_format is None:
            output_format = ACCEPT_FORMATS.get(headers.get("accept", "").strip())
        content, content_type = wire.encode(result, output_format)
        return 200, content_type, content


def _header_value(headers: dict[str, str], name: str) -> Any:
    raw = headers[name]
    fmt = headers.get("x-yt-header-format", "json")
    if wire.format_name(fmt)[0] == "yson":
        return wire.from_yson(yson.loads(raw.encode("latin-1")))
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _server_address(scope: Scope) -> str:
    server = scope.get("server") or ("127.0.0.1", 80)
    return f"{server[0]}:{server[1]}"


def _json(value: Any) -> tuple[int, str, bytes]:
    return 200, "application/json", json.dumps(value).encode("utf-8")


def _refusal(error: YtschedError) -> tuple[int, str, bytes, list[tuple[bytes, bytes]]]:
    """A YTsaurus error answer: the error in the body and in the ``X-YT-Error`` header."""
    body = wire.error_map(error)
    text = json.dumps(body, ensure_ascii=True)
    headers = [
        (b"x-yt-error", text.encode("latin-1")),
        (b"x-yt-response-code", str(body["code"]).encode()),
        (b"x-yt-response-message", " ".join(error.message.split()).encode("ascii", "replace")),
    ]
    status = STATUS_BY_CODE.get(error.code, 400)
    return status, "application/json", text.encode("utf-8"), headers


def _too_large(size: int) -> ProtocolError:
    return ProtocolError("RequestTooLarge", f"request body exceeds {MAX_BODY} bytes")
