"""Failover benchmark: the e2e failover scenario (tests/e2e/failover.py) on a throw-away
PostgreSQL server, printing the takeover time of each kill and the operations lost.

    .venv/bin/python benchmarks/failover.py [--runs 3] [--operations 200] [--keep DIR]

Takeover = from the moment the killed leader's process is gone to the moment the standby answers
``/ping`` as the leader (it has revived the model and serves).  Results: docs/performance.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.failover import run_scenario
from tests.pgserver import PostgresServer, missing_reason


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--operations", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="keep the logs of the last run here")
    args = parser.parse_args()
    reason = missing_reason()
    if reason is not None:
        sys.exit(reason)
    server = PostgresServer().start()
    rows: list[tuple[int, str, float]] = []
    lost_total = 0
    twice_total = 0
    try:
        for run in range(1, args.runs + 1):
            root = Path(tempfile.mkdtemp(prefix="ytsched-failover-"))
            result = run_scenario(root, server.create_database(), operations=args.operations)
            lost = sum(1 for state in result.states.values() if state != "completed")
            lost += sum(1 for op in result.acknowledged if result.runs.get(op) != 1)
            twice = sum(1 for count in result.runs.values() if count > 1)
            lost_total += lost
            twice_total += twice
            for point, seconds in result.takeovers:
                rows.append((run, point, seconds))
            print(
                f"run {run}: {len(result.acknowledged)} acknowledged,"
                f" {result.unacknowledged} unacknowledged (answer lost with the leader),"
                f" lost {lost}, run twice {twice},"
                f" integral volume {result.volume_before:.1f} -> {result.volume_after:.1f}"
            )
            if args.keep is not None and run == args.runs:
                shutil.rmtree(args.keep, ignore_errors=True)
                shutil.copytree(root, args.keep)
            shutil.rmtree(root, ignore_errors=True)
    finally:
        server.stop()
    print()
    print(f"{'run':>3}  {'killed at':<18} {'takeover s':>10}")
    for run, point, seconds in rows:
        print(f"{run:>3}  {point:<18} {seconds:>10.2f}")
    times = [seconds for _, _, seconds in rows]
    print(
        f"\ntakeover: median {statistics.median(times):.2f} s, max {max(times):.2f} s;"
        f" operations lost {lost_total}, run twice {twice_total}"
    )


if __name__ == "__main__":
    main()
