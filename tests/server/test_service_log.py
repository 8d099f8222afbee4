"""The server log tells what happened at revival and when nodes come and go."""

from __future__ import annotations

import logging

import pytest

from tests.server.conftest import Service


def test_revival_and_node_changes_are_logged(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ytsched.server")
    service.heartbeat("n1")
    assert "node n1 registered" in caplog.text
    spec = {"pool": "batch", "tasks": {"t": {"job_count": 1, "command": "sleep 100"}}}
    service.call("start_op", spec=spec)
    service.restart()
    assert "revived from" in caplog.text and "1 unfinished operation(s)" in caplog.text
    service.tick(10.0)  # past the node heartbeat timeout (5 s)
    assert "node n1 is offline" in caplog.text
    service.heartbeat("n1")
    assert "node n1 is back online" in caplog.text
