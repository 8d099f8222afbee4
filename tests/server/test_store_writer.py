"""Write-behind in the service: a heartbeat is answered only after the commit of its rows,
whether the batch runs on the loop (default) or in the writer thread."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest

from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.fastpath import HEARTBEAT_PATH

from .conftest import ADMIN, NODE_LIMITS, TREES

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


@pytest.mark.parametrize("writer_thread", [False, True])
def test_started_jobs_are_committed_before_the_answer(tmp_path: Path, writer_thread: bool) -> None:
    config = ServiceConfig(
        data_dir=tmp_path,
        admin_token=ADMIN,
        initial_pool_trees=TREES,
        store_writer_thread=writer_thread,
    )
    cluster = Cluster(config, clock=lambda: 1000.0)
    headers = {"Authorization": f"Bearer {ADMIN}"}
    with TestClient(create_app(cluster, background=False)) as http:
        spec = {"pool": "batch", "tasks": {"t": {"job_count": 3, "command": "true"}}}
        response = http.post(
            "/api/v4/start_op", json={"operation_type": "vanilla", "spec": spec}, headers=headers
        )
        operation_id = response.json()["operation_id"]
        cluster.tick()
        body = {"address": "n1", "resource_limits": NODE_LIMITS}
        answer = http.post(HEARTBEAT_PATH, json=body, headers=headers).json()
        started = sorted(start["job_id"] for start in answer["start"])
        assert len(started) == 3
        # Another connection sees only committed rows: the answer left after the commit.
        with sqlite3.connect(tmp_path / "ytsched.db") as other:
            rows = other.execute(
                "SELECT id FROM jobs WHERE operation_id = ? AND state = 'running'",
                (operation_id,),
            ).fetchall()
        assert sorted(row[0] for row in rows) == started
        assert not cluster.store.dirty
    cluster.close()
