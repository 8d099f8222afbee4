"""Disposing a replaced state leaves the operations the new state took over alone.

``build_tree_state`` counts the operations of the replaced state it hands on (the very
objects); when that is all of them, :meth:`TreeState.dispose` visits none (``kept_all``).
Either way, an operation handed on keeps its links and one that left is detached.
"""

from __future__ import annotations

from tests.scheduling.helpers import Cluster, vanilla
from ytsched.scheduling.state import TreeState


def _state(cluster: Cluster) -> TreeState:
    return cluster.scheduler.ledger.tree_states["physical"]


def test_operations_handed_on_keep_their_links_and_those_gone_are_detached() -> None:
    cluster = Cluster(nodes=2)
    cluster.pool("a")
    cluster.operation("op1", vanilla("a", jobs=4))
    cluster.operation("op2", vanilla("a", jobs=4))
    cluster.update(1.0)
    cluster.heartbeat("n1", 1.5)
    cluster.update(2.0)
    first = _state(cluster)
    cluster.update(3.0)
    second = _state(cluster)
    assert second is not first
    for name, op in first.operations.items():
        assert second.operations[name] is op  # every operation handed on: none detached
        assert op.element.parent is second.elements["a"]
        assert op.element.operation is op
    gone = second.operations["op2"]
    cluster.trees.abort_operation("op2", now=3.5)
    cluster.update(4.0)
    third = _state(cluster)
    assert "op2" not in third.operations
    assert gone.element.parent is None and gone.element.operation is None
    kept = third.operations["op1"]
    assert kept is second.operations["op1"]
    assert kept.element.parent is third.elements["a"] and kept.element.operation is kept
