"""The service itself on both engines: what a leader wrote, the next one revives."""

from __future__ import annotations

from pathlib import Path

from tests.store.conftest import StoreFactory
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.operations import start_operation

TREES = {
    "default_tree": "default",
    "pool_trees": {"default": {"config": {}, "pools": {"team": {"weight": 2}}}},
}


def test_operations_pools_and_tokens_survive_a_new_leader(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    config = ServiceConfig(data_dir=tmp_path / "data", admin_token="t0k", initial_pool_trees=TREES)
    first = Cluster(config, clock=lambda: 1000.0, store=open_store())
    spec = {"pool": "team", "tasks": {"main": {"command": "true", "job_count": 3}}}
    op = start_operation(first, "root", "vanilla", spec, mutation_id="m-1")
    first.tick()
    first.close()

    second = Cluster(config, clock=lambda: 1001.0, store=open_store())
    record = second.record(op)
    assert record.row.state == "running"
    assert any(event["attributes"].get("revived") for event in record.row.events)
    assert second.tree("default").pools["team"].config.weight == 2
    assert second.auth.authenticate("Bearer t0k") == "root"
    assert start_operation(second, "root", "vanilla", spec, mutation_id="m-1") == op
    second.close()
