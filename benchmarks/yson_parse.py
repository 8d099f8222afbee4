"""Benchmark ytsched.yson on the real production GPU pool-tree dump.

Run from the repository root::

    .venv/bin/python benchmarks/yson_parse.py            # 5 repetitions
    .venv/bin/python benchmarks/yson_parse.py -n 20 --file other.yson

Prints best / median wall time and throughput for parsing the file (from
``str`` and from ``bytes``) and for writing it back in compact and pretty form.
This is a script, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    from ytsched.yson import dumps, loads
except ImportError:  # running from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from ytsched.yson import dumps, loads

_REPO = Path(__file__).resolve().parents[1]
_RELATIVE = Path("data/ytsaurus/gpu_tree_elements.yson")
DEFAULT_FILE = next(
    (
        path
        for path in (_REPO.parent / "shared" / _RELATIVE, Path("/work/shared") / _RELATIVE)
        if path.exists()
    ),
    _REPO.parent / "shared" / _RELATIVE,
)


def _time(func: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best and median wall time of ``repeat`` calls of ``func``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, default=5, help="repetitions (default 5)")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="YSON file to parse")
    args = parser.parse_args(argv)
    if not args.file.exists():
        print(f"error: {args.file} does not exist", file=sys.stderr)
        return 1

    data = args.file.read_bytes()
    text = data.decode("utf-8")
    value = loads(text)
    compact = dumps(value)
    pretty = dumps(value, pretty=True)
    if loads(compact) != value or loads(pretty) != value:
        print("error: the dumped text does not parse back to the same value", file=sys.stderr)
        return 1

    size_mb = len(data) / 1e6
    records = len(value) if isinstance(value, list) else 1
    print(f"{args.file} ({len(data):,} bytes, {records} top-level records), n={args.repeat}")
    rows = [
        ("loads(str)", lambda: loads(text), size_mb),
        ("loads(bytes)", lambda: loads(data), size_mb),
        ("dumps (compact)", lambda: dumps(value), len(compact) / 1e6),
        ("dumps (pretty)", lambda: dumps(value, pretty=True), len(pretty) / 1e6),
    ]
    print(f"{'operation':<16} {'best s':>9} {'median s':>9} {'MB/s':>8}")
    for name, func, mb in rows:
        best, median = _time(func, args.repeat)
        print(f"{name:<16} {best:>9.4f} {median:>9.4f} {mb / best:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
