"""Offline pool-tree snapshots: reading them, and rendering an update as orchid attributes."""

from __future__ import annotations

from typing import Any

from ytsched.fairshare.update import Engine, UpdateResult, run_update
from ytsched.snapshot.files import read_document
from ytsched.snapshot.load import parse_snapshot
from ytsched.snapshot.orchid import to_orchid

__all__ = ["compute", "compute_orchid", "parse_snapshot", "read_document", "to_orchid"]


def compute(document: Any, engine: Engine | None = None) -> UpdateResult:
    """Parse a snapshot document and run one fair-share update on it.

    ``engine`` is passed to :func:`run_update` (``None``: the default, native when built).
    """
    return run_update(parse_snapshot(document), engine)


def compute_orchid(document: Any) -> dict[str, Any]:
    """Parse a snapshot document, run the update, and return orchid-shaped output."""
    return to_orchid(compute(document))
