"""Fixtures: a real server with two real node agents on loopback, cleaned up afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster import ProcessCluster

POOL_TREES = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {
                "fair_share_starvation_timeout": 500,
                "fair_share_aggressive_starvation_timeout": 500,
                "preemptive_scheduling_backoff": 0,
                "allocation_preemption_timeout": 5000,
                "allocation_graceful_preemption_timeout": 5000,
                "non_preemptible_resource_usage_threshold": {"user_slots": 0},
            },
            "pools": {
                "alpha": {"weight": 1},
                "beta": {"weight": 1},
                "limited": {"max_running_operation_count": 1},
                "graceful": {"weight": 1},
            },
        }
    },
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[ProcessCluster]:
    process_cluster = ProcessCluster(tmp_path, pool_trees=POOL_TREES)
    try:
        yield process_cluster.start()
    finally:
        process_cluster.stop()
