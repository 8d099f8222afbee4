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


def test_revival_counts_waiting_lists_turning_empty(service: Service) -> None:
    """A revived running job leaves its task's waiting list empty: that turn is counted in
    ``WAITING_EMPTINESS_CHANGES``, which the idle heartbeats' fail-to-fit memo reads."""
    from ytsched.pooltree.operations import WAITING_EMPTINESS_CHANGES

    spec = {"pool": "batch", "tasks": {"t": {"job_count": 1, "command": "sleep 100"}}}
    service.call("start_op", spec=spec)
    service.heartbeat("n1")
    service.tick()  # a fair-share update
    started = service.heartbeat("n1")  # the one job starts: its waiting list turns empty
    assert len(started["start"]) == 1, started
    before = WAITING_EMPTINESS_CHANGES[0]
    service.restart()  # the revived task starts with its job waiting, then gets it back running
    assert WAITING_EMPTINESS_CHANGES[0] > before
