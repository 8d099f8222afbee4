"""The integral-guarantees worked example of the YTsaurus documentation, as a runnable timeline.

A 2000-core cluster with two integral pools and no strong guarantees:

* ``production`` is a **burst** pool (flow 1000 cores, burst 2000 cores) whose pipeline needs
  2000 cores for 12 hours a day and nothing the other 12;
* ``research`` is a **relaxed** pool (flow 1000 cores) that always wants more than the cluster.

Strong guarantees would need 3000 cores for this.  With integral guarantees 2000 suffice: from
the second day on, production gets all 2000 cores whenever it runs (it banks its flow while
idle), and research averages its 1000-core flow over each day.  Usage follows fair share, and
the fair share is updated once a minute.
"""

from __future__ import annotations

from dataclasses import dataclass

from ytsched.fairshare.model import (
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    TreeSnapshot,
)
from ytsched.fairshare.timeline import run_timeline
from ytsched.fairshare.update import UpdateResult
from ytsched.resources import CPU_INDEX, Vector

CORES = 2000.0
DAY = 86400.0
TOTAL: Vector = (CORES, CORES, 0.0, 16.0 * 2**40, 0.0)


def cores(amount: float) -> Vector:
    """``amount`` cores with one user slot per core."""
    return (amount, amount, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Sample:
    """One update of the timeline, in cores."""

    time: float
    production_demand: float
    production_fair_share: float
    research_fair_share: float
    production_volume: float
    research_volume: float


def production_busy(time: float) -> bool:
    """The pipeline runs during the first half of every day."""
    return (time % DAY) < DAY / 2


def initial_snapshot() -> TreeSnapshot:
    return TreeSnapshot(
        total_resource_limits=TOTAL,
        pools=[
            PoolSpec(name="<Root>", parent=None),
            PoolSpec(
                name="production",
                parent="<Root>",
                integral_guarantees=IntegralGuarantees(
                    guarantee_type=IntegralGuaranteeType.BURST,
                    resource_flow=cores(1000),
                    burst_guarantee_resources=cores(2000),
                ),
            ),
            PoolSpec(
                name="research",
                parent="<Root>",
                integral_guarantees=IntegralGuarantees(
                    guarantee_type=IntegralGuaranteeType.RELAXED,
                    resource_flow=cores(1000),
                ),
            ),
        ],
        operations=[],
    )


def run(days: float = 3.0, update_period: float = 60.0) -> list[Sample]:
    """Step the engine through ``days`` of updates; usage follows the previous fair share."""
    times = [index * update_period for index in range(int(days * DAY / update_period))]

    def operations_at(time: float, previous: UpdateResult | None) -> list[OperationSpec]:
        demands = {"pipeline": 2000.0 if production_busy(time) else 0.0, "training": 4000.0}
        parents = {"pipeline": "production", "training": "research"}
        specs = []
        for name, demand in demands.items():
            usage = 0.0
            if previous is not None:
                granted = previous.operations[name].fair_share.total[CPU_INDEX] * CORES
                usage = min(demand, round(granted, 2))
            specs.append(
                OperationSpec(
                    name=name,
                    parent=parents[name],
                    resource_demand=cores(demand),
                    resource_usage=cores(usage),
                )
            )
        return specs

    samples = []
    results = run_timeline(initial_snapshot(), times, operations_at)
    for time, result in zip(times, results, strict=True):
        production = result.pools["production"]
        research = result.pools["research"]
        samples.append(
            Sample(
                time=time,
                production_demand=production.resource_demand[CPU_INDEX],
                production_fair_share=production.fair_share.total[CPU_INDEX] * CORES,
                research_fair_share=research.fair_share.total[CPU_INDEX] * CORES,
                production_volume=production.integral.accumulated_volume[CPU_INDEX],
                research_volume=research.integral.accumulated_volume[CPU_INDEX],
            )
        )
    return samples


def main() -> None:
    """Print the timeline hour by hour."""
    samples = run()
    print(
        f"{'day':>3} {'hour':>4}  {'prod demand':>11} {'prod fair':>9} {'research fair':>13}"
        f"  {'prod volume (core-h)':>20} {'research volume (core-h)':>24}"
    )
    for sample in samples:
        if sample.time % 3600 == 0 and (sample.time // 3600) % 2 == 0:
            day, rest = divmod(sample.time, DAY)
            print(
                f"{int(day) + 1:>3} {int(rest // 3600):>4}  {sample.production_demand:>11.0f}"
                f" {sample.production_fair_share:>9.0f} {sample.research_fair_share:>13.0f}"
                f"  {sample.production_volume / 3600:>20.0f}"
                f" {sample.research_volume / 3600:>24.0f}"
            )


if __name__ == "__main__":
    main()
