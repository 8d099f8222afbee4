"""The API fuzzed from its own OpenAPI schema: no input may produce a 5xx.

Schemathesis generates requests for every operation of ``/openapi.json`` (valid and invalid
bodies, with and without the token) and sends them to the app in-process.  The cluster it runs
against has a tree with pools, a running operation and a node, so generated paths and ids can
reach real objects.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig

TOKEN = "fuzz-token"
SEED_TREES = {
    "default_tree": "default",
    "pool_trees": {"default": {"config": {}, "pools": {"research": {"pools": {"a": {}}}}}},
}


@pytest.fixture(scope="module")
def api_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    directory: Path = tmp_path_factory.mktemp("fuzz")
    cluster = Cluster(
        ServiceConfig(data_dir=directory, admin_token=TOKEN, initial_pool_trees=SEED_TREES)
    )
    from ytsched.server import operations

    operations.start_operation(
        cluster, "root", "vanilla", {"pool": "a", "tasks": {"t": {"job_count": 2}}}
    )
    cluster.tick()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = create_app(cluster, background=False)
        yield schemathesis.openapi.from_asgi("/openapi.json", app)
    cluster.close()


schema = schemathesis.pytest.from_fixture("api_app")


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_errors(case: Any) -> None:
    authorized = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    assert authorized.status_code < 500, authorized.text
    if authorized.status_code >= 400:
        body = authorized.json()
        assert {"code", "message"} <= set(body), body
    anonymous = case.call()
    assert anonymous.status_code < 500
    if case.path not in ("/ping",):
        assert anonymous.status_code >= 400  # never served without a token
