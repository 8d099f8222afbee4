"""An in-process service (FastAPI app over a Cluster) with a controllable clock."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig

ADMIN = "admin-token"
TREES = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {},
            "pools": {"research": {"weight": 2, "pools": {"team": {}}}, "batch": {}},
        }
    },
}
NODE_LIMITS = {"cpu": 4, "user_slots": 4, "memory": 16 * 2**30}


@dataclass
class Service:
    directory: Path
    now: list[float] = field(default_factory=lambda: [1000.0])
    cluster: Cluster | None = None
    http: Any = None

    def open(self) -> Service:
        self.cluster = Cluster(
            ServiceConfig(
                data_dir=self.directory,
                admin_token=ADMIN,
                initial_pool_trees=TREES,
                node_heartbeat_timeout=5.0,
            ),
            clock=lambda: self.now[0],
        )
        self.http = TestClient(create_app(self.cluster, background=False))
        self.http.__enter__()
        return self

    def close(self) -> None:
        if self.http is not None:
            self.http.__exit__(None, None, None)
        if self.cluster is not None:
            self.cluster.close()
        self.http = self.cluster = None

    def restart(self) -> Service:
        self.close()
        return self.open()

    def call(self, command: str, token: str | None = ADMIN, **params: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.http.post(f"/api/v4/{command}", json=params, headers=headers)
        body = response.json()
        if response.status_code != 200:
            raise ApiFailure(response.status_code, body)
        return body

    def error(self, command: str, token: str | None = ADMIN, **params: Any) -> tuple[int, str]:
        try:
            self.call(command, token, **params)
        except ApiFailure as failure:
            return failure.status, failure.body["code"]
        raise AssertionError(f"{command} {params} succeeded")

    def tick(self, seconds: float = 1.0) -> None:
        self.now[0] += seconds
        assert self.cluster is not None
        self.cluster.tick()

    def heartbeat(self, address: str = "n1", running: Any = (), finished: Any = ()) -> Any:
        return self.call(
            "node_heartbeat",
            address=address,
            resource_limits=NODE_LIMITS,
            running_job_ids=list(running),
            finished_jobs=list(finished),
        )


class ApiFailure(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    instance = Service(tmp_path / "data").open()
    try:
        yield instance
    finally:
        instance.close()
