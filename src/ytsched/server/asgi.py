"""Writing a JSON answer straight to an ASGI ``send``.

The heartbeat fast path, the request-limit middleware and the standby gate answer without
going through FastAPI (that is their point: no framework layers on the hot path, or no route
at all); they share this one way of putting a complete JSON response on the wire.
"""

from __future__ import annotations

from starlette.types import Send


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
