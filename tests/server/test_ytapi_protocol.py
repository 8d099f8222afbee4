"""The YTsaurus HTTP proxy protocol of the in-process service (no official client needed)."""

from __future__ import annotations

import json
from typing import Any

from tests.server.conftest import ADMIN, Service
from ytsched import yson

YSON_HEADERS = {"X-YT-Header-Format": "<format=text>yson", "Authorization": f"OAuth {ADMIN}"}


def _yt(service: Service, method: str, command: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"OAuth {ADMIN}", **kwargs.pop("headers", {})}
    return service.http.request(method, f"/api/v4/{command}", headers=headers, **kwargs)


def test_discovery_lists_versions_commands_and_this_proxy(service: Service) -> None:
    assert service.http.get("/api").json() == ["v4"]
    commands = {entry["name"]: entry for entry in service.http.get("/api/v4").json()}
    assert commands["get"] == {
        "name": "get",
        "input_type": "null",
        "output_type": "structured",
        "is_volatile": False,
        "is_heavy": False,
    }
    assert commands["set"]["input_type"] == "structured" and commands["set"]["is_volatile"]
    assert commands["get_job_stderr"]["output_type"] == "binary"
    assert commands["get_job_stderr"]["is_heavy"]
    assert service.http.get("/hosts", headers={"Host": "example:8080"}).json() == ["example:8080"]


def test_parameters_from_query_header_and_body(service: Service) -> None:
    by_query = _yt(service, "GET", "get", params={"path": "//sys/pools/research/@weight"})
    assert by_query.status_code == 200 and by_query.json() == {"value": 2.0}
    by_header = _yt(
        service,
        "GET",
        "get",
        headers={
            "X-YT-Header-Format": "<format=text>yson",
            "X-YT-Parameters": '{path="//sys/pools/research"; attributes=[weight]; '
            "output_format=<format=pretty>yson}",
        },
    )
    assert by_header.content.endswith(b"}\n")
    assert yson.loads(by_header.content) == yson.loads("{value=<weight=2.0>{team={}}}")
    by_body = _yt(
        service,
        "POST",
        "create",
        headers={"Content-Type": "application/json"},
        content=json.dumps(
            {"type": "scheduler_pool", "attributes": {"name": "fresh", "pool_tree": "default"}}
        ),
    )
    assert by_body.status_code == 200 and "object_id" in by_body.json()
    # set: parameters in the header, the value in the body in input_format.
    stored = _yt(
        service,
        "PUT",
        "set",
        headers={
            "X-YT-Header-Format": "json",
            "X-YT-Parameters": json.dumps(
                {"path": "//sys/pools/fresh/@weight", "input_format": "json"}
            ),
        },
        content=b"5",
    )
    assert stored.status_code == 200 and stored.json() == {}
    assert _yt(service, "GET", "get", params={"path": "//sys/pools/fresh/@weight"}).json() == {
        "value": 5.0
    }


def test_output_format_from_header_and_accept(service: Service) -> None:
    path = {"path": "//sys/pools/research/@weight"}
    by_header = _yt(
        service,
        "GET",
        "get",
        params=path,
        headers={"X-YT-Output-Format": '"yson"', "X-YT-Header-Format": "json"},
    )
    assert by_header.headers["content-type"] == "application/x-yt-yson-text"
    assert yson.loads(by_header.content) == {"value": 2.0}
    by_accept = _yt(
        service, "GET", "get", params=path, headers={"Accept": "application/x-yt-yson-pretty"}
    )
    assert by_accept.content.endswith(b"\n") and yson.loads(by_accept.content) == {"value": 2.0}
    assert _yt(service, "GET", "get", params=path).headers["content-type"] == "application/json"


def test_nested_query_arguments(service: Service) -> None:
    answer = _yt(
        service,
        "GET",
        "get",
        params={
            "path": "//sys/pools/research",
            "attributes[0]": "weight",
            "return_only_value": "true",
        },
    )
    assert answer.json()["$attributes"] == {"weight": 2.0}, answer.json()
    assert answer.json()["$value"] == {"team": {}}


def test_errors_carry_integer_codes_in_body_and_headers(service: Service) -> None:
    missing = _yt(service, "GET", "get", params={"path": "//sys/pools/nothing"})
    assert missing.status_code == 400
    assert missing.headers["X-YT-Response-Code"] == "500"
    error = json.loads(missing.headers["X-YT-Error"])
    assert error == missing.json()
    assert error["code"] == 500 and "nothing" in error["message"]
    assert error["attributes"]["ytsched_code"] == "ResolveError"

    unknown_op = _yt(service, "GET", "get_operation", params={"operation_id": "1-2-3-4"})
    assert unknown_op.json()["code"] == 1915

    no_token = service.http.get("/api/v4/get", params={"path": "//sys"})
    assert no_token.status_code == 401 and no_token.json()["code"] == 900

    unknown = _yt(service, "GET", "read_table", params={"path": "//tmp/t"})
    assert unknown.status_code == 404 and unknown.json()["code"] == 1

    by_get = _yt(service, "GET", "remove", params={"path": "//sys/pools/research"})
    assert by_get.status_code == 405
    assert _yt(service, "GET", "exists", params={"path": "//sys/pools/research"}).json() == {
        "value": True
    }


def test_malformed_requests_change_nothing(service: Service) -> None:
    broken_header = _yt(
        service,
        "POST",
        "remove",
        headers={"X-YT-Header-Format": "<format=text>yson", "X-YT-Parameters": "{path="},
    )
    assert broken_header.status_code == 400
    assert broken_header.json()["code"] == 1
    assert "X-YT-Parameters" in broken_header.json()["message"]
    broken_body = _yt(
        service, "POST", "remove", headers={"Content-Type": "application/json"}, content=b"[1"
    )
    assert broken_body.status_code == 400 and "body" in broken_body.json()["message"]
    conflicting = _yt(service, "GET", "get", params={"path": "//sys", "path[0]": "x"})
    assert conflicting.status_code == 400
    bad_format = _yt(service, "GET", "get", params={"path": "//sys", "output_format": "protobuf"})
    assert bad_format.status_code == 400 and "protobuf" in bad_format.json()["message"]
    assert _yt(service, "GET", "exists", params={"path": "//sys/pools/research"}).json() == {
        "value": True
    }


def test_our_own_api_is_untouched(service: Service) -> None:
    # POST + Bearer + JSON is still our API: string codes, our shapes.
    assert service.call("get", path="//sys/pools/research/@weight") == {"value": 2.0}
    response = service.http.post(
        "/api/v4/get",
        json={"path": "//sys/nothing"},
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    assert response.json()["code"] == "ResolveError"


def test_operations_and_transfer_over_the_protocol(service: Service) -> None:
    spec = {"pool": "batch", "tasks": {"t": {"job_count": 1, "command": "true", "file_paths": []}}}
    started = _yt(
        service,
        "POST",
        "start_operation",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"operation_type": "vanilla", "spec": spec}),
    )
    op_id = started.json()["operation_id"]
    view = _yt(service, "GET", "get_operation", params={"operation_id": op_id}).json()
    assert view["unrecognized_spec"] == {"tasks": {"t": {"file_paths": []}}}
    # What the client's tracker reads to log a progress line.
    jobs = view["brief_progress"]["jobs"]
    assert {"running", "completed", "pending", "failed", "aborted", "lost", "total"} <= set(jobs)
    assert view["brief_progress"]["build_time"].endswith("Z")
    aborted = _yt(
        service,
        "POST",
        "abort_operation",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"operation_id": op_id, "abort_message": "enough"}),
    )
    assert aborted.status_code == 200
    result = _yt(service, "GET", "get_operation", params={"operation_id": op_id}).json()["result"]
    assert result["error"]["inner_errors"][0]["message"] == "enough"
    assert isinstance(result["error"]["code"], int)
    again = _yt(
        service,
        "POST",
        "abort_operation",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"operation_id": op_id}),
    )
    assert again.json()["code"] == 201  # InvalidOperationState
    mapped = _yt(
        service,
        "POST",
        "start_operation",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"operation_type": "map", "spec": {"mapper": {"command": "cat"}}}),
    )
    assert mapped.status_code == 400 and "vanilla" in mapped.json()["message"]

    service.call("set", path="//sys/pools/research/@strong_guarantee_resources", value={"cpu": 2})
    moved = _yt(
        service,
        "POST",
        "transfer_pool_resources",
        headers={"Content-Type": "application/json"},
        content=json.dumps(
            {
                "source_pool": "research",
                "destination_pool": "batch",
                "pool_tree": "default",
                "resource_delta": {"strong_guarantee_resources": {"cpu": 1.5}},
            }
        ),
    )
    assert moved.status_code == 200
    assert service.call("get", path="//sys/pools/batch/@strong_guarantee_resources") == {
        "value": {"cpu": 1.5}
    }


def test_move_of_pools_is_all_or_nothing(service: Service) -> None:
    def move(source: str, destination: str) -> Any:
        return _yt(
            service,
            "POST",
            "move",
            headers={"Content-Type": "application/json"},
            content=json.dumps({"source_path": source, "destination_path": destination}),
        )

    assert move("//sys/pools/research/team", "//sys/pools/batch/squad").status_code == 200
    assert service.call("get", path="//sys/pools")["value"] == {
        "research": {},
        "batch": {"squad": {}},
    }
    # The new name is taken elsewhere in the tree: refused, and the pool stays where it was.
    refused = move("//sys/pools/batch/squad", "//sys/pools/research/batch")
    assert refused.status_code == 400
    assert service.call("get", path="//sys/pools")["value"] == {
        "research": {},
        "batch": {"squad": {}},
    }
    assert move("//sys/pools/batch/squad", "//sys/operations/x").status_code == 400


def test_multiline_and_non_ascii_messages_fit_in_headers(service: Service) -> None:
    refused = _yt(service, "GET", "get", params={"path": "//sys/pools/n\u00e4me\nx"})
    assert refused.status_code == 400
    assert "\n" not in refused.headers["X-YT-Response-Message"]
    assert json.loads(refused.headers["X-YT-Error"])["message"] == refused.json()["message"]


def test_users_tokens_and_whoami(service: Service) -> None:
    created = _yt(
        service,
        "POST",
        "create",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"type": "user", "attributes": {"name": "bob"}}),
    )
    assert created.status_code == 200
    token = _yt(
        service,
        "POST",
        "issue_token",
        headers={"Content-Type": "application/json"},
        content=json.dumps({"user": "bob"}),
    ).json()
    bob = {"Authorization": f"OAuth {token}"}
    assert service.http.post("/auth/whoami", headers=bob).json() == {"login": "bob"}
    assert service.http.get("/api/v4/get_current_user", headers=bob).json() == {"user": "bob"}

    def check(user: str) -> Any:
        return _yt(
            service,
            "GET",
            "check_permission",
            params={"user": user, "permission": "administer", "path": "//sys/users/bob"},
        ).json()

    assert check("root")["action"] == "allow"
    assert check("bob")["action"] == "deny"
    assert check("nobody")["code"] == 500
    # Only superusers issue tokens.
    refused = service.http.post(
        "/api/v4/issue_token",
        headers={**bob, "Content-Type": "application/json"},
        content=b'{"user": "bob"}',
    )
    assert refused.json()["code"] == 901


def test_plain_nodes_exist_already(service: Service) -> None:
    def create(path: str, **extra: Any) -> Any:
        body = {"type": "document", "path": path, **extra}
        return _yt(
            service,
            "POST",
            "create",
            headers={"Content-Type": "application/json"},
            content=json.dumps(body),
        ).json()

    path = "//sys/scheduler/user_to_default_pool"
    assert create(path, ignore_existing=True) == {"node_id": path}
    assert create(path)["code"] == 501
    assert create("//home/data")["code"] == 1
