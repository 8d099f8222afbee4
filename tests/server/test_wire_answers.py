"""Answers on a real socket: under uvicorn a direct path's answer leaves in one write, and
the bytes and the connection's behaviour are those of an ordinary answer."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn

from ytsched.server import asgi
from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.fastpath import HEARTBEAT_PATH

from .conftest import ADMIN, NODE_LIMITS, TREES


@asynccontextmanager
async def _server(directory: Path) -> AsyncIterator[tuple[Cluster, int]]:
    cluster = Cluster(
        ServiceConfig(data_dir=directory, admin_token=ADMIN, initial_pool_trees=TREES),
        clock=lambda: 1000.0,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    config = uvicorn.Config(
        create_app(cluster, background=False),
        log_level="warning",
        access_log=False,
        lifespan="off",
        http="httptools",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert server.started
        yield cluster, sock.getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        cluster.close()


def _request(method: str, path: str, body: bytes, token: str = ADMIN) -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    status = int((await reader.readline()).split()[1])
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


def _raw_size(answer: tuple[int, dict[str, str], bytes]) -> bytes:
    """The answer's bytes as uvicorn puts them on the wire (its own headers included)."""
    status, headers, body = answer
    reason = {200: "OK", 400: "Bad Request"}[status]
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _counting_writes(monkeypatch: Any) -> list[int]:
    """Record the size of every write the direct paths' one-write stand-in makes."""
    writes: list[int] = []
    original: Callable[[Any, bytes], None] = asgi._HeadWithBody.write

    def write(self: Any, data: bytes) -> None:
        if self._head is not None:
            writes.append(len(self._head) + len(data))
        original(self, data)

    monkeypatch.setattr(asgi._HeadWithBody, "write", write)
    return writes


def test_heartbeats_on_one_keep_alive_connection(tmp_path: Path, monkeypatch: Any) -> None:
    writes = _counting_writes(monkeypatch)
    heartbeat = json.dumps({"address": "n1", "resource_limits": NODE_LIMITS}).encode()

    async def scenario() -> list[tuple[int, dict[str, str], bytes]]:
        async with _server(tmp_path / "data") as (_, port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answers = []
            # two heartbeats, a refused one and a framework request, pipelined at once
            writer.write(_request("POST", HEARTBEAT_PATH, heartbeat))
            writer.write(_request("POST", HEARTBEAT_PATH, heartbeat))
            writer.write(_request("POST", HEARTBEAT_PATH, b"{not json"))
            writer.write(_request("HEAD", "/ping", b""))
            writer.write(_request("POST", "/api/v4/get", b'{"path": "//sys/pools/@type"}'))
            for _ in range(3):
                answers.append(await _answer(reader))
            # HEAD: headers only, whatever the content length says (not a direct path)
            status = int((await reader.readline()).split()[1])
            while await reader.readline() not in (b"\r\n", b""):
                pass
            answers.append((status, {}, b""))
            answers.append(await _answer(reader))
            writer.close()
            await writer.wait_closed()
            return answers

    answers = asyncio.run(scenario())
    statuses = [status for status, _, _ in answers]
    assert statuses[:4] == [200, 200, 400, 405]  # /ping has no HEAD route
    for _status, headers, body in [*answers[:3], answers[4]]:
        assert headers["content-type"] == "application/json"
        assert int(headers["content-length"]) == len(body)
    first = json.loads(answers[0][2])
    assert set(first) == {"start", "interrupt", "abort", "heartbeat_period"}
    assert json.loads(answers[2][2])["code"] == "InvalidArgument"
    assert answers[4][0] in (200, 404) and isinstance(json.loads(answers[4][2]), dict)
    # each heartbeat answer, the refusal too, went out in one write (head and body together)
    assert writes == [len(_raw_size(a)) for a in answers[:3]]
