"""Scenario actions that YTsaurus's integration tests use: node changes, pool moves, restarts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.helpers import document, node_group, operation, pool, run, tree
from ytsched.scheduling.preemptible import PreemptionStatus
from ytsched.simulator import ScenarioError, load_scenario


def events_of(recorder: Any, kind: str) -> list[dict[str, Any]]:
    return [event for event in recorder.events if event["event_type"] == kind]


def test_lower_node_limits_preempt_jobs_until_the_node_fits() -> None:
    doc = document(
        duration="6m",
        operations=[operation("op", "a", jobs=40, duration="infinite")],
        actions=[
            {
                "time": "2m",
                "action": "update_nodes",
                "group": "node",
                "count": 2,
                "resource_limits": {"cpu": 4, "user_slots": 4, "memory": 64 * 2**30},
            }
        ],
    )
    result, recorder = run(doc)
    (updated_a, updated_b) = events_of(recorder, "node_updated")
    changed = {updated_a["node"], updated_b["node"]}
    assert changed == {"node-0003", "node-0002"}
    assert updated_a["resource_limits"]["cpu"] == 4
    aborted = [e for e in events_of(recorder, "job_aborted") if e["time"] >= 120]
    assert aborted and {e["node"] for e in aborted} <= changed
    assert len(aborted) == 12  # 2 nodes x (10 - 4) jobs of 1 cpu
    assert {e["reason"] for e in aborted} == {"resource_overcommit"}
    # Aborted after allowed_node_resources_overcommit_duration (15 s) and within a heartbeat.
    assert all(135 < e["time"] <= 145 for e in aborted)
    for address in changed:
        ledger_node = result.scheduler.ledger.nodes[address]
        assert ledger_node.usage[1] <= 4
    # Capacity after the change counts the new limits: 2x10 + 2x4 cpu over the last 4 minutes.
    capacity_cpu = result.counters.capacity[1]
    assert capacity_cpu == pytest.approx(40 * 120 + 28 * 240)


def test_new_tags_move_a_node_to_another_tree_and_abort_its_jobs() -> None:
    trees = {
        "physical": {
            "$attributes": {"config": {"node_tag_filter": "cpu"}},
            "$value": {"a": pool({"weight": 1})},
        },
        "gpu": {"$attributes": {"config": {"node_tag_filter": "gpu"}}, "$value": {}},
        "$attributes": {"default_tree": "physical"},
    }
    attributes = trees.pop("$attributes")
    cpu_group = {**node_group(2, 10), "tags": ["cpu"]}
    doc = document(
        duration="5m",
        cluster={"heartbeat_period": "5s", "node_groups": [cpu_group]},
        pool_trees={"$attributes": attributes, "$value": trees},
        operations=[operation("op", "a", jobs=30, duration="infinite")],
        actions=[
            {"time": "1m", "action": "update_nodes", "node": "node-0001", "tags": ["gpu"]},
        ],
    )
    result, recorder = run(doc)
    (updated,) = events_of(recorder, "node_updated")
    assert updated["node"] == "node-0001" and updated["tree"] == "gpu"
    aborted = [e for e in events_of(recorder, "job_aborted") if e["node"] == "node-0001"]
    assert len(aborted) == 10
    assert all(e["time"] >= 60 for e in aborted)
    late_starts = [e for e in events_of(recorder, "job_started") if e["time"] > 60]
    assert late_starts == [] or all(e["node"] == "node-0000" for e in late_starts)
    assert result.trees.nodes["node-0001"].tree == "gpu"


def test_move_pool_keeps_its_operations_and_usage() -> None:
    doc = document(
        duration="5m",
        pool_trees=tree({"a": pool({"weight": 1}), "b": pool({"weight": 1})}),
        operations=[operation("op", "a", jobs=20, duration="infinite")],
        actions=[{"time": "2m", "action": "move_pool", "pool": "a", "parent": "b"}],
    )
    result, recorder = run(doc)
    assert [e["action"]["action"] for e in events_of(recorder, "action_applied")] == ["move_pool"]
    assert events_of(recorder, "job_aborted") == []
    physical = result.trees.tree("physical")
    assert physical.pools["a"].parent is physical.pools["b"]
    b_series = result.sampler.pools[("physical", "b")]
    assert b_series.usage[-1] == pytest.approx(20)  # a's 20 cores now count under b


def test_move_pool_under_its_own_child_fails_without_stopping_the_run() -> None:
    pools = {"a": pool({}, {"child": pool()})}
    doc = document(
        duration="3m",
        pool_trees=tree(pools),
        operations=[operation("op", "a", jobs=2)],
        actions=[{"time": "1m", "action": "move_pool", "pool": "a", "parent": "child"}],
    )
    result, recorder = run(doc)
    (failed,) = events_of(recorder, "action_failed")
    assert failed["code"] == "InvalidPoolMove"
    assert result.counters.actions_failed == 1


def restart_document(with_restart: bool) -> dict[str, Any]:
    pools = {
        "burst": pool(
            {
                "integral_guarantees": {
                    "guarantee_type": "burst",
                    "resource_flow": {"cpu": 5},
                    "burst_guarantee_resources": {"cpu": 20},
                }
            }
        ),
        "batch": pool({"weight": 1}),
    }
    actions = [{"time": "100s", "action": "restart_scheduler"}] if with_restart else []
    return document(
        duration="10m",
        pool_trees=tree(pools),
        operations=[
            operation("batch", "batch", jobs=60, duration="infinite"),
            operation("etl", "burst", jobs=30, duration="3m", start="60s"),
        ],
        actions=actions,
    )


def test_restart_keeps_running_jobs_volumes_and_preemptible_status() -> None:
    plain, _ = run(restart_document(False), until=100)
    restarted, recorder = run(restart_document(True), until=100)
    (event,) = events_of(recorder, "scheduler_restarted")
    assert event["adopted_jobs"] > 0
    statuses_plain: dict[str, PreemptionStatus | None] = {}
    for operation_state in plain.trees.operations.values():
        for job_id in operation_state.running_jobs:
            statuses_plain[job_id] = plain.scheduler.preemption_status(job_id)
    statuses_restarted = {
        job_id: restarted.scheduler.preemption_status(job_id) for job_id in statuses_plain
    }
    assert statuses_plain and statuses_restarted == statuses_plain
    assert set(statuses_plain.values()) >= {PreemptionStatus.NON_PREEMPTIBLE}
    burst_plain = plain.trees.tree("physical").pools["burst"].accumulated_resource_volume
    burst_restarted = restarted.trees.tree("physical").pools["burst"].accumulated_resource_volume
    assert burst_restarted == pytest.approx(burst_plain)


def test_a_restarted_scheduler_schedules_on_and_loses_no_work() -> None:
    plain, _ = run(restart_document(False))
    restarted, recorder = run(restart_document(True))
    assert [e["action"]["action"] for e in events_of(recorder, "action_applied")] == [
        "restart_scheduler"
    ]
    by_id = {op.id: op for op in restarted.operations}
    assert by_id["etl"].state == "completed"
    assert by_id["etl"].completed_job_count == 30
    lost = sum(op.lost_job_seconds for op in restarted.operations)
    assert lost == pytest.approx(sum(op.lost_job_seconds for op in plain.operations))
    volume = restarted.sampler.pools[("physical", "burst")].volume
    assert volume[-1] == pytest.approx(plain.sampler.pools[("physical", "burst")].volume[-1])


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ({"action": "update_nodes", "group": "node"}, "set tags, resource_limits or both"),
        (
            {"action": "update_nodes", "group": "node", "node": "node-0000", "tags": []},
            "set exactly one of group and node",
        ),
        ({"action": "update_nodes", "group": "gpu", "tags": []}, "no node group 'gpu'"),
        ({"action": "move_pool", "pool": "a"}, "parent: Field required"),
        ({"action": "move_pool", "tree": "x", "pool": "a", "parent": None}, "no pool tree 'x'"),
    ],
)
def test_bad_actions_are_refused_at_load(action: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(document(actions=[{"time": 0, **action}]))
    assert fragment in caught.value.message
    assert caught.value.message.startswith("actions[0]")


def no_gpu_document(**controller: Any) -> dict[str, Any]:
    gpu_op = operation("gpu-op", "a", jobs=2, scheduling_tag_filter="gpu")
    big_op = operation("big-op", "b", jobs=1, cpu=50)
    fine = operation("fine", "a", jobs=2, duration="infinite", scheduling_tag_filter="node-0000")
    return document(
        duration="15m",
        operations=[gpu_op, big_op, fine],
        controller_agent=controller,
    )


def test_an_operation_no_node_can_serve_fails_with_ytsaurus_error() -> None:
    result, recorder = run(no_gpu_document())
    by_id = {op.id: op for op in result.operations}
    # Checks run every 5 s but are skipped for safe_scheduler_online_time (10 min).
    assert by_id["gpu-op"].state == "failed" and by_id["gpu-op"].finish_time == 600
    assert by_id["gpu-op"].error == (
        'No online nodes that match operation scheduling tag filter "gpu" and have sufficient'
        " resources to schedule an allocation found in trees [physical]"
        " [NoOnlineNodeToScheduleAllocation]"
    )
    assert by_id["big-op"].state == "failed"
    assert by_id["fine"].state == "running"
    checks = {e["operation_id"]: e for e in events_of(recorder, "operation_check_failed")}
    assert checks["gpu-op"]["non_matching_filter_node_count"] == 4
    assert checks["big-op"]["matching_but_insufficient_resources_node_count_per_task"] == {
        "main": {"cpu": 4}
    }


def test_the_exec_node_check_honours_its_options() -> None:
    result, _ = run(no_gpu_document(safe_scheduler_online_time=0))
    assert {op.id: op.finish_time for op in result.operations if op.state == "failed"} == {
        "gpu-op": 5.0,
        "big-op": 5.0,
    }
    result, _ = run(no_gpu_document(enable_available_exec_nodes_check=False))
    assert all(op.state != "failed" for op in result.operations)


def test_a_node_that_joins_in_time_saves_the_operation() -> None:
    doc = no_gpu_document(safe_scheduler_online_time=60_000)
    gpu = {**node_group(1, 10, name="gpu"), "tags": ["gpu"]}
    doc["actions"] = [{"time": "30s", "action": "add_nodes", "group": gpu}]
    result, _ = run(doc)
    by_id = {op.id: op for op in result.operations}
    assert by_id["gpu-op"].state == "completed"
    assert by_id["big-op"].state == "failed" and by_id["big-op"].finish_time == 60.0


def test_a_restart_resets_the_safe_online_time() -> None:
    doc = no_gpu_document(safe_scheduler_online_time=60_000)
    doc["actions"] = [{"time": "50s", "action": "restart_scheduler"}]
    result, _ = run(doc)
    failed = {op.id: op.finish_time for op in result.operations if op.state == "failed"}
    assert failed == {"gpu-op": 110.0, "big-op": 110.0}


def waiting_document(tree_timeout: Any = None, spec_timeout: Any = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "fair_share_starvation_timeout": "5s",
        "allocation_preemption_timeout": "20s",
    }
    if tree_timeout is not None:
        config["waiting_for_resources_on_node_timeout"] = tree_timeout
    service = operation(
        "svc",
        "a",
        jobs=10,
        duration="infinite",
        task={"interruption_signal": "SIGINT", "finish_after_interruption": "15s"},
    )
    newcomer = operation("new", "b", jobs=5, duration="2m", start="1m")
    if spec_timeout is not None:
        newcomer["spec"]["waiting_job_timeout"] = spec_timeout
    return document(
        duration="5m",
        cluster={"heartbeat_period": "5s", "node_groups": [node_group(1, 10)]},
        pool_trees=tree(
            {"a": pool({"weight": 1}), "b": pool({"strong_guarantee_resources": {"cpu": 5}})},
            config,
        ),
        operations=[service, newcomer],
    )


def test_without_a_waiting_timeout_jobs_start_at_once_as_before() -> None:
    _, recorder = run(waiting_document())
    assert events_of(recorder, "job_waiting") == []


def test_a_job_waits_on_its_node_until_the_preempted_jobs_finish() -> None:
    result, recorder = run(waiting_document(tree_timeout="1m"))
    waiting = events_of(recorder, "job_waiting")
    resumed = events_of(recorder, "job_resumed")
    assert waiting and {e["operation_id"] for e in waiting} == {"new"}
    assert {e["job_id"] for e in resumed} == {e["job_id"] for e in waiting}
    # The preempted service jobs need 15 s after their signal; the newcomers wait that long.
    assert all(14.0 <= e["waited"] <= 16.0 for e in resumed)
    by_id = {op.id: op for op in result.operations}
    assert by_id["new"].completed_job_count == 5 and by_id["new"].aborted_job_count == 0


def test_a_job_waiting_longer_than_its_timeout_is_aborted_by_the_node() -> None:
    result, recorder = run(waiting_document(tree_timeout="5s"))
    aborted = [e for e in events_of(recorder, "job_aborted") if e["reason"] == "waiting_timeout"]
    assert aborted and "new" in {e["operation_id"] for e in aborted}
    assert all(e["lost_job_seconds"] == 0.0 for e in aborted)
    assert result.counters.aborts["waiting_timeout"] == len(aborted)
    # The spec's waiting_job_timeout is taken when it is the larger one.
    _, recorder = run(waiting_document(tree_timeout="5s", spec_timeout="1m"))
    assert not [e for e in events_of(recorder, "job_aborted") if e["reason"] == "waiting_timeout"]
    assert events_of(recorder, "job_resumed")


@pytest.mark.parametrize("seed", range(12))
def test_new_actions_keep_the_idle_heartbeat_shortcuts_exact(seed: int) -> None:
    """The random scenarios of test_fast_paths plus node updates, pool moves, restarts and
    node-side waiting: skipping idle heartbeats must still change no output."""
    import random

    from tests.simulator.test_fast_paths import _outputs, _random_document

    document = _random_document(seed)
    rng = random.Random(f"{seed}/issue-17")
    actions = list(document["actions"])
    actions.append(
        {
            "time": rng.randint(60, 900) * 1000,
            "action": "update_nodes",
            "group": "node",
            "count": 1,
            "resource_limits": {"cpu": 2, "user_slots": 2, "memory": 64 * 2**30},
        }
    )
    if rng.random() < 0.5:
        actions.append(
            {
                "time": rng.randint(60, 900) * 1000,
                "action": "update_nodes",
                "group": "node",
                "count": 1,
                "tags": ["fast"],
            }
        )
    actions.append({"time": rng.randint(60, 900) * 1000, "action": "restart_scheduler"})
    actions.append(
        {"time": rng.randint(60, 900) * 1000, "action": "move_pool", "pool": "p1", "parent": "p0"}
    )
    actions.append(
        {
            "time": rng.randint(0, 300) * 1000,
            "action": "update_tree_config",
            "config": {"waiting_for_resources_on_node_timeout": rng.choice([2000, 30000])},
        }
    )
    document["actions"] = sorted(actions, key=lambda action: action["time"])
    document["controller_agent"] = {"safe_scheduler_online_time": 60_000}
    fast = _outputs(document, fast=True)
    slow = _outputs(document, fast=False)
    for key in slow:
        if key != "real_heartbeats":
            assert fast[key] == slow[key], key


def test_a_pools_own_waiting_timeout_applies_to_its_operations() -> None:
    """``waiting_for_resources_on_node_timeout`` of a pool overrides the tree's (the orchid's
    ``effective_waiting_for_resources_on_node_timeout``)."""
    doc = waiting_document()
    doc["pool_trees"]["physical"]["$value"]["b"]["$attributes"][
        "waiting_for_resources_on_node_timeout"
    ] = "1m"
    _, recorder = run(doc)
    waiting = events_of(recorder, "job_waiting")
    assert waiting and {e["operation_id"] for e in waiting} == {"new"}
    doc["pool_trees"]["physical"]["$value"]["b"]["$attributes"][
        "waiting_for_resources_on_node_timeout"
    ] = "5s"
    _, recorder = run(doc)
    aborted = [e for e in events_of(recorder, "job_aborted") if e["reason"] == "waiting_timeout"]
    assert aborted and {e["operation_id"] for e in aborted} == {"new"}
