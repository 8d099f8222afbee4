"""The store interface, run on both engines: what is written is read back, units are atomic."""

from __future__ import annotations

import pytest

from tests.store.conftest import StoreFactory
from ytsched.store import JobRow, NodeRow, OperationRow


def operation(op_id: str, seq: int, **changes: object) -> OperationRow:
    row = OperationRow(
        id=op_id,
        seq=seq,
        type="vanilla",
        user="alice",
        spec={"tasks": {"main": {"command": "true", "job_count": 1}}},
        state="running",
        suspended=False,
        start_time=1700000000.123456,
        finish_time=None,
        runtime={"scheduling_options_per_pool_tree": {"default": {"pool": "alpha"}}},
        events=[{"state": "running", "time": "t", "attributes": {}}],
        result=None,
    )
    for key, value in changes.items():
        setattr(row, key, value)
    return row


def job(job_id: str, op_id: str = "op-1", state: str = "running", **changes: object) -> JobRow:
    row = JobRow(job_id, op_id, "main", 0, 0, "node-1", "default", state, 1700000001.5)
    for key, value in changes.items():
        setattr(row, key, value)
    return row


def test_meta_and_sequences(open_store: StoreFactory) -> None:
    store = open_store()
    with store.transaction():
        store.set_meta("strategy", {"fair_share_update_period": 200})
        store.set_meta("strategy", {"fair_share_update_period": 100})
        assert [store.next_seq("operation") for _ in range(3)] == [1, 2, 3]
        store.set_meta("gone", True)
        store.delete_meta("gone")
    assert store.get_meta("strategy") == {"fair_share_update_period": 100}
    assert store.get_meta("gone", "default") == "default"
    assert store.next_seq("tree") == 1


def test_trees_pools_and_acls_round_trip(open_store: StoreFactory) -> None:
    store = open_store()
    pools = [("research", None, {"weight": 2.0}), ("team", "research", {}), ("batch", None, {})]
    with store.transaction():
        store.save_tree("physical", {"nodes_filter": "gpu"}, {"acl": []}, pools)
        store.save_tree("default", {}, {}, pools[:1])
        store.save_tree("physical", {"nodes_filter": "cpu"}, {}, pools)  # replaces, keeps order
        store.save_pool_acl("default", "research", {"inherit_acl": False})
        store.save_pool_acl("default", "batch", {"acl": [{"action": "allow"}]})
        store.save_pool_acl("default", "batch", None)
    trees = store.load_trees()
    assert [tree.name for tree in trees] == ["physical", "default"]
    assert trees[0].config == {"nodes_filter": "cpu"}
    assert trees[0].pools == pools
    assert store.load_pool_acls() == {("default", "research"): {"inherit_acl": False}}
    with store.transaction():
        store.delete_tree("default")
    assert [tree.name for tree in store.load_trees()] == ["physical"]
    assert store.load_pool_acls() == {}


def test_operations_keep_order_and_exact_times(open_store: StoreFactory) -> None:
    store = open_store()
    with store.transaction():
        store.insert_operation(operation("op-b", 2))
        store.insert_operation(operation("op-a", 1, user="bob"))
        updated = operation("op-b", 2, state="completed", suspended=True, finish_time=1.25)
        updated.result = {"error": None}
        store.update_operation(updated)
    rows = store.load_operations()
    assert [row.id for row in rows] == ["op-a", "op-b"]
    assert rows[0].user == "bob"
    assert rows[0].start_time == 1700000000.123456  # double precision on both engines
    assert (rows[1].state, rows[1].suspended, rows[1].finish_time) == ("completed", True, 1.25)
    assert rows[1].result == {"error": None}


def test_jobs_lifecycle(open_store: StoreFactory) -> None:
    store = open_store()
    with store.transaction():
        store.insert_jobs([job("j2"), job("j1"), job("j3", op_id="op-2")])
        store.insert_job(job("j1", node="node-2"))  # an upsert
        store.finish_job("j2", state="completed", finish_time=5.0, reason=None)
        store.finish_jobs([("j1", "aborted", 6.0, "node offline", "node_offline")])
        store.finish_job("j1", state="aborted", finish_time=6.0, reason="again")
        store.set_job_output("j2", 0, "out", None)
        store.set_job_output("j2", None, None, "err")
        store.set_job_interruption("j3", {"reason": "preemption", "deadline": 9.0})
    j1 = store.job("j1")
    assert j1 is not None
    assert (j1.node, j1.state, j1.reason, j1.abort_reason) == (
        "node-2",
        "aborted",
        "again",
        "node_offline",
    )
    j2 = store.job("j2")
    assert j2 is not None and (j2.exit_code, j2.stdout, j2.stderr) == (0, "out", "err")
    assert [j.id for j in store.jobs_of("op-1")] == ["j1", "j2"]
    assert [j.id for j in store.running_jobs()] == ["j3"]
    assert store.running_jobs()[0].interruption == {"reason": "preemption", "deadline": 9.0}
    assert store.job_state_counts("op-1") == {"aborted": 1, "completed": 1}
    assert store.job("missing") is None


def test_volumes_nodes_users_tokens(open_store: StoreFactory) -> None:
    store = open_store()
    with store.transaction():
        store.save_volumes("default", {"alpha": ([1.0, 2.0, 0.0, 0.0, 0.5], 0.25)})
        store.save_volumes("default", {"beta": ([3.0, 0.0, 0.0, 0.0, 0.0], 0.0)})
        store.save_node(NodeRow("node-b", ["gpu"], [], {"cpu": 4.0}, 10.0))
        store.save_node(NodeRow("node-a", [], ["x"], {"cpu": 2.0}, 11.0))
        store.save_node(NodeRow("node-c", [], [], {}, 1.0))
        store.delete_node("node-c")
        store.save_user("alice", False)
        store.save_user("root", True)
        store.add_token("secret-1", "alice")
        store.add_token("secret-2", "root")
    assert store.load_volumes() == {"default": {"beta": ([3.0, 0.0, 0.0, 0.0, 0.0], 0.0)}}
    assert [(n.address, n.tags, n.user_tags) for n in store.load_nodes()] == [
        ("node-a", [], ["x"]),
        ("node-b", ["gpu"], []),
    ]
    assert store.users() == {"alice": False, "root": True}
    assert store.token_user("secret-1") == "alice"
    assert "secret-1" not in store.tokens()  # hashes only
    with store.transaction():
        store.delete_user("alice")
    assert store.token_user("secret-1") is None
    assert set(store.tokens().values()) == {"root"}


def test_a_failed_unit_rolls_back_alone_and_deferred_units_commit_together(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    store.deferred = True
    with store.transaction():
        store.set_meta("kept", 1)
    with pytest.raises(RuntimeError), store.transaction():
        store.set_meta("dropped", 1)
        with store.transaction():  # nested units join the outer one
            store.set_meta("dropped-too", 1)
        raise RuntimeError("refused")
    assert store.dirty
    store.commit()
    assert not store.dirty
    store.close()
    reopened = open_store()
    assert reopened.get_meta("kept") == 1
    assert reopened.get_meta("dropped") is None
    assert reopened.get_meta("dropped-too") is None


def test_uncommitted_writes_are_not_visible_to_another_connection(
    open_store: StoreFactory,
) -> None:
    writer = open_store()
    writer.deferred = True
    with writer.transaction():
        writer.set_meta("pending", 1)
    reader = open_store(reader=True)
    assert reader.get_meta("pending") is None
    writer.commit()
    assert reader.get_meta("pending") == 1


def test_schema_version_is_current(open_store: StoreFactory) -> None:
    from ytsched.store.migrations import SCHEMA_VERSION

    assert open_store().schema_version == SCHEMA_VERSION == 2
