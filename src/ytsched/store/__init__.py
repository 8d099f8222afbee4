"""Persistence of the scheduler service: one interface (:class:`Store`), two engines.

SQLite (one file in the data directory) is the embedded default; PostgreSQL is shared by
several scheduler instances, one of which leads (see ``docs/deployment.md``).  Only the
service layer (``ytsched.server``) touches a store; the pure layers never see a database.
"""

from __future__ import annotations

from pathlib import Path

from ytsched.errors import YtschedError
from ytsched.store.base import Store
from ytsched.store.rows import JobRow, NodeRow, OperationRow, TreeRows, token_hash
from ytsched.store.sqlite import SQLiteStore

POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def is_postgresql(url: str | None) -> bool:
    return url is not None and url.startswith(POSTGRESQL_SCHEMES)


def check_store_url(url: str | None) -> None:
    """Refuse a ``--store`` value that names no engine we have (before anything starts)."""
    if url is None or is_postgresql(url) or url.startswith("sqlite:"):
        return
    raise YtschedError(
        "InvalidArgument",
        f"--store {url!r}: expected postgresql://... or sqlite:PATH (default: DATA_DIR/ytsched.db)",
    )


def open_store(url: str | None, data_dir: Path, *, durable: bool = False) -> Store:
    """The store a service uses: ``url`` names PostgreSQL or an SQLite file; None: the data
    directory's ``ytsched.db`` (what ``ytsched local`` always uses)."""
    check_store_url(url)
    if is_postgresql(url):
        from ytsched.store.postgresql import PostgresStore

        assert url is not None
        return PostgresStore(url)
    path = Path(url[len("sqlite:") :]) if url is not None else data_dir / "ytsched.db"
    return SQLiteStore(path, durable=durable)


__all__ = [
    "JobRow",
    "NodeRow",
    "OperationRow",
    "SQLiteStore",
    "Store",
    "TreeRows",
    "check_store_url",
    "is_postgresql",
    "open_store",
    "token_hash",
]
