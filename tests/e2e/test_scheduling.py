"""End to end: a real server, two real node agents, real shell jobs."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cluster import ProcessCluster, wait_until

FINAL = ("completed", "failed", "aborted")


def _state(yt: object, op: str) -> str:
    return str(yt.get_operation(op, attributes=["state"])["state"])  # type: ignore[attr-defined]


def _running(yt: object, op: str) -> int:
    view = yt.get_operation(op, attributes=["brief_progress"])  # type: ignore[attr-defined]
    return int(view["brief_progress"]["jobs"]["running"])


def test_operations_complete_with_output(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    op = yt.run_vanilla(
        "echo out $YT_OPERATION_ID; echo err >&2; sleep 0.2", job_count=6, pool="alpha"
    )
    assert yt.track(op, timeout=40) == "completed"
    jobs = yt.list_jobs(op)
    assert len(jobs) == 6
    assert {job["state"] for job in jobs} == {"completed"}
    assert {job["address"] for job in jobs} == {"node-1", "node-2"}
    assert yt.get_job_stdout(jobs[0]["id"]) == f"out {op}\n"
    assert yt.get_job_stderr(jobs[0]["id"]) == "err\n"
    events = [event["state"] for event in yt.get_operation(op)["events"]]
    assert events[0] == "starting" and events[-1] == "completed"


def test_failing_jobs_fail_the_operation(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    op = yt.run_vanilla("echo broken >&2; exit 3", job_count=1, spec={"max_failed_job_count": 1})
    wait_until(lambda: _state(yt, op) in FINAL, 30, "the operation to finish")
    assert _state(yt, op) == "failed"
    failed = yt.list_jobs(op, job_state="failed")
    assert len(failed) == 2
    assert "exited with code 3" in failed[0]["error"]["message"]


def test_running_limit_makes_operations_pending_then_run(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    first = yt.run_vanilla("sleep 1", job_count=2, pool="limited")
    second = yt.run_vanilla("sleep 0.2", job_count=2, pool="limited")
    assert _state(yt, first) == "running"
    assert _state(yt, second) == "pending"
    explanation = yt.explain_operation(second)
    assert "pending" in explanation["text"]
    assert yt.track(first, timeout=40) == "completed"
    assert yt.track(second, timeout=40) == "completed"
    states = [event["state"] for event in yt.get_operation(second)["events"]]
    assert states[:3] == ["starting", "pending", "running"]


def test_starving_pool_preempts_with_interruption_signal(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    yt = cluster.client()
    marks = tmp_path / "marks"
    marks.mkdir()
    # The victim's jobs note the interruption signal, then exit.
    victim_command = f"trap 'touch {marks}/$YT_JOB_ID_SAFE; exit 0' INT; sleep 60 & wait"
    victim = yt.run_vanilla(
        f"export YT_JOB_ID_SAFE=$(echo $YT_JOB_ID | tr / _); {victim_command}",
        job_count=4,
        pool="alpha",
        interruption_signal="SIGINT",
    )
    wait_until(lambda: _running(yt, victim) == 4, 30, "the victim to fill the cluster")
    starving = yt.run_vanilla("sleep 0.5", job_count=2, pool="beta")
    assert yt.track(starving, timeout=40) == "completed"
    preempted = [
        job for job in yt.list_jobs(victim) if (job.get("interruption_info") or {}).get("reason")
    ]
    assert preempted, "no job of the victim was preempted"
    assert preempted[0]["interruption_info"]["reason"] in ("preemption", "aggressive_preemption")
    wait_until(lambda: list(marks.iterdir()), 10, "a job to receive SIGINT")
    explanation = yt.explain_operation(victim)
    assert explanation["preempted_jobs"]
    assert "preempted" in explanation["text"]
    yt.abort_op(victim)


def test_graceful_operation_shrinks_to_its_fair_share(cluster: ProcessCluster) -> None:
    yt = cluster.client()
    graceful = yt.run_vanilla(
        "sleep 60",
        job_count=8,
        pool="graceful",
        interruption_signal="SIGINT",
        spec={"preemption_mode": "graceful"},
    )
    wait_until(lambda: _running(yt, graceful) == 4, 30, "the graceful operation to run 4 jobs")
    other = yt.run_vanilla("sleep 60", job_count=4, pool="beta")
    wait_until(lambda: _running(yt, other) >= 1, 30, "the other operation to get a slot")
    wait_until(lambda: _running(yt, graceful) <= 2, 30, "the graceful operation to shrink")
    reasons = {(job.get("interruption_info") or {}).get("reason") for job in yt.list_jobs(graceful)}
    assert "graceful_preemption" in reasons
    yt.abort_op(graceful)
    yt.abort_op(other)
