"""Golden simulator outputs: digests of every output file of fixed runs, and how to regenerate.

Performance work on the scheduling core must not change a single byte of what the simulator
writes (issue 15).  ``tests/data/simulator_golden.json`` holds, per case, the SHA-256 and size
of ``events.jsonl``, ``orchid.jsonl``, ``operations.csv`` and ``summary.json`` as produced by
the code *before* a change; ``test_golden_outputs.py`` re-runs the cases and compares.

The cases: every example scenario (cut at a few simulated hours so the suite stays quick),
random small scenarios of ``test_fast_paths`` (preemption, aggressive starvation, graceful
operations, tag filters, limits, FIFO, ``min_spare``, actions), and scenarios from the
simulator benchmark's generator at 5 s and 30 s periods with orchid snapshots.

Regenerate only when an output is *meant* to change (a new field, a semantic fix)::

    .venv/bin/python -m tests.simulator.golden_outputs --write

and say why in the commit.  To locate a difference, run a case with the old and the new code
into two directories (``--dump DIR``) and ``diff -r`` them.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ytsched.simulator import load_scenario, simulate
from ytsched.simulator.outputs import DirectoryRecorder, write_results
from ytsched.snapshot.files import read_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scenarios"
GOLDEN = ROOT / "tests" / "data" / "simulator_golden.json"
FILES = ("events.jsonl", "orchid.jsonl", "operations.csv", "summary.json")

#: Example scenarios and where to stop them (simulated seconds): long enough to cover their
#: interesting phases (bursts, preemption, graceful shrinking), short enough for the suite.
EXAMPLE_UNTIL = {
    "burst_pool": 6 * 3600.0,
    "chyt_graceful": 4 * 3600.0,
    "chyt_regular": 4 * 3600.0,
    "pool_settings": 2 * 3600.0,
    "production_research": 6 * 3600.0,
}
RANDOM_SEEDS = tuple(range(8))
#: (nodes, operations per day, hours, heartbeat and update period, seed)
GENERATED = (
    (60, 600, 2.0, "5s", 1),
    (120, 1200, 3.0, "30s", 2),
)


def _benchmark_generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "ytsched_benchmark_simulator", ROOT / "benchmarks" / "simulator.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


def cases() -> dict[str, tuple[Any, float | None, float | None]]:
    """Case name -> (scenario document, until, orchid period)."""
    from tests.simulator.test_fast_paths import _random_document

    found: dict[str, tuple[Any, float | None, float | None]] = {}
    for name, until in EXAMPLE_UNTIL.items():
        found[f"example_{name}"] = (read_document(EXAMPLES / f"{name}.yson"), until, None)
    for seed in RANDOM_SEEDS:
        found[f"random_{seed}"] = (_random_document(seed), None, None)
    generate = _benchmark_generator()
    for nodes, operations, hours, period, seed in GENERATED:
        document = generate(nodes, operations, hours, seed, period, period)
        found[f"generated_{nodes}n_{hours:g}h_{period}"] = (document, None, 600.0)
    return found


def run_case(document: Any, until: float | None, orchid: float | None, out: Path) -> None:
    """Simulate one case into ``out`` exactly as ``ytsched simulate --no-plots`` does."""
    with DirectoryRecorder(out, events=True, orchid=orchid != 0) as recorder:
        result = simulate(
            load_scenario(document), recorder=recorder, until=until, orchid_period=orchid
        )
    write_results(result, out, plots=False)


def digests(out: Path) -> dict[str, list[Any]]:
    """File name -> [sha256, size] of each output file."""
    found = {}
    for name in FILES:
        data = (out / name).read_bytes()
        found[name] = [hashlib.sha256(data).hexdigest(), len(data)]
    return found


def case_digests(name: str) -> dict[str, list[Any]]:
    document, until, orchid = cases()[name]
    with tempfile.TemporaryDirectory() as directory:
        run_case(document, until, orchid, Path(directory))
        return digests(Path(directory))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write or check the golden simulator digests.")
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN.name}")
    parser.add_argument("--dump", type=Path, help="write every case's outputs under this dir")
    args = parser.parse_args(argv)
    table = {}
    for name, (document, until, orchid) in cases().items():
        if args.dump is not None:
            out = args.dump / name
            run_case(document, until, orchid, out)
            table[name] = digests(out)
        else:
            table[name] = case_digests(name)
        print(name, {file: value[1] for file, value in table[name].items()}, flush=True)
    if args.write:
        GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    elif GOLDEN.exists():
        expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
        differ = sorted(name for name in table if table[name] != expected.get(name))
        print("differ:", differ or "none")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
