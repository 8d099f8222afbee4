"""Migrations: an older database is upgraded in place with its rows; a newer one is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from tests.store.conftest import leader_store
from tests.store.v1_schema import V1_SQLITE_SCHEMA
from ytsched.errors import YtschedError
from ytsched.store import SQLiteStore
from ytsched.store.migrations import SCHEMA_VERSION


def test_sqlite_database_of_the_previous_release_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "ytsched.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(V1_SQLITE_SCHEMA)
    old.execute("PRAGMA user_version=1")
    old.execute("INSERT INTO meta (key, value) VALUES ('initialized', 'true')")
    old.execute(
        "INSERT INTO operations (id, seq, type, user, spec, state, suspended, start_time,"
        " finish_time, runtime, events, result) VALUES"
        " ('op-1', 1, 'vanilla', 'alice', '{}', 'running', 0, 5.5, NULL, '{}', '[]', NULL)"
    )
    old.execute("INSERT INTO tokens (token_hash, user) VALUES ('h', 'root')")
    old.close()

    store = SQLiteStore(path)
    assert store.schema_version == SCHEMA_VERSION
    assert store.get_meta("initialized") is True
    [row] = store.load_operations()
    assert (row.id, row.user, row.start_time) == ("op-1", "alice", 5.5)
    assert store.tokens() == {"h": "root"}
    assert store.instances() == []  # the table migration 2 added
    store.close()
    again = SQLiteStore(path)  # reopening does not migrate twice
    assert again.schema_version == SCHEMA_VERSION
    assert len(again.load_operations()) == 1
    again.close()


def test_sqlite_database_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ytsched.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(YtschedError) as raised:
        SQLiteStore(path)
    assert raised.value.code == "StoreTooNew"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (99,)


def test_postgresql_version_1_database_is_upgraded(postgres_url: str) -> None:
    from ytsched.store.postgresql import found_version, migrate

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert migrate(conn, target=1) == 1
        conn.execute(
            'INSERT INTO operations (id, seq, type, "user", spec, state, suspended,'
            " start_time, finish_time, runtime, events, result) VALUES"
            " ('op-1', 1, 'vanilla', 'alice', '{}', 'pending', 0, 5.5, NULL, '{}', '[]', NULL)"
        )
        assert found_version(conn) == 1
    store = leader_store(postgres_url)
    assert store.schema_version == SCHEMA_VERSION
    [row] = store.load_operations()
    assert (row.id, row.user, row.state) == ("op-1", "alice", "pending")
    with store.transaction():  # writes work, now fenced by the epoch
        store.update_operation(row)
    store.close()


def test_postgresql_database_newer_than_the_code_is_refused(postgres_url: str) -> None:
    from ytsched.store.postgresql import PostgresStore

    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(YtschedError) as raised:
        PostgresStore(postgres_url)
    assert raised.value.code == "StoreTooNew"
