"""``ytsched local``: a server and N exec nodes on this machine, in one command.

Each process runs in its own session, so that stopping is explicit and complete: on Ctrl-C
(or SIGTERM) the nodes are asked to stop first (they kill their jobs and report them), then the
server; whatever has not exited after a grace period is killed with its process group.
``--demo`` submits a small workload and prints its progress.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click

from ytsched.cli.common import reports_errors
from ytsched.cli.service import admin_token_for
from ytsched.errors import YtschedError


def _spawn(arguments: list[str], log: Path) -> subprocess.Popen[bytes]:
    stream = log.open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "ytsched.cli.main", *arguments],
        stdout=stream,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_processes(processes: list[subprocess.Popen[bytes]], grace: float = 10.0) -> None:
    """SIGTERM each (in order), wait, then SIGKILL the process groups still alive."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)


def _wait_for_port(port_file: Path, server: subprocess.Popen[bytes], log: Path) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if port_file.is_file():
            return int(port_file.read_text(encoding="utf-8"))
        if server.poll() is not None:
            raise YtschedError("ServerFailed", f"the server did not start: {_last_error(log)}")
        time.sleep(0.05)
    raise YtschedError("ServerFailed", "the server did not start within 60 s")


def _last_error(log: Path) -> str:
    """The server's own one-line error (``ytsched: error: ...``), else where to look."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    for line in reversed(text.splitlines()):
        if line.startswith("ytsched: error: "):
            return line.removeprefix("ytsched: error: ").rsplit(" [", 1)[0]
    return f"it exited; see {log}"


@click.command("local")
@click.option("--nodes", "node_count", default=2, show_default=True, type=click.IntRange(0, 64))
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("ytsched-local"),
    show_default=True,
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9380, show_default=True, help="0 picks a free port.")
@click.option("--node-resources", default="cpu=4,memory=8G,user_slots=4", show_default=True)
@click.option(
    "--pool-trees",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Pool trees for a new data directory (default: examples/local).",
)
@click.option("--heartbeat-period", default=0.5, show_default=True)
@click.option("--node-heartbeat-timeout", default=10.0, show_default=True)
@click.option("--demo", is_flag=True, help="Run a small demo workload once the cluster is up.")
@click.option("--exit-after-demo", is_flag=True, help="Stop the cluster when the demo is done.")
@reports_errors
def local(
    node_count: int,
    data_dir: Path,
    host: str,
    port: int,
    node_resources: str,
    pool_trees: Path | None,
    heartbeat_period: float,
    node_heartbeat_timeout: float,
    demo: bool,
    exit_after_demo: bool,
) -> None:
    """Start a server and N exec nodes; print the URL and admin token; stop on Ctrl-C."""
    from ytsched.datadir import lock_data_directory
    from ytsched.node.resources import parse_resources

    parse_resources(node_resources)  # refuse a bad value before starting anything
    # The whole local cluster's directory (the server and the nodes lock their own too).
    lock = lock_data_directory(data_dir, "ytsched local")
    try:
        _run_local(
            node_count,
            data_dir,
            host,
            port,
            node_resources,
            pool_trees,
            heartbeat_period,
            node_heartbeat_timeout,
            demo,
            exit_after_demo,
        )
    finally:
        lock.release()


def _run_local(
    node_count: int,
    data_dir: Path,
    host: str,
    port: int,
    node_resources: str,
    pool_trees: Path | None,
    heartbeat_period: float,
    node_heartbeat_timeout: float,
    demo: bool,
    exit_after_demo: bool,
) -> None:
    token = admin_token_for(data_dir, None)
    port_file = data_dir / "server.port"
    port_file.unlink(missing_ok=True)
    logs = data_dir / "logs"
    logs.mkdir(exist_ok=True)
    server_args = [
        "server",
        "--data-dir",
        str(data_dir / "server"),
        "--host",
        host,
        "--port",
        str(port),
        "--port-file",
        str(port_file),
        "--admin-token",
        token,
        "--heartbeat-period",
        str(heartbeat_period),
        "--node-heartbeat-timeout",
        str(node_heartbeat_timeout),
    ]
    if pool_trees is not None:
        server_args += ["--pool-trees", str(pool_trees)]
    server = _spawn(server_args, logs / "server.log")
    nodes: list[subprocess.Popen[bytes]] = []
    stopping = False

    def on_signal(*_: object) -> None:
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGINT, on_signal), signal.signal(signal.SIGTERM, on_signal)
    try:
        actual = _wait_for_port(port_file, server, logs / "server.log")
        url = f"http://{host}:{actual}"
        addresses = [f"local-node-{index + 1}" for index in range(node_count)]
        for address in addresses:
            nodes.append(
                _spawn(
                    [
                        "node",
                        "--proxy",
                        url,
                        "--token",
                        token,
                        "--address",
                        address,
                        "--resources",
                        node_resources,
                        "--tags",
                        "local",
                        "--data-dir",
                        str(data_dir / "nodes" / address),
                        "--heartbeat-period",
                        str(heartbeat_period),
                    ],
                    logs / f"{address}.log",
                )
            )
        click.echo("ytsched local cluster is up")
        click.echo(f"  URL:          {url}")
        click.echo(f"  Web UI:       {url}/ui/ (log in with the admin token)")
        click.echo(f"  admin token:  {token}")
        click.echo(f"  nodes:        {', '.join(addresses) or 'none'} ({node_resources} each)")
        click.echo(f"  data, logs:   {data_dir}")
        click.echo(f"  try:          export YTSCHED_PROXY={url} YTSCHED_TOKEN={token}")
        click.echo("                ytsched get //sys/pool_trees; ytsched ops list")
        click.echo(f"  YTsaurus yt:  export YT_PROXY={url} YT_TOKEN={token}")
        click.echo("                yt get //sys/pool_trees  (docs/yt-compatibility.md)")
        if not (demo and exit_after_demo):
            click.echo("Press Ctrl-C to stop.", err=True)
        if demo and not stopping:
            from ytsched.cli.demo import run_demo

            run_demo(url, token, should_stop=lambda: stopping)
            if exit_after_demo:
                stopping = True
        while not stopping:
            if server.poll() is not None:
                raise YtschedError("ServerFailed", f"the server exited; see {logs / 'server.log'}")
            time.sleep(0.2)
        click.echo("stopping ...", err=True)
    finally:
        stop_processes(nodes)
        stop_processes([server])
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
    click.echo("stopped", err=True)
