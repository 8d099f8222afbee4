"""Shared pieces of the service commands: connection options, YSON values, output, errors."""

from __future__ import annotations

import functools
import json
import math
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
        value = yson.strip_attributes(yson.loads(text))
    except yson.YsonError as error:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise YtschedError(
                "InvalidArgument", f"{what}: cannot parse {shown!r} as YSON: {error.reason}"
            ) from None
    check_plain_values(value, what)
    return value


def check_plain_values(value: Any, what: str) -> None:
    """Refuse NaN, infinities and integers outside int64/uint64 anywhere in ``value``.

    The service refuses them too; catching them here gives the one-line error at once (JSON
    cannot even carry NaN, so the request could not be sent).
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        place = f"{what}{where}"
        if isinstance(item, float) and not math.isfinite(item):
            raise YtschedError(
                "InvalidArgument", f"{place}: {item!r} is not a finite number (refused)"
            )
        if isinstance(item, int) and not isinstance(item, bool):
            if not -(2**63) <= item <= 2**64 - 1:
                raise YtschedError(
                    "InvalidArgument", f"{place}: integer out of range (int64/uint64)"
                )
        elif isinstance(item, dict):
            stack.extend((child, f"{where}/{key}") for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}/{index}") for index, child in enumerate(item))


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
