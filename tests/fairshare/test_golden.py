"""Golden regression guards for the fair-share update.

**These are regression guards, not conformance tests.**  The expected values in
``tests/data/golden/*.json`` were produced by *our own* implementation (the straightforward port
of the YTsaurus piecewise-linear function machinery, before any performance work), not by
YTsaurus.  They pin down what the engine computes on large, realistic inputs so that the fast
paths (closed forms for operations, specialised scalar functions, numpy aggregation) cannot
silently change results.  Agreement with YTsaurus itself is checked by the scenario tests in
``test_ut_scenarios.py`` and ``test_integral_scenarios.py``.

Each golden file records how to rebuild its input:

* ``{"kind": "gpu_dump", "sha256": ..., "options": {...}}``: the production GPU pool-tree dump
  from ``shared/data/ytsaurus/gpu_tree_elements.yson`` (skipped when the file is not there; a
  different file content fails loudly), with the given update options;
* ``{"kind": "treegen", "params": {...}}``: ``benchmarks/treegen.generate_tree(**params)``.

and per element ``fair_share`` (``fair_share.total``), for pools with a non-zero one
``proposed_integral_share``, and for operations in FIFO pools ``fifo_index`` and
``effective_fifo_index``.  Floats are stored with ``repr`` (shortest round-tripping form, at most
17 significant digits); the comparison allows ``1e-9`` absolute per component.

Regenerate (only when a semantic change is intended, and say so in the commit) with::

    .venv/bin/python -m tests.fairshare.test_golden --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import SchedulingMode
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.snapshot import parse_snapshot
from ytsched.yson import loads

_REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = _REPO / "tests" / "data" / "golden"
TOLERANCE = 1e-9

sys.path.insert(0, str(_REPO / "benchmarks"))
from treegen import generate_tree  # noqa: E402

_GPU_RELATIVE = Path("data/ytsaurus/gpu_tree_elements.yson")
_GPU_CANDIDATES = [_REPO.parent / "shared" / _GPU_RELATIVE, Path("/work/shared") / _GPU_RELATIVE]
GPU_DUMP = next((path for path in _GPU_CANDIDATES if path.exists()), None)

GPU_OPTIONS: dict[str, Any] = {
    "use_only_gpu_strong_guarantees": True,
    "consider_vanilla_operations_as_gang": True,
    "enable_step_function_for_gang_operations": True,
    "enable_improved_fair_share_by_fit_factor_computation": True,
    "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
}
FAST_FIFO: dict[str, Any] = {"enable_fast_fifo_fair_share_by_fit_factor_computation": True}
IMPROVED: dict[str, Any] = {
    "enable_improved_fair_share_by_fit_factor_computation": True,
    "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
    "enable_step_function_for_gang_operations": True,
}


def _treegen_cases() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for seed, depth in ((1, 4), (2, 3), (3, 6)):
        base = {"pool_count": 100, "operation_count": 1000, "depth": depth, "seed": seed}
        cases[f"treegen_s{seed}_default"] = {**base, "options": {}}
        cases[f"treegen_s{seed}_fast_fifo"] = {**base, "options": dict(FAST_FIFO)}
        cases[f"treegen_s{seed}_improved"] = {**base, "options": dict(IMPROVED)}
        cases[f"treegen_s{seed}_integral"] = {**base, "integral_fraction": 0.2, "options": {}}
    # Integral pools together with every optional construction at once.
    cases["treegen_s4_integral_improved_fast_fifo"] = {
        "pool_count": 100,
        "operation_count": 1000,
        "depth": 4,
        "seed": 4,
        "integral_fraction": 0.2,
        "options": {**IMPROVED, **FAST_FIFO},
    }
    # FIFO pools that reorder pending gangs for guarantee utilisation (``effective_fifo_index``);
    # seed 5 is one whose FIFO pools keep a guarantee after adjustment, so reordering happens.
    reorder = {
        "enable_step_function_for_gang_operations": True,
        "enable_fifo_children_reordering_for_guarantee_utilization": True,
    }
    for suffix, options in (("", reorder), ("_improved", {**IMPROVED, **reorder})):
        cases[f"treegen_s5_fifo_reordering{suffix}"] = {
            "pool_count": 60,
            "operation_count": 1000,
            "depth": 3,
            "seed": 5,
            "options": options,
        }
    return cases


def _sources() -> dict[str, dict[str, Any]]:
    sources: dict[str, dict[str, Any]] = {
        "gpu_tree_gpu_options": {"kind": "gpu_dump", "options": dict(GPU_OPTIONS)},
        "gpu_tree_default_options": {"kind": "gpu_dump", "options": {}},
    }
    for name, params in _treegen_cases().items():
        source: dict[str, Any] = {"kind": "treegen", "params": params}
        if "fifo_reordering" in name:
            source["fifo_guarantee"] = dict(_FIFO_GUARANTEE)
        sources[name] = source
    return sources


_FIFO_GUARANTEE = {"cpu": 1500.0, "gpu": 60}
"""Strong guarantee given to every FIFO pool of the reordering cases (treegen gives them none)."""


def _enable_fifo_reordering(document: dict[str, Any], guarantee: dict[str, float]) -> None:
    for element in document["elements"]:
        if element["type"] == "pool" and element.get("mode") == "fifo":
            element["strong_guarantee_resources"] = dict(guarantee)
            element["enable_fifo_children_reordering_for_guarantee_utilization"] = True


def _gpu_sha256() -> str:
    assert GPU_DUMP is not None
    return hashlib.sha256(GPU_DUMP.read_bytes()).hexdigest()


def golden_document(source: dict[str, Any]) -> Any:
    """The snapshot document a golden file's ``source`` describes."""
    if source["kind"] == "gpu_dump":
        assert GPU_DUMP is not None
        elements = loads(GPU_DUMP.read_text(encoding="utf-8"))
        document: Any = {"options": source["options"], "elements": elements}
    else:
        document = generate_tree(**source["params"])
        if "fifo_guarantee" in source:
            _enable_fifo_reordering(document, source["fifo_guarantee"])
    return document


def _run(source: dict[str, Any]) -> UpdateResult:
    return run_update(parse_snapshot(golden_document(source)))


def _in_fifo_pool(element: Element) -> bool:
    parent = element.parent
    return parent is not None and parent.mode is SchedulingMode.FIFO


def _record(result: UpdateResult) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for name, pool in result.pools.items():
        entry: dict[str, Any] = {"fair_share": list(pool.fair_share.total)}
        if any(pool.proposed_integral_share):
            entry["proposed_integral_share"] = list(pool.proposed_integral_share)
        records[name] = entry
    for name, operation in result.operations.items():
        entry = {"fair_share": list(operation.fair_share.total)}
        if _in_fifo_pool(operation):
            entry["fifo_index"] = operation.fifo_index
            entry["effective_fifo_index"] = operation.effective_fifo_index
        records[name] = entry
    return records


def _dump(document: dict[str, Any]) -> str:
    """One element per line: small diffs, and still compact."""
    head = {key: value for key, value in document.items() if key != "elements"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"{json.dumps(key)}: {json.dumps(value, sort_keys=True)},")
    lines.append('"elements": {')
    items = list(document["elements"].items())
    for index, (name, entry) in enumerate(items):
        comma = "," if index + 1 < len(items) else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(entry, separators=(',', ':'))}{comma}")
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_golden() -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name, source in _sources().items():
        if source["kind"] == "gpu_dump":
            if GPU_DUMP is None:
                print(f"skip {name}: {_GPU_RELATIVE} not found", file=sys.stderr)
                continue
            source = {**source, "sha256": _gpu_sha256()}
        document = {
            "name": name,
            "note": "regression guard produced by ytsched itself, not by YTsaurus",
            "source": source,
            "elements": _record(_run(source)),
        }
        (GOLDEN_DIR / f"{name}.json").write_text(_dump(document), encoding="utf-8")
        print(f"wrote {name}")


# --- the test ------------------------------------------------------------------------------

GOLDEN_PATHS = sorted(GOLDEN_DIR.glob("*.json"))


def test_golden_files_present() -> None:
    names = {path.stem for path in GOLDEN_PATHS}
    assert names == set(_sources()), "golden files and golden cases disagree"


def _compare(expected: dict[str, dict[str, Any]], actual: dict[str, dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    if set(expected) != set(actual):
        missing = sorted(set(expected) - set(actual))[:5]
        extra = sorted(set(actual) - set(expected))[:5]
        return [f"element sets differ: missing {missing}, unexpected {extra}"]
    worst: tuple[float, str, str, int, float, float] | None = None
    for name, want in expected.items():
        got = actual[name]
        for key in ("fifo_index", "effective_fifo_index"):
            if want.get(key) != got.get(key):
                problems.append(f"{name}: {key} {got.get(key)} != golden {want.get(key)}")
        for key in ("fair_share", "proposed_integral_share"):
            want_vector = want.get(key, [0.0] * 5)
            got_vector = got.get(key, [0.0] * 5)
            for resource, (w, g) in enumerate(zip(want_vector, got_vector, strict=True)):
                error = abs(w - g)
                if worst is None or error > worst[0]:
                    worst = (error, name, key, resource, g, w)
    if worst is not None and worst[0] > TOLERANCE:
        error, name, key, resource, got_value, want_value = worst
        bad = sum(
            1
            for name_, want in expected.items()
            for key_ in ("fair_share", "proposed_integral_share")
            for w, g in zip(
                want.get(key_, [0.0] * 5), actual[name_].get(key_, [0.0] * 5), strict=True
            )
            if abs(w - g) > TOLERANCE
        )
        problems.append(
            f"{bad} component(s) off by more than {TOLERANCE}; worst: element {name!r} {key}"
            f"[{resource}] = {got_value!r}, golden {want_value!r} (|diff| = {error:.3g})"
        )
    return problems


@pytest.mark.parametrize("path", GOLDEN_PATHS, ids=[path.stem for path in GOLDEN_PATHS])
def test_golden(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    source = document["source"]
    if source["kind"] == "gpu_dump":
        if GPU_DUMP is None:
            pytest.skip(f"shared production snapshot {_GPU_RELATIVE} not found")
        assert _gpu_sha256() == source["sha256"], f"{GPU_DUMP} is not the dump {path.name} used"
    problems = _compare(document["elements"], _record(_run(source)))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Golden regression data for the fair-share update")
    parser.add_argument("--write", action="store_true", help="(re)write tests/data/golden/*.json")
    args = parser.parse_args(argv)
    if not args.write:
        parser.print_help()
        return 2
    write_golden()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
