"""Shared pieces of the service commands: connection options, YSON values, output, errors."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ytsched.errors import YtschedError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 1


def connection_options(function: F) -> F:
    """``--proxy`` and ``--token`` (defaults from ``YTSCHED_PROXY`` / ``YTSCHED_TOKEN``)."""
    function = click.option(
        "--token", envvar="YTSCHED_TOKEN", help="Bearer token (env YTSCHED_TOKEN)."
    )(function)
    function = click.option(
        "--proxy", envvar="YTSCHED_PROXY", help="Service URL (env YTSCHED_PROXY)."
    )(function)
    return function


def reports_errors(function: F) -> F:
    """Print a refused request as one line and exit 2 (1 when the service is unreachable)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except YtschedError as error:
            click.echo(f"ytsched: error: {error.message} [{error.code}]", err=True)
            unreachable = error.code in ("ConnectionError",)
            sys.exit(EXIT_UNREACHABLE if unreachable else EXIT_BAD_INPUT)

    return wrapper  # type: ignore[return-value]


def client(proxy: str | None, token: str | None) -> Any:
    from ytsched.client import Client

    return Client(proxy, token)


def parse_yson(text: str, what: str) -> Any:
    """A YSON value from the command line (JSON is valid YSON for maps of plain values)."""
    from ytsched import yson

    try:
        return yson.strip_attributes(yson.loads(text))
    except yson.YsonError as error:
        try:
            return json.loads(text)
        except ValueError:
            raise YtschedError(
                "InvalidArgument", f"{what}: cannot parse {text!r} as YSON: {error.reason}"
            ) from None


def render(value: Any, output_format: str) -> str:
    if output_format == "json":
        return json.dumps(value, indent=2)
    from ytsched import yson

    return yson.dumps(value, pretty=True)


FORMAT_OPTION = click.option(
    "--format",
    "output_format",
    type=click.Choice(["yson", "json"]),
    default="yson",
    show_default=True,
)
