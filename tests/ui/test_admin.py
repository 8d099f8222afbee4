"""Pool settings through the UI: the same permission check and validation as ``set``."""

from __future__ import annotations

import html
import re
from typing import Any

from tests.ui.conftest import ORIGIN, UiService

BATCH = "/ui/trees/default/pools/batch"


def _config(ui: UiService, pool: str) -> dict[str, Any]:
    value = ui.call("get", path=f"//sys/pool_trees/default/{pool}/@")["value"]
    return dict(value)


def _field_error(page: str, key: str) -> str | None:
    match = re.search(rf'data-error-for="{re.escape(key)}"[^>]*>(.*?)</div>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip() if match else None


def _form(page: str) -> dict[str, str]:
    """The values the settings form shows, by field name."""
    form = page.split('class="pool-form"')[1].split("</form>")[0]
    values = dict(re.findall(r'<input id="[^"]*" name="([^"]+)" value="([^"]*)"', form))
    for name, body in re.findall(r'<select id="[^"]*" name="([^"]+)">(.*?)</select>', form, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected', body)
        values[name] = chosen.group(1) if chosen else ""
    return {k: html.unescape(v) for k, v in values.items()}


def test_admin_sees_the_form_with_the_pools_own_values(ui: UiService) -> None:
    page = ui.page("/ui/trees/default/pools/research")
    values = _form(page)
    assert values["weight"] == "2" and values["strong_guarantee_resources.cpu"] == "1"
    assert values["mode"] == "" and values["resource_limits.cpu"] == ""
    burst = _form(ui.page("/ui/trees/default/pools/burst"))
    assert burst["integral_guarantees.guarantee_type"] == "burst"
    assert burst["integral_guarantees.burst_guarantee_resources.cpu"] == "4"


def test_a_valid_edit_is_applied_and_shown(ui: UiService) -> None:
    response = ui.post_form(
        BATCH,
        {
            "weight": "3.5",
            "mode": "fifo",
            "max_running_operation_count": "7",
            "resource_limits.cpu": "2",
            "resource_limits.memory": "4G",
        },
    )
    assert response.status_code == 303, response.text
    assert response.headers["location"].startswith(BATCH + "?saved=")
    config = _config(ui, "batch")
    assert config["weight"] == 3.5 and config["mode"] == "fifo"
    assert config["max_running_operation_count"] == 7
    assert config["resource_limits"] == {"cpu": 2.0, "memory": 4 * 2**30}
    page = ui.page(response.headers["location"])
    assert "Saved: max_running_operation_count, mode, resource_limits, weight" in page
    shown = _form(page)
    assert shown["weight"] == "3.5" and shown["resource_limits.memory"] == "4G"
    orchid = ui.orchid("pool_trees/default/pools/batch")
    assert orchid["max_running_operation_count"] == 7 and orchid["mode"] == "fifo"


def test_resubmitting_the_form_unchanged_changes_nothing(ui: UiService) -> None:
    before = _config(ui, "research")
    values = _form(ui.page("/ui/trees/default/pools/research"))
    response = ui.post_form("/ui/trees/default/pools/research", values)
    assert response.status_code == 303 and "nothing+changed" in response.headers["location"]
    assert _config(ui, "research") == before


def test_clearing_a_field_resets_the_attribute(ui: UiService) -> None:
    values = _form(ui.page("/ui/trees/default/pools/research"))
    values["weight"] = ""
    assert ui.post_form("/ui/trees/default/pools/research", values).status_code == 303
    config = _config(ui, "research")
    assert "weight" not in config and config["strong_guarantee_resources"] == {"cpu": 1.0}


def test_a_value_the_validation_refuses_is_shown_next_to_its_field(ui: UiService) -> None:
    before = _config(ui, "batch")
    response = ui.post_form(BATCH, {"weight": "-1", "max_running_operation_count": "-2"})
    assert response.status_code == 400
    weight = _field_error(response.text, "weight")
    running = _field_error(response.text, "max_running_operation_count")
    assert weight is not None and weight.startswith("InvalidConfig") and "weight" in weight
    assert running is not None and "greater than or equal to 0" in running
    assert _form(response.text)["weight"] == "-1"  # what was typed stays in the field
    assert _config(ui, "batch") == before


def test_a_refusal_by_the_tree_rules_names_its_field_and_changes_nothing(ui: UiService) -> None:
    before = _config(ui, "research")
    # research guarantees cpu 1, its child team needs cpu 1: 0.5 breaks the tree rule.
    values = _form(ui.page("/ui/trees/default/pools/research"))
    values.update({"strong_guarantee_resources.cpu": "0.5", "weight": "9"})
    response = ui.post_form("/ui/trees/default/pools/research", values)
    assert response.status_code == 400
    error = _field_error(response.text, "strong_guarantee_resources.cpu")
    assert error is not None and error.startswith("GuaranteesExceedParent")
    assert _config(ui, "research") == before  # weight 9 was not applied either


def test_text_that_is_not_a_number_is_refused_before_anything_is_applied(ui: UiService) -> None:
    before = _config(ui, "batch")
    response = ui.post_form(
        BATCH, {"weight": "5", "strong_guarantee_resources.memory": "lots", "mode": "random"}
    )
    assert response.status_code == 400
    memory = _field_error(response.text, "strong_guarantee_resources.memory")
    assert memory is not None and "cannot parse amount 'lots'" in memory
    mode = _field_error(response.text, "mode")
    assert mode is not None and "fair_share, fifo" in mode
    assert _field_error(response.text, "weight") is None
    assert _config(ui, "batch") == before
    for bad in ("nan", "inf", "1e999", "x" * 100):
        refused = ui.post_form(BATCH, {"weight": bad})
        assert refused.status_code == 400 and _field_error(refused.text, "weight"), bad
    assert ui.post_form(BATCH, {"max_operation_count": "1.5"}).status_code == 400
    assert _config(ui, "batch") == before


def test_users_without_administer_see_no_form_and_a_forged_post_is_refused(
    ui: UiService,
) -> None:
    alice = ui.user("alice")
    before = _config(ui, "batch")
    ui.http.cookies.clear()
    ui.login(alice)
    page = ui.page(BATCH)
    assert "pool-form" not in page and "alice" in page
    response = ui.post_form(BATCH, {"weight": "5"})
    assert response.status_code == 403
    assert "AuthorizationError" in response.text and "administer" in response.text
    # Even a malformed value answers 403 first: nothing about the pool is validated for her.
    assert ui.post_form(BATCH, {"weight": "oops"}).status_code == 403
    assert _config(ui, "batch") == before


def test_administer_on_one_pool_shows_the_form_there_only(ui: UiService) -> None:
    bob = ui.user("bob")
    ui.call(
        "set",
        path="//sys/pool_trees/default/batch/@acl",
        value=[{"action": "allow", "subjects": ["bob"], "permissions": ["administer"]}],
    )
    ui.http.cookies.clear()
    ui.login(bob)
    assert "pool-form" in ui.page(BATCH)
    assert "pool-form" not in ui.page("/ui/trees/default/pools/research")
    assert ui.post_form(BATCH, {"weight": "4"}).status_code == 303
    assert _config(ui, "batch")["weight"] == 4
    assert ui.post_form("/ui/trees/default/pools/research", {"weight": "4"}).status_code == 403


def test_cross_site_submissions_are_refused(ui: UiService) -> None:
    before = _config(ui, "batch")
    for headers in (
        {"Origin": "http://evil.test"},
        {"Origin": "null"},
        {"Referer": "http://evil.test/page"},
        {},
    ):
        response = ui.post_form(BATCH, {"weight": "5"}, headers=headers)
        assert response.status_code == 403 and "CrossSiteRequest" in response.text, headers
    same = ui.post_form(BATCH, {"weight": "5"}, headers={"Referer": "http://testserver/ui/x"})
    assert same.status_code == 303
    assert _config(ui, "batch")["weight"] == 5
    del before


def test_root_ephemeral_and_unknown_pools_have_no_form(ui: UiService) -> None:
    ui.call("start_op", spec={"tasks": {"t": {"job_count": 1, "command": "true"}}})
    assert "pool-form" not in ui.page("/ui/trees/default/pools/%3CRoot%3E")
    ephemeral = ui.page("/ui/trees/default/pools/root")  # root's ephemeral pool
    assert "pool-form" not in ephemeral and "Ephemeral pools" in ephemeral
    root = ui.post_form("/ui/trees/default/pools/%3CRoot%3E", {"weight": "2"})
    assert root.status_code == 400 and "NotSupported" in root.text
    for url in ("/ui/trees/default/pools/root", "/ui/trees/default/pools/nope"):
        response = ui.post_form(url, {"weight": "2"})
        assert response.status_code == 404 and "ResolveError" in response.text, url
    assert ui.post_form("/ui/trees/nope/pools/x", {"weight": "2"}).status_code == 404


def test_malformed_form_bodies_are_refused_cleanly(ui: UiService) -> None:
    before = _config(ui, "batch")
    response = ui.http.post(
        BATCH,
        content=b"\xff\xfe=\xff",
        headers={**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 400 and "InvalidArgument" in response.text
    huge = ui.http.post(
        BATCH,
        content=b"weight=" + b"1" * 70_000,
        headers={**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert huge.status_code == 400
    unknown = ui.post_form(BATCH, {"no_such_field": "1"})
    assert unknown.status_code == 303 and "nothing+changed" in unknown.headers["location"]
    assert _config(ui, "batch") == before
