"""Operations, heartbeats, ACLs, persistence and metrics of the in-process service."""

from __future__ import annotations

from tests.server.conftest import Service


def _start(service: Service, pool: str = "batch", jobs: int = 2, token: str | None = None) -> str:
    params = {"spec": {"pool": pool, "tasks": {"t": {"job_count": jobs, "command": "true"}}}}
    if token is not None:
        return str(service.call("start_op", token=token, **params)["operation_id"])
    return str(service.call("start_op", **params)["operation_id"])


def test_authentication_is_required(service: Service) -> None:
    assert service.error("get", token=None, path="//sys") == (401, "AuthenticationError")
    assert service.error("get", token="wrong", path="//sys") == (401, "AuthenticationError")
    assert service.http.get("/ping").status_code == 200
    assert service.http.get("/metrics").status_code == 401


def test_users_tokens_and_pool_acls(service: Service) -> None:
    service.call("create", type="user", attributes={"name": "alice"})
    alice = service.call("issue_token", user="alice")["token"]
    # Everybody may use pools by default; changing trees needs administer.
    op = _start(service, token=alice)
    assert service.call("get_operation", operation_id=op)["authenticated_user"] == "alice"
    assert service.error("set", token=alice, path="//sys/pools/batch/@weight", value=2) == (
        403,
        "AuthorizationError",
    )
    service.call(
        "set",
        path="//sys/pools/research/@acl",
        value=[{"action": "deny", "subjects": ["alice"], "permissions": ["use"]}],
    )
    assert service.error("start_op", token=alice, spec={"pool": "team", "tasks": {"t": {}}}) == (
        403,
        "AuthorizationError",
    )
    check = service.call(
        "check_permission", user="alice", permission="use", path="//sys/pools/research/team"
    )
    assert check == {"action": "deny"}
    # Moving an operation into a denied pool is refused too.
    assert (
        service.error(
            "update_op_parameters", token=alice, operation_id=op, parameters={"pool": "team"}
        )[0]
        == 403
    )
    service.call(
        "set",
        path="//sys/pools/batch/@acl",
        value=[{"action": "allow", "subjects": ["alice"], "permissions": ["administer"]}],
    )
    service.call("set", token=alice, path="//sys/pools/batch/@weight", value=2)
    # Another user cannot abort alice's operation.
    service.call("create", type="user", attributes={"name": "bob"})
    bob = service.call("issue_token", user="bob")["token"]
    assert service.error("abort_op", token=bob, operation_id=op)[0] == 403
    assert service.error("issue_token", token=bob, user="bob")[0] == 403


def test_ephemeral_pool_named_after_the_user(service: Service) -> None:
    service.call("create", type="user", attributes={"name": "carol"})
    carol = service.call("issue_token", user="carol")["token"]
    op = service.call("start_op", token=carol, spec={"tasks": {"t": {}}})["operation_id"]
    view = service.call("get_operation", operation_id=op)
    assert view["runtime_parameters"]["scheduling_options_per_pool_tree"]["default"] == {
        "pool": "carol"
    }


def test_heartbeats_run_jobs_to_completion(service: Service) -> None:
    service.heartbeat()
    op = _start(service, jobs=3)
    service.tick()
    started = [job["job_id"] for job in service.heartbeat()["start"]]
    assert len(started) == 3
    service.tick()
    answer = service.heartbeat(
        running=[],
        finished=[
            {"operation_id": op, "job_id": job, "outcome": "completed", "stdout": "x"}
            for job in started
        ],
    )
    assert answer["abort"] == []
    view = service.call("get_operation", operation_id=op)
    assert view["state"] == "completed"
    assert view["progress"]["jobs"]["completed"]["total"] == 3
    assert service.call("get_job_stdout", job_id=started[0])["value"] == "x"
    # A duplicate report (the answer was lost) is ignored.
    service.heartbeat(finished=[{"operation_id": op, "job_id": started[0], "outcome": "failed"}])
    assert service.call("get_job", job_id=started[0])["state"] == "completed"


def test_ended_jobs_leave_memory_once_recorded(service: Service) -> None:
    service.heartbeat()
    op = _start(service, jobs=4)
    service.tick()
    started = [job["job_id"] for job in service.heartbeat()["start"]]
    assert service.cluster is not None
    live = service.cluster.trees.operations[op]
    assert set(live.jobs) == set(started)
    done, still = started[:2], started[2:]
    service.heartbeat(
        running=still,
        finished=[{"operation_id": op, "job_id": j, "outcome": "completed"} for j in done],
    )
    assert set(live.jobs) == set(still)  # only running jobs stay in the live model
    assert [service.call("get_job", job_id=j)["state"] for j in done] == ["completed"] * 2
    assert service.call("get_operation", operation_id=op)["state"] == "running"


def test_old_finished_operations_leave_the_live_model(service: Service) -> None:
    assert service.cluster is not None
    service.cluster.config.finished_operations_in_memory = 2
    service.heartbeat()
    finished = []
    for _ in range(4):
        op = _start(service, jobs=1)
        service.tick()
        (job,) = [s["job_id"] for s in service.heartbeat()["start"]]
        service.heartbeat(finished=[{"operation_id": op, "job_id": job, "outcome": "completed"}])
        finished.append(op)
    live = service.cluster.trees.operations
    assert [op in live for op in finished] == [False, False, True, True]
    # The store still answers for the forgotten ones, as after a restart.
    oldest = finished[0]
    assert service.call("get_operation", operation_id=oldest)["state"] == "completed"
    assert [j["state"] for j in service.call("list_jobs", operation_id=oldest)["jobs"]] == [
        "completed"
    ]
    assert "completed" in service.call("explain_operation", operation_id=oldest)["text"]
    assert service.error("abort_op", operation_id=oldest)[0] == 400


def test_abort_op_aborts_jobs_on_the_node(service: Service) -> None:
    service.heartbeat()
    op = _start(service, jobs=2)
    service.tick()
    started = [job["job_id"] for job in service.heartbeat()["start"]]
    service.call("abort_op", operation_id=op, abort_message="enough")
    answer = service.heartbeat(running=started)
    assert sorted(a["job_id"] for a in answer["abort"]) == sorted(started)
    result = service.call("get_operation", operation_id=op)["result"]
    assert result["error"]["inner_errors"][0]["message"] == "enough"
    assert {j["state"] for j in service.call("list_jobs", operation_id=op)["jobs"]} == {"aborted"}


def test_suspended_operations_start_no_jobs(service: Service) -> None:
    service.heartbeat()
    op = _start(service, jobs=2)
    service.call("suspend_op", operation_id=op)
    service.tick()
    assert service.heartbeat()["start"] == []
    assert service.call("get_operation", operation_id=op)["suspended"] is True
    service.call("resume_op", operation_id=op)
    service.tick()
    assert len(service.heartbeat()["start"]) == 2


def test_silent_node_goes_offline_and_jobs_return(service: Service) -> None:
    service.heartbeat("n1")
    op = _start(service, jobs=1)
    service.tick()
    assert len(service.heartbeat("n1")["start"]) == 1
    service.heartbeat("n2")
    service.tick(6.0)  # n1 silent for longer than the timeout (n2 too, but it heartbeats now)
    assert service.call("get", path="//sys/cluster_nodes/n1/@state")["value"] == "offline"
    jobs = service.call("list_jobs", operation_id=op)["jobs"]
    assert [j["state"] for j in jobs] == ["aborted"]
    restarted = service.heartbeat("n2")["start"]
    service.tick()
    restarted += service.heartbeat("n2")["start"]
    assert [job["job_id"] for job in restarted] == [f"{op}/t/0/1"]


def test_restart_revives_operations_jobs_and_config(service: Service) -> None:
    service.call("set", path="//sys/pools/batch/@max_running_operation_count", value=1)
    service.heartbeat()
    first = _start(service, jobs=2)
    second = _start(service, jobs=1)
    service.tick()
    started = [job["job_id"] for job in service.heartbeat()["start"]]
    service.restart()
    assert service.call("get", path="//sys/pools/batch/@max_running_operation_count")["value"] == 1
    assert service.call("get_operation", operation_id=first)["state"] == "running"
    assert service.call("get_operation", operation_id=second)["state"] == "pending"
    service.tick()
    answer = service.heartbeat(running=started)
    assert answer["start"] == [] and answer["abort"] == []
    service.heartbeat(
        finished=[{"operation_id": first, "job_id": job, "outcome": "completed"} for job in started]
    )
    assert service.call("get_operation", operation_id=first)["state"] == "completed"
    assert service.call("get_operation", operation_id=second)["state"] == "running"
    # A finished operation restored from the store alone still knows its job total.
    service.restart()
    progress = service.call("get_operation", operation_id=first)["progress"]["jobs"]
    assert progress["total"] == 2 and progress["completed"]["total"] == 2


def test_metrics_report_pools_and_latencies(service: Service) -> None:
    service.heartbeat()
    _start(service)
    service.tick()
    service.heartbeat()
    service.tick()  # usage in the orchid is that of the last fair-share update
    text = service.http.get("/metrics", headers={"Authorization": "Bearer admin-token"}).text
    assert 'ytsched_pool_operation_count{pool="batch",tree="default"} 1.0' in text
    assert "ytsched_heartbeat_duration_seconds_count" in text
    assert "ytsched_fair_share_update_duration_seconds_count" in text
    assert 'ytsched_pool_resource_usage{pool="batch",resource="cpu",tree="default"} 2.0' in text


def test_malformed_requests_are_400(service: Service) -> None:
    response = service.http.post(
        "/api/v4/start_op",
        content=b"{not json",
        headers={"Authorization": "Bearer admin-token", "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and response.json()["code"] == "InvalidArgument"
    assert service.error("start_op", spec={"tasks": {"t": {"job_count": -1}}}) == (
        400,
        "InvalidConfig",
    )
    assert service.error("get_operation", operation_id="nope") == (404, "NoSuchOperation")
    assert service.error("node_heartbeat", address="n", resource_limits={"bogus": 1}) == (
        400,
        "InvalidConfig",
    )


def test_explain_mentions_pending_reason(service: Service) -> None:
    service.call("set", path="//sys/pools/batch/@max_running_operation_count", value=1)
    _start(service)
    second = _start(service)
    text = service.call("explain_operation", operation_id=second)["text"]
    assert "pending" in text and "batch" in text


def test_integral_volumes_survive_a_restart(service: Service) -> None:
    service.call(
        "create",
        type="scheduler_pool",
        attributes={
            "name": "burst",
            "pool_tree": "default",
            "integral_guarantees": {
                "guarantee_type": "burst",
                "resource_flow": {"cpu": 1},
                "burst_guarantee_resources": {"cpu": 2},
            },
        },
    )
    for _ in range(5):
        service.heartbeat()
        service.tick(4.0)
    path = "//sys/scheduler/orchid/scheduler/pool_trees/default/pools/burst"
    before = service.call("get", path=path, fields=["accumulated_resource_volume"])["value"]
    volume = before["accumulated_resource_volume"]["cpu"]
    assert volume > 0
    service.restart()
    service.heartbeat()
    assert service.cluster is not None
    pool = service.cluster.trees.trees["default"].pools["burst"]
    assert pool.accumulated_resource_volume[1] == volume


def test_a_repeated_mutation_id_returns_the_first_operation(service: Service) -> None:
    spec = {"tasks": {"t": {"command": "true", "job_count": 1}}}
    first = service.call("start_op", spec=spec, mutation_id="m-1")["operation_id"]
    assert service.call("start_op", spec=spec, mutation_id="m-1")["operation_id"] == first
    service.restart()  # kept in the store, as after a takeover
    assert service.call("start_op", spec=spec, mutation_id="m-1")["operation_id"] == first
    assert service.call("start_op", spec=spec, mutation_id="m-2")["operation_id"] != first
    assert len(service.call("list_operations")["operations"]) == 2
    service.call("create", type="user", attributes={"name": "mallory"})
    mallory = service.call("issue_token", user="mallory")["token"]
    assert service.error("start_op", token=mallory, spec=spec, mutation_id="m-1") == (
        400,
        "InvalidArgument",
    )
