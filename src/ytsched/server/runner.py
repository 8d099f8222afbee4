"""Running the service: build the cluster, bind a socket, serve with uvicorn until stopped.

The socket is bound before uvicorn starts so that ``--port 0`` works: the chosen port is
printed (and written to ``--port-file``) once the service accepts connections, which is how
``ytsched local`` and the tests find it.  SIGINT and SIGTERM stop it gracefully.

On a PostgreSQL store the instance is one of several (:mod:`ytsched.server.ha`): it listens at
once, as a standby, and serves when it wins the lease.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import sys
from pathlib import Path

import uvicorn
import uvloop

from ytsched.errors import YtschedError
from ytsched.fairshare import native
from ytsched.server.app import create_app
from ytsched.server.cluster import Cluster, ServiceConfig
from ytsched.server.gcpolicy import CollectorPolicy
from ytsched.store import is_postgresql


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line ``AddressInUse`` / ``InvalidArgument`` refusal."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise YtschedError(
                "AddressInUse", f"cannot listen on {host}:{port}: the port is already in use"
            ) from None
        reason = error.strerror or str(error)
        raise YtschedError("InvalidArgument", f"cannot listen on {host}:{port}: {reason}") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def serve(
    config: ServiceConfig,
    host: str,
    port: int,
    port_file: Path | None = None,
    advertise: str | None = None,
) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if is_postgresql(config.store):
        serve_instance(config, host, port, port_file, advertise)
        return
    sock = bind(host, port)  # before revival: a busy port is refused without touching state
    tune_threads()
    cluster = Cluster(config)
    app = create_app(cluster)
    cluster.collector = CollectorPolicy(observe=cluster.metrics.observe_gc_pause)
    cluster.collector.install()
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    )

    async def main() -> None:
        await _serve_until_stopped(server, sock, port_file, f"data: {config.data_dir}")

    try:
        # uvloop, as uvicorn itself would pick: its socket transport costs a fraction of
        # asyncio's selector loop on the heartbeat path (see docs/performance.md).
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
    finally:
        cluster.collector.uninstall()
        cluster.close()
        sys.stdout.flush()


SWITCH_INTERVAL = 0.0005
"""Seconds a thread that wants the GIL waits before asking the one holding it to let go
(Python's default is 5 ms).  The fair-share worker and the store's writer thread release
the GIL around every native call and every SQLite row, and take it back each time: with the
event loop busy, every take-back waited up to 5 ms, which stretched a commit of a hundred
rows to hundreds of milliseconds (and the answers waiting for it).  The loop's own requests
are short, so a finer interval costs it little."""


def engine_threads_beside_the_loop(cpu_count: int | None) -> int:
    """Threads for one native fair-share update in the service: one core stays the loop's.

    The engine runs in a worker thread while the event loop answers heartbeats
    (``server/update_steps.py``); on a 2-core machine a second engine thread takes the core
    the loop needs, so the engine gets every core but one, at most its default (results are
    the same for any count, see :func:`ytsched.fairshare.native.set_threads`).
    """
    return max(1, min(native.default_threads(), (cpu_count or 1) - 1))


def tune_threads() -> None:
    """Settings for a process that serves: the GIL switch interval and the engine's threads."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    native.set_threads(engine_threads_beside_the_loop(os.cpu_count()))


async def _serve_until_stopped(
    server: uvicorn.Server, sock: socket.socket, port_file: Path | None, what: str
) -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        host, actual = sock.getsockname()[:2]
        if port_file is not None:
            tmp = port_file.with_suffix(".tmp")
            tmp.write_text(str(actual), encoding="utf-8")
            tmp.replace(port_file)
        print(f"ytsched server listening on http://{host}:{actual} ({what})", flush=True)
    await task


def serve_instance(
    config: ServiceConfig, host: str, port: int, port_file: Path | None, advertise: str | None
) -> None:
    """Serve as one instance of several on a PostgreSQL store (standby until elected)."""
    from ytsched.server.ha import Instance
    from ytsched.store.postgresql import redact

    sock = bind(host, port)
    tune_threads()
    address = advertise or f"http://{host}:{sock.getsockname()[1]}"
    config.address = address
    instance = Instance(config, address)
    server = uvicorn.Server(
        uvicorn.Config(instance.gate, log_level="warning", access_log=False, lifespan="on")
    )

    async def main() -> None:
        instance.start(asyncio.get_running_loop())
        what = f"store: {redact(config.store or '')}, advertised as {address}"
        await _serve_until_stopped(server, sock, port_file, what)

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
    finally:
        instance.close()
        sys.stdout.flush()
