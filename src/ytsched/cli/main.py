"""The ``ytsched`` command line.

Every command reports bad input as one line on stderr (``ytsched: error: ... [Code]``) and
exits with status 2; it never prints a traceback for a user mistake.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ytsched import __version__
from ytsched.errors import YtschedError

EXIT_BAD_INPUT = 2


def fail(error: YtschedError) -> None:
    """Print a user error and exit with status 2."""
    click.echo(f"ytsched: error: {error.message} [{error.code}]", err=True)
    sys.exit(EXIT_BAD_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ytsched")
def main() -> None:
    """ytsched: a hierarchical fair-share scheduler with YTsaurus semantics."""


@main.command("fair-share")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "yson", "table"]),
    default="json",
    show_default=True,
    help="json/yson: orchid-shaped attributes; table: an indented tree for people.",
)
@click.option("--pools-only", is_flag=True, help="table: show pools, not operations.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write to this file instead of standard output.",
)
def fair_share(snapshot: Path, output_format: str, pools_only: bool, output: Path | None) -> None:
    """Compute fair shares for a pool-tree SNAPSHOT (YSON or JSON).

    The snapshot format is described in docs/snapshot-format.md; the production dump of
    YTsaurus's unit tests (a bare list of elements) is accepted as it is.
    """
    from ytsched.snapshot import compute, read_document, to_orchid

    try:
        result = compute(read_document(snapshot))
    except YtschedError as error:
        fail(error)
        return
    if output_format == "table":
        from ytsched.cli.table import render_tree

        text = render_tree(result, pools_only=pools_only, width=None if output is None else 160)
    else:
        orchid = to_orchid(result)
        text = _serialize(orchid, output_format)
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def _serialize(document: dict[str, Any], output_format: str) -> str:
    if output_format == "yson":
        from ytsched import yson

        return yson.dumps(document, pretty=True)
    return json.dumps(document, indent=2, sort_keys=False)


if __name__ == "__main__":  # pragma: no cover
    main()
