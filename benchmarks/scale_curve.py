"""Scale curve of the simulator: CPU and wall time against cluster size, and a figure.

Run from the repository root::

    .venv/bin/python benchmarks/scale_curve.py              # 250, 1,000, 4,000 nodes; 1 h
    .venv/bin/python benchmarks/scale_curve.py --hours 2 --sizes 250 1000

Each size runs the scenario of ``benchmarks/simulator.py`` with operations scaled alike (ten
arrivals per node and day) at 5 s heartbeats and updates, in a fresh process so that peak RSS
is per size.  Prints a table (process CPU time, wall time, simulated seconds per CPU second,
peak RSS) and writes ``docs/figures/simulator_scale.png`` (CPU seconds per simulated hour
against nodes, log-log).  CPU time is plotted because the machines this runs on are shared:
wall time under load says more about the neighbours than about the code.
A script, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
FIGURE = ROOT / "docs" / "figures" / "simulator_scale.png"

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {benchmarks!r})
from simulator import generate
from ytsched.simulator import load_scenario
from ytsched.simulator.engine import Simulation
nodes, hours = {nodes}, {hours}
simulation = Simulation(load_scenario(generate(nodes, nodes * 10, hours, 1, "5s", "5s")))
cpu, wall = time.process_time(), time.perf_counter()
simulation.run()
print(json.dumps({{
    "nodes": nodes,
    "cpu": time.process_time() - cpu,
    "wall": time.perf_counter() - wall,
    "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}}))
"""


def measure(nodes: int, hours: float) -> dict[str, float]:
    """One size in a fresh interpreter (its own peak RSS)."""
    code = _CHILD.format(benchmarks=str(ROOT / "benchmarks"), nodes=nodes, hours=hours)
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    result: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return result


def plot(rows: list[dict[str, float]], hours: float, path: Path) -> None:
    figure = Figure(figsize=(6, 4), dpi=100)
    axes = figure.add_subplot()
    nodes = [row["nodes"] for row in rows]
    axes.plot(nodes, [row["cpu"] / hours for row in rows], "o-", label="CPU s per simulated h")
    axes.plot(nodes, [row["wall"] / hours for row in rows], "s--", label="wall s (shared machine)")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("nodes (operations: 10 per node and day)")
    axes.set_ylabel("seconds per simulated hour")
    axes.set_title("Simulator cost against cluster size (5 s / 5 s)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 1000, 4000])
    parser.add_argument("--hours", type=float, default=1.0, help="simulated hours per size")
    parser.add_argument("--figure", type=Path, default=FIGURE)
    args = parser.parse_args()
    rows = []
    print(f"{'nodes':>6} {'CPU s':>8} {'wall s':>8} {'sim s / CPU s':>14} {'peak RSS MiB':>13}")
    for nodes in args.sizes:
        row = measure(nodes, args.hours)
        rows.append(row)
        rate = args.hours * 3600 / row["cpu"]
        print(
            f"{nodes:>6} {row['cpu']:>8.1f} {row['wall']:>8.1f} {rate:>14.0f}"
            f" {row['rss_mib']:>13.0f}",
            flush=True,
        )
    plot(rows, args.hours, args.figure)
    print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
