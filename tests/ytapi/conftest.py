"""One real ytsched server with two real node agents, driven by the official YTsaurus client.

The cluster is shared by the package's tests (starting one costs a few seconds); every test
works in its own pools, so the tests do not depend on each other's state.  Run this suite
alone with ``pytest tests/ytapi`` or ``pytest -m ytapi``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yt.wrapper as yt_wrapper

from tests.e2e.cluster import TOKEN, ProcessCluster

YT_BINARY = Path(sys.executable).with_name("yt")


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    process_cluster = ProcessCluster(
        tmp_path_factory.mktemp("ytapi"),
        nodes=2,
        node_resources="cpu=4,memory=8G,user_slots=3",
    )
    try:
        yield process_cluster.start()
    finally:
        process_cluster.stop()


def make_client(url: str, token: str) -> Any:
    """A ``YtClient`` that fails fast (no retries): a refusal must surface, not be retried."""
    config = {
        "proxy": {"retries": {"enable": False}, "request_timeout": 20000},
        # The client retries "too many operations" (202) for hours, as against YTsaurus.
        "start_operation_retries": {"enable": False},
        "operation_tracker": {"poll_period": 200},
        "pickling": {"enable_local_files_usage_in_job": False},
    }
    return yt_wrapper.YtClient(proxy=url, token=token, config=config)


@pytest.fixture
def yt(cluster: ProcessCluster) -> Any:
    return make_client(cluster.url, TOKEN)


class Cli:
    """The ``yt`` command line pointed at the cluster (``YT_PROXY`` / ``YT_TOKEN``)."""

    def __init__(self, url: str, token: str) -> None:
        self.env = dict(os.environ, YT_PROXY=url, YT_TOKEN=token, YT_USE_HOSTS="1")

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(YT_BINARY), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"yt {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result


@pytest.fixture
def cli(cluster: ProcessCluster) -> Cli:
    return Cli(cluster.url, TOKEN)
