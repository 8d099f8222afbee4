"""Reading a request body from an ASGI ``receive`` and writing a JSON answer to ``send``.

The heartbeat fast path, the request-limit middleware, the YTsaurus protocol and the standby
gate work without going through FastAPI (that is their point: no framework layers on the hot
path, or no route at all); they share this one bounded way of reading a body and this one way
of putting a complete JSON response on the wire.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import Receive, Scope, Send


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
    """Send ``payload`` (already JSON-encoded) as the whole response with ``status``."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
