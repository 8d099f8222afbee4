"""Web UI benchmark: how long the Scheduling page takes to build for large pool trees.

Builds an in-process service (no sockets) with a tree of N pools (groups of 25 under the root,
one operation in every fifth leaf pool, nodes to run their jobs), runs a fair-share update, and
times, separately:

* ``data``: the tree's orchid view and the table rows (:mod:`ytsched.server.ui.views`);
* ``render``: the Jinja2 templates over that data;
* ``page`` / ``fragment``: a whole ``GET /ui/trees/<tree>`` (and its live fragment) through the
  ASGI app, as a browser would fetch them (authentication, headers, commit middleware).

    .venv/bin/python benchmarks/ui_render.py            # 100, 500, 2000 pools
    .venv/bin/python benchmarks/ui_render.py --pools 500 --repeat 20

Prints the best and the median of ``--repeat`` runs in milliseconds, and the page size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ytsched.server.app import create_app  # noqa: E402
from ytsched.server.cluster import Cluster, ServiceConfig  # noqa: E402
from ytsched.server.ui import routes, views  # noqa: E402
from ytsched.server.ui.render import ENVIRONMENT  # noqa: E402

TOKEN = "bench-token"
GROUP = 25


def tree_document(pools: int) -> dict[str, Any]:
    groups = max(1, pools // GROUP)
    per_group = max(1, pools // groups - 1)
    children = {
        f"g{g:03d}": {
            "weight": 1 + g % 4,
            "strong_guarantee_resources": {"cpu": 1} if g % 2 == 0 else {},
            "pools": {f"g{g:03d}p{p:03d}": {"weight": 1 + p % 3} for p in range(per_group)},
        }
        for g in range(groups)
    }
    return {"default_tree": "big", "pool_trees": {"big": {"config": {}, "pools": children}}}


def build(pools: int, directory: Path) -> tuple[Cluster, TestClient, int]:
    now = [1000.0]
    cluster = Cluster(
        ServiceConfig(
            data_dir=directory,
            admin_token=TOKEN,
            initial_pool_trees=tree_document(pools),
            history_period=0.0,
        ),
        clock=lambda: now[0],
    )
    http = TestClient(create_app(cluster, background=False))
    http.__enter__()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    leaves = [
        name
        for name, pool in cluster.trees.trees["big"].pools.items()
        if not pool.children and not pool.is_root
    ]
    for index, pool in enumerate(leaves[::5]):
        spec = {"pool": pool, "tasks": {"t": {"job_count": 1 + index % 3, "command": "true"}}}
        http.post("/api/v4/start_op", json={"spec": spec}, headers=headers).raise_for_status()
    for node in range(max(1, pools // 50)):
        body = {"address": f"n{node}", "resource_limits": {"cpu": 16, "user_slots": 16}}
        http.post("/api/v4/node_heartbeat", json=body, headers=headers).raise_for_status()
    now[0] += 1
    cluster.tick()
    for node in range(max(1, pools // 50)):
        body = {"address": f"n{node}", "resource_limits": {"cpu": 16, "user_slots": 16}}
        http.post("/api/v4/node_heartbeat", json=body, headers=headers).raise_for_status()
    now[0] += 1
    cluster.tick()
    return cluster, http, len(cluster.trees.trees["big"].pools)


def measure(
    action: Callable[[], object], repeat: int, before: Callable[[], None] | None = None
) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()  # untimed
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000.0)
    return min(times), statistics.median(times)


def run(pools: int, repeat: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="ytsched-ui-bench-") as tmp:
        cluster, http, count = build(pools, Path(tmp) / "data")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        try:

            def data() -> object:
                view = views.tree_orchid(cluster, "big")
                rows = views.pool_rows(view)
                return views.tree_summary(view, "big", rows)

            context = routes._tree_context(cluster, "root", "big")
            template = ENVIRONMENT.get_template("scheduling.html")

            def page() -> object:
                response = http.get("/ui/trees/big", headers=headers)
                assert response.status_code == 200
                return response

            def fragment() -> object:
                response = http.get("/ui/fragments/trees/big", headers=headers)
                assert response.status_code == 200
                return response

            size = len(page().content)
            # Each measured build starts from a new orchid version, as the first page request
            # after a fair-share update does (later ones within the version are served cached).
            fresh = cluster.orchid_changed
            results = [
                measure(data, repeat, fresh),
                measure(lambda: template.render(**context), repeat),
                measure(page, repeat, fresh),
                measure(fragment, repeat, fresh),
            ]
            operations = len(cluster.trees.operations)
        finally:
            http.__exit__(None, None, None)
            cluster.close()
    cells = [f"{best:.1f} / {median:.1f}" for best, median in results]
    return [str(count - 1), str(operations), *cells, f"{size / 1024:.0f} KiB"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pools", type=int, nargs="*", default=[100, 500, 2000])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    header = ["pools", "operations", "data ms", "render ms", "page ms", "fragment ms", "page size"]
    lines = [run(pools, args.repeat) for pools in args.pools]
    print("best / median of", args.repeat, "runs")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for line in lines:
        print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    main()
