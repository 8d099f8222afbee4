"""Benchmark one fair-share update (``run_update``) on production-like and synthetic trees.

Run from the repository root::

    .venv/bin/python benchmarks/fair_share_update.py              # every case, 5 runs each
    .venv/bin/python benchmarks/fair_share_update.py --quick      # skip the 100k-op trees
    .venv/bin/python benchmarks/fair_share_update.py --reference  # the plain port, to compare

Cases: the production GPU tree from ``shared/data/ytsaurus/gpu_tree_elements.yson`` (with the
options YTsaurus's own test uses for it), and ``treegen`` trees of 1k pools / 10k operations and
10k pools / 100k operations (depth 3 and 6; five resources; fair-share and FIFO leaf pools), with
and without integral (burst and relaxed) pools.  Only ``run_update`` is timed: generating and
parsing the snapshot happen before.  Prints best and median wall time of ``--repeat`` runs and
elements per second, plus the machine it ran on.  This is a script, not a test: timings depend on
the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy

from treegen import generate_tree  # benchmarks/ is on sys.path when this script runs
from ytsched.fairshare import functions
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import run_update
from ytsched.snapshot import parse_snapshot
from ytsched.yson import loads

_REPO = Path(__file__).resolve().parents[1]

_GPU_RELATIVE = Path("data/ytsaurus/gpu_tree_elements.yson")
GPU_DUMP = next(
    (
        path
        for path in (_REPO.parent / "shared" / _GPU_RELATIVE, Path("/work/shared") / _GPU_RELATIVE)
        if path.exists()
    ),
    None,
)
GPU_OPTIONS: dict[str, Any] = {
    "use_only_gpu_strong_guarantees": True,
    "consider_vanilla_operations_as_gang": True,
    "enable_step_function_for_gang_operations": True,
    "enable_improved_fair_share_by_fit_factor_computation": True,
    "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
}


@dataclass(frozen=True)
class Case:
    name: str
    load: Callable[[], TreeSnapshot]
    big: bool = False


def _gpu_tree() -> TreeSnapshot:
    assert GPU_DUMP is not None
    elements = loads(GPU_DUMP.read_text(encoding="utf-8"))
    return parse_snapshot({"options": GPU_OPTIONS, "elements": elements})


def _generated(
    pools: int, operations: int, depth: int, integral: float
) -> Callable[[], TreeSnapshot]:
    def load() -> TreeSnapshot:
        return parse_snapshot(
            generate_tree(pools, operations, depth=depth, integral_fraction=integral)
        )

    return load


def cases() -> list[Case]:
    found: list[Case] = []
    if GPU_DUMP is not None:
        found.append(Case("GPU tree (production, 566 pools / 743 ops)", _gpu_tree))
    for pools, operations, depths, big in (
        (1000, 10_000, (4,), False),
        (10_000, 100_000, (3, 6), True),
    ):
        for integral in (0.0, 0.2):
            for depth in depths:
                label = f"{pools // 1000}k pools / {operations // 1000}k ops, depth {depth}"
                if integral:
                    label += ", integral 20%"
                found.append(Case(label, _generated(pools, operations, depth, integral), big))
    return found


def machine_info() -> list[tuple[str, str]]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return [
        ("CPU", cpu),
        ("cores", str(os.cpu_count())),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("numpy", numpy.__version__),
        ("platform", platform.platform()),
    ]


def _time(snapshot: TreeSnapshot, repeat: int, reference: bool) -> tuple[float, float, int]:
    times: list[float] = []
    elements = 0
    for _ in range(repeat):
        context: AbstractContextManager[None] = (
            functions.reference_implementation() if reference else nullcontext()
        )
        with context:
            start = time.perf_counter()
            result = run_update(snapshot)
            times.append(time.perf_counter() - start)
        elements = len(result.pools) + len(result.operations)
    return min(times), statistics.median(times), elements


def _print_table(rows: list[tuple[str, str, str, str, str]], title: str) -> None:
    headers = ("case", "elements", "best", "median", "elements/s")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(5)]
        print(title)
        for row in [headers, *rows]:
            print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)))
        return
    table = Table(title=title)
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument(
        "--quick", action="store_true", help="skip the 10k-pool trees and run each case 3 times"
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="time the straightforward port instead of the fast paths (slow: use with --quick)",
    )
    parser.add_argument("--only", help="run only cases whose name contains this text")
    args = parser.parse_args(argv)
    repeat = min(args.repeat, 3) if args.quick else args.repeat

    for key, value in machine_info():
        print(f"{key:>9}: {value}")
    print()
    rows: list[tuple[str, str, str, str, str]] = []
    for case in cases():
        if args.quick and case.big:
            continue
        if args.only and args.only not in case.name:
            continue
        snapshot = case.load()
        best, median, elements = _time(snapshot, repeat, args.reference)
        rows.append(
            (
                case.name,
                f"{elements:,}",
                f"{best * 1000:,.0f} ms",
                f"{median * 1000:,.0f} ms",
                f"{elements / best:,.0f}",
            )
        )
        print(f"  done: {case.name}", file=sys.stderr)
    implementation = "reference implementation" if args.reference else "fast paths"
    _print_table(rows, f"run_update, {implementation}, best/median of {repeat}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
