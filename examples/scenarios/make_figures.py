"""Regenerate the simulator figures of docs/simulator.md from the example scenarios.

    .venv/bin/python examples/scenarios/make_figures.py [--out docs/figures]

Each figure is a full-length run of a scenario in this folder (a few minutes in all); the
tests under tests/simulator assert the same behaviours numerically on shorter versions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from matplotlib.figure import Figure

from ytsched.simulator import load_scenario, simulate
from ytsched.simulator.plots import comparison_figure, draw_pool, pool_figure, save, time_unit
from ytsched.simulator.results import SimulationResult
from ytsched.snapshot.files import read_document

HERE = Path(__file__).resolve().parent


def run(name: str) -> SimulationResult:
    print(f"running {name} ...", file=sys.stderr)
    return simulate(load_scenario(read_document(HERE / f"{name}.yson")))


def burst_pool(out: Path) -> None:
    result = run("burst_pool")
    series = result.sampler.pools[("physical", "burst")]
    title = "burst pool: burst guarantee 500 cpu, resource flow 100 cpu"
    save(pool_figure(series, result.end_time, "cpu", title), out / "burst_pool.png")


def production_research(out: Path) -> None:
    result = run("production_research")
    for pool, label in (
        ("production", "burst 2000 / flow 1000"),
        ("research", "relaxed, flow 1000"),
    ):
        series = result.sampler.pools[("physical", pool)]
        title = f"{pool} ({label}) on 2000 cores"
        save(
            pool_figure(series, result.end_time, "cpu", title),
            out / f"production_research_{pool}.png",
        )


def chyt(out: Path) -> None:
    graceful = run("chyt_graceful")
    regular = run("chyt_regular")
    key = ("physical", "clique")
    figure = comparison_figure(
        graceful.sampler.operations[key],
        regular.sampler.operations[key],
        graceful.end_time,
        "cpu",
        ("graceful preemption (10 min)", "regular preemption (15 s)"),
    )
    save(figure, out / "chyt_clique.png")


def pool_settings(out: Path) -> None:
    result = run("pool_settings")
    divisor, unit = time_unit(result.end_time)
    pools = ("adhoc", "batch", "backup")
    figure = Figure(figsize=(9, 9), layout="constrained")
    axes = figure.subplots(len(pools), 1, sharex=True)
    for ax, pool in zip(axes, pools, strict=True):
        draw_pool(ax, result.sampler.pools[("physical", pool)], divisor, unit, "cpu")
        ax.set_title(f"project-root / {pool}", loc="left")
    save(figure, out / "pool_settings.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE.parents[1] / "docs" / "figures")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for figure in (burst_pool, production_research, chyt, pool_settings):
        figure(args.out)
    print(f"figures written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
