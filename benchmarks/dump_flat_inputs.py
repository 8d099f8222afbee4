"""Write the flat inputs of ``fair_share_update.py``'s cases to files for ``native_core.cpp``.

Run from the repository root::

    .venv/bin/python benchmarks/dump_flat_inputs.py OUTDIR [--only TEXT]

Each case becomes ``OUTDIR/<slug>.flat``: a header of four int64 (rows, in_f columns, in_i
columns, 0), then ``opts_f`` (11 doubles), ``opts_i`` (10 int32), ``in_f`` and ``in_i`` as they
are in memory.  The C++ driver times the core alone on them (no Python around it), which is the
quickest way to compare two builds of ``src/native/`` and to check their results are the same
bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy

from fair_share_update import cases  # benchmarks/ is on sys.path when this script runs
from ytsched.fairshare import flat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--only", help="only cases whose name contains this text")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    for case in cases():
        if args.only and args.only not in case.name:
            continue
        tree = flat.build_flat(case.load())
        slug = re.sub(r"[^a-z0-9]+", "_", case.name.lower()).strip("_")
        path = args.outdir / f"{slug}.flat"
        n, cf = tree.in_f.shape
        ci = tree.in_i.shape[1]
        with path.open("wb") as out:
            out.write(numpy.array([n, cf, ci, 0], dtype=numpy.int64).tobytes())
            out.write(numpy.ascontiguousarray(tree.opts_f, dtype=numpy.float64).tobytes())
            out.write(numpy.ascontiguousarray(tree.opts_i, dtype=numpy.int32).tobytes())
            out.write(numpy.ascontiguousarray(tree.in_f, dtype=numpy.float64).tobytes())
            out.write(numpy.ascontiguousarray(tree.in_i, dtype=numpy.int32).tobytes())
        print(f"{path}: {n} rows ({case.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
