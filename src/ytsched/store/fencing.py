"""Fencing on PostgreSQL: the database refuses writes that do not carry the leader's epoch.

Several scheduler instances share one database; the lease row ``leader`` (see
:mod:`ytsched.store.election`) names the holder and an *epoch* that grows by one at every
takeover.  A leader sets its epoch on its write connection (``SET ytsched.epoch``); a statement
trigger on every table of scheduler state compares it with the lease row and raises
``YTF01`` when they differ.  The trigger takes a share lock on the lease row, which a takeover
(an ``UPDATE`` of that row) must wait for: a transaction of the old leader either commits
before the epoch changes, or is refused after — there is no moment at which both leaders can
commit, whatever the network or the processes do (a paused leader's open transaction is ended
by the new leader terminating its session, see ``campaign``).
"""

from __future__ import annotations

from ytsched.store.migrations import FENCED_TABLES

FENCED_SQLSTATE = "YTF01"

FUNCTION = """
CREATE OR REPLACE FUNCTION ytsched_fence() RETURNS trigger LANGUAGE plpgsql AS $fence$
DECLARE
    mine TEXT := current_setting('ytsched.epoch', true);
    current_epoch BIGINT;
BEGIN
    -- Once per transaction: the share lock taken below is held until it ends, so the epoch
    -- cannot change under it (the flag is transaction-local and undone by a rollback).
    IF current_setting('ytsched.fenced', true) = '1' THEN
        RETURN NULL;
    END IF;
    SELECT epoch INTO current_epoch FROM leader WHERE id = 1 FOR SHARE;
    IF mine IS NULL OR mine = '' OR mine::BIGINT <> current_epoch THEN
        RAISE EXCEPTION 'write refused: epoch % is not the lease''s epoch %',
            coalesce(nullif(mine, ''), '(none)'), current_epoch
            USING ERRCODE = 'YTF01';
    END IF;
    PERFORM set_config('ytsched.fenced', '1', true);
    RETURN NULL;
END
$fence$
"""


def statements() -> list[str]:
    """The function and one ``BEFORE ... FOR EACH STATEMENT`` trigger per fenced table."""
    result = [FUNCTION.strip()]
    for table in FENCED_TABLES:
        result.append(f"DROP TRIGGER IF EXISTS ytsched_fence ON {table}")
        result.append(
            f"CREATE TRIGGER ytsched_fence BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE"
            f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION ytsched_fence()"
        )
    return result
