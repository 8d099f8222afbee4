"""``ytsched get|set|list|exists|create|remove``: Cypress verbs against a running service.

Values and attributes are YSON, as with the YTsaurus CLI::

    ytsched get //sys/pool_trees/default/research/@weight
    ytsched set //sys/pool_trees/default/research/@weight 2
    ytsched create scheduler_pool --attributes '{name=team; pool_tree=default; weight=3}'
"""

from __future__ import annotations

import click

from ytsched.cli.common import (
    FORMAT_OPTION,
    client,
    connection_options,
    parse_yson,
    render,
    reports_errors,
)


@click.command("get")
@click.argument("path")
@click.option("--attribute", "attributes", multiple=True, help="Also return this attribute.")
@click.option("--fields", help="Orchid: comma-separated fields to keep.")
@FORMAT_OPTION
@connection_options
@reports_errors
def get_command(
    path: str,
    attributes: tuple[str, ...],
    fields: str | None,
    output_format: str,
    proxy: str | None,
    token: str | None,
) -> None:
    """Print the value at PATH."""
    with client(proxy, token) as yt:
        value = yt.get(
            path,
            attributes=list(attributes) or None,
            fields=[f.strip() for f in fields.split(",")] if fields else None,
        )
    click.echo(render(value, output_format))


@click.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("path")
@click.argument("value")
@connection_options
@reports_errors
def set_command(path: str, value: str, proxy: str | None, token: str | None) -> None:
    """Set the attribute at PATH to VALUE (YSON)."""
    parsed = parse_yson(value, "VALUE")
    with client(proxy, token) as yt:
        yt.set(path, parsed)


@click.command("list")
@click.argument("path")
@FORMAT_OPTION
@connection_options
@reports_errors
def list_command(path: str, output_format: str, proxy: str | None, token: str | None) -> None:
    """List the children of PATH, one per line."""
    with client(proxy, token) as yt:
        names = yt.list(path)
    for name in names:
        click.echo(name)


@click.command("exists")
@click.argument("path")
@connection_options
@reports_errors
def exists_command(path: str, proxy: str | None, token: str | None) -> None:
    """Print true or false (and exit 0 either way)."""
    with client(proxy, token) as yt:
        click.echo("true" if yt.exists(path) else "false")


@click.command("create")
@click.argument("object_type", metavar="TYPE")
@click.argument("path", required=False)
@click.option("--attributes", default="{}", help="YSON map, e.g. '{name=x; pool_tree=default}'.")
@click.option("--ignore-existing", is_flag=True)
@connection_options
@reports_errors
def create_command(
    object_type: str,
    path: str | None,
    attributes: str,
    ignore_existing: bool,
    proxy: str | None,
    token: str | None,
) -> None:
    """Create a scheduler_pool_tree, a scheduler_pool or a user."""
    parsed = parse_yson(attributes, "--attributes")
    if not isinstance(parsed, dict):
        from ytsched.errors import YtschedError

        raise YtschedError("InvalidArgument", "--attributes must be a YSON map")
    with client(proxy, token) as yt:
        click.echo(yt.create(object_type, path, attributes=parsed, ignore_existing=ignore_existing))


@click.command("remove")
@click.argument("path")
@click.option("--recursive", "-r", is_flag=True, help="Remove child pools too.")
@click.option("--force", "-f", is_flag=True, help="Do nothing if PATH does not exist.")
@connection_options
@reports_errors
def remove_command(
    path: str, recursive: bool, force: bool, proxy: str | None, token: str | None
) -> None:
    """Remove a pool, a pool tree or an attribute."""
    with client(proxy, token) as yt:
        yt.remove(path, recursive=recursive, force=force)


COMMANDS = (
    get_command,
    set_command,
    list_command,
    exists_command,
    create_command,
    remove_command,
)
