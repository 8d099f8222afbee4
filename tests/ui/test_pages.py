"""The Web UI against an in-process service: login, pages, fragments, chart data, errors."""

from __future__ import annotations

import html
import json
import re

from tests.server.conftest import ADMIN
from tests.ui.conftest import ORIGIN, UiService, rows


def _starving_setup(ui: UiService) -> tuple[str, str]:
    """``batch`` fills the node, ``research/team`` then waits past the starvation timeout."""
    ui.heartbeat()
    filler = ui.start("batch", jobs=4)
    ui.run_jobs()
    waiting = ui.start("team", jobs=4)
    for _ in range(4):
        ui.tick()
        if ui.orchid(f"pool_trees/default/operations/{waiting}/starvation_status") == "starving":
            break
    assert ui.orchid("pool_trees/default/pools/team/starvation_status") == "starving"
    return filler, waiting


# --- login, cookie, redirects -------------------------------------------------------------


def test_pages_need_a_login_and_fragments_and_data_say_so(ui: UiService) -> None:
    ui.http.cookies.clear()
    response = ui.http.get("/ui/trees/default", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/login?next=%2Fui%2Ftrees%2Fdefault"
    fragment = ui.http.get("/ui/fragments/trees/default", follow_redirects=False)
    assert fragment.status_code == 401
    assert fragment.headers["HX-Redirect"].startswith("/ui/login?next=")
    data = ui.http.get("/ui/api/history/pools/default/batch")
    assert data.status_code == 401 and data.json()["code"] == "AuthenticationError"
    assert ui.http.get("/", follow_redirects=False).headers["location"] == "/ui/"
    login = ui.page("/ui/login?next=/ui/nodes")
    assert 'name="token"' in login and 'value="/ui/nodes"' in login


def test_login_sets_a_strict_httponly_cookie_and_logout_clears_it(ui: UiService) -> None:
    ui.http.cookies.clear()
    refused = ui.post_form("/ui/login", {"token": "wrong", "next": "/ui/nodes"})
    assert refused.status_code == 401
    assert "AuthenticationError" in refused.text and "set-cookie" not in refused.headers
    accepted = ui.post_form("/ui/login", {"token": ADMIN, "next": "/ui/nodes"})
    assert accepted.status_code == 303 and accepted.headers["location"] == "/ui/nodes"
    cookie = accepted.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert ADMIN not in accepted.headers["location"]
    assert "node" in ui.page("/ui/nodes").lower()
    out = ui.http.post("/ui/logout", headers=ORIGIN, follow_redirects=False)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    ui.http.cookies.clear()
    assert ui.http.get("/ui/nodes", follow_redirects=False).status_code == 303


def test_login_refuses_other_origins_and_foreign_redirects(ui: UiService) -> None:
    ui.http.cookies.clear()
    forged = ui.post_form(
        "/ui/login", {"token": ADMIN, "next": "/ui/"}, headers={"Origin": "http://evil.test"}
    )
    assert forged.status_code == 403 and "CrossSiteRequest" in forged.text
    assert "set-cookie" not in forged.headers
    for target in ("//evil.test/ui/", "https://evil.test/ui/", "/api/v4/get", "/ui/\\evil"):
        response = ui.post_form("/ui/login", {"token": ADMIN, "next": target})
        assert response.headers["location"] == "/ui/", target


def test_a_bearer_header_works_without_a_cookie(ui: UiService) -> None:
    ui.http.cookies.clear()
    response = ui.http.get("/ui/nodes", headers={"Authorization": f"Bearer {ADMIN}"})
    assert response.status_code == 200
    wrong = ui.http.get(
        "/ui/nodes", headers={"Authorization": "Bearer nope"}, follow_redirects=False
    )
    assert wrong.status_code == 303 and wrong.headers["location"].startswith("/ui/login")


def test_root_redirects_to_the_default_trees_scheduling_page(ui: UiService) -> None:
    response = ui.http.get("/ui/", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/ui/trees/default"
    assert ui.http.get("/ui", follow_redirects=False).headers["location"] == "/ui/"


def test_pages_carry_security_headers_and_load_only_local_assets(ui: UiService) -> None:
    response = ui.http.get("/ui/trees/default")
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"
    sources = re.findall(r'(?:src|href)="([^"]+)"', response.text)
    assert sources and all(s.startswith("/") for s in sources), sources
    for asset in (
        "/ui/static/ui.css",
        "/ui/static/ui.js",
        "/ui/static/vendor/htmx/htmx-2.0.11.min.js",
        "/ui/static/vendor/uplot/uPlot-1.6.32.iife.min.js",
        "/ui/static/vendor/uplot/uPlot-1.6.32.min.css",
    ):
        assert ui.http.get(asset).status_code == 200, asset


# --- the Scheduling page --------------------------------------------------------------------


def test_scheduling_page_shows_every_pool_with_the_orchids_shares(ui: UiService) -> None:
    ui.heartbeat()
    op = ui.start("batch", jobs=2)
    ui.run_jobs()
    ui.tick()
    page = ui.page("/ui/trees/default")
    found = rows(page)
    assert set(found) == {"<Root>", "research", "team", "batch", "burst"}
    assert found["team"]["data-parent"] == "research" and found["team"]["data-depth"] == "2"
    for pool in ("batch", "research", "<Root>"):
        orchid = ui.orchid(f"pool_trees/default/pools/{pool}")
        assert float(found[pool]["data-usage"]) == orchid["usage_ratio"]
        assert float(found[pool]["data-fair"]) == orchid["fair_share_ratio"]
        assert float(found[pool]["data-demand"]) == orchid["demand_ratio"]
    assert float(found["batch"]["data-usage"]) > 0
    width = f"width: {100 * ui.orchid('pool_trees/default/pools/batch/usage_ratio'):.2f}%"
    assert width in page
    # Totals: the node's 4 cpus, 2 of them used.
    assert re.search(r'data-resource="cpu">.*?50%.*?2 of 4', page, re.S)
    assert "1 <small>running</small>" in page
    assert op not in page  # pools only; operations are on pool pages


def test_starving_pools_and_operations_are_highlighted(ui: UiService) -> None:
    _, waiting = _starving_setup(ui)
    page = ui.page("/ui/trees/default")
    found = rows(page)
    assert found["team"].get("class") == "starving" == found["research"].get("class")
    assert "class" not in found["batch"]
    assert "Starving operations" in page and f"/ui/operations/{waiting}" in page


def test_the_fragment_is_the_live_part_with_the_totals_out_of_band(ui: UiService) -> None:
    fragment = ui.page("/ui/fragments/trees/default")
    assert "<html" not in fragment and "<table" in fragment
    assert 'id="tree-totals" hx-swap-oob="true"' in fragment
    page = ui.page("/ui/trees/default")
    assert 'hx-get="/ui/fragments/trees/default"' in page and "hx-trigger=" in page
    assert "hx-swap-oob" not in page


def test_tree_switcher_lists_every_tree(ui: UiService) -> None:
    page = ui.page("/ui/trees/gpu")
    assert 'value="/ui/trees/default"' in page and 'value="/ui/trees/gpu" selected' in page
    assert set(rows(page)) == {"<Root>", "inference"}


def test_five_hundred_pools_render_in_one_page(tmp_path: object) -> None:
    from pathlib import Path

    pools = {
        f"group{g:02d}": {
            "pools": {f"pool{g:02d}x{p:02d}": {"weight": 1 + p % 3} for p in range(24)}
        }
        for g in range(20)
    }
    trees = {"default_tree": "big", "pool_trees": {"big": {"config": {}, "pools": pools}}}
    service = UiService(Path(str(tmp_path)) / "big", trees=trees).open()
    try:
        service.login()
        service.heartbeat()
        service.start("pool07x03", jobs=3)
        service.run_jobs()
        service.tick()
        found = rows(service.page("/ui/trees/big"))
        assert len(found) == 1 + 20 + 20 * 24
        assert all(f"pool{g:02d}x{p:02d}" in found for g in range(20) for p in range(24))
        assert float(found["pool07x03"]["data-usage"]) > 0
        assert found["pool19x23"]["data-parent"] == "group19"
        fragment = service.http.get("/ui/fragments/trees/big")
        assert fragment.headers["content-encoding"] == "gzip"
        assert int(fragment.headers["content-length"]) < len(fragment.content) / 10
    finally:
        service.close()


# --- pool pages and charts ------------------------------------------------------------------


def test_pool_page_shows_settings_operations_and_children(ui: UiService) -> None:
    ui.heartbeat()
    op = ui.start("team", jobs=2, title="<script>alert(1)</script>")
    ui.run_jobs()
    ui.tick()
    page = ui.page("/ui/trees/default/pools/research")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert f"/ui/operations/{op}" in page
    assert set(rows(page)) == {"team"}  # child pools table
    assert "cpu 1" in page  # strong guarantee
    assert 'data-chart-url="/ui/api/history/pools/default/research"' in page
    assert 'data-chart-kind="volume"' not in page
    crumbs = page.split('class="crumbs"')[1].split("</nav>")[0]
    assert "/ui/trees/default/pools/%3CRoot%3E" in crumbs
    fragment = ui.page("/ui/fragments/trees/default/pools/research")
    assert "<html" not in fragment and 'id="pool-members" hx-swap-oob="true"' in fragment


def test_pool_history_follows_the_orchid_and_integral_pools_get_volume(ui: UiService) -> None:
    ui.heartbeat()
    ui.start("burst", jobs=3)
    for _ in range(3):
        ui.run_jobs()
    data = ui.http.get("/ui/api/history/pools/default/burst").json()
    assert data["integral"] is True
    assert len(data["times"]) == len(data["usage"]) == len(data["volume"]) >= 3
    assert data["times"] == sorted(data["times"])
    orchid = ui.orchid("pool_trees/default/pools/burst")
    assert data["usage"][-1] == orchid["usage_ratio"]
    assert data["fair_share"][-1] == orchid["fair_share_ratio"]
    assert data["volume"][-1] == orchid["accumulated_resource_ratio_volume"]
    assert all(v is not None for v in data["volume"])
    plain = ui.http.get("/ui/api/history/pools/default/batch").json()
    assert plain["integral"] is False and set(plain["volume"]) == {None}
    assert 'data-chart-kind="volume"' in ui.page("/ui/trees/default/pools/burst")


def test_history_stays_bounded_by_the_configured_samples(ui: UiService) -> None:
    ui.heartbeat()
    for _ in range(40):
        ui.tick()
    data = ui.http.get("/ui/api/history/pools/default/batch").json()
    assert len(data["times"]) == ui.history_samples
    assert data["times"][-1] == ui.now[0]


# --- operation pages ------------------------------------------------------------------------


def test_operation_page_shows_state_jobs_explanation_and_preemptions(ui: UiService) -> None:
    victim, starving = _starving_setup(ui)
    running = [j["id"] for j in ui.call("list_jobs", operation_id=victim)["jobs"]]
    preempted: list[dict[str, object]] = []
    for _ in range(5):
        running = ui.run_jobs(running=running)
        jobs = ui.call("list_jobs", operation_id=victim)["jobs"]
        preempted = [j for j in jobs if j.get("interruption_info")]
        if preempted:
            break
    assert preempted
    page = ui.page(f"/ui/operations/{victim}")
    explanation = ui.call("explain_operation", operation_id=victim)["text"]
    assert explanation in html.unescape(page)
    section = page.split("<h2>Preemptions</h2>")[1].split("</section>")[0]
    assert "preemption" in section and f"/ui/operations/{starving}" in section
    jobs = page.split("<h2>Jobs")[1].split("</section>")[0]
    assert jobs.count("data-job-state=") == len(ui.call("list_jobs", operation_id=victim)["jobs"])
    assert '"command": "sleep 100"' in html.unescape(page)
    assert 'data-chart-url="/ui/api/history/operations/' in page
    fragment = ui.page(f"/ui/fragments/operations/{victim}")
    assert "<html" not in fragment and 'id="operation-details" hx-swap-oob="true"' in fragment
    data = ui.http.get(f"/ui/api/history/operations/{starving}?tree=default").json()
    orchid = ui.orchid(f"pool_trees/default/operations/{starving}")
    assert data["tree"] == "default" and data["fair_share"][-1] == orchid["fair_share_ratio"]


def test_finished_operations_keep_their_page_and_chart(ui: UiService) -> None:
    ui.heartbeat()
    op = ui.start("batch", jobs=1)
    jobs = ui.run_jobs()
    ui.tick()
    ui.heartbeat(
        running=[],
        finished=[{"operation_id": op, "job_id": jobs[0], "outcome": "completed"}],
    )
    ui.tick()
    ui.tick()
    assert ui.call("get_operation", operation_id=op)["state"] == "completed"
    page = ui.page(f"/ui/operations/{op}")
    assert "completed" in page and "is completed" in page
    data = ui.http.get(f"/ui/api/history/operations/{op}").json()
    assert data["tree"] == "default" and len(data["times"]) >= 1


def test_operations_list_filters_and_refuses_bad_parameters(ui: UiService) -> None:
    first = ui.start("batch")
    second = ui.start("team")
    page = ui.page("/ui/operations")
    assert set(rows(page, "data-operation")) == {first, second}
    assert set(rows(ui.page("/ui/operations?pool=team"), "data-operation")) == {second}
    assert rows(ui.page("/ui/operations?state=completed"), "data-operation") == {}
    assert set(rows(ui.page("/ui/operations?user=root&limit=1"), "data-operation")) == {second}
    for query in ("state=bogus", "limit=0", "limit=abc", "colour=red"):
        refused = ui.page(f"/ui/operations?{query}", status=400)
        assert "InvalidArgument" in refused, query
    assert "InvalidArgument" in ui.page("/ui/fragments/operations?state=bogus", status=400)


# --- nodes ------------------------------------------------------------------------------------


def test_nodes_page_shows_resources_usage_tags_tree_and_state(ui: UiService) -> None:
    ui.heartbeat("n1")
    ui.heartbeat("n2")
    ui.call("set", path="//sys/cluster_nodes/n2/@user_tags", value=["gpu"])
    ui.start("batch", jobs=2)
    ui.run_jobs("n1")
    page = ui.page("/ui/nodes")
    found = rows(page, "data-node")
    assert set(found) == {"n1", "n2"}
    n1 = page.split('data-node="n1"')[1].split("</tr>")[0]
    n2 = page.split('data-node="n2"')[1].split("</tr>")[0]
    assert "online" in n1 and "/ui/trees/default" in n1 and "cpu 4" in n1
    assert "cpu 2" in n1.split("</td>")[5]  # usage of the two running jobs
    assert "gpu" in n2 and "/ui/trees/gpu" in n2
    ui.now[0] += 60
    ui.tick()
    offline = ui.page("/ui/fragments/nodes")
    assert "offline" in offline.split('data-node="n1"')[1].split("</tr>")[0]


# --- errors -----------------------------------------------------------------------------------


def test_unknown_objects_answer_404_pages_with_the_services_codes(ui: UiService) -> None:
    cases = {
        "/ui/trees/nope": "NoSuchPoolTree",
        "/ui/fragments/trees/nope": "NoSuchPoolTree",
        "/ui/trees/default/pools/nope": "ResolveError",
        "/ui/fragments/trees/default/pools/nope": "ResolveError",
        "/ui/operations/0-0-0-0": "NoSuchOperation",
        "/ui/fragments/operations/0-0-0-0": "NoSuchOperation",
        "/ui/no/such/page": "ResolveError",
    }
    for url, code in cases.items():
        assert code in ui.page(url, status=404), url
    for url, code in {
        "/ui/api/history/pools/default/nope": "ResolveError",
        "/ui/api/history/pools/nope/x": "NoSuchPoolTree",
        "/ui/api/history/operations/0-0-0-0": "NoSuchOperation",
    }.items():
        response = ui.http.get(url)
        assert response.status_code == 404 and response.json()["code"] == code, url
    op = ui.start("batch")
    response = ui.http.get(f"/ui/api/history/operations/{op}?tree=nope")
    assert response.status_code == 404 and response.json()["code"] == "NoSuchPoolTree"


def test_wrong_methods_answer_in_the_services_error_shape(ui: UiService) -> None:
    response = ui.http.put("/ui/trees/default")
    assert response.status_code == 405 and response.json()["code"] == "MethodNotAllowed"


def test_json_history_is_json_safe(ui: UiService) -> None:
    ui.heartbeat()
    ui.tick()
    text = ui.http.get("/ui/api/history/pools/default/burst").text
    assert "NaN" not in text and json.loads(text)["volume"][-1] is not None
