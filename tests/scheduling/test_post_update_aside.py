"""The scheduling state built aside in slices (``post_update_aside``) is the state
``build_tree_state`` builds.

* With nothing in between the slices, field by field and heap by heap, over the random
  simulator scenarios of ``test_incremental_update.py`` (FIFO limits, tags, limits, graceful
  preemption, starvation), and every output of the run is the same.
* With heartbeats (starts, finished jobs, preemption) and new operations between the slices,
  the published state equals the one-step build run at the moment of publication after the
  same heartbeats, up to the layout of the selectors' heaps (which nothing observes): two
  identical clusters, one per way, must agree on every update's state and every answer.
* Nothing the slices do is visible before publication: the state heartbeats use, the
  persistent records, starvation states and preemptible lists stay as they were.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from tests.scheduling.helpers import Cluster, limits, vanilla
from tests.scheduling.test_incremental_update import _document, _dump, _record, _template
from ytsched.scheduling.scheduler import (
    PendingUpdate,
    Scheduler,
    structure_compatible,
    tree_shapes,
)
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.state import ElementState, ScheduledOperation, TreeState
from ytsched.simulator import ListRecorder, load_scenario
from ytsched.simulator.engine import Simulation

# --- nothing in between: exactly the one-step build ------------------------------------------


def _publish_aside(scheduler: Scheduler, pending: PendingUpdate, per_slice: int) -> Any:
    aside = scheduler.finish_update_aside(pending, per_slice)
    for _ in aside.steps():
        pass
    assert aside.publish()
    assert all(build.fallback is None for build in aside.builds.values())
    for _ in aside.cleanup(1):
        pass
    return pending.results


def _simulate(document: dict[str, Any], *, aside: bool) -> dict[str, Any]:
    recorder = ListRecorder()
    simulation = Simulation(load_scenario(document), recorder=recorder)
    scheduler = simulation.scheduler
    finish = scheduler.finish_update
    dumps: list[Any] = []

    def finish_and_dump(pending: PendingUpdate) -> Any:
        results = _publish_aside(scheduler, pending, 2) if aside else finish(pending)
        dumps.append([_dump(state) for state in scheduler.ledger.tree_states.values()])
        dumps.append(
            {
                tree: {name: _record(record) for name, record in records.items()}
                for tree, records in scheduler.ledger.records.items()
            }
        )
        dumps.append(_starvation(scheduler))
        return results

    scheduler.finish_update = finish_and_dump  # type: ignore[method-assign]
    result = simulation.run()
    return {
        "dumps": dumps,
        "events": recorder.events,
        "orchids": recorder.orchids,
        "operations": [repr(record) for record in result.operations],
        "counters": repr(result.counters),
        "orchid": scheduler.orchid(),
    }


def _starvation(scheduler: Scheduler) -> Any:
    return {
        tree: {name: repr(state) for name, state in states.items()}
        for tree, states in scheduler.ledger.starvation.items()
    }


@pytest.mark.parametrize("seed", range(0, 24, 3))
def test_built_aside_without_interference_is_the_one_step_state(seed: int) -> None:
    document = _document(seed)
    aside = _simulate(document, aside=True)
    classic = _simulate(document, aside=False)
    assert len(aside["dumps"]) == len(classic["dumps"]) > 0
    for index, (built, reference) in enumerate(zip(aside["dumps"], classic["dumps"], strict=True)):
        assert built == reference, f"update {index // 3}"
    for key in classic:
        assert aside[key] == classic[key], key


# --- heartbeats in between: the one-step build at publication --------------------------------


def _node(node: SelectorNode) -> Any:
    return (
        node.element.name,
        repr(node.sat),
        repr(node.key),
        node.order,
        node.pos >= 0,
        node.self_active,
        node.parent.element.name if node.parent is not None else None,
        len(node.heap),
    )


def _loose_selector(selector: Selector) -> Any:
    """A selector without its heaps' layout: every node's fields, heap sizes, the best leaf."""
    nodes: list[Any] = []
    stack = [selector.root]
    while stack:
        node = stack.pop()
        nodes.append(_node(node))
        stack.extend(node.heap)
    if selector.index is not None:
        nodes.extend(_node(node) for node in selector.index.values())
    best = selector.best_leaf()
    return sorted(nodes), best.name if best is not None else None


def _loose_value(value: Any) -> Any:
    if isinstance(value, ElementState):
        return ("element", value.name)
    if isinstance(value, ScheduledOperation):
        return ("operation", value.element.name)
    if isinstance(value, SelectorNode):
        return ("node", value.element.name, value.pos >= 0)
    if isinstance(value, list):
        return [_loose_value(item) for item in value]
    return repr(value)


def _loose_dump(state: TreeState) -> Any:
    """``test_incremental_update._dump`` without heap layouts (positions only as in or out)."""
    elements = [
        [(f.name, _loose_value(getattr(element, f.name))) for f in dataclasses.fields(element)]
        for element in state.elements.values()
    ]
    operations = []
    for op in state.operations.values():
        fields: list[Any] = []
        for f in dataclasses.fields(op):
            value = getattr(op, f.name)
            if f.name == "record":
                fields.append(_record(value))
            elif f.name == "template":
                fields.append(_template(value))
            elif f.name in ("operation", "entry"):
                fields.append(value.id)
            elif f.name == "tasks":
                fields.append([task.name for task in value])
            elif f.name == "preemptive_nodes":
                fields.append(sorted((n.element.name, n.pos >= 0) for _, n in value))
            else:
                fields.append((f.name, _loose_value(value)))
        operations.append(fields)
    return (
        repr(state.update_time),
        elements,
        operations,
        _loose_selector(state.selector),
        {p.label: _loose_selector(s) for p, s in state.preemptive_selectors.items()},
        [element.name for element in state.tag_filtered],
        state.has_graceful_operations,
        [element.name for element in state.limited_elements],
    )


def _cluster(seed: int) -> Cluster:
    rng = random.Random(seed)
    tree_config: dict[str, Any] = {
        "fair_share_starvation_timeout": rng.choice([0, 1000, 3000, 5000]),
        "fair_share_aggressive_starvation_timeout": rng.choice([5000, 8000]),
        "enable_aggressive_starvation": rng.random() < 0.5,
        "allocation_count_preemption_timeout_coefficient": rng.choice([1.0, 8.0, 40.0, 100.0]),
        "preemptive_scheduling_backoff": 0,
        "max_schedulable_element_count_in_fifo_pool": rng.choice([None, 2]),
        "enable_pool_starvation": rng.random() < 0.5,
        "scheduling_preemption_priority_scope": rng.choice(
            ["operation_and_ancestors", "operation_only"]
        ),
    }
    cluster = Cluster(tree_config, nodes=3, node_limits=limits(cpu=6))
    for index in range(4):
        config: dict[str, Any] = {"weight": rng.choice([1, 2, 3])}
        if rng.random() < 0.4:
            config["mode"] = "fifo"
        if rng.random() < 0.4:
            config["strong_guarantee_resources"] = {"cpu": rng.choice([2, 4])}
        cluster.pool(f"p{index}", **config)
    return cluster


def _operation(cluster: Cluster, rng: random.Random, index: int) -> None:
    extra: dict[str, Any] = {}
    if rng.random() < 0.3:
        extra["preemption_mode"] = "graceful"
    pool = rng.choice(["p0", "p1", "p2", "p3"] if index % 3 else ["p0", "p1", "p2"])
    jobs = rng.randint(1, 3) if pool == "p3" else rng.randint(1, 30)
    spec = vanilla(pool, jobs=jobs, cpu=rng.choice([1, 2]), **extra)
    cluster.operation(f"op{index}", spec)


def _act(
    cluster: Cluster, action: tuple[str, int], operations: list[int], alive: list[str]
) -> None:
    kind, value = action
    if kind == "beat":
        cluster.heartbeat(f"n{value % 3 + 1}")
    elif kind == "finish":
        running = sorted(cluster.running())
        if running:
            cluster.finish(running[value % len(running)])
    elif kind == "start":
        operations.append(len(operations))
        _operation(cluster, random.Random(value), operations[-1])
    elif kind == "abort":
        if alive:
            cluster.trees.abort_operation(alive[value % len(alive)], now=cluster.now)
    else:
        cluster.pool(f"q{value}")


def _scenario(seed: int) -> tuple[list[Any], dict[str, int]]:
    """Both ways side by side on identical clusters; returns the agreed dumps and what the
    aside builds did (fallbacks, operations whose pending count moved, retries)."""
    rng = random.Random(seed)
    clusters = [_cluster(seed), _cluster(seed)]
    operations: list[list[int]] = [[], []]
    for cluster, ops in zip(clusters, operations, strict=True):
        op_rng = random.Random(seed + 1)
        for _ in range(6):
            ops.append(len(ops))
            _operation(cluster, op_rng, ops[-1])
    stats = {"fallback": 0, "moved": 0, "retried": 0, "updates": 0, "left": 0, "arrived": 0}
    dumps: list[Any] = []
    for round_index in range(12):
        now = float(round_index + 1)
        actions: list[tuple[str, int]] = []
        for _ in range(rng.randint(0, 8)):
            kind = rng.choices(["beat", "finish", "start", "abort", "pool"], [12, 6, 2, 1, 1])[0]
            actions.append((kind, rng.randrange(1000)))
        slots = sorted(rng.randrange(12) for _ in actions)
        aside, classic = clusters
        alive = sorted(
            op_id for op_id, op in aside.trees.operations.items() if not op.state.is_final
        )
        for cluster in clusters:
            cluster.now = now
        # The aside way: the actions between slices (those past the last slice just before
        # publication), then publish; a changed structure computes again, as the service does.
        pending = aside.scheduler.begin_update(now)
        build = aside.scheduler.finish_update_aside(pending, 1)
        moved_before = _pending_counts(aside)
        done = 0
        for step, _ in enumerate(build.steps()):
            while done < len(actions) and slots[done] <= step:
                _act(aside, actions[done], operations[0], alive)
                done += 1
        for action in actions[done:]:
            _act(aside, action, operations[0], alive)
        retried = not build.publish()
        if retried:
            # Computed again after all the actions: the one-step way sees them all first too.
            stats["retried"] += 1
            pending = aside.scheduler.begin_update(now)
            build = aside.scheduler.finish_update_aside(pending, 1)
            for _ in build.steps():
                pass
            assert build.publish()
        else:
            stats["left"] += sum(
                op_id not in aside.trees.trees["physical"].operations for op_id in alive
            )
            stats["arrived"] += sum(kind == "start" for kind, _ in actions)
        stats["fallback"] += sum(b.fallback is not None for b in build.builds.values())
        stats["moved"] += sum(
            1
            for name, count in _pending_counts(aside).items()
            if name in moved_before and moved_before[name] != count
        )
        for _ in build.cleanup(3):
            pass
        # The one-step way: the same actions (served by the previous state), then the build
        # with the shares computed before them, as the aside way publishes it (arrivals and
        # departures need no new computation: scheduler.structure_compatible), unless the
        # aside way had to compute again.
        pending = classic.scheduler.begin_update(now)
        for action in actions:
            _act(classic, action, operations[1], alive)
        if not retried:
            pending.structure = None
        classic.scheduler.finish_update(pending)
        stats["updates"] += 1
        states = [c.scheduler.ledger.tree_states["physical"] for c in clusters]
        assert _loose_dump(states[0]) == _loose_dump(states[1]), f"round {round_index}"
        records = [c.scheduler.ledger.records["physical"] for c in clusters]
        assert {n: _record(r) for n, r in records[0].items()} == {
            n: _record(r) for n, r in records[1].items()
        }
        assert _starvation(aside.scheduler) == _starvation(classic.scheduler)
        dumps.append(_loose_dump(states[0]))
        # Some scheduling with the new states: the same answers.
        for address in ("n1", "n2", "n3"):
            answers = [c.heartbeat(address) for c in clusters]
            assert answers[0] == answers[1]
    return dumps, stats


def _pending_counts(cluster: Cluster) -> dict[str, int]:
    return {
        op_id: sum(len(task.waiting) for task in operation.tasks.values())
        for op_id, operation in cluster.trees.operations.items()
    }


def test_heartbeats_between_slices_give_the_state_built_at_publication() -> None:
    totals = {"fallback": 0, "moved": 0, "retried": 0, "updates": 0, "left": 0, "arrived": 0}
    for seed in range(24):
        _, stats = _scenario(seed)
        for key, value in stats.items():
            totals[key] += value
    # The scenarios exercise every way publication brings the state up to date.
    assert totals["moved"] > 0
    assert totals["fallback"] > 0
    assert totals["retried"] > 0
    assert totals["left"] > 0 and totals["arrived"] > 0
    assert totals["fallback"] < totals["updates"] // 2


# --- nothing is visible before publication ---------------------------------------------------


def test_slices_change_nothing_heartbeats_read() -> None:
    cluster = _cluster(3)
    rng = random.Random(5)
    for index in range(8):
        _operation(cluster, rng, index)
    for now in (1.0, 2.0, 3.0):
        cluster.update(now)
        cluster.heartbeat_all(now)
    scheduler = cluster.scheduler
    before = scheduler.ledger.tree_states["physical"]
    dump = _loose_dump(before)
    records = {n: _record(r) for n, r in scheduler.ledger.records["physical"].items()}
    starvation = _starvation(scheduler)
    pending = scheduler.begin_update(10.0)
    build = scheduler.finish_update_aside(pending, 1)
    for _ in build.steps():
        assert scheduler.ledger.tree_states["physical"] is before
        assert _loose_dump(before) == dump
        assert {n: _record(r) for n, r in scheduler.ledger.records["physical"].items()} == records
        assert _starvation(scheduler) == starvation
        assert scheduler.last_update_time == 3.0
    assert build.publish()
    assert scheduler.ledger.tree_states["physical"] is not before
    assert scheduler.last_update_time == 10.0


def test_jobs_started_between_slices_can_make_an_operation_starve_at_publication() -> None:
    """Fewer pending allocations shorten the starvation timeout (``CheckForStarvation``): an
    operation whose waiting jobs start between the slices starves at publication exactly
    when the one-step build would make it starve, with its preemption priority."""
    config = {
        "fair_share_starvation_timeout": 3000,
        "allocation_count_preemption_timeout_coefficient": 100.0,
        "enable_pool_starvation": False,
        "preemptive_scheduling_backoff": 0,
    }
    clusters = [Cluster(config, node_limits=limits(cpu=25)) for _ in range(2)]
    for cluster in clusters:
        cluster.pool("a")
        cluster.operation("big", vanilla("a", jobs=50))
        cluster.update(1.0)  # below its fair share from now on (no heartbeat started a job)
        cluster.now = 2.2
    aside, classic = clusters
    build = aside.scheduler.finish_update_aside(aside.scheduler.begin_update(2.2), 1)
    for step, _ in enumerate(build.steps()):
        if step == 1:
            assert len(aside.heartbeat("n1").start) == 25  # 25 of 50 pending: 1.5 s -> 0.75 s
    assert build.publish() and build.builds["physical"].fallback is None
    pending = classic.scheduler.begin_update(2.2)
    assert len(classic.heartbeat("n1").start) == 25
    classic.scheduler.finish_update(pending)
    states = [c.scheduler.ledger.tree_states["physical"] for c in clusters]
    assert states[0].operations["big"].static_priority.label == "normal"
    assert _loose_dump(states[0]) == _loose_dump(states[1])


def test_which_structure_changes_need_the_shares_computed_again() -> None:
    """Arrivals and departures of operations need no new computation; new pools, a tree
    config change and an operation moving to another pool do."""
    cluster = _cluster(7)
    for index in range(4):
        _operation(cluster, random.Random(index), index)
    cluster.update(1.0)
    trees = cluster.trees

    def compatible_after(change: Any) -> bool:
        shape = tree_shapes(trees)
        change()
        return structure_compatible(shape, trees)

    assert compatible_after(lambda: None)
    assert compatible_after(lambda: _operation(cluster, random.Random(11), 11))
    assert compatible_after(lambda: trees.abort_operation("op0", now=1.0))
    assert not compatible_after(lambda: cluster.pool("extra"))
    assert not compatible_after(
        lambda: trees.update_tree_config("physical", {"fair_share_starvation_tolerance": 0.5})
    )
    # A pool's settings are not structure (as for Scheduler.finish_update): the state reads
    # them when built, and a change during the aside build makes publication build it anew.
    assert compatible_after(lambda: cluster.tree.set_pool_config("p1", {"weight": 5}))
    moved = "op1" if trees.operations["op1"].spec.pool != "p2" else "op2"
    assert not compatible_after(
        lambda: trees.update_operation_parameters(moved, {"pool": "p2"}, now=1.0)
    )
