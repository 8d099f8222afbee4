"""The ledger reads an allocation's record through its operation (``op.record``) on the
per-allocation paths (``Ledger.remove``, ``Ledger.release_usage``): that is exact only while
every operation of a tree's current state holds the very record ``Ledger.records`` has for it.
Checked after every heartbeat and update of the random scenarios of the fast-path tests
(starvation, preemption, graceful operations, tag filters, limits, operations and nodes that
come and go)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.test_fast_paths import _random_document
from ytsched.scheduling import Scheduler
from ytsched.simulator import load_scenario
from ytsched.simulator.engine import Simulation


def _check(scheduler: Scheduler) -> int:
    """Assert the invariant; returns how many operations it covered."""
    ledger = scheduler.ledger
    checked = 0
    for tree, state in ledger.tree_states.items():
        records = ledger.records.get(tree, {})
        for operation_id, op in state.operations.items():
            assert records.get(operation_id) is op.record, (tree, operation_id)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", range(12))
def test_current_operations_hold_the_ledger_records(seed: int) -> None:
    simulation = Simulation(load_scenario(_random_document(seed)))
    scheduler = simulation.scheduler
    checked = [0]
    process = scheduler.process_heartbeat_of
    update = scheduler.update

    def heartbeat(*fields: Any) -> Any:
        response = process(*fields)
        checked[0] += _check(scheduler)
        return response

    def updated(now: float) -> Any:
        results = update(now)
        checked[0] += _check(scheduler)
        return results

    scheduler.process_heartbeat_of = heartbeat  # type: ignore[method-assign]
    scheduler.update = updated  # type: ignore[method-assign]
    simulation.run()
    assert checked[0] > 0
