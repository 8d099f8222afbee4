"""The outermost ASGI app of an instance on a shared store: serve when leading, else redirect.

A standby answers every API request with ``503`` and the error ``NotLeader`` naming the leader's
URL (attribute ``leader``, header ``X-Ytsched-Leader``): nothing is processed, so clients and
node agents may safely send the same request to the leader (``ytsched.client`` and the node
agent do).  ``/ping`` answers on every instance with its role, for load balancers and humans.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from ytsched.server.asgi import send_json


class LeaderGate:
    def __init__(self, address: str, leader_address: Callable[[], str | None]) -> None:
        self.address = address
        self.leader_address = leader_address
        self.app: ASGIApp | None = None
        """The service's app while this instance leads."""

    @property
    def role(self) -> str:
        return "leader" if self.app is not None else "standby"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app = self.app
        if scope["type"] != "http":
            if app is not None:
                await app(scope, receive, send)
            return
        if scope["path"] == "/ping":
            leader = self.address if app is not None else self.leader_address()
            await _answer(send, 200, {"status": "ok", "role": self.role, "leader": leader})
            return
        if app is not None:
            await app(scope, receive, send)
            return
        leader = self.leader_address()
        where = f"the leader is {leader}" if leader else "no leader is elected yet"
        body = {
            "code": "NotLeader",
            "message": f"scheduler instance {self.address} is a standby; {where}",
            "attributes": {"leader": leader, "instance": self.address, "role": "standby"},
        }
        headers = [(b"x-ytsched-leader", leader.encode())] if leader else []
        await _answer(send, 503, body, headers)

    @staticmethod
    async def _lifespan(receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _answer(
    send: Send, status: int, body: object, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send_json(send, status, json.dumps(body).encode(), headers)
