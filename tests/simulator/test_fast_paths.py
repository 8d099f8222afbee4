"""The performance shortcuts change nothing: runs with them on and off are identical.

* ``Scheduler.fast_path``: heartbeats whose scheduling stages cannot act are answered without
  running them (``Scheduler._stages_idle``);
* ``Simulation.park_idle_nodes``: such heartbeats are not even run; nodes wake when they could
  act (``Scheduler.heartbeat_would_act``) and skipped heartbeats are accounted.

Random small scenarios exercise what could make an idle-looking heartbeat act: starvation and
preemption (normal and aggressive), graceful operations, scheduling tag filters, resource
limits, FIFO pools, ``min_spare_allocation_resources_on_node``,
``max_started_allocations_per_heartbeat``, interruptions with and without signals, and actions
(abort, complete, node removal and addition, pool changes).  Every output must be equal: the
event log, the orchid snapshots, the operation records, the counters, the pool series and the
scheduler's final orchid and per-node bookkeeping.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.simulator.helpers import GIB, node_group, operation, pool, tree
from ytsched.errors import YtschedError
from ytsched.scheduling import FinishedJob, JobOutcome, NodeHeartbeat, Scheduler
from ytsched.simulator import ListRecorder, load_scenario
from ytsched.simulator.cluster import build_pool_trees
from ytsched.simulator.engine import Simulation


def _random_document(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    tagged = rng.random() < 0.5
    groups = [node_group(rng.randint(2, 5), rng.choice([4, 8, 16]))]
    if tagged:
        extra = node_group(rng.randint(1, 3), rng.choice([4, 8]), name="gpu")
        extra["tags"] = ["fast"]
        groups.append(extra)
    leaves: dict[str, Any] = {}
    names = []
    for index in range(rng.randint(2, 4)):
        name = f"p{index}"
        attributes: dict[str, Any] = {"weight": rng.choice([0.5, 1, 2, 3])}
        if rng.random() < 0.4:
            attributes["strong_guarantee_resources"] = {"cpu": rng.choice([2, 4, 8])}
        if rng.random() < 0.3:
            attributes["resource_limits"] = {"cpu": rng.choice([3, 6])}
        if rng.random() < 0.25:
            attributes["mode"] = "fifo"
        if rng.random() < 0.2:
            attributes["allow_normal_preemption"] = False
        if tagged and rng.random() < 0.3:
            attributes["scheduling_tag_filter"] = "fast"
        if rng.random() < 0.3:
            attributes["fair_share_starvation_timeout"] = rng.choice([5000, 20000])
        leaves[name] = pool(attributes)
        names.append(name)
    config: dict[str, Any] = {
        "fair_share_starvation_timeout": rng.choice([5000, 15000, 30000]),
        "preemptive_scheduling_backoff": rng.choice([0, 5000, 12000]),
        "enable_aggressive_starvation": rng.random() < 0.5,
        "fair_share_aggressive_starvation_timeout": rng.choice([30000, 40000]),
        "allocation_preemption_timeout": rng.choice([0, 10000, 60000]),
    }
    scheduler: dict[str, Any] = {"fair_share_update_period": rng.choice(["5s", "10s"])}
    if rng.random() < 0.5:
        scheduler["min_spare_allocation_resources_on_node"] = {
            "cpu": rng.choice([1, 2, 3]),
            "memory": GIB,
        }
    if rng.random() < 0.3:
        scheduler["max_started_allocations_per_heartbeat"] = rng.choice([1, 2])
    operations = []
    for index in range(rng.randint(3, 9)):
        spec: dict[str, Any] = {}
        task: dict[str, Any] = {}
        if rng.random() < 0.35:
            spec["preemption_mode"] = "graceful"
        if rng.random() < 0.3:
            task["interruption_signal"] = "SIGUSR1"
            task["finish_after_interruption"] = rng.choice(["2s", "20s", "2m"])
        if rng.random() < 0.15:
            spec["resource_limits"] = {"cpu": rng.choice([2, 5])}
        if tagged and rng.random() < 0.2:
            spec["scheduling_tag_filter"] = "fast"
        if task:
            spec["task"] = task
        duration: Any = rng.choice(
            [
                "30s",
                "3m",
                "infinite",
                {"distribution": "lognormal", "median": "1m", "sigma": 1.0, "min": "5s"},
            ]
        )
        operations.append(
            operation(
                f"op{index}",
                rng.choice(names),
                jobs=rng.randint(1, 40),
                cpu=rng.choice([1, 1, 2, 3, 4]),
                duration=duration,
                start=rng.randint(0, 600) * 1000,
                user=f"u{rng.randint(0, 2)}",
                **spec,
            )
        )
    actions: list[dict[str, Any]] = []
    if rng.random() < 0.4:
        actions.append(
            {"time": rng.randint(60, 900) * 1000, "action": "abort_operation", "operation": "op0"}
        )
    if rng.random() < 0.3:
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "complete_operation",
                "operation": "op1",
            }
        )
    if rng.random() < 0.4:
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "remove_nodes",
                "group": "node",
                "count": 1,
            }
        )
    if rng.random() < 0.3:
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "add_nodes",
                "group": node_group(2, 8, name="late"),
            }
        )
    if rng.random() < 0.4:
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "set_pool_attribute",
                "pool": rng.choice(names),
                "attribute": "weight",
                "value": rng.choice([1, 5]),
            }
        )
    if rng.random() < 0.4:
        # Lowering a limit below the usage: violated limits preempt on idle nodes too.
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "set_pool_attribute",
                "pool": rng.choice(names),
                "attribute": "resource_limits",
                "value": {"cpu": 1},
            }
        )
    return {
        "duration": "20m",
        "seed": seed,
        "orchid_period": "2m",
        "cluster": {"heartbeat_period": rng.choice(["2s", "5s"]), "node_groups": groups},
        "scheduler": scheduler,
        "pool_trees": tree(leaves, config),
        "operations": operations,
        "actions": sorted(actions, key=lambda action: action["time"]),
    }


def _outputs(document: dict[str, Any], *, fast: bool) -> dict[str, Any]:
    recorder = ListRecorder()
    simulation = Simulation(load_scenario(document), recorder=recorder)
    simulation.scheduler.fast_path = fast
    simulation.park_idle_nodes = fast
    scheduler = simulation.scheduler
    real_heartbeats = [0]
    process = scheduler.process_heartbeat_of

    def counted(*fields: Any) -> Any:  # the simulator passes a heartbeat's fields
        real_heartbeats[0] += 1
        return process(*fields)

    scheduler.process_heartbeat_of = counted  # type: ignore[method-assign,assignment]
    result = simulation.run()
    scheduler = result.scheduler
    nodes = {
        address: (
            node.last_heartbeat_time,
            node.last_preemptive_scheduling_time,
            node.resources_overcommit_since,
            node.usage,
            sorted(node.allocations),
            sorted(node.interrupted),
        )
        for address, node in scheduler.ledger.nodes.items()
    }
    return {
        "events": recorder.events,
        "orchids": recorder.orchids,
        "operations": [repr(record) for record in result.operations],
        "counters": repr(result.counters),
        "pools": result.sampler.pools,
        "orchid": scheduler.orchid(),
        "nodes": nodes,
        "real_heartbeats": real_heartbeats[0],
        "heartbeat_count": result.counters.heartbeats,
    }


@pytest.mark.parametrize("seed", range(32))
def test_shortcuts_do_not_change_any_output(seed: int) -> None:
    document = _random_document(seed)
    fast = _outputs(document, fast=True)
    slow = _outputs(document, fast=False)
    for key in slow:
        if key != "real_heartbeats":
            assert fast[key] == slow[key], key


def test_random_scenarios_exercise_preemption_and_idle_heartbeats() -> None:
    """The scenarios above are not trivial: some preempt, and parked nodes skip most
    heartbeats (every one is still counted)."""
    preempted = 0
    skipped = 0
    for seed in range(32):
        outputs = _outputs(_random_document(seed), fast=True)
        events = outputs["events"]
        preempted += sum(1 for e in events if e["event_type"] == "job_interrupted")
        skipped += outputs["heartbeat_count"] - outputs["real_heartbeats"]
    assert preempted > 0
    assert skipped > 0


def _drive(seed: int, *, fast: bool) -> list[Any]:
    """Drive a :class:`Scheduler` directly, as the service does: heartbeats in random order
    with resource limits that sometimes shrink below the usage (overcommit), tags that change
    (tag filters), jobs that finish, fail or vanish, updates now and then."""
    scenario = load_scenario(_random_document(seed))
    trees = build_pool_trees(scenario)
    scheduler = Scheduler(trees)
    scheduler.fast_path = fast
    rng = random.Random(seed)
    group = scenario.document.cluster.node_groups[0]
    limits = group.resource_limits.to_vector(0.0)
    addresses = [f"n{index}" for index in range(4)]
    running: dict[str, dict[str, str]] = {address: {} for address in addresses}
    log: list[Any] = []
    plans = list(scenario.operations)
    now = 0.0
    for step in range(400):
        now += rng.choice([0.5, 1.0, 2.5])
        while plans and plans[0].start_time <= now:
            plan = plans.pop(0)
            try:
                trees.start_operation(
                    plan.id,
                    user=plan.user,
                    spec=plan.engine_spec,
                    operation_type=plan.type,
                    now=now,
                )
            except YtschedError as error:
                log.append(("refused", plan.id, error.code))
        if step % 7 == 0:
            scheduler.update(now)
        address = rng.choice(addresses)
        jobs = running[address]
        finished = []
        for job_id in list(jobs):
            if rng.random() < 0.15:
                outcome = rng.choice(
                    [JobOutcome.COMPLETED, JobOutcome.COMPLETED, JobOutcome.FAILED]
                )
                finished.append(FinishedJob(jobs.pop(job_id), job_id, outcome))
        reported = tuple(job_id for job_id in jobs if rng.random() > 0.02)
        scale = rng.choice([1.0, 1.0, 1.0, 0.5])
        node_limits = tuple(value * scale for value in limits)
        tags = frozenset(["fast"]) if rng.random() < 0.3 else frozenset()
        response = scheduler.process_heartbeat(
            NodeHeartbeat(
                address=address,
                now=now,
                resource_limits=node_limits,
                tags=tags,
                running_job_ids=reported,
                finished_jobs=tuple(finished),
            )
        )
        for job_id in list(jobs):
            if job_id not in reported:
                del jobs[job_id]
        for start in response.start:
            jobs[start.job_id] = start.operation_id
        for abort in response.abort:
            jobs.pop(abort.job_id, None)
        log.append((address, now, response))
    node_state = {
        address: (
            node.last_preemptive_scheduling_time,
            node.resources_overcommit_since,
            node.usage,
            sorted(node.allocations),
        )
        for address, node in scheduler.ledger.nodes.items()
    }
    log.append(node_state)
    log.append(scheduler.orchid())
    return log


@pytest.mark.parametrize("seed", range(16))
def test_fast_path_is_exact_for_service_style_heartbeats(seed: int) -> None:
    assert _drive(seed, fast=True) == _drive(seed, fast=False)


def test_violated_limits_preempt_on_otherwise_idle_heartbeats() -> None:
    """Nothing waits anywhere, every node has room: only the violated limit acts."""
    document = {
        "duration": "6m",
        "seed": 3,
        "orchid_period": "1m",
        "cluster": {"heartbeat_period": "5s", "node_groups": [node_group(4, 10)]},
        "scheduler": {"fair_share_update_period": "5s"},
        "pool_trees": tree({"a": pool(), "b": pool()}),
        "operations": [operation("op", "a", jobs=20, duration="infinite")],
        "actions": [
            {
                "time": "2m",
                "action": "set_pool_attribute",
                "pool": "a",
                "attribute": "resource_limits",
                "value": {"cpu": 5},
            }
        ],
    }
    fast = _outputs(document, fast=True)
    assert any(e.get("reason") == "resource_limits_violated" for e in fast["events"])
    slow = _outputs(document, fast=False)
    for key in slow:
        if key != "real_heartbeats":
            assert fast[key] == slow[key], key
