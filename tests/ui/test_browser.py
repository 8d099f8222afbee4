"""The Web UI in a real headless browser against a real server with real node agents.

Chromium comes from the system packages (``apt-get install chromium``; ``.ci/run`` installs it)
and is driven by Playwright through ``executable_path``: no browser download.  Without it (a
fresh machine) these tests are skipped, and the run's summary says why; ``.ci/run`` sets
``YTSCHED_REQUIRE_BROWSER_TESTS=1`` so that in CI a missing Chromium fails instead.
``YTSCHED_SKIP_BROWSER_TESTS=1`` skips them even where Chromium is installed.

Every page the browser loads must come from the server under test: a request to any other host
fails the test (the UI vendors its scripts and styles).  Pages refresh every 0.3 s here and the
server samples history every 0.2 s, so live updates show up within a few seconds.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright import sync_api as playwright_api

from tests.e2e.cluster import TOKEN, ProcessCluster, wait_until
from ytsched.client import Client

CHROMIUM = os.environ.get("YTSCHED_CHROMIUM") or (
    shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
)
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
WAIT_MS = 30_000
POOL_TREES: dict[str, Any] = {
    "default_tree": "default",
    "pool_trees": {
        "default": {
            "config": {},
            "pools": {
                "busy": {"weight": 1},
                "idle": {"weight": 1},
                "edit": {"weight": 1},
                "parent": {"pools": {"child": {}}},
            },
        }
    },
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if os.environ.get("YTSCHED_SKIP_BROWSER_TESTS") == "1":
        pytest.skip("YTSCHED_SKIP_BROWSER_TESTS=1")
    if not Path(CHROMIUM).is_file():
        reason = (
            f"Chromium is not installed ({CHROMIUM}): the Web UI browser tests need it"
            " (apt-get install chromium, or set YTSCHED_CHROMIUM to its path)"
        )
        if os.environ.get("YTSCHED_REQUIRE_BROWSER_TESTS") == "1":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    with playwright_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    cluster = ProcessCluster(
        tmp_path_factory.mktemp("ui-browser"),
        pool_trees=POOL_TREES,
        server_args=["--history-period", "0.2", "--ui-refresh-period", "0.3"],
    )
    try:
        yield cluster.start()
    finally:
        cluster.stop()


class Session:
    """A browser context logged in through the login page; it records every request."""

    def __init__(self, browser: Any, cluster: ProcessCluster, token: str) -> None:
        self.cluster = cluster
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.set_default_timeout(WAIT_MS)
        self.requests: list[str] = []
        self.page = self.context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        self.page.goto(f"{cluster.url}/ui/")
        assert "/ui/login" in self.page.url
        self.page.fill("#token", token)
        self.page.click("button[type=submit]")
        self.page.wait_for_url("**/ui/trees/default")

    def goto(self, path: str) -> Any:
        response = self.page.goto(f"{self.cluster.url}{path}")
        assert response is not None
        return response

    def script_errors(self) -> list[str]:
        """Script errors and CSP violations (error statuses of our own requests aside)."""
        return [e for e in self.errors if not e.startswith("Failed to load resource")]

    def foreign_requests(self) -> list[str]:
        own = urlsplit(self.cluster.url).netloc
        return [url for url in self.requests if urlsplit(url).netloc != own]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def admin(browser: Any, live: ProcessCluster) -> Iterator[Session]:
    session = Session(browser, live, TOKEN)
    try:
        yield session
        assert session.foreign_requests() == []
        assert session.script_errors() == []
    finally:
        session.close()


@pytest.fixture
def yt(live: ProcessCluster) -> Client:
    return live.client()


def _running_jobs(yt: Client, op: str) -> int:
    view = yt.get_operation(op, attributes=["brief_progress"])
    return int(view["brief_progress"]["jobs"]["running"])


def test_every_page_renders_with_real_operations(admin: Session, yt: Client) -> None:
    op = yt.run_vanilla("sleep 60", job_count=2, pool="busy", spec={"title": "browser busy"})
    try:
        wait_until(lambda: _running_jobs(yt, op) == 2, 30, "the jobs to run")
        page = admin.page
        admin.goto("/ui/trees/default")
        assert page.locator("table.pools tbody tr").count() == 6
        page.wait_for_function(
            "() => parseFloat(document.querySelector('tr[data-pool=\"busy\"]').dataset.usage) > 0"
        )
        page.wait_for_function(
            """() => document.querySelector("tr[data-pool='busy'] .bar.usage")
                .getBoundingClientRect().width > 0"""
        )
        assert page.locator(".totals .card").count() >= 4

        admin.goto("/ui/trees/default/pools/busy")
        page.wait_for_selector(".chart canvas")
        assert page.locator("tr[data-operation]").count() == 1
        assert "browser busy" in page.inner_text("#pool-members")

        admin.goto(f"/ui/operations/{op}")
        assert "browser busy" in page.inner_text("h1")
        assert op in page.inner_text(".explain-text")
        page.wait_for_function(
            "() => document.querySelectorAll('tr[data-job-state=\"running\"]').length === 2"
        )
        page.wait_for_selector(".chart canvas")
        assert '"sleep 60"' in page.inner_text("pre.code")

        admin.goto("/ui/operations")
        assert page.locator(f"tr[data-operation='{op}']").count() == 1

        admin.goto("/ui/nodes")
        nodes = page.locator("tr[data-node]")
        assert nodes.count() == 2
        assert page.locator("tr[data-node] .badge.good").count() == 2
        assert "cpu 2" in page.inner_text("tr[data-node='node-1']")

        missing = admin.goto("/ui/operations/0-0-0-0")
        assert missing.status == 404 and "NoSuchOperation" in page.inner_text(".error-code")
    finally:
        yt.abort_op(op)


def test_usage_bars_follow_usage_without_reloading(admin: Session, yt: Client) -> None:
    page = admin.page
    admin.goto("/ui/trees/default")
    bar = "tr[data-pool='idle'] .bar.usage"
    child = page.locator("tr[data-pool='child']")
    # The table is swapped every 0.3 s: checks wait (and retry) rather than read once, so that
    # a swap landing between an action and its check cannot fail the test.
    page.wait_for_function(
        f'() => document.querySelector("{bar}").getBoundingClientRect().width === 0'
    )
    # Collapse "parent": the live refresh must keep the user's view.
    page.click("[data-toggle='parent']")
    playwright_api.expect(child).to_be_hidden()
    page.evaluate("window.__notReloaded = true")
    op = yt.run_vanilla("sleep 60", job_count=2, pool="idle")
    try:
        page.wait_for_function(
            f'() => document.querySelector("{bar}").getBoundingClientRect().width > 0'
        )
        assert page.evaluate("window.__notReloaded") is True
        playwright_api.expect(child).to_be_hidden()
        usage = float(page.get_attribute("tr[data-pool='idle']", "data-usage") or 0)
        assert usage > 0
    finally:
        yt.abort_op(op)
    page.wait_for_function(
        f'() => document.querySelector("{bar}").getBoundingClientRect().width === 0'
    )
    page.click("[data-toggle='parent']")
    playwright_api.expect(child).to_be_visible()


def test_an_admin_edit_is_validated_then_applied(admin: Session, yt: Client) -> None:
    page = admin.page
    admin.goto("/ui/trees/default/pools/edit")
    page.fill("[name='weight']", "-3")
    page.click(".pool-form button[type=submit]")
    error = page.locator("[data-error-for='weight']")
    error.wait_for()
    assert "InvalidConfig" in error.inner_text()
    assert page.get_attribute("[name='weight']", "aria-invalid") == "true"
    assert yt.get("//sys/pools/edit/@weight") == 1
    page.fill("[name='weight']", "4")
    page.click(".pool-form button[type=submit]")
    page.wait_for_selector(".ok-box")
    assert "weight" in page.inner_text(".ok-box")
    assert page.input_value("[name='weight']") == "4"
    assert yt.get("//sys/pools/edit/@weight") == 4
    assert page.locator("[data-error-for]").count() == 0


def test_users_without_administer_get_no_form_and_a_forged_post_is_refused(
    browser: Any, live: ProcessCluster, yt: Client
) -> None:
    yt.create("user", attributes={"name": "viewer"})
    token = yt.issue_token("viewer")
    viewer = Session(browser, live, token)
    try:
        page = viewer.page
        viewer.goto("/ui/trees/default/pools/edit")
        assert "viewer" in page.inner_text(".who")
        assert page.locator(".pool-form").count() == 0
        before = yt.get("//sys/pools/edit/@")
        answer = page.evaluate(
            """async () => {
                const response = await fetch(location.pathname, {
                    method: "POST",
                    headers: {"Content-Type": "application/x-www-form-urlencoded"},
                    body: "weight=7",
                });
                return {status: response.status, text: await response.text()};
            }"""
        )
        assert answer["status"] == 403
        assert "AuthorizationError" in answer["text"]
        assert yt.get("//sys/pools/edit/@") == before
        assert viewer.foreign_requests() == []
        assert viewer.script_errors() == []
    finally:
        viewer.close()
