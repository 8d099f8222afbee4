"""Fair-share scenarios re-expressed from YTsaurus's vector HDRF unit tests, run as data.

Each ``tests/data/fair_share_scenarios/*.json`` file holds one scenario: a pool-tree snapshot (or a
sequence of them under ``"steps"``) and the orchid attributes and error codes the fair-share update
must produce. ``ytsched.snapshot.compute_orchid`` turns a snapshot document into the orchid-shaped
output of snapshot-format.md; ``tests/fairshare/scenario_runner.py`` checks it.

Expectation forms (full details in the ``scenario_runner`` module docstring):

* ``{"pools"|"operations": {name: {attribute_path: expected}}, "errors": [codes]}``; paths are
  orchid attributes, dotted for map attributes (``detailed_fair_share.total``) and joined with
  ``" + "`` for a sum (``strong_guarantee_share + proposed_integral_share``);
* ``expected`` is a number (``math.isclose(actual, expected, rel_tol=0, abs_tol=tolerance)``), a
  partial resource map ``{resource: number-or-comparator}`` for vectors, ``null``, a string, or a
  comparator map ``{"<=": bound}`` / ``{">=": bound}`` / ``{"==": bound}`` (also strict ``"<"`` and
  ``">"``), where ``"<="`` means ``actual <= bound + tolerance``, ``">="`` means
  ``actual >= bound - tolerance`` and ``"=="`` is the isclose check; a comparator applied to a
  vector applies to each of its five resources; ``bound`` is a number or
  ``{"attr": path, "step": k}`` referring to an attribute of the same element (in step ``k``,
  default the current one);
* ``errors``: the set of reported error codes must equal it; when absent no error may be reported.

Multi-step scenarios (``"steps": [{"snapshot", "expect"}, ...]``) run one update per step. With
``"carry_volumes": true`` each pool's output ``accumulated_resource_volume`` of a step is fed into
the next step's input for that pool, unless the next step states the volume explicitly.

The shape test validates every scenario file of both scenario folders (fair-share and integral)
without the engine; the scenario test runs only the fair-share folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fairshare.scenario_runner import (
    FAIR_SHARE_SCENARIO_DIR,
    INTEGRAL_SCENARIO_DIR,
    load_scenario,
    run_scenario,
    scenario_paths,
    validate_scenario_file,
)

SCENARIO_PATHS = scenario_paths(FAIR_SHARE_SCENARIO_DIR)
ALL_SCENARIO_PATHS = SCENARIO_PATHS + scenario_paths(INTEGRAL_SCENARIO_DIR)


def test_scenario_folders_are_populated() -> None:
    assert SCENARIO_PATHS, f"no scenarios found in {FAIR_SHARE_SCENARIO_DIR}"
    stems = [path.stem for path in ALL_SCENARIO_PATHS]
    duplicates = sorted({stem for stem in stems if stems.count(stem) > 1})
    assert not duplicates, f"scenario names used in both folders: {duplicates}"


@pytest.mark.parametrize(
    "path",
    ALL_SCENARIO_PATHS,
    ids=[f"{path.parent.name}/{path.stem}" for path in ALL_SCENARIO_PATHS],
)
def test_scenario_shape(path: Path) -> None:
    problems = validate_scenario_file(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", SCENARIO_PATHS, ids=[path.stem for path in SCENARIO_PATHS])
def test_ut_scenario(path: Path) -> None:
    from ytsched.snapshot import compute_orchid

    run_scenario(load_scenario(path), compute_orchid)
