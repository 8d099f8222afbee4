"""PNG plots of pools over time (matplotlib, no pyplot state, no display).

Per pool: usage, demand, fair share and strong guarantee in the tree's main resource; for an
integral pool a second panel with its accumulated volume against the pool's capacity.  The
figures are built with ``matplotlib.figure.Figure`` directly, so nothing global (backends,
``pyplot`` state) is touched and the same data gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ytsched.config.tree import ROOT_POOL_NAME
from ytsched.simulator.timeseries import PoolSeries

MAX_POOL_PLOTS = 60
"""Explicit pools plotted per run at most (ephemeral pools are never plotted one by one)."""

COLORS = {
    "usage": "#1f77b4",
    "demand": "#7f7f7f",
    "fair_share": "#d62728",
    "guarantee": "#2ca02c",
    "volume": "#9467bd",
    "capacity": "#8c564b",
}


def time_unit(end: float) -> tuple[float, str]:
    """Divisor and label of the time axis: minutes up to three hours, then hours."""
    if end <= 3 * 3600:
        return 60.0, "minutes"
    return 3600.0, "hours"


def _times(series: PoolSeries, divisor: float) -> list[float]:
    return [t / divisor for t in series.times]


def draw_pool(ax: Axes, series: PoolSeries, divisor: float, unit: str, resource: str) -> None:
    times = _times(series, divisor)
    ax.step(times, series.demand, where="post", color=COLORS["demand"], lw=1, label="demand")
    ax.step(
        times,
        series.fair_share,
        where="post",
        color=COLORS["fair_share"],
        lw=1.5,
        label="fair share",
    )
    ax.step(times, series.usage, where="post", color=COLORS["usage"], lw=1.5, label="usage")
    if any(value > 0 for value in series.guarantee):
        ax.step(
            times,
            series.guarantee,
            where="post",
            color=COLORS["guarantee"],
            lw=1,
            ls="--",
            label="strong guarantee",
        )
    ax.set_ylabel(resource)
    ax.set_xlabel(f"time, {unit}")
    shown = max([*series.usage, *series.fair_share, *series.guarantee, 0.0])
    if shown > 0 and max(series.demand, default=0.0) > 2.5 * shown:
        ax.set_ylim(0, 1.6 * shown)
        ax.set_title("demand clipped", loc="right", fontsize="small")
    else:
        ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")


def draw_volume(ax: Axes, series: PoolSeries, divisor: float, unit: str, resource: str) -> None:
    times = _times(series, divisor)
    ax.plot(
        times,
        [v / 3600.0 for v in series.volume],
        color=COLORS["volume"],
        lw=1.5,
        label="accumulated volume",
    )
    ax.plot(
        times,
        [c / 3600.0 for c in series.capacity],
        color=COLORS["capacity"],
        lw=1,
        ls="--",
        label="capacity",
    )
    ax.set_ylabel(f"{resource} x hours")
    ax.set_xlabel(f"time, {unit}")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")


def save(figure: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})


def pool_figure(series: PoolSeries, end: float, resource: str, title: str | None = None) -> Figure:
    divisor, unit = time_unit(end)
    integral = series.integral_type != "none"
    figure = Figure(figsize=(9, 6.5 if integral else 4), layout="constrained")
    axes = figure.subplots(2 if integral else 1, 1, squeeze=False, sharex=True)
    draw_pool(axes[0][0], series, divisor, unit, resource)
    axes[0][0].set_title(title or f"{series.tree} / {series.pool}")
    if integral:
        draw_volume(axes[1][0], series, divisor, unit, resource)
        axes[1][0].set_title(f"{series.pool}: accumulated {series.integral_type} volume")
    return figure


def safe_name(name: str) -> str:
    return re.sub(r"[^-_a-zA-Z0-9.]", "_", name.replace(ROOT_POOL_NAME, "root"))


def plot_pools(
    pools: Sequence[PoolSeries], end: float, resources: Mapping[str, str], directory: Path
) -> list[Path]:
    """One PNG per explicit pool (and the root) under ``directory/<tree>/``."""
    written: list[Path] = []
    chosen = [s for s in pools if not s.ephemeral][:MAX_POOL_PLOTS]
    for series in chosen:
        path = directory / safe_name(series.tree) / f"{safe_name(series.pool)}.png"
        save(pool_figure(series, end, resources.get(series.tree, "cpu")), path)
        written.append(path)
    return written


def plot_operations(
    operations: Sequence[PoolSeries], end: float, resources: Mapping[str, str], directory: Path
) -> list[Path]:
    """One PNG per traced operation under ``directory/<tree>/operations/``."""
    written: list[Path] = []
    for series in operations:
        path = directory / safe_name(series.tree) / "operations" / f"{safe_name(series.pool)}.png"
        title = f"operation {series.pool} ({series.tree})"
        save(pool_figure(series, end, resources.get(series.tree, "cpu"), title), path)
        written.append(path)
    return written


def comparison_figure(
    a: PoolSeries | None,
    b: PoolSeries | None,
    end: float,
    resource: str,
    labels: tuple[str, str],
) -> Figure:
    """A pool under configuration A (left) and B (right), same scales."""
    divisor, unit = time_unit(end)
    integral = any(s is not None and s.integral_type != "none" for s in (a, b))
    figure = Figure(figsize=(13, 6.5 if integral else 4), layout="constrained")
    axes = figure.subplots(2 if integral else 1, 2, squeeze=False, sharey="row")
    for column, (series, label) in enumerate(zip((a, b), labels, strict=True)):
        ax = axes[0][column]
        if series is None:
            ax.set_title(f"{label}: no such pool")
            continue
        draw_pool(ax, series, divisor, unit, resource)
        ax.set_title(f"{label}: {series.tree} / {series.pool}")
        if integral:
            if series.integral_type != "none":
                draw_volume(axes[1][column], series, divisor, unit, resource)
            else:
                axes[1][column].set_title("not an integral pool")
    return figure
