"""Benchmark one fair-share update (``run_update``) on production-like and synthetic trees.

Run from the repository root::

    .venv/bin/python benchmarks/fair_share_update.py              # every case, 5 runs each
    .venv/bin/python benchmarks/fair_share_update.py --quick      # skip the 100k-op trees
    .venv/bin/python benchmarks/fair_share_update.py --engine python --quick  # the reference

Cases: the production GPU tree from ``shared/data/ytsaurus/gpu_tree_elements.yson`` (with the
options YTsaurus's own test uses for it), and ``treegen`` trees of 1k pools / 10k operations and
10k pools / 100k operations (depth 3 and 6; five resources; fair-share and FIFO leaf pools), with
and without integral (burst and relaxed) pools.  ``run_update`` is timed as callers see it: for
the native engine that includes building the flat input from the snapshot (with its checks) and
reading the results back into elements; generating and parsing the snapshot happen before.  The
three parts are also timed on their own (``flat``, ``core``, ``map`` columns, medians).  Elements
are created lazily, when a caller first reads them; ``read all`` times creating every element and
reading all its attributes (what mapping cost when every element was built eagerly; not part of
``run_update``).

For scale, the same operations are also given a *floor*: a naive numpy DRF water-filling over
one flat level (every operation directly under the root, dominant shares equalised by bisection,
no hierarchy, guarantees or piecewise-linear functions); ``x floor`` is our median over its.

Prints best and median wall time of ``--repeat`` runs, elements per second, and the process's
peak RSS after each case (cumulative), plus the machine it ran on.  This is a script, not a test:
timings depend on the machine.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy

from treegen import generate_tree  # benchmarks/ is on sys.path when this script runs
from ytsched.fairshare import flat, native
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import Engine, UpdateResult, run_update
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
        ("load avg", " ".join(f"{x:.2f}" for x in os.getloadavg())),
        ("threads", str(native.threads()) if native.native_available() else "-"),
    ]


@dataclass
class Timing:
    best: float
    median: float
    elements: int
    parts: tuple[float, float, float, float] | None  # flat, core, map, read all (native only)
    floor: float
    steps: list[float] | None = None  # core seconds per step (native.STEPS), medians
    cpu: float = 0.0  # median CPU time of the process (robust when other work shares the cores)


def _time(snapshot: TreeSnapshot, repeat: int, engine: Engine) -> Timing:
    times: list[float] = []
    cpu: list[float] = []
    elements = 0
    for _ in range(repeat):
        start = time.perf_counter()
        cpu_start = time.process_time()
        result = run_update(snapshot, engine=engine)
        cpu.append(time.process_time() - cpu_start)
        times.append(time.perf_counter() - start)
        elements = len(result.pools) + len(result.operations)
        del result
        gc.collect()
    parts = None
    if engine == "native":
        samples: list[tuple[float, float, float, float]] = []
        step_samples: list[list[float]] = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            tree = flat.build_flat(snapshot)
            t1 = time.perf_counter()
            out_f, out_i, summary = native.run_flat(tree)
            step_samples.append(list(summary[-1]))
            t2 = time.perf_counter()
            root, pools, operations = native._elements(snapshot, tree, out_f, out_i)
            t3 = time.perf_counter()
            mapped = UpdateResult(
                root, pools, operations, [], snapshot.total_resource_limits, snapshot.options
            )
            t4 = time.perf_counter()
            native.read_all(mapped)
            t5 = time.perf_counter()
            samples.append((t1 - t0, t2 - t1, t3 - t2, t5 - t4))
            del root, pools, operations, mapped
            gc.collect()
        parts = (
            statistics.median(s[0] for s in samples),
            statistics.median(s[1] for s in samples),
            statistics.median(s[2] for s in samples),
            statistics.median(s[3] for s in samples),
        )
    floor = statistics.median(_drf_floor(snapshot) for _ in range(repeat))
    steps = None
    if engine == "native":
        steps = [statistics.median(sample[k] for sample in step_samples) for k in range(11)]
    return Timing(
        min(times), statistics.median(times), elements, parts, floor, steps, statistics.median(cpu)
    )


def _wide_pool(operations: int) -> TreeSnapshot:
    """One pool holding ``operations`` operations with distinct demands and usages."""
    rng = random.Random(7)
    elements: list[dict[str, Any]] = [
        {"type": "pool", "name": "<Root>", "parent": None},
        {"type": "pool", "name": "wide", "parent": "<Root>"},
    ]
    for index in range(operations):
        cpu = rng.randint(1, 64)
        memory = rng.randint(1, 256) * 2**30
        elements.append(
            {
                "type": "operation",
                "name": f"op{index}",
                "parent": "wide",
                "resource_demand": {"user_slots": cpu, "cpu": cpu, "memory": memory},
                "resource_usage": {"user_slots": cpu // 2, "cpu": cpu // 2, "memory": memory // 3},
                "weight": rng.choice([1.0, 2.0, 3.0]),
            }
        )
    total = {"user_slots": operations * 10, "cpu": operations * 10.0, "memory": operations * 2**36}
    return parse_snapshot({"total_resource_limits": total, "elements": elements})


def _drf_floor(snapshot: TreeSnapshot) -> float:
    """Time a naive flat DRF water-filling over the snapshot's operations (numpy, 64 steps).

    Every operation gets ``min(1, t * weight / dominant demand share)`` of its demand; ``t`` is
    the largest value (bisection) at which the cluster still fits.  Includes reading the
    operations into arrays, as the native timing includes building its flat input.
    """
    start = time.perf_counter()
    total = numpy.array(snapshot.total_resource_limits)
    demand = numpy.array([op.resource_demand for op in snapshot.operations], dtype=float)
    weight = numpy.array([op.weight for op in snapshot.operations], dtype=float)
    safe_total = numpy.where(total > 0, total, 1.0)
    shares = numpy.where(total > 0, demand / safe_total, 0.0)
    dominant = shares.max(axis=1)
    dominant = numpy.where(dominant > 0, dominant, 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(64):
        mid = (lo + hi) / 2
        fraction = numpy.minimum(1.0, mid * weight / dominant)
        if (fraction[:, None] * shares).sum(axis=0).max() <= 1.0:
            lo = mid
        else:
            hi = mid
    fair = numpy.minimum(1.0, lo * weight / dominant)[:, None] * shares
    fair.sum()
    return time.perf_counter() - start


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _print_table(rows: list[tuple[str, ...]], headers: tuple[str, ...], title: str) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
        print(title)
        for row in [headers, *rows]:
            print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)))
        return
    table = Table(title=title)
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument(
        "--quick", action="store_true", help="skip the 10k-pool trees and run each case 3 times"
    )
    parser.add_argument(
        "--engine",
        choices=("native", "python"),
        default="native",
        help="engine to time (python: the reference port; slow, use with --quick)",
    )
    parser.add_argument("--only", help="run only cases whose name contains this text")
    parser.add_argument(
        "--wide",
        action="store_true",
        help="instead of the cases: one pool of 2k/5k/10k operations (the cost of exact sums)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="native engine threads (default: the engine's, min(2, hardware threads))",
    )
    args = parser.parse_args(argv)
    if args.threads is not None:
        native.set_threads(args.threads)
    repeat = min(args.repeat, 3) if args.quick else args.repeat

    for key, value in machine_info():
        print(f"{key:>9}: {value}")
    print()
    if args.wide:
        return _wide(repeat)
    rows: list[tuple[str, ...]] = []
    profile: list[tuple[str, ...]] = []
    for case in cases():
        if args.quick and case.big:
            continue
        if args.only and args.only not in case.name:
            continue
        snapshot = case.load()
        timing = _time(snapshot, repeat, args.engine)
        parts = timing.parts
        rows.append(
            (
                case.name,
                f"{timing.elements:,}",
                f"{timing.best * 1000:,.1f} ms",
                f"{timing.median * 1000:,.1f} ms",
                f"{timing.cpu * 1000:,.1f} ms",
                *((f"{p * 1000:,.1f} ms" for p in parts) if parts else ("-",) * 4),
                f"{timing.elements / timing.median:,.0f}",
                f"{timing.floor * 1000:,.1f} ms",
                f"{timing.median / timing.floor:,.1f}x",
                f"{_peak_rss_mib():,.0f} MiB",
            )
        )
        if timing.steps is not None:
            core = sum(timing.steps)
            profile.append(
                (case.name, *(f"{1000 * v:,.1f}" for v in timing.steps), f"{1000 * core:,.1f}")
            )
        del snapshot
        gc.collect()
        print(f"  done: {case.name}", file=sys.stderr)
    headers = (
        "case",
        "elements",
        "best",
        "median",
        "median CPU",
        "flat",
        "core",
        "map",
        "read all",
        "elements/s",
        "DRF floor",
        "x floor",
        "peak RSS",
    )
    _print_table(rows, headers, f"run_update, {args.engine} engine, best/median of {repeat}")
    if profile:
        _print_table(
            profile,
            ("case", *native.STEPS, "sum"),
            "native core per step, ms (medians; integral shares include their functions'"
            " time, which also counts in fsbff/mffbs/compose/compress)",
        )
    return 0


def _wide(repeat: int) -> int:
    rows: list[tuple[str, ...]] = []
    for operations in (2000, 5000, 10_000):
        snapshot = _wide_pool(operations)
        tree = flat.build_flat(snapshot)
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            _f, out_i, summary = native.run_flat(tree)
            samples.append((time.perf_counter() - start, summary[-1][5]))
        wall = statistics.median(s[0] for s in samples)
        fsbff = statistics.median(s[1] for s in samples)
        points = int(out_i[1, 4])
        rows.append(
            (
                f"1 pool / {operations:,} ops",
                f"{points:,}",
                f"{wall * 1000:,.1f} ms",
                f"{fsbff * 1000:,.1f} ms",
                f"{fsbff / (points * operations) * 1e9:,.2f} ns",
            )
        )
    _print_table(
        rows,
        ("case", "pool FSBFF segments", "core", "FSBFF (sums)", "per (pool segment x child)"),
        f"exact sums on a wide pool, medians of {repeat}",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
