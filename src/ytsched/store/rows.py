"""The rows the store reads and writes, and how documents are encoded in them.

Both engines store the same rows; values that are documents (configs, specs, events) are JSON
text, so a database can be moved between engines with plain SQL tools.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


def token_hash(token: str) -> str:
    """Tokens are stored hashed so that a copied database does not leak credentials."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(slots=True)
class OperationRow:
    id: str
    seq: int
    type: str
    user: str
    spec: dict[str, Any]
    state: str
    suspended: bool
    start_time: float
    finish_time: float | None
    runtime: dict[str, Any]
    events: list[dict[str, Any]]
    result: dict[str, Any] | None


@dataclass(slots=True)
class JobRow:
    id: str
    operation_id: str
    task: str
    job_index: int
    attempt: int
    node: str | None
    tree: str | None
    state: str
    start_time: float
    finish_time: float | None = None
    reason: str | None = None
    abort_reason: str | None = None
    interruption: dict[str, Any] | None = None
    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


@dataclass(slots=True)
class NodeRow:
    address: str
    tags: list[str]
    user_tags: list[str]
    resource_limits: dict[str, float]
    last_seen: float


@dataclass(slots=True)
class TreeRows:
    """A tree with its pools (pre-order) as stored."""

    name: str
    config: dict[str, Any]
    attributes: dict[str, Any]
    pools: list[tuple[str, str | None, dict[str, Any]]] = field(default_factory=list)
