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


OPTION_HELP = (
    "Override a tree option of the snapshot, e.g. --option"
    " enable_step_function_for_gang_operations=%true (YSON value). Repeatable."
)


def load_snapshot_document(snapshot: Path, overrides: tuple[str, ...]) -> Any:
    """Read a snapshot file and apply ``KEY=VALUE`` option overrides."""
    from ytsched.errors import SnapshotError
    from ytsched.snapshot import read_document

    document = read_document(snapshot)
    if not overrides:
        return document
    from ytsched import yson

    if isinstance(document, list):
        document = {"elements": document}
    if not isinstance(document, dict):
        return document
    options = dict(document.get("options") or {})
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key:
            raise SnapshotError("InvalidOption", f"--option {override!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = yson.loads(raw)
        except yson.YsonError as error:
            raise SnapshotError(
                "InvalidOption", f"--option {key}: cannot parse value {raw!r}: {error.reason}"
            ) from None
    return {**document, "options": options}


@main.command("fair-share")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--option", "overrides", multiple=True, metavar="KEY=VALUE", help=OPTION_HELP)
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
def fair_share(
    snapshot: Path,
    overrides: tuple[str, ...],
    output_format: str,
    pools_only: bool,
    output: Path | None,
) -> None:
    """Compute fair shares for a pool-tree SNAPSHOT (YSON or JSON).

    The snapshot format is described in docs/snapshot-format.md; the production dump of
    YTsaurus's unit tests (a bare list of elements) is accepted as it is.
    """
    from ytsched.fairshare.update import run_update
    from ytsched.snapshot import parse_snapshot, to_orchid
    from ytsched.snapshot.load import validate_guarantee_sums

    try:
        parsed = parse_snapshot(load_snapshot_document(snapshot, overrides))
        validate_guarantee_sums(parsed)
        result = run_update(parsed)
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
        write_output(output, text if text.endswith("\n") else text + "\n")


def write_output(path: Path, text: str) -> None:
    """Write a result file, or fail with one line naming the path (nothing half-written)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(YtschedError("InvalidOutput", f"{path}: cannot write: {error.strerror or error}"))


@main.command("compare")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--option", "overrides", multiple=True, metavar="KEY=VALUE", help=OPTION_HELP)
@click.option("--worst", default=10, show_default=True, help="How many worst elements to list.")
def compare(snapshot: Path, overrides: tuple[str, ...], worst: int) -> None:
    """Compare computed fair shares with the total_fair_share a production dump recorded."""
    from rich.console import Console
    from rich.table import Table

    from ytsched.snapshot import compute
    from ytsched.snapshot.compare import compare_with_recorded, recorded_shares

    try:
        document = load_snapshot_document(snapshot, overrides)
        result = compute(document)
        # The split analysis walks element functions, which only the reference engine keeps.
        reference = (
            compute(document, engine="python")
            if result.options.enable_improved_fair_share_by_fit_factor_computation
            else None
        )
    except YtschedError as error:
        fail(error)
        return
    elements = document if isinstance(document, list) else document.get("elements", [])
    recorded = recorded_shares(elements)
    if not recorded:
        fail(YtschedError("NothingToCompare", f"{snapshot}: no element records total_fair_share"))
        return
    report = compare_with_recorded(result, recorded, reference)
    console = Console(width=120)
    console.print(f"{len(report.elements)} elements compared (max abs error over resources)")
    table = Table("error", "elements", box=None)
    for label, count in report.distribution():
        table.add_row(label, str(count))
    console.print(table)
    worst_table = Table("element", "kind", "parent", "error", box=None, title="worst")
    for row in report.worst(worst):
        worst_table.add_row(row.name, row.kind, row.parent or "", f"{row.error:.3g}")
    console.print(worst_table)
    if report.split_differs:
        console.print(
            "pools whose recorded share we split differently among their children: "
            + ", ".join(report.split_differs)
        )


def _serialize(document: dict[str, Any], output_format: str) -> str:
    if output_format == "yson":
        from ytsched import yson

        return yson.dumps(document, pretty=True)
    return json.dumps(document, indent=2, sort_keys=False)


def _register_service_commands() -> None:
    """The service, node, local-cluster and client verbs (``ytsched.cli.service`` & co.)."""
    from ytsched.cli import cypress, local, operations, service

    for command in (*service.COMMANDS, local.local, *cypress.COMMANDS, *operations.COMMANDS):
        main.add_command(command)


_register_service_commands()

from ytsched.cli.simulate import simulate, what_if  # noqa: E402
from ytsched.cli.trace import trace  # noqa: E402

main.add_command(simulate)
main.add_command(what_if)
main.add_command(trace)


if __name__ == "__main__":  # pragma: no cover
    main()
