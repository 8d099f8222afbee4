"""Turning page data into HTML: the Jinja2 environment, number formats and response headers.

Templates are autoescaped (pool, user and operation names are user input); values passed to
scripts go through ``tojson`` into ``data-`` attributes, never into inline scripts, which the
Content-Security-Policy forbids along with every origin but our own (so a page cannot load
anything from the network, by construction as well as by content).
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse

from ytsched import __version__

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
        " img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self';"
        " base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def pct(value: object, digits: int = 1) -> str:
    """A share as a percentage (``—`` when unknown)."""
    if not isinstance(value, int | float) or math.isnan(value):
        return "—"
    return f"{100.0 * value:.{digits}f}%"


def bar_width(value: object) -> str:
    """CSS width of a share bar: the share of the cluster, clamped to [0, 100]%."""
    if not isinstance(value, int | float) or math.isnan(value):
        return "0%"
    return f"{max(0.0, min(100.0, 100.0 * value)):.2f}%"


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def amount(value: object, resource: str = "") -> str:
    """One resource amount: memory in binary units, the rest as plain numbers."""
    if not isinstance(value, int | float) or math.isnan(value):
        return "—"
    if math.isinf(value):
        return "∞"
    if resource == "memory":
        size = float(value)
        for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
            if abs(size) < 1024 or unit == "TiB":
                return f"{_number(round(size, 1))} {unit}"
            size /= 1024
    return _number(float(value))


def resources(value: object, empty: str = "—") -> str:
    """A resource map in one line, skipping unset and zero entries."""
    if not isinstance(value, dict):
        return empty
    parts = [
        f"{name} {amount(v, name)}"
        for name, v in value.items()
        if isinstance(v, int | float) and v and not math.isnan(v)
    ]
    return ", ".join(parts) if parts else empty


def timestamp(value: object) -> str:
    """Seconds since the epoch (or an ISO string) as a UTC time of day and date."""
    if isinstance(value, str):
        return value.replace("T", " ").split(".")[0].rstrip("Z") + " UTC"
    if not isinstance(value, int | float):
        return "—"
    moment = datetime.datetime.fromtimestamp(float(value), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(value: object, now: float) -> str:
    if not isinstance(value, int | float):
        return "—"
    seconds = max(0.0, now - float(value))
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def pretty(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


def tree_url(tree: str) -> str:
    return f"/ui/trees/{quote(tree, safe='')}"


def pool_url(tree: str, pool: str) -> str:
    return f"{tree_url(tree)}/pools/{quote(pool, safe='')}"


def operation_url(op_id: str) -> str:
    return f"/ui/operations/{quote(op_id, safe='')}"


def fragment_url(page_url: str) -> str:
    """The live part of a page: ``/ui/x`` -> ``/ui/fragments/x``."""
    return "/ui/fragments/" + page_url.removeprefix("/ui/")


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        pct=pct,
        bar_width=bar_width,
        amount=amount,
        resources=resources,
        timestamp=timestamp,
        ago=ago,
        pretty=pretty,
    )
    env.globals.update(
        tree_url=tree_url,
        pool_url=pool_url,
        operation_url=operation_url,
        fragment_url=fragment_url,
        version=__version__,
    )
    return env


ENVIRONMENT = _environment()


def render(template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    html = ENVIRONMENT.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
