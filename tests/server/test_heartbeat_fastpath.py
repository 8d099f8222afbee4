"""The direct heartbeat path answers exactly like the FastAPI route would."""

from __future__ import annotations

import json

import pytest

from ytsched.server import fastpath
from ytsched.server.fastpath import HEARTBEAT_PATH

from .conftest import ADMIN, NODE_LIMITS, Service


def _post(
    service: Service, body: bytes, token: str | None = ADMIN
) -> tuple[int, dict[str, object]]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    response = service.http.post(HEARTBEAT_PATH, content=body, headers=headers)
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()


def _heartbeat_body(**extra: object) -> bytes:
    return json.dumps({"address": "n1", "resource_limits": NODE_LIMITS, **extra}).encode()


def test_heartbeat_needs_a_superuser_token(service: Service) -> None:
    status, body = _post(service, _heartbeat_body(), token=None)
    assert (status, body["code"]) == (401, "AuthenticationError")
    status, body = _post(service, _heartbeat_body(), token="wrong")
    assert (status, body["code"]) == (401, "AuthenticationError")
    service.call("create", type="user", attributes={"name": "alice"})
    token = service.call("issue_token", user="alice")["token"]
    status, body = _post(service, _heartbeat_body(), token=token)
    assert (status, body["code"]) == (403, "AuthorizationError")
    assert service.cluster is not None and "n1" not in service.cluster.trees.nodes


def test_malformed_heartbeats_name_the_field(service: Service) -> None:
    status, body = _post(service, b"{not json")
    assert (status, body["code"]) == (400, "InvalidArgument")
    status, body = _post(service, json.dumps({"address": "n1"}).encode())
    assert (status, body["code"]) == (400, "InvalidArgument")
    assert "resource_limits" in str(body["message"])
    status, body = _post(service, _heartbeat_body(finished_jobs=[{"job_id": 3}]))
    assert (status, body["code"]) == (400, "InvalidArgument")
    assert service.cluster is not None and "n1" not in service.cluster.trees.nodes


def test_oversized_heartbeat_is_413(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpath, "MAX_HEARTBEAT_BODY", 100)
    status, body = _post(service, _heartbeat_body(running_job_ids=["x" * 50] * 10))
    assert (status, body["code"]) == (413, "RequestTooLarge")


def test_heartbeat_starts_jobs_and_commits_before_answering(service: Service) -> None:
    operation_id = service.call(
        "start_op",
        operation_type="vanilla",
        spec={"pool": "batch", "tasks": {"t": {"job_count": 2, "command": "true"}}},
    )["operation_id"]
    service.tick()
    status, answer = _post(service, _heartbeat_body())
    assert status == 200
    started = answer["start"]
    assert isinstance(started, list) and len(started) == 2
    assert {s["operation_id"] for s in started} == {operation_id}
    # The answer left only after the commit: the jobs are in the store for a restart to see.
    assert service.cluster is not None and not service.cluster.store.dirty
    jobs = service.call("list_jobs", operation_id=operation_id)["jobs"]
    assert sorted(j["id"] for j in jobs) == sorted(s["job_id"] for s in started)


def test_other_methods_and_paths_reach_the_framework(service: Service) -> None:
    response = service.http.get(HEARTBEAT_PATH, headers={"Authorization": f"Bearer {ADMIN}"})
    assert response.status_code == 405
    assert response.json()["code"] == "MethodNotAllowed"
    schema = service.http.get("/openapi.json").json()
    assert HEARTBEAT_PATH in schema["paths"]


def test_periodic_update_serves_heartbeats_between_its_halves(service: Service) -> None:
    import asyncio

    from ytsched.server import heartbeats
    from ytsched.server.models import HeartbeatRequest

    cluster = service.cluster
    assert cluster is not None

    def start(pool: str) -> str:
        spec = {"pool": pool, "tasks": {"t": {"job_count": 1, "command": "true"}}}
        return str(service.call("start_op", operation_type="vanilla", spec=spec)["operation_id"])

    first = start("batch")
    service.tick()
    second = start("research")

    def beat(address: str) -> set[str]:
        request = HeartbeatRequest(address=address, resource_limits=NODE_LIMITS)
        return {s["operation_id"] for s in heartbeats.process(cluster, request)["start"]}

    async def scenario() -> tuple[set[str], set[str]]:
        service.now[0] += 1.0
        update = asyncio.create_task(cluster.tick_concurrently(pause=0.05))
        await asyncio.sleep(0.01)  # inside the pause: the computation ran, the state is old
        during = beat("n1")
        await update
        return during, beat("n2")

    during, after = asyncio.run(scenario())
    assert during == {first}  # the second operation is not in the scheduling state yet
    assert after == {second}
    assert cluster.last_update_time == service.now[0]


def test_node_limits_are_validated_again_when_they_change(service: Service) -> None:
    cluster = service.cluster
    assert cluster is not None
    assert _post(service, _heartbeat_body())[0] == 200
    assert cluster.nodes.nodes["n1"].resource_limits == {
        "cpu": 4.0,
        "user_slots": 4.0,
        "memory": float(16 * 2**30),
    }
    # an invalid map after a valid one is refused, and the node keeps its limits
    status, body = _post(service, _heartbeat_body(resource_limits={"cpu": -1}))
    assert (status, body["code"]) == (400, "InvalidConfig")
    assert "cpu" in str(body["message"])
    assert cluster.nodes.nodes["n1"].resource_limits["cpu"] == 4.0
    # new limits are taken (the scheduling layer sees them too)
    assert _post(service, _heartbeat_body(resource_limits={**NODE_LIMITS, "cpu": 2}))[0] == 200
    assert cluster.nodes.nodes["n1"].resource_limits["cpu"] == 2.0
    assert cluster.trees.nodes["n1"].resource_limits[1] == 2.0  # (user_slots, cpu, ...)
    # and the same map again after a refusal is still valid
    status, _ = _post(service, _heartbeat_body(resource_limits={"cpu": -1}))
    assert status == 400
    assert _post(service, _heartbeat_body(resource_limits={**NODE_LIMITS, "cpu": 2}))[0] == 200
