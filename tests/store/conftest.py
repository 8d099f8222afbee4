"""Stores on both engines: every test of this directory runs on SQLite (also with write-behind,
``ytsched.store.write_behind``) and on PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from ytsched.store import SQLiteStore, Store
from ytsched.store.election import campaign

StoreFactory = Callable[..., Store]


def leader_store(url: str, holder: str = "test") -> Store:
    """A PostgreSQL store that holds the lease (writes need the leader's epoch)."""
    from ytsched.store.postgresql import PostgresStore

    PostgresStore(url).close()  # migrate, so the lease row exists
    with psycopg.connect(url, autocommit=True) as conn:
        # Free: the previous test store's lease session is closed (or nobody held it).
        epoch = campaign(conn, holder, "http://127.0.0.1:1", 60.0)
    assert epoch is not None
    return PostgresStore(url, epoch=epoch)


@pytest.fixture(params=["sqlite", "sqlite-write-behind", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[StoreFactory]:
    """Opens (and reopens) a store on one database; closes them all afterwards."""
    opened: list[Store] = []
    url = request.getfixturevalue("postgres_url") if engine == "postgresql" else None

    def factory(*, reader: bool = False) -> Store:
        """``reader``: a PostgreSQL store without the lease (it may read, not write)."""
        from ytsched.store.postgresql import PostgresStore

        store: Store
        if url is None:
            sqlite = SQLiteStore(tmp_path / "ytsched.db")
            sqlite.write_behind = engine == "sqlite-write-behind" and not reader
            store = sqlite
        else:
            store = PostgresStore(url) if reader else leader_store(url)
        opened.append(store)
        return store

    try:
        yield factory
    finally:
        for store in opened:
            with contextlib.suppress(Exception):
                store.close()
