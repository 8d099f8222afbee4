"""The direct ``get`` path answers byte for byte like the FastAPI route, and leaves every
request that is not an ordinary ``get`` to the route."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ytsched.server import get_fastpath
from ytsched.server.get_fastpath import GET_PATH, GetFastPath

from .conftest import ADMIN, NODE_LIMITS, Service

ORCHID = "//sys/scheduler/orchid/scheduler"

Request = tuple[bytes, dict[str, str]]


def _json(params: Any, **headers: str) -> Request:
    return json.dumps(params).encode(), {
        "Authorization": f"Bearer {ADMIN}",
        "Content-Type": "application/json",
        **headers,
    }


def _answers(service: Service, requests: list[Request]) -> list[tuple[int, str, bytes]]:
    answers = []
    for body, headers in requests:
        response = service.http.post(GET_PATH, content=body, headers=headers)
        answers.append((response.status_code, response.headers["content-type"], response.content))
    return answers


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per request the fast path answered itself."""
    taken: list[bool] = []
    original = GetFastPath._answer

    def spy(self: GetFastPath, scope: Any, body: bytes) -> bytes:
        payload = original(self, scope, body)
        taken.append(True)
        return payload

    monkeypatch.setattr(GetFastPath, "_answer", spy)
    return taken


@pytest.fixture
def busy(service: Service) -> Service:
    """A service with an operation running jobs, so the orchid has shares and usage."""
    operation = service.call(
        "start_op",
        operation_type="vanilla",
        spec={"pool": "batch", "tasks": {"t": {"job_count": 3, "command": "true"}}},
    )["operation_id"]
    service.tick()
    service.heartbeat()
    service.tick()
    service.call("set", path="//sys/pools/research/@weight", value=3.5)
    service.operation = operation  # type: ignore[attr-defined]
    return service


def test_ordinary_gets_answer_exactly_as_the_route(
    busy: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    operation = busy.operation  # type: ignore[attr-defined]
    tree = f"{ORCHID}/pool_trees/default"
    requests = [
        _json({"path": f"{tree}/pools/batch/fair_share_ratio"}),
        _json({"path": f"{tree}/operations/{operation}/usage_ratio"}),
        _json({"path": f"{tree}/pools"}),
        _json({"path": f"{tree}/pools/research", "fields": ["weight", "fair_share_ratio"]}),
        _json({"path": ORCHID}),
        _json({"path": "//sys/pools/research/@weight"}),
        _json({"path": "//sys/pools/research", "attributes": ["weight", "nothing"]}),
        _json(
            {"path": f"{tree}/pools/batch/fair_share_ratio"}, **{"Authorization": "bearer " + ADMIN}
        ),
        _json({"path": "//sys/pools"}, **{"Content-Type": "application/json; charset=utf-8"}),
    ]
    taken = _taken(monkeypatch)
    fast = _answers(busy, requests)
    assert len(taken) == len(requests)  # every one of them took the direct path
    monkeypatch.setattr(get_fastpath, "MAX_FAST_BODY", 0)  # now all go through FastAPI
    assert _answers(busy, requests) == fast
    assert len(taken) == len(requests)
    assert all(status == 200 for status, _, _ in fast)
    assert json.loads(fast[0][2])["value"] == pytest.approx(
        json.loads(_answers(busy, requests[:1])[0][2])["value"]
    )


def test_everything_else_reaches_the_route_unchanged(
    busy: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools = f"{ORCHID}/pool_trees/default/pools"
    requests: list[Request] = [
        _json({"path": f"{pools}/nothing/fair_share_ratio"}),  # resolve error
        _json({"path": "//sys/pools/nothing"}),
        _json({"path": pools, "extra": 1}),  # unknown key
        _json({"path": 17}),  # wrong type
        _json([pools]),  # not an object
        (b"{not json", _json({})[1]),
        (b'{"path": NaN}', _json({})[1]),
        _json({"path": pools}, Authorization="Bearer wrong"),
        _json({"path": pools}, Authorization=f"Basic {ADMIN}"),  # a valid token, not Bearer
        _json({"path": pools}, Authorization="Bearer "),
        _json({"path": pools}, **{"Content-Type": "text/plain"}),
        _json({"path": pools}, **{"X-YT-Output-Format": "json"}),
        (json.dumps({"path": pools}).encode(), {"Content-Type": "application/json"}),
        (json.dumps({"path": pools}).encode(), {"Authorization": f"Bearer {ADMIN}"}),
    ]
    taken = _taken(monkeypatch)
    fast = _answers(busy, requests)
    assert taken == []  # none was answered by the direct path
    monkeypatch.setattr(get_fastpath, "MAX_FAST_BODY", 0)
    assert _answers(busy, requests) == fast
    statuses = [status for status, _, _ in fast]
    # Refusals with the route's own bodies; the YTsaurus-protocol request is that protocol's
    # to answer; no token; no content type (FastAPI does not read the body as JSON).
    assert statuses == [404, 404, 400, 400, 400, 400, 400, 401, 401, 401, 400, 200, 401, 400]


def test_a_get_answers_after_the_commit(busy: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = busy.cluster
    assert cluster is not None
    flushed: list[bool] = []
    original = cluster.flush

    async def flush() -> None:
        flushed.append(True)
        await original()

    monkeypatch.setattr(cluster, "flush", flush)
    taken = _taken(monkeypatch)
    status, _, _ = _answers(busy, [_json({"path": "//sys/pools"})])[0]
    assert status == 200 and taken == [True] and flushed == [True]


def test_heartbeats_still_take_their_own_path(busy: Service) -> None:
    answer = busy.call("node_heartbeat", address="n2", resource_limits=NODE_LIMITS)
    assert "start" in answer
