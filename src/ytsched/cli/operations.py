"""``ytsched run-vanilla``, ``ytsched ops ...``, ``ytsched jobs ...``, ``ytsched explain``,
``ytsched token issue``: operations and jobs on a running service."""

from __future__ import annotations

from typing import Any

import click

from ytsched.cli.common import (
    FORMAT_OPTION,
    client,
    connection_options,
    parse_yson,
    render,
    reports_errors,
)
from ytsched.errors import YtschedError
from ytsched.node.resources import parse_amount


@click.command("run-vanilla")
@click.option("--command", "command", required=True, help="Shell command of each job.")
@click.option("--job-count", default=1, show_default=True, type=int)
@click.option("--pool", help="Pool (default: an ephemeral pool named after you).")
@click.option("--cpu", "cpu", type=float, help="Cores per job (cpu_limit).")
@click.option("--memory", "memory", help="Memory per job, e.g. 512M (memory_limit).")
@click.option("--gpu", "gpu", type=int, help="GPUs per job (gpu_limit).")
@click.option("--interruption-signal", help="Signal sent on interruption, e.g. SIGINT.")
@click.option("--task-name", default="task", show_default=True)
@click.option("--spec", "spec_text", help="Extra spec as YSON, e.g. '{weight=2}'.")
@click.option("--track", is_flag=True, help="Wait until the operation finishes.")
@connection_options
@reports_errors
def run_vanilla(
    command: str,
    job_count: int,
    pool: str | None,
    cpu: float | None,
    memory: str | None,
    gpu: int | None,
    interruption_signal: str | None,
    task_name: str,
    spec_text: str | None,
    track: bool,
    proxy: str | None,
    token: str | None,
) -> None:
    """Start a vanilla operation and print its id."""
    spec = parse_yson(spec_text, "--spec") if spec_text else {}
    if not isinstance(spec, dict):
        raise YtschedError("InvalidArgument", "--spec must be a YSON map")
    with client(proxy, token) as yt:
        op_id = yt.run_vanilla(
            command,
            job_count=job_count,
            pool=pool,
            task_name=task_name,
            cpu_limit=cpu,
            memory_limit=int(parse_amount("memory", memory)) if memory else None,
            gpu_limit=gpu,
            interruption_signal=interruption_signal,
            spec=spec,
        )
        click.echo(op_id)
        if track:
            state = yt.track(op_id, raise_on_failure=False)
            click.echo(f"operation {op_id} {state}", err=True)
            if state != "completed":
                raise SystemExit(1)


@click.group("ops")
def ops() -> None:
    """List, inspect and control operations."""


def _jobs_summary(view: dict[str, Any]) -> str:
    jobs = (view.get("brief_progress") or {}).get("jobs") or {}
    completed = (jobs.get("completed") or {}).get("total", 0)
    return f"{jobs.get('running', 0)}/{completed}/{jobs.get('total') or '-'}"


@ops.command("list")
@click.option("--user")
@click.option("--state")
@click.option("--pool")
@click.option("--limit", default=100, show_default=True)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "yson"]),
    default="table",
    show_default=True,
)
@connection_options
@reports_errors
def ops_list(
    user: str | None,
    state: str | None,
    pool: str | None,
    limit: int,
    output_format: str,
    proxy: str | None,
    token: str | None,
) -> None:
    """Operations, newest first (jobs column: running/completed/total)."""
    with client(proxy, token) as yt:
        result = yt.list_operations(user=user, state=state, pool=pool, limit=limit)
    if output_format != "table":
        click.echo(render(result, output_format))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "user", "state", "pool", "jobs r/c/t", "started", box=None)
    for view in result["operations"]:
        state_text = view["state"] + (" (suspended)" if view.get("suspended") else "")
        table.add_row(
            view["id"],
            view["user"],
            state_text,
            str(view.get("pool")),
            _jobs_summary(view),
            str(view.get("start_time", ""))[:19],
        )
    Console(width=140).print(table)


@ops.command("get")
@click.argument("operation_id")
@FORMAT_OPTION
@connection_options
@reports_errors
def ops_get(operation_id: str, output_format: str, proxy: str | None, token: str | None) -> None:
    """All attributes of an operation."""
    with client(proxy, token) as yt:
        click.echo(render(yt.get_operation(operation_id), output_format))


@ops.command("abort")
@click.argument("operation_id")
@click.option("--message", help="Abort message (shown in @result).")
@connection_options
@reports_errors
def ops_abort(operation_id: str, message: str | None, proxy: str | None, token: str | None) -> None:
    """Abort an operation: its jobs are killed and it ends as aborted."""
    with client(proxy, token) as yt:
        yt.abort_op(operation_id, message)


@ops.command("complete")
@click.argument("operation_id")
@connection_options
@reports_errors
def ops_complete(operation_id: str, proxy: str | None, token: str | None) -> None:
    """Complete an operation now: running jobs are aborted, it ends as completed."""
    with client(proxy, token) as yt:
        yt.complete_op(operation_id)


@ops.command("suspend")
@click.argument("operation_id")
@click.option("--abort-running-jobs", is_flag=True)
@connection_options
@reports_errors
def ops_suspend(
    operation_id: str, abort_running_jobs: bool, proxy: str | None, token: str | None
) -> None:
    """Suspend an operation: it starts no new jobs until resumed."""
    with client(proxy, token) as yt:
        yt.suspend_op(operation_id, abort_running_jobs=abort_running_jobs)


@ops.command("resume")
@click.argument("operation_id")
@connection_options
@reports_errors
def ops_resume(operation_id: str, proxy: str | None, token: str | None) -> None:
    """Resume a suspended operation."""
    with client(proxy, token) as yt:
        yt.resume_op(operation_id)


@ops.command("update")
@click.argument("operation_id")
@click.argument("parameters")
@connection_options
@reports_errors
def ops_update(operation_id: str, parameters: str, proxy: str | None, token: str | None) -> None:
    """Change pool, weight and per-tree options (YSON map, e.g. '{pool=batch; weight=2}')."""
    parsed = parse_yson(parameters, "PARAMETERS")
    if not isinstance(parsed, dict):
        raise YtschedError("InvalidArgument", "PARAMETERS must be a YSON map")
    with client(proxy, token) as yt:
        yt.update_op_parameters(operation_id, parsed)


@click.group("jobs")
def jobs() -> None:
    """Jobs of an operation and their output."""


@jobs.command("list")
@click.argument("operation_id")
@click.option("--state", "job_state")
@FORMAT_OPTION
@connection_options
@reports_errors
def jobs_list(
    operation_id: str,
    job_state: str | None,
    output_format: str,
    proxy: str | None,
    token: str | None,
) -> None:
    """Jobs of an operation (optionally of one --state)."""
    with client(proxy, token) as yt:
        click.echo(render(yt.list_jobs(operation_id, job_state=job_state), output_format))


@jobs.command("stderr")
@click.argument("job_id")
@connection_options
@reports_errors
def jobs_stderr(job_id: str, proxy: str | None, token: str | None) -> None:
    """The tail of a job's stderr (the last 64 KiB)."""
    with client(proxy, token) as yt:
        click.echo(yt.get_job_stderr(job_id), nl=False)


@jobs.command("stdout")
@click.argument("job_id")
@connection_options
@reports_errors
def jobs_stdout(job_id: str, proxy: str | None, token: str | None) -> None:
    """The tail of a job's stdout (the last 64 KiB)."""
    with client(proxy, token) as yt:
        click.echo(yt.get_job_stdout(job_id), nl=False)


@jobs.command("abort")
@click.argument("job_id")
@click.option("--interrupt-timeout", type=int, help="Interrupt with this many ms to finish.")
@connection_options
@reports_errors
def jobs_abort(
    job_id: str, interrupt_timeout: int | None, proxy: str | None, token: str | None
) -> None:
    """Abort a running job now, or interrupt it with --interrupt-timeout ms to finish."""
    with client(proxy, token) as yt:
        yt.abort_job(job_id, interrupt_timeout)


@click.command("explain")
@click.argument("operation_id")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "yson"]),
    default="text",
    show_default=True,
)
@connection_options
@reports_errors
def explain(operation_id: str, output_format: str, proxy: str | None, token: str | None) -> None:
    """Why an operation is pending, starving, below its fair share, or was preempted."""
    with client(proxy, token) as yt:
        result = yt.explain_operation(operation_id)
    if output_format == "text":
        import textwrap

        click.echo(textwrap.fill(result["text"], width=100))
    else:
        click.echo(render(result, output_format))


@click.group("token")
def token_group() -> None:
    """Tokens (superusers only)."""


@token_group.command("issue")
@click.argument("user")
@connection_options
@reports_errors
def token_issue(user: str, proxy: str | None, token: str | None) -> None:
    """Issue a new token for USER and print it."""
    with client(proxy, token) as yt:
        click.echo(yt.issue_token(user))


COMMANDS = (run_vanilla, ops, jobs, explain, token_group)
