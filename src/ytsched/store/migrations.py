"""Schema migrations shared by both engines: an ordered list, a version table, one transaction.

Each migration is SQL written once with three dialect tokens: ``{text}`` (PostgreSQL gets
``TEXT COLLATE "C"`` so that ``ORDER BY`` on ids and addresses sorts bytewise as SQLite does),
``{real}`` (PostgreSQL's ``REAL`` is single precision, so times need ``DOUBLE PRECISION``) and
``{bigint}``.  The applied version is one row of ``schema_version``; a database written before
that table existed (SQLite, ``PRAGMA user_version = 1``) is version 1.  A database newer than the
code is refused rather than guessed at.

PostgreSQL additionally gets the fencing function and triggers of :mod:`ytsched.store.fencing`
in migration 2, created by the engine (they are not SQL that SQLite understands).
"""

from __future__ import annotations

from dataclasses import dataclass

from ytsched.errors import YtschedError

V1 = """
CREATE TABLE IF NOT EXISTS meta (key {text} PRIMARY KEY, value {text} NOT NULL);
CREATE TABLE IF NOT EXISTS trees (
    name {text} PRIMARY KEY, seq INTEGER NOT NULL, config {text} NOT NULL,
    attributes {text} NOT NULL
);
CREATE TABLE IF NOT EXISTS pools (
    tree {text} NOT NULL, name {text} NOT NULL, parent {text}, seq INTEGER NOT NULL,
    config {text} NOT NULL, PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS pool_acls (
    tree {text} NOT NULL, name {text} NOT NULL, attributes {text} NOT NULL,
    PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS operations (
    id {text} PRIMARY KEY, seq INTEGER NOT NULL, type {text} NOT NULL, "user" {text} NOT NULL,
    spec {text} NOT NULL, state {text} NOT NULL, suspended INTEGER NOT NULL DEFAULT 0,
    start_time {real} NOT NULL, finish_time {real}, runtime {text} NOT NULL,
    events {text} NOT NULL, result {text}
);
CREATE INDEX IF NOT EXISTS operations_state ON operations (state);
CREATE TABLE IF NOT EXISTS jobs (
    id {text} PRIMARY KEY, operation_id {text} NOT NULL, task {text} NOT NULL,
    job_index INTEGER NOT NULL, attempt INTEGER NOT NULL, node {text}, tree {text},
    state {text} NOT NULL, start_time {real} NOT NULL, finish_time {real}, reason {text},
    abort_reason {text}, interruption {text}, exit_code INTEGER, stdout {text}, stderr {text}
);
CREATE INDEX IF NOT EXISTS jobs_operation ON jobs (operation_id);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
CREATE TABLE IF NOT EXISTS volumes (
    tree {text} NOT NULL, pool {text} NOT NULL, volume {text} NOT NULL, ratio {real} NOT NULL,
    PRIMARY KEY (tree, pool)
);
CREATE TABLE IF NOT EXISTS nodes (
    address {text} PRIMARY KEY, tags {text} NOT NULL, user_tags {text} NOT NULL,
    resource_limits {text} NOT NULL, last_seen {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS users (name {text} PRIMARY KEY, superuser INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (token_hash {text} PRIMARY KEY, "user" {text} NOT NULL);
"""

V2 = """
CREATE TABLE IF NOT EXISTS leader (
    id INTEGER PRIMARY KEY CHECK (id = 1), epoch {bigint} NOT NULL, holder {text},
    address {text}, lease_pid INTEGER, writer_pid INTEGER, expires_at {real}
);
INSERT INTO leader (id, epoch) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS instances (
    holder {text} PRIMARY KEY, address {text} NOT NULL, started_at {real} NOT NULL,
    last_seen {real} NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the engines in the schema text."""

    name: str
    text: str
    real: str
    bigint: str

    def render(self, sql: str) -> list[str]:
        """The statements of a migration in this dialect."""
        body = sql.format(text=self.text, real=self.real, bigint=self.bigint)
        return [part.strip() for part in body.split(";") if part.strip()]


SQLITE = Dialect("sqlite", "TEXT", "REAL", "INTEGER")
POSTGRESQL = Dialect("postgresql", 'TEXT COLLATE "C"', "DOUBLE PRECISION", "BIGINT")

MIGRATIONS: tuple[str, ...] = (V1, V2)
"""Migration ``i`` (0-based) takes the schema from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"

FENCED_TABLES = (
    "meta",
    "trees",
    "pools",
    "pool_acls",
    "operations",
    "jobs",
    "volumes",
    "nodes",
    "users",
    "tokens",
)
"""The scheduler's state: every write to these must carry the leader's epoch (PostgreSQL).
``leader``, ``instances`` and ``schema_version`` belong to election and migration instead."""


def check_version(found: int) -> None:
    if found > SCHEMA_VERSION:
        raise YtschedError(
            "StoreTooNew",
            f"the database has schema version {found}; this ytsched knows up to"
            f" {SCHEMA_VERSION}: upgrade ytsched instead of downgrading the database",
            found=found,
            supported=SCHEMA_VERSION,
        )
