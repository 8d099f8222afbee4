"""Invariants of heartbeat scheduling on random trees and heartbeat sequences.

* no pool or operation exceeds its resource limits;
* normal preemption never takes an operation below its fair share: its usage is never strictly
  below the fair share (on non-blocked resources) after losing allocations;
* no two operations preempt each other back and forth while shares are unchanged (between two
  updates, with no job ending in between; with aggressive starvation, when starving
  operations are protected from preemption);
* preemption takes no more than the new allocation needs: without the last victim the node
  would still be over its limits;
* FIFO order inside FIFO pools: an operation with no fair share in a FIFO pool starts only
  when no earlier operation of that pool could start on that node;
* the accounting is consistent: node usage is the sum of its allocations, and the pool trees
  run exactly the jobs the scheduler placed.

Sizes are bounded so the module runs in seconds.  Starvation timeouts are short so that
preemption happens within a few simulated seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.scheduling.helpers import GIB, Cluster
from ytsched.scheduling import (
    AbortJob,
    HeartbeatResponse,
    InterruptionReason,
    InterruptJob,
    JobOutcome,
)
from ytsched.scheduling.satisfaction import RESOURCE_EPSILON
from ytsched.scheduling.state import TreeState

UPDATE_EVERY = 3
"""Steps (simulated seconds) between fair-share updates."""

STARVATION_PREEMPTIONS = {InterruptionReason.PREEMPTION, InterruptionReason.AGGRESSIVE_PREEMPTION}


@dataclass
class PoolPlan:
    name: str
    parent: str | None
    weight: float
    fifo: bool
    cpu_limit: float | None


@dataclass
class OperationPlan:
    name: str
    pool: str
    jobs: int
    cpu: float
    cpu_limit: float | None
    start_step: int


@dataclass
class Plan:
    pools: list[PoolPlan]
    operations: list[OperationPlan]
    nodes: list[float]
    steps: list[tuple[str, int]]
    aggressive: bool


@st.composite
def plans(draw: st.DrawFn, aggressive: bool = False) -> Plan:
    pools: list[PoolPlan] = []
    for top in range(draw(st.integers(1, 3))):
        children = draw(st.integers(0, 2))
        pools.append(
            PoolPlan(
                f"p{top}",
                None,
                draw(st.sampled_from([1.0, 2.0, 3.0])),
                children == 0 and draw(st.sampled_from([False, False, True])),
                draw(st.sampled_from([None, None, None, 3.0, 6.0])),
            )
        )
        for child in range(children):
            pools.append(
                PoolPlan(
                    f"p{top}c{child}",
                    f"p{top}",
                    draw(st.sampled_from([1.0, 2.0])),
                    draw(st.sampled_from([False, False, True])),
                    draw(st.sampled_from([None, None, None, 2.0, 4.0])),
                )
            )
    parents = {p.parent for p in pools}
    leaves = [p.name for p in pools if p.name not in parents]
    operations = [
        OperationPlan(
            f"op{index}",
            draw(st.sampled_from(leaves)),
            draw(st.integers(4, 20)),
            draw(st.sampled_from([1.0, 1.0, 2.0, 3.0])),
            draw(st.sampled_from([None, None, None, 2.0, 5.0])),
            draw(st.sampled_from([0, 0, 1, 2, 4])),
        )
        for index in range(draw(st.integers(2, 6)))
    ]
    # someone fills the nodes before someone else arrives, elsewhere in the tree
    operations[0].start_step, operations[0].jobs, operations[0].cpu_limit = 0, 20, None
    operations[1].start_step = 1
    others = [leaf for leaf in leaves if leaf != operations[0].pool]
    if others and operations[1].pool == operations[0].pool:
        operations[1].pool = draw(st.sampled_from(others))
    nodes = draw(st.lists(st.sampled_from([4.0, 6.0, 8.0]), min_size=1, max_size=3))
    steps = draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("heartbeat"), st.integers(0, 2)),
                st.tuples(st.just("heartbeat"), st.integers(0, 2)),
                st.tuples(st.just("heartbeat"), st.integers(0, 2)),
                st.tuples(st.just("finish"), st.integers(0, 1000)),
            ),
            min_size=20,
            max_size=50,
        )
    )
    return Plan(pools, operations, nodes, steps, aggressive)


def build(plan: Plan) -> Cluster:
    config: dict[str, Any] = {
        "fair_share_starvation_timeout": 2000,
        "preemptive_scheduling_backoff": 1000,
        "scheduling_preemption_priority_scope": "operation_only",
    }
    if plan.aggressive:
        # Aggressive preemption may take allocations of operations below their fair share
        # (between 0.2 and 1 x fair share): two aggressively starving operations could take
        # from each other.  Protecting starving victims rules that out.
        config.update(
            enable_aggressive_starvation=True,
            fair_share_aggressive_starvation_timeout=4000,
            allow_preemption_from_starving_operations=False,
        )
    cluster = Cluster(config, nodes=0, interrupt_delay=1.0)
    for index, cpu in enumerate(plan.nodes):
        cluster.add_node(f"n{index}", (20.0, cpu, 0.0, 100.0 * GIB, 0.0), interrupt_delay=1.0)
    for pool in plan.pools:
        config = {"weight": pool.weight}
        if pool.fifo:
            config["mode"] = "fifo"
        if pool.cpu_limit is not None:
            config["resource_limits"] = {"cpu": pool.cpu_limit}
        cluster.pool(pool.name, pool.parent, **config)
    return cluster


def start_operations(cluster: Cluster, plan: Plan, step: int) -> None:
    for op in plan.operations:
        if op.start_step != step:
            continue
        spec: dict[str, Any] = {
            "pool": op.pool,
            "tasks": {"main": {"job_count": op.jobs, "cpu_limit": op.cpu, "memory_limit": GIB}},
        }
        if op.cpu_limit is not None:
            spec["resource_limits"] = {"cpu": op.cpu_limit}
        cluster.operation(op.name, spec)


def state_of(cluster: Cluster) -> TreeState | None:
    return cluster.scheduler.ledger.tree_states.get("physical")


def check_limits_and_accounting(cluster: Cluster) -> None:
    ledger = cluster.scheduler.ledger
    for node in ledger.nodes.values():
        total = [0.0] * 5
        for allocation in node.allocations.values():
            for index in range(5):
                total[index] += allocation.usage[index]
            assert allocation.job.state.value == "running"
        assert all(abs(total[i] - node.usage[i]) < 1e-6 for i in range(5))
    placed = {a.id for n in ledger.nodes.values() for a in n.allocations.values()}
    running = {
        job.id for op in cluster.trees.operations.values() for job in op.running_jobs.values()
    }
    assert placed == running
    state = state_of(cluster)
    if state is None:
        return
    for element in state.limited_elements:
        limits = element.specified_limits
        assert limits is not None
        assert all(element.usage[i] <= limits[i] + RESOURCE_EPSILON for i in range(5)), element.name


def check_preemptions(
    cluster: Cluster, address: str, response: HeartbeatResponse, pairs: set[tuple[str, str]]
) -> None:
    state = state_of(cluster)
    victims: list[InterruptJob | AbortJob] = [
        i for i in response.interrupt if i.reason in STARVATION_PREEMPTIONS
    ]
    victims += [a for a in response.abort if a.reason in STARVATION_PREEMPTIONS]
    if not victims or state is None:
        return
    for victim in victims:
        op = state.operations[victim.operation_id]
        element = op.element
        if victim.reason is InterruptionReason.PREEMPTION:
            # never below its fair share after losing allocations
            assert not element.view.strictly_dominates_non_blocked(
                element.view.fair_share, element.view.share(element.usage)
            ), victim
        preemptor = getattr(victim, "preempted_for_operation", None)
        if preemptor is not None:
            assert (victim.operation_id, preemptor) not in pairs, "preemption back and forth"
            pairs.add((preemptor, victim.operation_id))
    # the smallest sufficient set: without the last victim the node would not fit
    node = cluster.scheduler.ledger.nodes[address]
    last = cluster.trees.operations[victims[-1].operation_id].jobs[victims[-1].job_id]
    back = [node.usage[i] + last.resources[i] for i in range(5)]
    assert any(back[i] > node.resource_limits[i] + RESOURCE_EPSILON for i in range(5))


def check_fifo(cluster: Cluster, address: str, response: HeartbeatResponse) -> None:
    state = state_of(cluster)
    if state is None or response.interrupt or response.abort:
        return
    node = cluster.scheduler.ledger.nodes[address]
    free = node.free_resources
    for start in response.start:
        op = state.operations[start.operation_id]
        pool = op.element.parent
        if pool is None or not pool.fifo or any(x > 1e-9 for x in op.element.view.fair_share):
            continue
        for earlier in pool.children:
            if earlier is op.element:
                break
            other = earlier.operation
            assert other is not None
            if not other.eligible:
                continue
            job = other.operation.tasks["main"].resources
            room = [free[i] for i in range(5)]
            for limited in other.limited:
                limits = limited.specified_limits
                assert limits is not None
                room = [min(room[i], limits[i] - limited.usage[i]) for i in range(5)]
            demand = [other.demand[i] - other.element.usage[i] for i in range(5)]
            could_start = all(
                job[i] <= room[i] + RESOURCE_EPSILON and job[i] <= demand[i] + RESOURCE_EPSILON
                for i in range(5)
            )
            assert not could_start, (start.operation_id, other.operation.id)


def simulate(plan: Plan) -> None:
    cluster = build(plan)
    start_operations(cluster, plan, 0)
    cluster.update(0.0)
    pairs: set[tuple[str, str]] = set()
    addresses = list(cluster.nodes)
    for step, (action, value) in enumerate(plan.steps, start=1):
        cluster.now += 1.0
        start_operations(cluster, plan, step)
        if step % UPDATE_EVERY == 0:
            cluster.update()
            pairs.clear()
        if action == "finish":
            running = [
                job
                for node in cluster.nodes.values()
                for job in node.running
                if job not in node.interrupts
            ]
            if running:
                cluster.finish(running[value % len(running)], JobOutcome.COMPLETED)
                pairs.clear()
        else:
            address = addresses[value % len(addresses)]
            response = cluster.heartbeat(address)
            check_preemptions(cluster, address, response, pairs)
            check_fifo(cluster, address, response)
        check_limits_and_accounting(cluster)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plans())
def test_scheduling_invariants(plan: Plan) -> None:
    simulate(plan)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plans(aggressive=True))
def test_scheduling_invariants_with_aggressive_starvation(plan: Plan) -> None:
    simulate(plan)
