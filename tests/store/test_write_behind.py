"""Write-behind on SQLite: row writes wait in memory and commit in a writer thread, yet every
read sees them, a failed unit drops only its own, and the result equals the plain store's."""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.test_store import job
from ytsched.store import SQLiteStore


def _store(path: Path, *, write_behind: bool = True) -> SQLiteStore:
    store = SQLiteStore(path)
    store.deferred = True
    store.write_behind = write_behind
    return store


def _committed_jobs(path: Path) -> dict[str, tuple[str, str | None]]:
    """What another connection sees: committed rows only."""
    with sqlite3.connect(path) as other:
        rows = other.execute("SELECT id, state, reason FROM jobs").fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def test_rows_wait_for_the_writer_and_reads_see_them(tmp_path: Path) -> None:
    path = tmp_path / "db"
    store = _store(path)
    with store.transaction():
        store.insert_jobs([job("j1"), job("j2")])
    with store.transaction():
        store.finish_jobs([("j1", "completed", 5.0, None, None)])
    assert store.dirty
    assert _committed_jobs(path) == {}  # nothing executed yet
    commit = store.take_commit()
    assert commit is not None
    assert store.dirty  # in flight until the writer is done
    writer = threading.Thread(target=commit)
    writer.start()
    writer.join()
    assert not store.dirty
    assert _committed_jobs(path) == {"j1": ("completed", None), "j2": ("running", None)}
    # A read first runs what is pending, so it sees writes not yet committed.
    with store.transaction():
        store.finish_jobs([("j2", "failed", 6.0, "exit 1", None)])
    row = store.job("j2")
    assert row is not None and row.state == "failed"
    store.close()
    assert _committed_jobs(path)["j2"] == ("failed", "exit 1")


def test_a_failed_unit_drops_only_its_rows_even_inside_a_shared_batch(tmp_path: Path) -> None:
    path = tmp_path / "db"
    store = _store(path)
    with store.transaction():
        store.insert_jobs([job("kept")])
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_jobs([job("dropped")])  # continues the pending batch of the same statement
        raise RuntimeError("refused")
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_jobs([job("dropped-too")])
        store.set_meta("dropped", 1)  # a direct statement: the unit switches to a savepoint
        store.insert_jobs([job("dropped-three")])
        raise RuntimeError("refused")
    with store.transaction():
        store.insert_jobs([job("kept-too")])
    store.commit()
    assert set(_committed_jobs(path)) == {"kept", "kept-too"}
    assert store.get_meta("dropped") is None
    store.close()


def test_a_failed_background_commit_reaches_its_caller_and_the_store_recovers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db"
    store = _store(path)
    with store.transaction():
        store.insert_jobs([job("lost")])
        store._write("INSERT INTO no_such_table VALUES (?)", [(1,)])
    commit = store.take_commit()
    assert commit is not None
    with pytest.raises(sqlite3.OperationalError):
        commit()
    assert not store.dirty
    with store.transaction():
        store.insert_jobs([job("next")])
    store.commit()
    assert set(_committed_jobs(path)) == {"next"}
    store.close()


def test_without_write_behind_nothing_is_handed_to_a_writer(tmp_path: Path) -> None:
    store = _store(tmp_path / "db", write_behind=False)
    with store.transaction():
        store.insert_jobs([job("j1")])
    assert store.take_commit() is None
    store.commit()
    assert _committed_jobs(tmp_path / "db") == {"j1": ("running", None)}
    store.close()


# A unit: (jobs inserted, jobs finished, a direct statement in the middle?, raises?).
_UNIT = st.tuples(
    st.lists(st.sampled_from("abcdef"), max_size=3),
    st.lists(st.sampled_from("abcdef"), max_size=3),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_UNIT, st.booleans()), max_size=12))
def test_write_behind_ends_in_the_same_database_as_the_plain_store(
    steps: list[tuple[tuple[list[str], list[str], bool, bool], bool]],
) -> None:
    """Any sequence of units (some failing, some mixing direct statements) with commits in
    between (taken by a writer or synchronous) leaves what the plain store leaves."""
    results = []
    for write_behind in (False, True):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "db"
            store = _store(path, write_behind=write_behind)
            for index, ((inserted, finished, direct, fails), commit_after) in enumerate(steps):
                try:
                    with store.transaction():
                        store.insert_jobs([job(name, reason=str(index)) for name in inserted])
                        if direct:
                            store.set_meta(f"unit-{index}", index)
                        store.finish_jobs([(n, "done", 1.0, str(index), None) for n in finished])
                        if fails:
                            raise RuntimeError("refused")
                except RuntimeError:
                    pass
                if commit_after:
                    commit = store.take_commit()
                    if commit is None:
                        store.commit()
                    else:
                        commit()
            store.close()
            with sqlite3.connect(path) as other:
                jobs = sorted(other.execute("SELECT id, state, reason FROM jobs").fetchall())
                meta = sorted(other.execute("SELECT key, value FROM meta").fetchall())
            results.append((jobs, meta))
    assert results[0] == results[1]
