"""Screenshots of the Web UI for ``docs/ui/``: a real local cluster, a demo workload, Chromium.

Starts ``ytsched server`` and three ``ytsched node`` agents on loopback (the test suite's
:class:`tests.e2e.cluster.ProcessCluster`), runs a workload that leaves one pool starving, an
integral pool draining its volume and some jobs preempted, then visits each page with
Playwright driving the system Chromium and writes PNGs:

    .venv/bin/python scripts/ui_screenshots.py            # -> docs/ui/*.png
    .venv/bin/python scripts/ui_screenshots.py --out /tmp/shots --chromium /usr/bin/chromium

Nothing is fetched from the network (the browser is started with background networking off).
Takes about a minute: the charts need a few dozen history samples.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from tests.e2e.cluster import TOKEN, ProcessCluster, wait_until  # noqa: E402

from ytsched.client import Client  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
POOL_TREES: dict[str, Any] = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {
                "fair_share_starvation_timeout": 1000,
                "fair_share_aggressive_starvation_timeout": 2000,
                "integral_guarantees": {
                    "pool_capacity_saturation_period": 60000,
                    "smooth_period": 1000,
                },
            },
            "pools": {
                "research": {
                    "weight": 3,
                    "strong_guarantee_resources": {"cpu": 4},
                    "pools": {
                        "ml": {
                            "strong_guarantee_resources": {"cpu": 2},
                            "pools": {"training": {}, "inference": {"weight": 2}},
                        },
                        "vision": {"strong_guarantee_resources": {"cpu": 1}},
                    },
                },
                "burst": {
                    "integral_guarantees": {
                        "guarantee_type": "burst",
                        "resource_flow": {"cpu": 1},
                        "burst_guarantee_resources": {"cpu": 4},
                    }
                },
                "batch": {
                    "weight": 1,
                    "allow_normal_preemption": False,
                    "pools": {"nightly": {}, "adhoc": {"max_running_operation_count": 1}},
                },
                "prod": {"weight": 2, "max_running_operation_count": 4},
                "scratch": {"weight": 1},
                "sandbox": {"resource_limits": {"cpu": 2}},
            },
        }
    },
}


def shoot(page: Page, url: str, path: Path, *, wait_for: str | None = None) -> None:
    page.goto(url)
    if wait_for is not None:
        page.wait_for_selector(wait_for, timeout=30_000)
    page.wait_for_timeout(400)
    page.screenshot(path=str(path), full_page=True)
    print(f"wrote {path}")


def workload(yt: Client) -> dict[str, str]:
    """Operations that leave the UI something to show; returns a few of their ids by role.

    ``nightly`` (in a pool that forbids preemption), ``scratch`` and ``adhoc`` fill the
    cluster (a second ``adhoc`` waits at its pool's running limit).  The ``burst`` pool
    accumulates integral volume while idle; ``training`` and ``prod`` arrive and starve until
    they preempt ``scratch``; then ``burst`` bursts on its integral guarantee and drains its
    volume.
    """
    ops: dict[str, str] = {}
    ops["nightly"] = yt.run_vanilla(
        "sleep 600", job_count=4, pool="nightly", spec={"title": "nightly aggregation"}
    )
    ops["scratch"] = yt.run_vanilla(
        "sleep 600", job_count=6, pool="scratch", spec={"title": "scratch exploration"}
    )
    ops["adhoc"] = yt.run_vanilla("sleep 600", job_count=2, pool="adhoc", spec={"title": "adhoc"})
    yt.run_vanilla("sleep 600", job_count=2, pool="adhoc", spec={"title": "adhoc (waits)"})
    time.sleep(16)  # the burst pool accumulates volume while idle
    ops["training"] = yt.run_vanilla(
        "sleep 600", job_count=6, pool="training", spec={"title": "model training"}
    )
    ops["prod"] = yt.run_vanilla(
        "sleep 600", job_count=3, pool="prod", spec={"title": "prod serving"}
    )
    time.sleep(4)
    # Its weight alone would give it little now; its burst guarantee gives it more, paid for
    # from the accumulated volume.
    ops["burst"] = yt.run_vanilla(
        "sleep 600", job_count=4, pool="burst", spec={"title": "burst backfill"}
    )
    return ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "ui")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--warmup", type=float, default=25.0, help="seconds of history")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ytsched-shots-") as tmp:
        cluster = ProcessCluster(
            Path(tmp),
            nodes=3,
            node_resources="cpu=4,memory=8G,user_slots=4",
            pool_trees=POOL_TREES,
            server_args=["--history-period", "0.5", "--ui-refresh-period", "2"],
        )
        try:
            cluster.start()
            yt = cluster.client()
            yt.create("user", attributes={"name": "alice"})
            ops = workload(yt)
            wait_until(
                lambda: yt.get_operation(ops["training"], attributes=["brief_progress"])[
                    "brief_progress"
                ]["jobs"]["running"]
                > 0,
                60,
                "training to run",
            )
            time.sleep(args.warmup)
            capture(cluster.url, args, ops)
        finally:
            cluster.stop()


def capture(url: str, args: argparse.Namespace, ops: dict[str, str]) -> None:
    out: Path = args.out
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(f"{url}/ui/login")
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        page.wait_for_url("**/ui/trees/**")
        shoot(page, f"{url}/ui/trees/default", out / "scheduling.png")
        shoot(
            page,
            f"{url}/ui/trees/default/pools/burst",
            out / "pool.png",
            wait_for=".chart canvas",
        )
        shoot(
            page,
            f"{url}/ui/operations/{ops['scratch']}",
            out / "operation.png",
            wait_for=".chart canvas",
        )
        shoot(page, f"{url}/ui/operations", out / "operations.png")
        shoot(page, f"{url}/ui/nodes", out / "nodes.png")
        page.goto(f"{url}/ui/trees/default/pools/vision")
        page.fill("[name='weight']", "-2")
        page.fill("[name='max_running_operation_count']", "-1")
        page.click(".pool-form button[type=submit]")
        page.wait_for_selector(".field-error")
        box = page.locator("#settings-form").bounding_box()
        assert box is not None
        page.screenshot(
            path=str(out / "admin-form-error.png"),
            full_page=True,
            clip={
                "x": max(0.0, box["x"] - 12),
                "y": max(0.0, box["y"] - 8),
                "width": box["width"] + 24,
                "height": box["height"] + 20,
            },
        )
        print(f"wrote {out / 'admin-form-error.png'}")
        narrow = browser.new_context(
            viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
        )
        narrow.add_cookies(context.cookies())
        small = narrow.new_page()
        small.goto(f"{url}/ui/trees/default")
        small.wait_for_timeout(400)
        small.screenshot(path=str(out / "scheduling-narrow.png"), full_page=False)
        print(f"wrote {out / 'scheduling-narrow.png'}")
        browser.close()


if __name__ == "__main__":
    main()
