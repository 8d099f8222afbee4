"""Reading a request body from an ASGI ``receive`` and writing a JSON answer to ``send``.

The heartbeat fast path, the request-limit middleware, the YTsaurus protocol and the standby
gate work without going through FastAPI (that is their point: no framework layers on the hot
path, or no route at all); they share this one bounded way of reading a body and this one way
of putting a complete JSON response on the wire.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.types import Message, Receive, Scope, Send


def header(scope: Scope, name: bytes) -> str | None:
    """The value of the request header ``name`` (lower-case bytes), or ``None``."""
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def read_body(
    receive: Receive,
    limit: int,
    too_large: Callable[[int], Exception],
    disconnected: Callable[[], Exception] | None,
) -> bytes:
    """The whole request body, refused with ``too_large(size so far)`` as soon as it passes
    ``limit`` bytes (nothing beyond the limit is kept).  A client that disconnects before the
    end raises ``disconnected()``, or, when that is ``None``, ends the body there."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            if disconnected is not None:
                raise disconnected()
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(size)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def send_json(
    send: Send, status: int, payload: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Send ``payload`` (already JSON-encoded) as the whole response with ``status``.

    Under uvicorn's httptools protocol the status line and headers, and then the body, each
    went to the socket in a write of their own: two system calls per answer (~7% of the
    server's time at 2,000 heartbeats a second, the largest single item of its profile) and
    two segments for the client to read.  There they leave in one write
    (:func:`_one_write_cycle`); the bytes on the wire are the same.
    """
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            *(headers or []),
        ],
    }
    body: Message = {"type": "http.response.body", "body": payload}
    cycle = _one_write_cycle(send)
    if cycle is None:
        await send(start)
        await send(body)
        return
    transport = cycle.transport
    cycle.transport = _HeadWithBody(transport)
    try:
        await send(start)
        await send(body)
    finally:
        cycle.transport = transport


def _one_write_cycle(send: Send) -> Any:
    """The uvicorn request cycle whose ``send`` this is, when the response may be written in
    one piece; otherwise ``None`` (another server, a test transport, a ``HEAD`` request,
    whose body uvicorn never writes)."""
    cycle = getattr(send, "__self__", None)
    if _CYCLE is None or type(cycle) is not _CYCLE or cycle.scope["method"] == "HEAD":
        return None
    return cycle


class _HeadWithBody:
    """Stands in for a uvicorn transport for one response: the first write (status line and
    headers) is held and goes out with the second (the body) in one ``write``; everything
    else is the real transport's."""

    __slots__ = ("_head", "_transport")

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._head: bytes | None = None

    def write(self, data: bytes) -> None:
        if self._head is None:
            self._head = bytes(data)
            return
        head, self._head = self._head, b""
        self._transport.write(head + data if head else data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


try:  # the service runs under uvicorn with httptools; without them answers take two writes
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle as _CYCLE
except ImportError:  # pragma: no cover
    _CYCLE = None  # type: ignore[misc, assignment]
