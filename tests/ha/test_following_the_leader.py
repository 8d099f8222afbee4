"""Standby answers, and clients and node agents that follow the leader (no servers needed:
the instances are simulated with httpx mock transports)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest

from ytsched.client import Client, ResponseError, find_urls
from ytsched.node.agent import NodeAgent
from ytsched.server.gate import LeaderGate

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

A, B = "http://a:1", "http://b:2"


def not_leader(leader: str | None) -> httpx.Response:
    return httpx.Response(
        503,
        json={"code": "NotLeader", "message": "standby", "attributes": {"leader": leader}},
    )


class Instances:
    """Which URL leads; every request is recorded as (instance, command, body)."""

    def __init__(self, leader: str | None, down: tuple[str, ...] = ()) -> None:
        self.leader = leader
        self.down = set(down)
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self.lose_answer_of: set[str] = set()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        origin = f"{request.url.scheme}://{request.url.host}:{request.url.port}"
        if origin in self.down:
            raise httpx.ConnectError("connection refused", request=request)
        command = request.url.path.rsplit("/", 1)[-1]
        self.requests.append((origin, command, json.loads(request.content or b"{}")))
        if origin != self.leader:
            return not_leader(self.leader)
        if command in self.lose_answer_of:
            raise httpx.ReadError("connection reset", request=request)
        if command == "start_op":
            return httpx.Response(200, json={"operation_id": "op-1"})
        return httpx.Response(200, json={"value": origin})


def client_for(instances: Instances) -> Client:
    client = Client(f"{A},{B}", "token", failover_timeout=5)
    client._http = httpx.Client(base_url=client.url, transport=httpx.MockTransport(instances))
    return client


def test_proxy_lists_are_split_and_completed() -> None:
    assert find_urls("a:1, http://b:2/ ,") == [A, B]
    with pytest.raises(ResponseError):
        find_urls(" , ")


def test_client_follows_the_leader_a_standby_names() -> None:
    instances = Instances(leader=B)
    client = client_for(instances)
    assert client.get("//sys") == B
    assert client.url == B
    assert [(origin, command) for origin, command, _ in instances.requests] == [
        (A, "get"),
        (B, "get"),
    ]


def test_client_skips_an_instance_it_cannot_reach() -> None:
    instances = Instances(leader=B, down=(A,))
    assert client_for(instances).start_op("vanilla", {}) == "op-1"


def test_client_repeats_a_lost_start_with_the_same_mutation_id() -> None:
    instances = Instances(leader=A)
    instances.lose_answer_of.add("start_op")
    client = client_for(instances)
    client._switch = lambda leader, tried: (instances.lose_answer_of.clear(), tried + 1)[1]  # type: ignore[method-assign]
    assert client.start_op("vanilla", {}) == "op-1"
    starts = [body for _, command, body in instances.requests if command == "start_op"]
    assert len(starts) == 2
    assert starts[0]["mutation_id"] == starts[1]["mutation_id"]


def test_client_never_repeats_a_mutation_without_an_id() -> None:
    instances = Instances(leader=A)
    instances.lose_answer_of.add("abort_op")
    client = client_for(instances)
    with pytest.raises(ResponseError) as raised:
        client.abort_op("op-1")
    assert raised.value.code == "ConnectionError"
    assert [command for _, command, _ in instances.requests] == ["abort_op"]


def test_client_gives_up_when_no_leader_appears() -> None:
    instances = Instances(leader=None)
    client = client_for(instances)
    client.failover_timeout = 0.3
    with pytest.raises(ResponseError) as raised:
        client.get("//sys")
    assert raised.value.code == "NotLeader"


def test_node_agent_delivers_finished_jobs_to_the_new_leader(tmp_path: Path) -> None:
    agent = NodeAgent(
        server=f"{A},{B}",
        token="token",
        address="node-1",
        resources={"cpu": 1.0},
        tags=[],
        data_dir=tmp_path,
    )
    report = {"operation_id": "op", "job_id": "j1", "outcome": "completed"}
    agent.unreported["j1"] = report
    instances = Instances(leader=A, down=())
    agent.client = httpx.Client(transport=httpx.MockTransport(instances))
    instances.down.add(A)  # the leader died; B took over
    instances.leader = None
    assert not agent.heartbeat()  # B is not leading yet: nothing acknowledged
    assert agent.unreported == {"j1": report}
    instances.leader = B
    assert agent.heartbeat()
    assert agent.server == B
    delivered = [body for origin, _, body in instances.requests if origin == B]
    assert delivered[-1]["finished_jobs"] == [report]
    assert agent.unreported == {}
    agent.client.close()


def test_gate_redirects_while_standby_and_serves_when_leading() -> None:
    leader: list[str | None] = [None]
    gate = LeaderGate("http://me:1", lambda: leader[0])
    with TestClient(gate) as http:
        refused = http.post("/api/v4/get", json={"path": "//sys"})
        assert refused.status_code == 503
        assert refused.json()["code"] == "NotLeader"
        assert refused.json()["attributes"]["leader"] is None
        leader[0] = "http://other:2"
        refused = http.post("/api/v4/start_op", json={})
        assert refused.json()["attributes"]["leader"] == "http://other:2"
        assert refused.headers["x-ytsched-leader"] == "http://other:2"
        assert http.get("/ping").json() == {
            "status": "ok",
            "role": "standby",
            "leader": "http://other:2",
        }

        async def app(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"served"})

        gate.app = app
        assert http.post("/api/v4/get", json={}).text == "served"
        assert http.get("/ping").json()["role"] == "leader"
