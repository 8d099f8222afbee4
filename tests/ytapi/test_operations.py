"""Operations and jobs through ``yt.wrapper.YtClient`` and the ``yt`` command."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yt.wrapper as yt_wrapper

from tests.e2e.cluster import wait_until
from tests.ytapi.conftest import Cli

pytestmark = pytest.mark.ytapi

ORCHID = "//sys/scheduler/orchid/scheduler"


def _pool(yt: Any, name: str, **attributes: Any) -> None:
    yt.create("scheduler_pool", attributes={"name": name, "pool_tree": "default", **attributes})


def _orchid(yt: Any, path: str) -> Any:
    """An orchid value, or None until the next fair-share update publishes it."""
    return yt.get(path) if yt.exists(path) else None


def _state(yt: Any, op_id: str) -> str:
    return str(yt.get_operation(op_id, attributes=["state"])["state"])


def test_vanilla_with_two_tasks_tracked_to_completion_with_stderr(yt: Any) -> None:
    _pool(yt, "two_tasks")
    spec = (
        yt_wrapper.VanillaSpecBuilder()
        .begin_task("writer")
        .command("echo written-by-$YT_JOB_ID >&2")
        .job_count(2)
        .end_task()
        .begin_task("sleeper")
        .command("sleep 0.3")
        .job_count(1)
        .end_task()
        .pool("two_tasks")
    )
    operation = yt.run_operation(spec)  # sync: tracked until it finishes
    assert operation.get_state() == "completed"
    jobs = yt.list_jobs(operation.id)["jobs"]
    assert sorted(job["task_name"] for job in jobs) == ["sleeper", "writer", "writer"]
    assert {job["state"] for job in jobs} == {"completed"}
    writers = [job for job in jobs if job["task_name"] == "writer"]
    stderrs = {yt.get_job_stderr(operation.id, job["id"]).read() for job in writers}
    assert all(text.startswith(b"written-by-") for text in stderrs) and len(stderrs) == 2
    with_stderr = operation.get_jobs_with_error_or_stderr()
    assert len(with_stderr) == 2 and all("written-by-" in j["stderr"] for j in with_stderr)
    listed = yt.list_operations(pool="two_tasks")
    assert [op["id"] for op in listed["operations"]] == [operation.id]
    assert listed["state_counts"] == {"completed": 1}


def test_cli_vanilla_runs_to_completion(cli: Cli, yt: Any) -> None:
    _pool(yt, "cli_vanilla")
    result = cli.run(
        "vanilla",
        "--tasks",
        '{main={command="echo from-cli >&2"; job_count=2}}',
        "--spec",
        "{pool=cli_vanilla}",
    )
    assert "completed" in result.stderr
    listed = json.loads(
        cli.run("list-operations", "--pool", "cli_vanilla", "--format", "json").stdout
    )
    (operation,) = listed["operations"]
    assert operation["state"] == "completed"
    jobs = json.loads(cli.run("list-jobs", operation["id"], "--format", "json").stdout)["jobs"]
    stderr = cli.run("get-job-stderr", jobs[0]["id"], operation["id"])
    assert stderr.stdout == "from-cli\n"


def test_operation_over_running_limit_is_pending_then_starts(yt: Any) -> None:
    _pool(yt, "one_at_a_time", max_running_operation_count=1)

    def spec(command: str) -> Any:
        builder = yt_wrapper.VanillaSpecBuilder().begin_task("t").command(command).job_count(1)
        return builder.end_task().pool("one_at_a_time")

    first = yt.run_operation(spec("sleep 2"), sync=False)
    second = yt.run_operation(spec("true"), sync=False)
    assert _state(yt, first.id) == "running"
    assert _state(yt, second.id) == "pending"
    pool = f"{ORCHID}/pool_trees/default/pools/one_at_a_time"
    wait_until(lambda: _orchid(yt, f"{pool}/operation_count") == 2, 30, "both in orchid")
    assert yt.get(f"{pool}/running_operation_count") == 1
    second.wait()
    assert _state(yt, first.id) == "completed"
    states = [event["state"] for event in yt.get_operation(second.id)["events"]]
    assert states.index("pending") < states.index("running")


def test_abort_with_message_and_update_parameters_through_cli(yt: Any, cli: Cli) -> None:
    _pool(yt, "from_pool")
    _pool(yt, "to_pool")
    op_id = cli.run(
        "vanilla",
        "--tasks",
        '{t={command="sleep 60"; job_count=1}}',
        "--spec",
        "{pool=from_pool}",
        "--async",
    ).stdout.strip()
    wait_until(lambda: _state(yt, op_id) == "running", 30, "the operation to run")
    cli.run("update-op-parameters", op_id, "{pool=to_pool}")
    runtime = yt.get_operation(op_id, attributes=["runtime_parameters"])["runtime_parameters"]
    assert runtime["scheduling_options_per_pool_tree"]["default"]["pool"] == "to_pool"
    by_pool = yt.get(f"{ORCHID}/pool_trees/default/operations_by_pool")
    assert op_id in by_pool["to_pool"] and op_id not in by_pool.get("from_pool", {})
    cli.run("abort-op", op_id, "--message", "no longer needed")
    assert _state(yt, op_id) == "aborted"
    result = yt.get_operation(op_id, attributes=["result"])["result"]
    assert result["error"]["inner_errors"][0]["message"] == "no longer needed"
    assert isinstance(result["error"]["code"], int) and result["error"]["code"] != 0


def test_orchid_shows_fair_share_and_usage(yt: Any) -> None:
    _pool(yt, "watched", strong_guarantee_resources={"cpu": 1})
    spec = (
        yt_wrapper.VanillaSpecBuilder().begin_task("t").command("sleep 30").job_count(2).end_task()
    )
    operation = yt.run_operation(spec.pool("watched"), sync=False)
    try:
        path = f"{ORCHID}/pool_trees/default/pools/watched"
        usage = f"{path}/resource_usage/cpu"
        wait_until(lambda: (_orchid(yt, usage) or 0) >= 2, 30, "usage in orchid")
        assert yt.get(f"{path}/fair_share_ratio") > 0
        assert yt.get(f"{path}/detailed_fair_share/total/cpu") > 0
        old = f"{ORCHID}/scheduling_info_per_pool_tree/default/fair_share_info/pools/watched"
        slots = f"{old}/resource_usage/user_slots"
        # YSON doubles compare equal only to floats.
        wait_until(lambda: _orchid(yt, slots) == 2.0, 30, "usage in the old layout")
        fields = yt.get(f"{ORCHID}/pool_trees/default/pools", attributes=None)
        assert "watched" in fields
    finally:
        operation.abort()


def test_suspend_resume_complete_and_abort_job(yt: Any) -> None:
    _pool(yt, "controlled")
    spec = (
        yt_wrapper.VanillaSpecBuilder()
        .begin_task("t")
        .command("sleep 60")
        .job_count(2)
        .end_task()
        .pool("controlled")
    )
    operation = yt.run_operation(spec, sync=False)
    wait_until(
        lambda: len(yt.list_jobs(operation.id, job_state="running")["jobs"]) == 2,
        30,
        "two running jobs",
    )
    yt.suspend_operation(operation.id)
    assert bool(yt.get_operation(operation.id, attributes=["suspended"])["suspended"])
    yt.resume_operation(operation.id)
    assert not bool(yt.get_operation(operation.id, attributes=["suspended"])["suspended"])
    job = yt.list_jobs(operation.id, job_state="running")["jobs"][0]
    yt.abort_job(job["id"])
    assert yt.get_job(operation.id, job["id"])["state"] == "aborted"
    yt.complete_operation(operation.id)
    assert operation.get_state() == "completed"


def test_user_without_use_is_refused_with_authorization_error(yt: Any, cluster: Any) -> None:
    from tests.ytapi.conftest import make_client

    yt.create("user", attributes={"name": "mallory"})
    token = yt.issue_token("mallory")
    _pool(
        yt,
        "guarded",
        acl=[{"action": "deny", "subjects": ["mallory"], "permissions": ["use"]}],
    )
    assert yt.check_permission("mallory", "use", "//sys/pool_trees/default/guarded")["action"] == (
        "deny"
    )
    mallory = make_client(cluster.url, token)
    spec = yt_wrapper.VanillaSpecBuilder().begin_task("t").command("true").end_task()
    with pytest.raises(yt_wrapper.YtResponseError) as refused:
        mallory.run_operation(spec.pool("guarded"), sync=False)
    assert refused.value.is_access_denied()
    assert refused.value.contains_code(901)
    assert yt.list_operations(pool="guarded")["operations"] == []


def test_unknown_operation_and_bad_parameters_are_yt_errors(yt: Any) -> None:
    with pytest.raises(yt_wrapper.YtResponseError) as unknown:
        yt.get_operation("1-2-3-4")
    assert unknown.value.is_no_such_operation()
    with pytest.raises(yt_wrapper.YtResponseError) as bad:
        yt.list_operations(limit=0)
    assert bad.value.contains_code(1)
    assert "limit" in str(bad.value)
    spec = yt_wrapper.VanillaSpecBuilder().begin_task("t").command("true").job_count(1).end_task()
    with pytest.raises(yt_wrapper.YtResponseError) as invalid:
        yt.run_operation(spec.spec({"weight": -1}), sync=False)
    assert invalid.value.contains_code(1) and "weight" in str(invalid.value)


def test_failed_operation_raises_with_the_jobs_stderr(yt: Any) -> None:
    _pool(yt, "failing")
    spec = (
        yt_wrapper.VanillaSpecBuilder()
        .begin_task("t")
        .command("echo it-broke >&2; exit 3")
        .job_count(1)
        .end_task()
        .pool("failing")
        .spec({"max_failed_job_count": 1})
    )
    with pytest.raises(yt_wrapper.YtOperationFailedError) as failed:
        yt.run_operation(spec)
    assert failed.value.attributes["state"] == "failed"
    stderrs = failed.value.attributes["stderrs"]
    assert stderrs and "it-broke" in stderrs[0]["stderr"]
    assert "exited with code 3" in json.dumps(stderrs[0]["error"])


def test_too_many_operations_is_code_202(yt: Any) -> None:
    _pool(yt, "single", max_operation_count=1, max_running_operation_count=1)
    spec = (
        yt_wrapper.VanillaSpecBuilder()
        .begin_task("t")
        .command("sleep 30")
        .job_count(1)
        .end_task()
        .pool("single")
    )
    first = yt.run_operation(spec, sync=False)
    try:
        with pytest.raises(yt_wrapper.YtResponseError) as refused:
            yt.run_operation(spec, sync=False)
        assert refused.value.is_concurrent_operations_limit_reached()
        assert isinstance(refused.value, yt_wrapper.errors.YtConcurrentOperationsLimitExceeded)
    finally:
        first.abort()
