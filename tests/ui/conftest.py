"""Fixtures of the UI tests: an in-process service logged in through the UI, and helpers.

The browser tests (``test_browser.py``) use their own fixtures with a real server process.
"""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from tests.server.conftest import ADMIN, Service
from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig

ORIGIN = {"Origin": "http://testserver"}
UI_TREES: dict[str, Any] = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {
                "nodes_filter": "!gpu",
                "fair_share_starvation_timeout": 1000,
                "fair_share_aggressive_starvation_timeout": 1000,
                "preemptive_scheduling_backoff": 0,
                "non_preemptible_resource_usage_threshold": {"user_slots": 0},
            },
            "pools": {
                "research": {
                    "weight": 2,
                    "strong_guarantee_resources": {"cpu": 1},
                    "pools": {"team": {"strong_guarantee_resources": {"cpu": 1}}},
                },
                "batch": {},
                "burst": {
                    "integral_guarantees": {
                        "guarantee_type": "burst",
                        "resource_flow": {"cpu": 1},
                        "burst_guarantee_resources": {"cpu": 4},
                    }
                },
            },
        },
        "gpu": {"config": {"nodes_filter": "gpu"}, "pools": {"inference": {}}},
    },
}


@dataclass
class UiService(Service):
    """:class:`Service` with the UI's options and trees, and UI helpers."""

    trees: dict[str, Any] = field(default_factory=lambda: UI_TREES)
    history_samples: int = 16

    def open(self) -> UiService:
        self.cluster = Cluster(
            ServiceConfig(
                data_dir=self.directory,
                admin_token=ADMIN,
                initial_pool_trees=self.trees,
                node_heartbeat_timeout=30.0,
                history_period=0.0,
                history_samples=self.history_samples,
            ),
            clock=lambda: self.now[0],
        )
        self.http = TestClient(create_app(self.cluster, background=False))
        self.http.__enter__()
        return self

    def login(self, token: str = ADMIN) -> None:
        response = self.http.post(
            "/ui/login",
            data={"token": token, "next": "/ui/"},
            headers=ORIGIN,
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text

    def page(self, url: str, status: int = 200) -> str:
        response = self.http.get(url, follow_redirects=False)
        assert response.status_code == status, (url, response.status_code, response.text[:500])
        return str(response.text)

    def post_form(
        self, url: str, data: dict[str, str], headers: dict[str, str] | None = None
    ) -> Any:
        return self.http.post(
            url, data=data, headers=ORIGIN if headers is None else headers, follow_redirects=False
        )

    def user(self, name: str) -> str:
        """A new user without any right beyond the default ``use``; returns its token."""
        self.call("create", type="user", attributes={"name": name})
        return str(self.call("issue_token", user=name)["token"])

    def start(self, pool: str, jobs: int = 2, **spec: Any) -> str:
        body = {"pool": pool, "tasks": {"t": {"job_count": jobs, "command": "sleep 100"}}, **spec}
        return str(self.call("start_op", spec=body)["operation_id"])

    def run_jobs(self, address: str = "n1", running: list[str] | None = None) -> list[str]:
        """One update and one heartbeat; the ids of the jobs the node now runs."""
        self.tick()
        answer = self.heartbeat(address, running=running or [])
        return [*(running or []), *(job["job_id"] for job in answer["start"])]

    def orchid(self, path: str) -> Any:
        return self.call("get", path=f"//sys/scheduler/orchid/scheduler/{path}")["value"]


@pytest.fixture
def ui(tmp_path: Path) -> Iterator[UiService]:
    """A service with the UI trees, logged in as root through the login form."""
    instance = UiService(tmp_path / "data").open()
    try:
        instance.login()
        yield instance
    finally:
        instance.close()


def rows(text: str, table_attribute: str = "data-pool") -> dict[str, dict[str, str]]:
    """``{name: {attribute: value}}`` of the table rows carrying ``table_attribute``."""
    found: dict[str, dict[str, str]] = {}
    for match in re.finditer(r"<tr ([^>]*)>", text):
        attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', match.group(1)))
        attributes = {k: html.unescape(v) for k, v in attributes.items()}
        if table_attribute in attributes:
            found[attributes[table_attribute]] = attributes
    return found
