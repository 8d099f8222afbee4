"""Simulator outputs stay byte-identical to the golden digests (issue 15).

The digests in ``tests/data/simulator_golden.json`` were produced by the code before the
performance work of issue 15; see ``tests/simulator/golden_outputs.py`` for the cases and for
how to regenerate them when an output is meant to change.
"""

from __future__ import annotations

import json

import pytest

from tests.simulator.golden_outputs import GOLDEN, case_digests, cases

EXPECTED = json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_case_has_a_golden_digest() -> None:
    assert set(cases()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_outputs_are_byte_identical_to_golden(name: str) -> None:
    assert case_digests(name) == EXPECTED[name]
