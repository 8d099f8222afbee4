"""The ``ytsched local --demo`` workload: a few operations in different pools, with progress.

It shows the things a newcomer should see: operations running in parallel in pools with
different weights, their fair shares, a pending operation waiting for a running limit, and
everything completing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import click

from ytsched.client import Client

FINAL = ("completed", "failed", "aborted")


def run_demo(
    url: str, token: str, *, should_stop: Callable[[], bool], timeout: float = 120
) -> None:
    with Client(url, token) as yt:
        deadline = time.monotonic() + 30
        while not yt.exists("//sys/cluster_nodes/local-node-1") and time.monotonic() < deadline:
            time.sleep(0.2)
        pools = set(yt.list("//sys/pools"))
        research = "research" if "research" in pools else None
        batch = "batch" if "batch" in pools else None
        operations = {
            yt.run_vanilla(
                "sleep 2; echo trained",
                job_count=4,
                pool=research,
                cpu_limit=1,
                spec={"title": "demo: training"},
            ): "training",
            yt.run_vanilla(
                "sleep 1; echo row",
                job_count=8,
                pool=batch,
                cpu_limit=1,
                spec={"title": "demo: batch"},
            ): "batch",
            yt.run_vanilla(
                "sleep 1", job_count=2, cpu_limit=1, spec={"title": "demo: ad hoc"}
            ): "ad hoc (ephemeral pool)",
        }
        click.echo(f"demo: started {len(operations)} operations")
        end = time.monotonic() + timeout
        while time.monotonic() < end and not should_stop():
            shares = yt.get(
                "//sys/scheduler/orchid/scheduler/pool_trees/default/pools",
                fields=["fair_share_ratio", "usage_ratio"],
                default={},
            )
            lines = []
            done = 0
            for op_id, name in operations.items():
                view = yt.get_operation(op_id, attributes=["state", "pool", "brief_progress"])
                jobs = view["brief_progress"]["jobs"]
                pool = shares.get(str(view["pool"]), {})
                lines.append(
                    f"  {name:<24} pool={view['pool']!s:<9} {view['state']:<10}"
                    f" running={jobs['running']} done={jobs['completed']['total']}/{jobs['total']}"
                    f"  pool fair share={100 * float(pool.get('fair_share_ratio') or 0):.0f}%"
                    f" usage={100 * float(pool.get('usage_ratio') or 0):.0f}%"
                )
                done += view["state"] in FINAL
            click.echo("\n".join(lines))
            if done == len(operations):
                break
            time.sleep(1.0)
        click.echo("demo: all operations finished")
        click.echo("demo: try `ytsched explain OP_ID` and `ytsched ops list`")
