"""YTsaurus-protocol overhead: the same reads through the official client and through ours.

Starts ``ytsched server`` on loopback (no nodes; a small pool tree), then times ``N`` calls of
each kind, one after another from one process, through

* ``yt.wrapper.YtClient`` (the official client; YSON headers, JSON output, ``OAuth``), and
* ``ytsched.client.Client`` (our API: ``POST`` + JSON + ``Bearer``),
* bare ``httpx`` speaking the YTsaurus protocol (``GET`` + ``X-YT-Parameters``), which separates
  the server's protocol layer from the official client's own cost,

and prints p50 / p90 / p99 per call.  Both clients keep their HTTP connection alive.  The
difference is what the protocol layer (and each client) costs; the command behind it is the same.

    .venv/bin/python benchmarks/ytapi_latency.py --calls 300
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import yt.wrapper as yt_wrapper  # noqa: E402
from tests.e2e.cluster import ProcessCluster  # noqa: E402

TOKEN = "e2e-admin-token"
TREES = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {},
            "pools": {
                f"p{i}": {"weight": 1, "pools": {f"p{i}_{j}": {} for j in range(5)}}
                for i in range(20)
            },
        }
    },
}


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return pick(0.5), pick(0.9), pick(0.99)


def _time(call: Callable[[], Any], count: int) -> list[float]:
    call()  # warm up (discovery, connection)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        cluster = ProcessCluster(Path(directory), nodes=0, pool_trees=TREES)
        cluster.start_server()
        try:
            ours = cluster.client()
            theirs = yt_wrapper.YtClient(proxy=cluster.url, token=TOKEN)
            raw = httpx.Client(base_url=cluster.url, headers={"Authorization": f"OAuth {TOKEN}"})

            class Raw:
                @staticmethod
                def get(path: str) -> Any:
                    headers = {
                        "X-YT-Header-Format": "json",
                        "X-YT-Parameters": f'{{"path": "{path}"}}',
                    }
                    response = raw.get("/api/v4/get", headers=headers)
                    response.raise_for_status()
                    return response.json()["value"]

            cases = [
                ("get pool attribute", "//sys/pool_trees/default/p3/@weight"),
                ("get whole tree", "//sys/pool_trees/default"),
                ("get orchid pools", "//sys/scheduler/orchid/scheduler/pool_trees/default/pools"),
            ]
            print(f"{args.calls} sequential calls each; milliseconds per call")
            print(f"{'call':<22} {'client':<10} {'p50':>7} {'p90':>7} {'p99':>7}")
            for name, path in cases:
                for label, client in (("yt.wrapper", theirs), ("raw yt", Raw), ("ytsched", ours)):
                    samples = _time(lambda c=client, p=path: c.get(p), args.calls)  # type: ignore[misc]
                    p50, p90, p99 = _percentiles(samples)
                    print(f"{name:<22} {label:<10} {p50:7.2f} {p90:7.2f} {p99:7.2f}")
            raw.close()
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
