"""Generated documentation is committed up to date."""

from __future__ import annotations

from pathlib import Path

from ytsched.docgen.configuration import render

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_configuration_reference_is_current() -> None:
    committed = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/configuration.md is stale: run"
        " `python -m ytsched.docgen.configuration > docs/configuration.md`"
    )


def test_quickstart_table_is_what_the_command_prints() -> None:
    from click.testing import CliRunner

    from ytsched.cli.main import main

    text = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    start = text.index("```\nelement ") + 4
    shown = text[start : text.index("```", start)].rstrip("\n").splitlines()
    example = DOCS.parent / "examples" / "small_tree.yson"
    result = CliRunner().invoke(main, ["fair-share", str(example), "--format", "table"])
    printed = [line.rstrip() for line in result.stdout.rstrip("\n").splitlines()]
    assert shown == printed
