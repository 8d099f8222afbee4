"""Integral guarantees over time: the documented worked example and long random timelines."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ytsched.fairshare.model import (
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.fairshare.timeline import carry_state
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.resources import CPU_INDEX, Vector, scale_amounts, vscale
from ytsched.scenarios import integral_day

TOTAL: Vector = (100.0, 100.0, 0.0, 1000.0 * 2**20, 0.0)


def cpu(amount: float) -> Vector:
    return (amount, amount, 0.0, 0.0, 0.0)


# --- the worked example of the YTsaurus documentation --------------------------------------


def test_worked_example_burst_gets_its_burst_and_relaxed_its_daily_flow() -> None:
    samples = integral_day.run(days=3.0, update_period=60.0)
    for day in (1, 2):  # second and third day
        busy = [
            s
            for s in samples
            if day * integral_day.DAY <= s.time < (day + 1) * integral_day.DAY
            and s.production_demand > 0
        ]
        at_burst = [s for s in busy if s.production_fair_share >= 2000.0 - 1e-6]
        assert len(at_burst) >= 0.95 * len(busy), (day, len(at_burst), len(busy))
        whole_day = [
            s for s in samples if day * integral_day.DAY <= s.time < (day + 1) * integral_day.DAY
        ]
        average = sum(s.research_fair_share for s in whole_day) / len(whole_day)
        assert abs(average - 1000.0) <= 0.02 * 1000.0, (day, average)


def test_worked_example_first_day_has_no_banked_volume() -> None:
    """Without volume the burst pool cannot have its burst on day one: the pools split evenly."""
    samples = integral_day.run(days=0.25, update_period=60.0)
    later = [s for s in samples if s.time >= 3600.0]
    assert all(abs(s.production_fair_share - 1000.0) < 1.0 for s in later)


# --- long random timelines -----------------------------------------------------------------


def integral_snapshot(kinds: list[str], flows: list[float], distribute: bool) -> TreeSnapshot:
    pools = [PoolSpec(name="<Root>", parent=None), PoolSpec(name="group", parent="<Root>")]
    for index, (kind, flow) in enumerate(zip(kinds, flows, strict=True)):
        guarantee_type = IntegralGuaranteeType(kind)
        burst = cpu(round(min(100.0, flow * 3), 2)) if kind == "burst" else cpu(0.0)
        pools.append(
            PoolSpec(
                name=f"p{index}",
                parent="group" if index % 2 else "<Root>",
                integral_guarantees=IntegralGuarantees(
                    guarantee_type=guarantee_type,
                    resource_flow=cpu(flow),
                    burst_guarantee_resources=burst,
                ),
            )
        )
    return TreeSnapshot(
        total_resource_limits=TOTAL,
        pools=pools,
        operations=[],
        options=UpdateOptions(should_distribute_free_volume_among_children=distribute),
        now=0.0,
    )


def operations(demands: list[float], previous: UpdateResult | None) -> list[OperationSpec]:
    specs = []
    for index, demand in enumerate(demands):
        name = f"op{index}"
        usage = 0.0
        if previous is not None and name in previous.operations:
            usage = min(
                demand, round(previous.operations[name].fair_share.total[CPU_INDEX] * 100, 2)
            )
        specs.append(
            OperationSpec(
                name=name,
                parent=f"p{index}",
                resource_demand=cpu(demand),
                resource_usage=cpu(usage),
            )
        )
    return specs


@st.composite
def timelines(draw: st.DrawFn) -> tuple[TreeSnapshot, list[tuple[float, list[float]]]]:
    count = draw(st.integers(1, 4))
    kinds = draw(st.lists(st.sampled_from(["burst", "relaxed"]), min_size=count, max_size=count))
    flows = [round(draw(st.floats(0.5, 100.0 / count)), 2) for _ in range(count)]
    snapshot = integral_snapshot(kinds, flows, draw(st.booleans()))
    steps = []
    for _ in range(draw(st.integers(5, 40))):
        dt = draw(st.sampled_from([1.0, 10.0, 60.0, 600.0, 3600.0, 43200.0]))
        demands = [draw(st.sampled_from([0.0, 5.0, 30.0, 100.0, 300.0])) for _ in range(count)]
        steps.append((dt, demands))
    return snapshot, steps


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines())
def test_volume_stays_within_zero_and_capacity(
    case: tuple[TreeSnapshot, list[tuple[float, list[float]]]],
) -> None:
    snapshot, steps = case
    previous: UpdateResult | None = None
    now = 0.0
    for dt, demands in steps:
        if previous is not None:
            now += dt
            snapshot = carry_state(snapshot, previous, now)
        snapshot = dataclasses.replace(snapshot, operations=operations(demands, previous))
        result = run_update(snapshot)
        for spec in snapshot.pools:
            element = result.pools[spec.name]
            if spec.integral_guarantees.guarantee_type is IntegralGuaranteeType.NONE:
                continue
            volume = element.integral.accumulated_volume
            capacity = vscale(
                scale_amounts(TOTAL, element.resource_flow_ratio),
                snapshot.options.integral_pool_capacity_saturation_period,
            )
            before = spec.accumulated_resource_volume
            for r in range(5):
                assert volume[r] >= 0.0, (spec.name, r, volume)
                assert volume[r] <= max(before[r], capacity[r]) * (1 + 1e-12) + 1e-6, (
                    spec.name,
                    r,
                    volume,
                    before,
                    capacity,
                )
        previous = result


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    flow=st.sampled_from([5.0, 10.0, 20.0]),
    burst_factor=st.sampled_from([2.0, 3.0, 5.0]),
    banked_hours=st.sampled_from([0.5, 1.0, 3.0]),
)
def test_burst_lasts_as_long_as_estimated(
    flow: float, burst_factor: float, banked_hours: float
) -> None:
    """A burst pool that wants more than its burst keeps the burst as long as estimated.

    ``estimated_burst_usage_duration_seconds`` is the time until the volume runs dry at the
    burst rate, counting the inflow.  The share drops below the burst once less than one smooth
    period of burst is left (the integral share is at most volume / smooth period), so the burst
    ends ``smooth_period * burst / (burst - flow)`` seconds before the estimate, give or take one
    update period; afterwards the share decays towards the flow and never below it.
    """
    period = 10.0
    burst = flow * burst_factor
    snapshot = integral_snapshot(["burst"], [flow], False)
    pools = [
        dataclasses.replace(
            spec,
            integral_guarantees=dataclasses.replace(
                spec.integral_guarantees, burst_guarantee_resources=cpu(burst)
            ),
            # Volume accrues in every resource in proportion to the cluster (the ratio volume
            # is a minimum over resources), so bank ``banked_hours`` of flow in all of them.
            accumulated_resource_volume=vscale(TOTAL, flow / 100.0 * banked_hours * 3600.0),
        )
        if spec.name == "p0"
        else spec
        for spec in snapshot.pools
    ]
    snapshot = dataclasses.replace(snapshot, pools=pools)
    burst_ratio, flow_ratio = burst / 100.0, flow / 100.0
    estimate = (flow * banked_hours * 3600.0 / 100.0) / (burst_ratio - flow_ratio)
    expected_end = estimate - snapshot.options.integral_smooth_period * burst / (burst - flow)

    previous: UpdateResult | None = None
    now = 0.0
    end: float | None = None
    shares = []
    while now <= estimate + 20 * period:
        if previous is not None:
            now += period
            snapshot = carry_state(snapshot, previous, now)
        snapshot = dataclasses.replace(snapshot, operations=operations([100.0], previous))
        previous = run_update(snapshot)
        share = previous.pools["p0"].proposed_integral_share[CPU_INDEX]
        shares.append(share)
        if end is None and share < burst_ratio - 1e-9:
            end = now
    assert end is not None
    assert abs(end - expected_end) <= period + 1e-6, (end, expected_end, estimate)
    assert min(shares[1:]) >= flow_ratio - 1e-9
