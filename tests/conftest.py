"""Fixtures shared by several test areas: a real PostgreSQL server (skipped without one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pgserver import PostgresServer, missing_reason


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server per test process (each test takes its own database)."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    return postgres_server.create_database()
