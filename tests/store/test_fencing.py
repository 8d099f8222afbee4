"""PostgreSQL leases and fencing: one leader at a time, and a deposed leader cannot commit."""

from __future__ import annotations

import psycopg
import pytest

from ytsched.store import election
from ytsched.store.postgresql import LeadershipLost, PostgresStore


def lease_connection(url: str) -> psycopg.Connection[tuple[object, ...]]:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SET lock_timeout = '5s'")
    return conn


def test_only_one_instance_holds_a_live_lease(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with lease_connection(postgres_url) as a, lease_connection(postgres_url) as b:
        first = election.campaign(a, "a", "http://a", 30.0)
        assert first == 1
        assert election.campaign(b, "b", "http://b", 30.0) is None
        assert election.renew(a, first, 30.0)
        state = election.read(b)
        assert (state.holder, state.address, state.free) == ("a", "http://a", False)
        election.release(a, first)
        second = election.campaign(b, "b", "http://b", 30.0)
        assert second == 2
        assert not election.renew(a, first, 30.0)  # the old epoch cannot renew


def test_a_lease_whose_session_died_is_free_before_it_expires(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    holder = lease_connection(postgres_url)
    assert election.campaign(holder, "a", "http://a", 3600.0) == 1
    holder.close()  # what kill -9 of the leader does to its connection
    with lease_connection(postgres_url) as standby:
        for _ in range(100):
            if election.read(standby).free:
                break
            standby.execute("SELECT pg_sleep(0.05)")
        assert election.campaign(standby, "b", "http://b", 30.0) == 2


def test_writes_without_the_current_epoch_are_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with lease_connection(postgres_url) as conn:
        epoch = election.campaign(conn, "a", "http://a", 0.0)  # expires at once
        assert epoch is not None
        old = PostgresStore(postgres_url, epoch=epoch)
        with old.transaction():
            old.set_meta("by", "old")
        lost: list[str] = []
        old.on_lost = lost.append
        assert election.campaign(conn, "b", "http://b", 30.0) == epoch + 1
    with pytest.raises(LeadershipLost), old.transaction():
        old.set_meta("by", "stale")
    assert lost, "the store tells the service it lost the lead"
    reader = PostgresStore(postgres_url)
    assert reader.get_meta("by") == "old"
    reader.close()
    unfenced = PostgresStore(postgres_url)  # no epoch at all: a standby or a stray tool
    with pytest.raises(LeadershipLost), unfenced.transaction():
        unfenced.set_meta("by", "nobody")
    unfenced.abandon()


def test_a_partitioned_leader_cannot_commit_its_open_transaction(postgres_url: str) -> None:
    """The old leader wrote inside a transaction and went silent before committing (paused,
    partitioned); the standby takes the lease; when the old leader comes back its commit fails
    and none of its writes exist."""
    PostgresStore(postgres_url).close()
    with lease_connection(postgres_url) as conn:
        epoch = election.campaign(conn, "a", "http://a", 0.0)
        assert epoch is not None
    old = PostgresStore(postgres_url, epoch=epoch)
    old.deferred = True
    with old.transaction():
        old.set_meta("partitioned-write", 1)  # holds the share lock on the lease row
    with lease_connection(postgres_url) as standby:
        # The lease expired (ttl 0); the standby ends the old writer's session and takes over.
        assert election.campaign(standby, "b", "http://b", 30.0) == epoch + 1
    with pytest.raises(LeadershipLost):
        old.commit()
    reader = PostgresStore(postgres_url)
    assert reader.get_meta("partitioned-write") is None
    reader.close()
    old.abandon()
