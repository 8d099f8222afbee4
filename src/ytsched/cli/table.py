"""Human-readable fair-share tree (``ytsched fair-share --format table``).

One row per element, indented by depth, with dominant fair share, usage and demand as ratios
and bars, the guarantee, and the constraint that binds the element's fair share.  The binding
constraint is our own diagnostic (YTsaurus has no such attribute): it answers "why this much?"
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import SchedulingMode
from ytsched.fairshare.update import UpdateResult

BAR_WIDTH = 12
TOLERANCE = 1e-9


def _bar(value: float) -> str:
    filled = max(0, min(BAR_WIDTH, round(value * BAR_WIDTH)))
    return "█" * filled + "·" * (BAR_WIDTH - filled)


def binding_constraint(element: Element) -> str:
    """Why an element's fair share is what it is, in a few words."""
    total = element.fair_share.total
    demand = element.demand_share
    if max(demand) <= TOLERANCE:
        return "no demand"
    if all(t + TOLERANCE >= d for t, d in zip(total, demand, strict=True)):
        return "demand met"
    if element.is_operation and element.is_gang_like and max(total) <= TOLERANCE:
        return "gang: all or nothing"
    limits = element.limits_share
    for t, lim, d in zip(total, limits, demand, strict=True):
        if d > lim + TOLERANCE and t + TOLERANCE >= lim:
            return "cluster capacity" if lim >= 1.0 - TOLERANCE else "resource limits"
    guarantee = element.guarantee_share
    if max(element.fair_share.weight_proportional) <= TOLERANCE and max(guarantee) > TOLERANCE:
        return "guarantee"
    if max(total) <= TOLERANCE:
        return "starved by siblings"
    return "weight share"


def _depth_first(element: Element, depth: int, out: list[tuple[Element, int]]) -> None:
    out.append((element, depth))
    children = element.sorted_children if element.mode is SchedulingMode.FIFO else element.children
    pools = [c for c in children if not c.is_operation]
    operations = [c for c in children if c.is_operation]
    for child in pools + operations:
        _depth_first(child, depth + 1, out)


def render_tree(result: UpdateResult, *, pools_only: bool = False, width: int | None = None) -> str:
    """The update as a table, one indented row per element."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("element", no_wrap=True)
    table.add_column("mode")
    table.add_column("weight", justify="right")
    table.add_column("fair share", no_wrap=True)
    table.add_column("usage", justify="right")
    table.add_column("demand", justify="right")
    table.add_column("guarantee", justify="right")
    table.add_column("dominant")
    table.add_column("bound by")
    rows: list[tuple[Element, int]] = []
    _depth_first(result.root, 0, rows)
    for element, depth in rows:
        if pools_only and element.is_operation:
            continue
        fair = max(element.fair_share.total)
        label = Text("  " * depth + element.name, style="bold" if not element.is_operation else "")
        if element.is_operation:
            mode = "gang" if element.is_gang_like else "op"
        else:
            mode = element.mode.value
            if element.integral_type.value != "none":
                mode += f"/{element.integral_type.value}"
        table.add_row(
            label,
            mode,
            f"{element.weight:g}",
            f"{fair:7.4f} {_bar(fair)}",
            f"{max(element.usage_share):.4f}",
            f"{max(element.demand_share):.4f}",
            f"{max(element.guarantee_share):.4f}",
            element.dominant_resource,
            binding_constraint(element),
        )
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or 160, force_terminal=False, color_system=None)
    console.print(table)
    if result.errors:
        for error in result.errors:
            console.print(f"warning: {error.message} [{error.code}]")
    return buffer.getvalue()
