"""Integral-guarantee scenarios re-expressed from YTsaurus's vector HDRF unit tests.

Same data format and runner as ``test_ut_scenarios.py``; the files live in
``tests/data/integral_scenarios/`` (burst and relaxed pools, volume accounting over steps).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fairshare.scenario_runner import (
    INTEGRAL_SCENARIO_DIR,
    load_scenario,
    run_scenario,
    scenario_paths,
)
from ytsched.snapshot import compute_orchid

INTEGRAL_PATHS = scenario_paths(INTEGRAL_SCENARIO_DIR)


def test_integral_folder_is_populated() -> None:
    assert INTEGRAL_PATHS, f"no scenarios found in {INTEGRAL_SCENARIO_DIR}"


@pytest.mark.parametrize("path", INTEGRAL_PATHS, ids=[path.stem for path in INTEGRAL_PATHS])
def test_integral_scenario(path: Path) -> None:
    run_scenario(load_scenario(path), compute_orchid)
