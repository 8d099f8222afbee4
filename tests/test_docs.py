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
