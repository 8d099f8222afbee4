"""``ytsched server`` and ``ytsched node``: the two processes of a cluster."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
from pathlib import Path
from typing import Any

import click

from ytsched.cli.common import reports_errors
from ytsched.errors import YtschedError
from ytsched.server import defaults

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_POOL_TREES = REPO_ROOT / "examples" / "local" / "pool_trees.yson"
FALLBACK_POOL_TREES: dict[str, Any] = {
    "default_tree": "default",
    "pool_trees": {"default": {"config": {}, "pools": {}}},
}


def load_pool_trees(path: Path | None) -> dict[str, Any]:
    """The pool-trees document for a new data directory (YSON or JSON file)."""
    if path is None:
        if not DEFAULT_POOL_TREES.is_file():
            return FALLBACK_POOL_TREES
        path = DEFAULT_POOL_TREES
    from ytsched import yson

    try:
        document = yson.strip_attributes(yson.loads(path.read_text(encoding="utf-8")))
    except OSError as error:
        raise YtschedError("InvalidArgument", f"cannot read {path}: {error}") from None
    except yson.YsonError as error:
        raise YtschedError("InvalidArgument", f"{path}: {error}") from None
    if not isinstance(document, dict):
        raise YtschedError("InvalidArgument", f"{path}: expected a map")
    return document


def admin_token_for(data_dir: Path, given: str | None) -> str:
    """The admin token: given, else the one a previous run saved, else a new one (saved)."""
    path = data_dir / "admin_token"
    if given:
        return given
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(token + "\n")
    return token


@click.command("server")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("ytsched-data"),
    show_default=True,
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9380, show_default=True, help="0 picks a free port.")
@click.option(
    "--port-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the port here once listening.",
)
@click.option(
    "--admin-token",
    envvar="YTSCHED_ADMIN_TOKEN",
    help="Token of user root (default: saved in DATA_DIR/admin_token).",
)
@click.option(
    "--pool-trees",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Pool trees for a new data directory (default: examples/local).",
)
@click.option(
    "--node-heartbeat-timeout",
    default=defaults.NODE_HEARTBEAT_TIMEOUT,
    show_default=True,
    help="Seconds before a silent node is offline and its jobs rescheduled.",
)
@click.option(
    "--heartbeat-period",
    default=defaults.HEARTBEAT_PERIOD,
    show_default=True,
    help="Seconds between node heartbeats (told to nodes).",
)
@click.option(
    "--fair-share-update-period", type=float, help="Seconds (default: the scheduler config, 0.2)."
)
@click.option("--durable", is_flag=True, help="fsync every commit (survive power loss).")
@click.option(
    "--store",
    envvar="YTSCHED_STORE",
    help="postgresql://USER@HOST/DB: share one PostgreSQL database with other instances"
    " (one leads, the others stand by; docs/deployment.md). Default: SQLite in DATA_DIR.",
)
@click.option(
    "--advertise-url",
    help="URL clients and nodes reach this instance at (default: http://HOST:PORT).",
)
@click.option(
    "--history-samples",
    default=defaults.HISTORY_SAMPLES,
    show_default=True,
    type=click.IntRange(min=2),
    help="Samples of pool and operation shares kept for the Web UI's charts.",
)
@click.option(
    "--history-period",
    default=defaults.HISTORY_PERIOD,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds between history samples.",
)
@click.option(
    "--ui-refresh-period",
    default=defaults.UI_REFRESH_PERIOD,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds between live refreshes of Web UI pages.",
)
@reports_errors
def server(
    data_dir: Path,
    host: str,
    port: int,
    port_file: Path | None,
    admin_token: str | None,
    pool_trees: Path | None,
    node_heartbeat_timeout: float,
    heartbeat_period: float,
    fair_share_update_period: float | None,
    durable: bool,
    store: str | None,
    advertise_url: str | None,
    history_samples: int,
    history_period: float,
    ui_refresh_period: float,
) -> None:
    """Run the scheduler service (HTTP API, OpenAPI at /docs and /openapi.json, Web UI at /ui)."""
    from ytsched.datadir import lock_data_directory
    from ytsched.server.cluster import ServiceConfig
    from ytsched.server.runner import serve
    from ytsched.store import check_store_url

    check_store_url(store)
    # Before anything touches the directory; held until the process exits.
    lock = lock_data_directory(data_dir, "ytsched server")
    token = admin_token_for(data_dir, admin_token)
    config = ServiceConfig(
        data_dir=data_dir,
        admin_token=token,
        node_heartbeat_timeout=node_heartbeat_timeout,
        heartbeat_period=heartbeat_period,
        fair_share_update_period=fair_share_update_period,
        durable=durable,
        store=store,
        initial_pool_trees=load_pool_trees(pool_trees),
        history_samples=history_samples,
        history_period=history_period,
        ui_refresh_period=ui_refresh_period,
    )
    try:
        serve(config, host, port, port_file, advertise_url)
    finally:
        lock.release()


@click.command("node")
@click.option(
    "--proxy",
    envvar="YTSCHED_PROXY",
    required=True,
    help="Service URL; several, comma-separated, for instances sharing a store.",
)
@click.option("--token", envvar="YTSCHED_TOKEN", required=True, help="A superuser token.")
@click.option("--address", default=socket.gethostname, show_default="hostname")
@click.option(
    "--resources", "resources_text", default="cpu=4,memory=8G,user_slots=4", show_default=True
)
@click.option("--tags", "tags_text", default="", help="Comma-separated node tags.")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Job directories (default: ./ytsched-node-ADDRESS).",
)
@click.option("--heartbeat-period", default=defaults.HEARTBEAT_PERIOD, show_default=True)
@reports_errors
def node(
    proxy: str,
    token: str,
    address: str,
    resources_text: str,
    tags_text: str,
    data_dir: Path | None,
    heartbeat_period: float,
) -> None:
    """Run an exec node: heartbeat to the service and run the jobs it starts."""
    from ytsched.client import find_urls
    from ytsched.node import NodeAgent, parse_resources, parse_tags

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    directory = data_dir or Path(f"ytsched-node-{address.replace(':', '_')}")
    agent = NodeAgent(
        server=",".join(find_urls(proxy)),
        token=token,
        address=address,
        resources=parse_resources(resources_text),
        tags=parse_tags(tags_text),
        data_dir=directory,
        heartbeat_period=heartbeat_period,
    )
    signal.signal(signal.SIGTERM, lambda *_: agent.stop())
    signal.signal(signal.SIGINT, lambda *_: agent.stop())
    click.echo(f"ytsched node {address} running (jobs in {directory})")
    agent.run()


COMMANDS = (server, node)
