"""Incremental updates build exactly what a from-scratch update builds.

``Scheduler.incremental_update`` lets an update reuse what provably did not change since the
last one: operations' templates (settings, share views, preemption bounds), the publication
of unchanged preemptible lists, the scheduling objects of the replaced state
(``post_update._reset``), operations' usages in the engine input (``snapshot.UsageMemo``) and
the proof that no allocation's job ended outside a heartbeat (``NodeState.ended_watch``).  Here the
same random scenarios run with it on and off; after every update the scheduling state of
every tree is dumped field by field (every element, operation, preemptible list with its
boundaries and cumulative usages, and the heap order of every selector), and the dumps and
every output of the run must be equal.  Floats are compared by ``repr`` (``-0.0`` differs).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling.test_preemptible import allocation, bounds, live_state
from tests.simulator.test_fast_paths import _random_document
from ytsched.pooltree.operations import Job, JobState, Operation
from ytsched.pooltree.snapshot import UsageMemo, _memoized_usage, task_figures
from ytsched.resources import Vector
from ytsched.scheduling.nodes import Allocation
from ytsched.scheduling.preemptible import PreemptibleList, PreemptionBounds
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.state import (
    ElementState,
    OperationRecord,
    OperationTemplate,
    ScheduledOperation,
    TreeState,
)
from ytsched.simulator import ListRecorder, load_scenario
from ytsched.simulator.engine import Simulation

# --- dumps -----------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A comparable stand-in: scheduling objects by name, everything else by ``repr``."""
    if isinstance(value, ElementState):
        return ("element", value.name)
    if isinstance(value, ScheduledOperation):
        return ("operation", value.element.name)
    if isinstance(value, SelectorNode):
        return ("node", value.element.name, value.pos)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return repr(value)


def _template(template: OperationTemplate | None) -> Any:
    """A template without its settings' key and anchors (ids and config objects of one run)."""
    if template is None:
        return None
    fields = [
        (field.name, repr(getattr(template.settings, field.name)))
        for field in dataclasses.fields(template.settings)
        if field.name not in ("key", "anchors")
    ]
    return (
        fields,
        template.shares,
        template.fifo_index,
        repr(template.view),
        repr(template.bounds),
        repr(template.order_key),
        repr(template.demand),
        template.status,
    )


def _preemptible(items: PreemptibleList) -> Any:
    return (
        [
            (a.id, a.list_index, repr(a.usage), items.status(a)) if a is not None else None
            for a in items._items
        ],
        items._b1,
        items._b2,
        repr(items._cum1),
        repr(items._cum2),
        items._dead,
        repr(items.total),
        repr(items.bounds),
        items._changed,
    )


def _record(record: OperationRecord) -> Any:
    return (
        _preemptible(record.allocations),
        record.deactivation_reasons,
        list(record.preempted),
        list(record.preempted_for),
        record.started_allocation_count,
        record.preempted_allocation_count,
    )


def _selector(selector: Selector) -> Any:
    def node(item: SelectorNode) -> Any:
        return (
            item.element.name,
            repr(item.sat),
            repr(item.key),
            item.order,
            item.pos,
            item.self_active,
            item.parent.element.name if item.parent is not None else None,
            [node(child) for child in item.heap],
        )

    index = None
    if selector.index is not None:
        index = [(name, node(item)) for name, item in selector.index.items()]
    return node(selector.root), index


def _dump(state: TreeState) -> Any:
    roles = {id(state.selector): "regular"}
    for priority, selector in state.preemptive_selectors.items():
        roles[id(selector)] = priority.label
    elements = [
        [
            (field.name, _plain(getattr(element, field.name)))
            for field in dataclasses.fields(element)
        ]
        for element in state.elements.values()
    ]
    operations = []
    for op in state.operations.values():
        fields = []
        for field in dataclasses.fields(op):
            value = getattr(op, field.name)
            if field.name == "record":
                fields.append(_record(value))
            elif field.name == "template":
                fields.append(_template(value))
            elif field.name == "operation":
                fields.append(value.id)
            elif field.name == "entry":
                fields.append((value.id, value.pool.name, value.running))
            elif field.name == "tasks":
                fields.append([task.name for task in value])
            elif field.name == "preemptive_nodes":
                fields.append([(roles[id(s)], n.element.name, n.pos) for s, n in value])
            else:
                fields.append((field.name, _plain(value)))
        operations.append(fields)
    return (
        state.name,
        repr(state.update_time),
        repr(state.total),
        elements,
        operations,
        _selector(state.selector),
        {priority.label: _selector(s) for priority, s in state.preemptive_selectors.items()},
        [element.name for element in state.tag_filtered],
        state.has_graceful_operations,
        [element.name for element in state.limited_elements],
    )


# --- random scenarios, incremental and from scratch -------------------------------------------


def _run(document: dict[str, Any], *, incremental: bool) -> dict[str, Any]:
    recorder = ListRecorder()
    simulation = Simulation(load_scenario(document), recorder=recorder)
    scheduler = simulation.scheduler
    scheduler.incremental_update = incremental
    if not incremental:
        for tree in scheduler.trees.trees.values():
            tree.usage_memo = None
    dumps: list[Any] = []
    finish = scheduler.finish_update

    def finish_and_dump(pending: Any) -> Any:
        results = finish(pending)
        dumps.append([_dump(state) for state in scheduler.ledger.tree_states.values()])
        dumps.append(
            {
                tree: {name: _record(record) for name, record in records.items()}
                for tree, records in scheduler.ledger.records.items()
            }
        )
        return results

    scheduler.finish_update = finish_and_dump  # type: ignore[method-assign]
    result = simulation.run()
    nodes = {
        address: (node.usage, list(node.allocations), list(node.interrupted), node.pending_aborts)
        for address, node in scheduler.ledger.nodes.items()
    }
    return {
        "dumps": dumps,
        "events": recorder.events,
        "orchids": recorder.orchids,
        "operations": [repr(record) for record in result.operations],
        "counters": repr(result.counters),
        "orchid": scheduler.orchid(),
        "nodes": nodes,
    }


def _document(seed: int) -> dict[str, Any]:
    """A random scenario of ``tests/simulator/test_fast_paths.py``; every third one with all
    pools FIFO and at most two schedulable elements in a FIFO pool (operations past it become
    unschedulable without any input of theirs changing)."""
    document = _random_document(seed)
    if seed % 3 == 2:
        physical = document["pool_trees"]["physical"]
        physical["$attributes"]["config"]["max_schedulable_element_count_in_fifo_pool"] = 2
        for leaf in physical["$value"].values():
            leaf["$attributes"]["mode"] = "fifo"
    return document


@pytest.mark.parametrize("seed", range(24))
def test_incremental_updates_build_the_from_scratch_state(seed: int) -> None:
    document = _document(seed)
    incremental = _run(document, incremental=True)
    scratch = _run(document, incremental=False)
    assert len(incremental["dumps"]) == len(scratch["dumps"])
    for index, (reused, fresh) in enumerate(
        zip(incremental["dumps"], scratch["dumps"], strict=True)
    ):
        assert reused == fresh, f"update {index // 2}"
    for key in scratch:
        assert incremental[key] == scratch[key], key


def test_random_scenarios_reuse_and_end_jobs_outside_heartbeats() -> None:
    """The scenarios above exercise the reuse and what defeats it: most operations are
    reused, some get a new template (in their old objects: ``post_update._retemplate``),
    and some jobs end outside heartbeats (aborted operations,
    removed nodes), which leaves allocations for ``_reconcile_all``."""
    reused = rebuilt = retemplated = ended_elsewhere = 0
    for seed in range(24):
        simulation = Simulation(load_scenario(_document(seed)), recorder=ListRecorder())
        scheduler = simulation.scheduler
        seen: dict[str, tuple[ScheduledOperation, OperationTemplate | None]] = {}
        finish = scheduler.finish_update
        reconcile = scheduler._reconcile_all

        def finish_and_count(
            pending: Any, finish: Any = finish, seen: Any = seen, scheduler: Any = scheduler
        ) -> Any:
            nonlocal reused, rebuilt, retemplated
            results = finish(pending)
            for state in scheduler.ledger.tree_states.values():
                for name, op in state.operations.items():
                    known = seen.get(name)
                    if known is not None and known == (op, op.template):
                        reused += 1
                    elif known is not None:
                        rebuilt += 1
                        # Its objects kept, with a new template (post_update._retemplate).
                        retemplated += known[0] is op
                    seen[name] = (op, op.template)
            return results

        def reconcile_and_count(reconcile: Any = reconcile, scheduler: Any = scheduler) -> None:
            nonlocal ended_elsewhere
            for node in scheduler.ledger.nodes.values():
                # The per-node count the O(1) checks read is the count a scan finds.
                assert node.ended_watch.ended == sum(
                    a.job.state is not JobState.RUNNING for a in node.allocations.values()
                )
            assert scheduler.ledger.ended_watch.ended == sum(
                node.ended_watch.ended for node in scheduler.ledger.nodes.values()
            )
            before = sum(len(node.pending_aborts) for node in scheduler.ledger.nodes.values())
            reconcile()
            after = sum(len(node.pending_aborts) for node in scheduler.ledger.nodes.values())
            ended_elsewhere += after - before

        scheduler.finish_update = finish_and_count  # type: ignore[method-assign]
        scheduler._reconcile_all = reconcile_and_count  # type: ignore[method-assign]
        simulation.run()
    assert reused > rebuilt >= retemplated > 0
    assert ended_elsewhere > 0


# --- preemptible lists: a skipped publication is the publication ------------------------------


def _fresh(items: PreemptibleList, published: PreemptionBounds | None) -> Any:
    """``live_state`` of the same live allocations appended to a new list, published from
    scratch (taken before the allocations' indexes into ``items`` are restored)."""
    fresh = PreemptibleList()
    alive = list(items)
    indices = [a.list_index for a in alive]
    for a in alive:
        fresh.append(a)
    fresh.publish(published)
    state = live_state(fresh)
    for a, index in zip(alive, indices, strict=True):
        a.list_index = index
    return state


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "remove", "release", "publish", "republish"]),
            st.integers(min_value=0, max_value=40),
            st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0, 0.1]),
        ),
        max_size=60,
    ),
    st.sampled_from([0.1, 0.3, 0.5, 0.9]),
)
def test_publishing_the_same_bounds_again_is_a_no_op_only_when_nothing_changed(
    steps: list[tuple[str, int, float]], fair: float
) -> None:
    """``publish`` of the bounds already published skips the work exactly when the list did
    not change: the state is then what a from-scratch publication of the same allocations
    gives; otherwise it reclassifies, also giving that state."""
    items = PreemptibleList()
    published = bounds(fair, demand=1.0, threshold=None)
    other = bounds(fair, demand=0.5)
    live: list[Allocation] = []
    counter = 0
    for action, pick, size in steps:
        if action == "append":
            counter += 1
            a = allocation(counter, (size, size, 0.0, 10.0 * size, 0.0))
            items.append(a)
            live.append(a)
        elif action == "remove" and live:
            a = live.pop(pick % len(live))
            a.job.state = JobState.COMPLETED
            items.remove(a)
        elif action == "release" and live:
            a = live[pick % len(live)]
            if a.usage != (0.0, 0.0, 0.0, 0.0, 0.0):
                delta = tuple(-x for x in a.usage)
                a.usage = (0.0, 0.0, 0.0, 0.0, 0.0)
                items.usage_decreased(a, delta)  # type: ignore[arg-type]
        elif action == "publish":
            items.publish(published)
            assert live_state(items) == _fresh(items, published)
        else:
            items.publish(other)
            items.publish(published)
            assert live_state(items) == _fresh(items, published)
    items.publish(published)
    again = live_state(items)
    items.publish(published)
    assert live_state(items) == again == _fresh(items, published)


# --- operations' usages in the engine input ---------------------------------------------------


def _operation() -> Operation:
    from ytsched.config.operation import OperationSpec

    spec = OperationSpec.model_validate(
        {
            "tasks": {
                "a": {"job_count": 30, "cpu_limit": 1.5, "memory_limit": 3 * 2**30},
                "b": {"job_count": 30, "cpu_limit": 0.1, "memory_limit": 7},
            }
        }
    )
    operation = Operation("op", user="u", operation_type="vanilla", spec=spec, start_time=0.0)
    operation.finish_starting(0.0)
    return operation


_JOB_ACTIONS = st.tuples(
    st.sampled_from(["start", "complete", "fail", "abort", "release"]),
    st.integers(min_value=0, max_value=100),
    st.sampled_from(["t", "u", None]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_JOB_ACTIONS, max_size=4), max_size=40))
def test_memoized_usage_is_the_operation_usage(
    updates: list[list[tuple[str, int, str | None]]],
) -> None:
    """Whatever happens to the jobs between two updates (several starts and ends, releases,
    jobs of other trees), the memoized usage is bit for bit ``Operation.resource_usage``, and
    the memo answers when nothing happened."""
    operation = _operation()
    memo: UsageMemo = {}
    for actions in updates:
        for action, pick, tree in actions:
            running = list(operation.running_jobs.values())
            if action == "start":
                task = "a" if pick % 2 else "b"
                if operation.tasks[task].waiting:
                    operation.start_job(task, 1.0, tree=tree)
            elif action == "release" and running:
                operation.release_job_usage(running[pick % len(running)])
            elif running:
                job: Job = running[pick % len(running)]
                getattr(operation, f"{action}_job")(job.id, 2.0)
        fresh: UsageMemo = {}
        before = dict(memo)
        ended, pending, needed = task_figures(operation)
        usage = _memoized_usage(operation, "t", memo, fresh, ended)
        expected: Vector = operation.resource_usage("t")
        assert repr(usage) == repr(expected)
        assert pending == operation.pending_job_count
        assert repr(needed) == repr(operation.needed_resources())
        assert ended == sum(
            t.completed_count + t.failed_count + t.aborted_count for t in operation.tasks.values()
        )
        if not actions and "op" in before:
            assert usage is before["op"][4]
        memo.clear()
        memo.update(fresh)
