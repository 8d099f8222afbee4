"""The exec-node agent's heartbeat loop.

Every period the agent collects jobs that ended, sends a heartbeat (resources, tags, running
jobs, finished jobs with their output), and carries out the answer: abort, interrupt (signal
now, kill at the deadline), start.  Reports of finished jobs are kept until a heartbeat that
carried them is answered, so a scheduler restart loses none of them; running jobs simply keep
running while the scheduler is away and are re-attached by the next successful heartbeat.

With several scheduler instances (``server`` is a comma-separated list), a heartbeat refused by a
standby (``NotLeader``) or one that cannot reach its instance goes at once to the leader the
standby named, else to the next instance; the unacknowledged reports go with it.

On SIGINT/SIGTERM (``stop``) the agent kills its jobs and sends a last heartbeat reporting them
aborted, so the scheduler can reschedule them at once.  If the agent dies instead (``kill -9``),
its watchdog kills the jobs (:mod:`ytsched.node.watchdog`), and the next agent on the same
directory kills whatever is left; the directory is locked so that only one agent uses it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ytsched.client.client import not_leader
from ytsched.datadir import lock_data_directory
from ytsched.node.process import Finished, JobProcess, kill_stale_jobs
from ytsched.node.watchdog import start_watchdog, stop_watchdog

log = logging.getLogger("ytsched.node")


def job_directory_name(job_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in job_id)


class NodeAgent:
    def __init__(
        self,
        *,
        server: str,
        token: str,
        address: str,
        resources: dict[str, float],
        tags: list[str],
        data_dir: Path,
        heartbeat_period: float = 1.0,
        request_timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.servers = [part.strip().rstrip("/") for part in server.split(",") if part.strip()]
        self.server = self.servers[0]
        self.address = address
        self.resources = resources
        self.tags = tags
        self.data_dir = data_dir
        self.jobs_dir = data_dir / "jobs"
        self.period = heartbeat_period
        self.clock = clock
        self.jobs: dict[str, JobProcess] = {}
        self.unreported: dict[str, dict[str, Any]] = {}
        self.stopping = threading.Event()
        self.heartbeats = 0
        # First of all: a second agent on this directory must not kill the first one's jobs.
        self.lock = lock_data_directory(data_dir, f"ytsched node {address}")
        self.client = httpx.Client(
            headers={"Authorization": f"Bearer {token}"}, timeout=request_timeout
        )
        stale = kill_stale_jobs(self.jobs_dir)
        if stale:
            log.warning("killed %d job(s) left by a previous agent", stale)
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._watchdog, self._watchdog_fd = start_watchdog(self.jobs_dir)

    # --- jobs -------------------------------------------------------------------------------

    def _collect(self) -> None:
        now = self.clock()
        for job_id, job in list(self.jobs.items()):
            job.check_deadline(now)
            finished = job.poll()
            if finished is not None:
                self.unreported[job_id] = self._report(job, finished)
                del self.jobs[job_id]
                job.cleanup()

    @staticmethod
    def _report(job: JobProcess, finished: Finished) -> dict[str, Any]:
        return {
            "operation_id": job.operation_id,
            "job_id": job.job_id,
            "outcome": finished.outcome,
            "error": finished.error,
            "interrupted": finished.interrupted,
            "exit_code": finished.exit_code,
            "stdout": finished.stdout,
            "stderr": finished.stderr,
        }

    def _start(self, start: dict[str, Any]) -> None:
        job_id = str(start["job_id"])
        if job_id in self.jobs or job_id in self.unreported:
            return
        environment = {str(k): str(v) for k, v in (start.get("environment") or {}).items()}
        environment.update(
            {
                "YT_JOB_ID": job_id,
                "YT_OPERATION_ID": str(start.get("operation_id", "")),
                "YT_TASK_NAME": str(start.get("task", "")),
                "YTSCHED_NODE_ADDRESS": self.address,
            }
        )
        try:
            self.jobs[job_id] = JobProcess(
                job_id=job_id,
                operation_id=str(start.get("operation_id", "")),
                command=str(start.get("command") or ""),
                environment=environment,
                directory=self.jobs_dir / job_directory_name(job_id),
                interruption_signal=start.get("interruption_signal"),
            )
        except OSError as error:
            self.unreported[job_id] = {
                "operation_id": str(start.get("operation_id", "")),
                "job_id": job_id,
                "outcome": "failed",
                "error": f"cannot start the job: {error}",
                "interrupted": False,
                "exit_code": None,
                "stdout": "",
                "stderr": "",
            }

    def _apply(self, answer: dict[str, Any]) -> None:
        now = self.clock()
        for abort in answer.get("abort", []):
            job = self.jobs.get(str(abort.get("job_id")))
            if job is not None:
                job.abort(f"aborted by scheduler: {abort.get('reason')}")
        for interrupt in answer.get("interrupt", []):
            job = self.jobs.get(str(interrupt.get("job_id")))
            if job is not None:
                job.interrupt(interrupt.get("signal"), float(interrupt.get("timeout") or 0), now)
        for start in answer.get("start", []):
            self._start(start)
        period = answer.get("heartbeat_period")
        if isinstance(period, int | float) and 0.01 <= period <= 600:
            self.period = float(period)

    # --- heartbeats -----------------------------------------------------------------------

    def heartbeat(self) -> bool:
        """One heartbeat; False when the server could not be reached or refused it."""
        self._collect()
        reported = dict(self.unreported)
        payload = {
            "address": self.address,
            "resource_limits": self.resources,
            "tags": self.tags,
            "running_job_ids": sorted(self.jobs),
            "finished_jobs": list(reported.values()),
        }
        response = self._send(payload)
        if response is None:
            return False
        if response.status_code != 200:
            log.warning("heartbeat refused (%s): %s", response.status_code, response.text[:500])
            return False
        for job_id in reported:
            self.unreported.pop(job_id, None)
        self.heartbeats += 1
        self._apply(response.json())
        return True

    def _send(self, payload: dict[str, Any]) -> httpx.Response | None:
        """Post a heartbeat to the leader, trying each instance at most once."""
        for _ in range(len(self.servers) + 1):
            try:
                response = self.client.post(f"{self.server}/api/v4/node_heartbeat", json=payload)
            except httpx.HTTPError as error:
                log.warning("heartbeat to %s failed: %s", self.server, error)
                if len(self.servers) == 1:
                    return None
                self._follow(None)
                continue
            refused, leader = not_leader(response)
            if not refused:
                return response
            if leader is None and len(self.servers) == 1:
                return response
            self._follow(leader)
        return None

    def _follow(self, leader: str | None) -> None:
        """Heartbeat to ``leader`` from now on, or (unknown) to the next instance."""
        if leader is not None and leader.rstrip("/") != self.server:
            self.server = leader.rstrip("/")
        else:
            index = self.servers.index(self.server) if self.server in self.servers else -1
            self.server = self.servers[(index + 1) % len(self.servers)]
        log.info("heartbeats now go to %s", self.server)

    def run(self) -> None:
        """Heartbeat every period until :meth:`stop`; then kill jobs and report them."""
        log.info("node %s heartbeating to %s", self.address, self.server)
        while not self.stopping.is_set():
            started = self.clock()
            self.heartbeat()
            delay = max(0.0, self.period - (self.clock() - started))
            self.stopping.wait(delay)
        self.shutdown()

    def stop(self) -> None:
        self.stopping.set()

    def shutdown(self) -> None:
        for job in self.jobs.values():
            job.abort("node agent stopped")
        for job in self.jobs.values():
            job.wait_gone(2.0)
        self._collect()
        if self.unreported:
            payload = {
                "address": self.address,
                "resource_limits": self.resources,
                "tags": self.tags,
                "running_job_ids": [],
                "finished_jobs": list(self.unreported.values()),
            }
            with contextlib.suppress(httpx.HTTPError):
                self.client.post(f"{self.server}/api/v4/node_heartbeat", json=payload, timeout=3)
        self.client.close()
        stop_watchdog(self._watchdog, self._watchdog_fd)
        self.lock.release()
