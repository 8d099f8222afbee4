"""Jobs do not outlive their agent: the watchdog and the start-time check of recorded groups."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ytsched.node.process import kill_recorded_group, record_group
from ytsched.node.watchdog import start_watchdog, stop_watchdog


def _group(command: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["/bin/sh", "-c", command], start_new_session=True)


def _gone(process: subprocess.Popen[bytes], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return True
        time.sleep(0.02)
    return False


def test_a_reused_group_number_is_not_killed(tmp_path: Path) -> None:
    stranger = _group("sleep 60")
    try:
        job_dir = tmp_path / "job"
        job_dir.mkdir()
        record_group(job_dir, stranger.pid)
        # The recorded leader started at another time: the number now belongs to someone else.
        (job_dir / "pgid.started").write_text("12345.0", encoding="utf-8")
        assert not kill_recorded_group(job_dir)
        assert not _gone(stranger, 0.3)
        record_group(job_dir, stranger.pid)
        assert kill_recorded_group(job_dir)
        assert _gone(stranger)
    finally:
        stranger.kill()
        stranger.wait()


def test_watchdog_kills_recorded_jobs_when_the_agent_end_closes(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    (jobs_dir / "j1").mkdir(parents=True)
    job = _group("sleep 60 & sleep 60; wait")
    try:
        record_group(jobs_dir / "j1", job.pid)
        watchdog, write_end = start_watchdog(jobs_dir)
        time.sleep(0.2)
        assert job.poll() is None  # nothing happens while the agent lives
        stop_watchdog(watchdog, write_end)  # what the kernel does when the agent dies
        assert watchdog.returncode == 0
        assert _gone(job)
    finally:
        job.kill()
        job.wait()
