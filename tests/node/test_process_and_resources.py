"""The node agent's pieces: resource parsing and jobs as process groups."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest

from ytsched.node.process import Finished, JobProcess, kill_stale_jobs
from ytsched.node.resources import NodeConfigError, parse_resources, parse_tags


def test_parse_resources_and_tags() -> None:
    assert parse_resources("cpu=8,memory=16G,user_slots=8,gpu=0") == {
        "cpu": 8.0,
        "memory": 16 * 2**30,
        "user_slots": 8.0,
        "gpu": 0.0,
    }
    assert parse_resources("cpu=2.5,user_memory=512MiB")["user_slots"] == 2.0
    assert parse_resources("cpu=2.5,user_memory=512MiB")["memory"] == 512 * 2**20
    assert parse_tags("ssd, rack1,ssd") == ["rack1", "ssd"]
    for bad in ("cpu", "disk=3", "memory=lots", "user_slots=1.5"):
        with pytest.raises(NodeConfigError):
            parse_resources(bad)
    with pytest.raises(NodeConfigError):
        parse_tags("bad tag")


def _job(tmp_path: Path, command: str, signal: str | None = None) -> JobProcess:
    return JobProcess(
        job_id="op/task/0/0",
        operation_id="op",
        command=command,
        environment={"YT_JOB_ID": "op/task/0/0"},
        directory=tmp_path / "job",
        interruption_signal=signal,
    )


def _wait(job: JobProcess, timeout: float = 10.0) -> Finished:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        finished = job.poll()
        if finished is not None:
            return finished
        job.check_deadline(time.monotonic())
        time.sleep(0.02)
    job.abort("test timeout")
    raise AssertionError("job did not finish")


def test_completed_job_output_and_environment(tmp_path: Path) -> None:
    finished = _wait(_job(tmp_path, "echo $YT_JOB_ID; echo oops >&2"))
    assert finished.outcome == "completed" and finished.exit_code == 0
    assert finished.stdout == "op/task/0/0\n" and finished.stderr == "oops\n"


def test_failed_job_reports_exit_code_and_stderr(tmp_path: Path) -> None:
    finished = _wait(_job(tmp_path, "echo broken >&2; exit 4"))
    assert finished.outcome == "failed" and finished.exit_code == 4
    assert finished.error == "command exited with code 4: broken"


def _interrupt_trapping_job(tmp_path: Path, *, agent_ignores_sigint: bool) -> Finished:
    """Start a job that traps SIGINT (from a parent that ignores SIGINT when asked), interrupt
    it once its trap is installed, and wait for it to end.

    The job says when its trap is installed: a fixed sleep here raced the shell's start-up on a
    loaded machine, and a SIGINT that arrives before the trap ends the shell instead.  It then
    waits in short foreground sleeps, so the trap runs within 0.1 s of the signal whenever it
    lands."""
    ready = tmp_path / "trap.ready"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if agent_ignores_sigint else None
    try:
        job = _job(
            tmp_path,
            f"trap 'echo got-int; exit 0' INT; touch {ready}; while :; do sleep 0.1; done",
            signal="SIGINT",
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists(), "the job never started"
    job.interrupt(None, timeout=5, now=time.monotonic())
    return _wait(job)


def test_interruption_signal_reaches_the_job(tmp_path: Path) -> None:
    finished = _interrupt_trapping_job(tmp_path, agent_ignores_sigint=False)
    assert finished.outcome == "completed" and finished.interrupted
    assert "got-int" in finished.stdout


def test_interruption_reaches_a_job_whose_agent_ignores_the_signal(tmp_path: Path) -> None:
    """An agent started in a script's background inherits SIGINT ignored, and an ignored signal
    survives ``exec`` (a shell cannot even trap it): the job must start with the default action
    so that its trap still runs."""
    finished = _interrupt_trapping_job(tmp_path, agent_ignores_sigint=True)
    assert finished.outcome == "completed" and finished.interrupted
    assert "got-int" in finished.stdout


def test_interruption_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    job = _job(tmp_path, f"trap '' INT; sh -c 'echo $$ > {marker}; trap \"\" INT; sleep 30' & wait")
    deadline = time.monotonic() + 5
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    job.interrupt("SIGINT", timeout=0.2, now=time.monotonic())
    finished = _wait(job)
    assert finished.outcome == "aborted" and "interruption timeout" in (finished.error or "")
    child = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that is not ours counts as gone)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_stale_jobs_of_a_dead_agent_are_killed(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    job = JobProcess(
        job_id="j",
        operation_id="op",
        command="sleep 30",
        environment={},
        directory=jobs_dir / "j",
        interruption_signal=None,
    )
    assert kill_stale_jobs(jobs_dir) == 1
    assert _wait(job).outcome == "failed"  # killed by SIGKILL from outside
    assert not jobs_dir.exists()
