"""The schema written by ytsched before migrations existed (schema 1, SQLite), kept verbatim
so the upgrade test opens exactly what older versions left on disk."""

V1_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trees (
    name TEXT PRIMARY KEY, seq INTEGER NOT NULL, config TEXT NOT NULL, attributes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pools (
    tree TEXT NOT NULL, name TEXT NOT NULL, parent TEXT, seq INTEGER NOT NULL,
    config TEXT NOT NULL, PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS pool_acls (
    tree TEXT NOT NULL, name TEXT NOT NULL, attributes TEXT NOT NULL, PRIMARY KEY (tree, name)
);
CREATE TABLE IF NOT EXISTS operations (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, type TEXT NOT NULL, user TEXT NOT NULL,
    spec TEXT NOT NULL, state TEXT NOT NULL, suspended INTEGER NOT NULL DEFAULT 0,
    start_time REAL NOT NULL, finish_time REAL, runtime TEXT NOT NULL, events TEXT NOT NULL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS operations_state ON operations (state);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, operation_id TEXT NOT NULL, task TEXT NOT NULL,
    job_index INTEGER NOT NULL, attempt INTEGER NOT NULL, node TEXT, tree TEXT,
    state TEXT NOT NULL, start_time REAL NOT NULL, finish_time REAL, reason TEXT,
    abort_reason TEXT, interruption TEXT, exit_code INTEGER, stdout TEXT, stderr TEXT
);
CREATE INDEX IF NOT EXISTS jobs_operation ON jobs (operation_id);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
CREATE TABLE IF NOT EXISTS volumes (
    tree TEXT NOT NULL, pool TEXT NOT NULL, volume TEXT NOT NULL, ratio REAL NOT NULL,
    PRIMARY KEY (tree, pool)
);
CREATE TABLE IF NOT EXISTS nodes (
    address TEXT PRIMARY KEY, tags TEXT NOT NULL, user_tags TEXT NOT NULL,
    resource_limits TEXT NOT NULL, last_seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, superuser INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (token_hash TEXT PRIMARY KEY, user TEXT NOT NULL);
"""
