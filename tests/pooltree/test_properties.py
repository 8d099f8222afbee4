"""Property tests: maintained counters always equal a recount from scratch.

Random sequences of starts, finishes, pool changes, pool moves and pool/tree config changes;
after every step the counters, pending queues, lightweight flags and ephemeral pools must be
consistent (``check_invariants``), and a refused step must leave the tree exactly as it was.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pooltree.helpers import state, vanilla
from ytsched.config import ConfigError
from ytsched.pooltree import PoolTrees, SchedulerError

POOLS = ["a", "b", "a1", "a2", "b1", "q"]
REQUESTS = [*POOLS, "shared", "eph1", "eph2", None]
USERS = ["alice", "bob", "carol"]


def _build() -> PoolTrees:
    trees = PoolTrees()
    tree = trees.create_tree(
        "t", {"max_running_operation_count": 6, "max_ephemeral_pools_per_user": 2}
    )
    trees.set_default_tree("t")
    tree.create_pool("a", config={"max_running_operation_count": 3, "max_operation_count": 8})
    tree.create_pool("b", config={"max_running_operation_count": 2})
    tree.create_pool("a1", "a", {"max_running_operation_count": 2})
    tree.create_pool("a2", "a")
    tree.create_pool("b1", "b", {"max_running_operation_count": 1, "max_operation_count": 4})
    tree.create_pool(
        "q",
        config={
            "mode": "fifo",
            "enable_lightweight_operations": True,
            "max_running_operation_count": 1,
        },
    )
    tree.create_pool(
        "shared",
        config={
            "create_ephemeral_subpools": True,
            "ephemeral_subpool_config": {"max_running_operation_count": 1},
        },
    )
    return trees


action = st.one_of(
    st.tuples(
        st.just("start"),
        st.sampled_from(REQUESTS),
        st.sampled_from(USERS),
        st.sampled_from(["vanilla", "map"]),
    ),
    st.tuples(
        st.just("finish"), st.integers(0, 40), st.sampled_from(["complete", "abort", "fail"])
    ),
    st.tuples(st.just("change"), st.integers(0, 40), st.sampled_from(REQUESTS[:-1])),
    st.tuples(
        st.just("move"),
        st.sampled_from(["a1", "a2", "b1", "b"]),
        st.sampled_from([None, "a", "b", "a2", "b1"]),
    ),
    st.tuples(
        st.just("limits"),
        st.sampled_from(POOLS),
        st.one_of(st.none(), st.integers(0, 4)),
        st.one_of(st.none(), st.integers(0, 8)),
    ),
    st.tuples(st.just("lightweight"), st.booleans(), st.sampled_from(["fifo", "fair_share"])),
    st.tuples(st.just("subpools"), st.booleans()),
    st.tuples(st.just("tree"), st.integers(1, 8), st.integers(1, 3)),
    st.tuples(st.just("scan")),
)


def _run(trees: PoolTrees, step: tuple[Any, ...], counter: list[int], now: float) -> None:
    tree = trees.tree("t")
    kind = step[0]
    active = [op for op in trees.operations.values() if not op.state.is_final]
    if kind == "start":
        _, pool, user, op_type = step
        counter[0] += 1
        spec: dict[str, Any] = (
            vanilla(pool) if op_type == "vanilla" else ({"pool": pool} if pool else {})
        )
        trees.start_operation(
            f"op{counter[0]}", user=user, spec=spec, operation_type=op_type, now=now
        )
    elif kind == "finish" and active:
        operation = active[step[1] % len(active)]
        finish = {
            "complete": trees.complete_operation,
            "abort": trees.abort_operation,
            "fail": trees.fail_operation,
        }
        finish[step[2]](operation.id, now=now)
    elif kind == "change" and active:
        operation = active[step[1] % len(active)]
        trees.update_operation_parameters(operation.id, {"pool": step[2]}, now=now)
    elif kind == "move":
        tree.move_pool(step[1], step[2], now=now)
    elif kind == "limits":
        tree.update_pool(
            step[1],
            {"max_running_operation_count": step[2], "max_operation_count": step[3]},
            now=now,
        )
    elif kind == "lightweight":
        tree.update_pool("q", {"enable_lightweight_operations": step[1], "mode": step[2]}, now=now)
    elif kind == "subpools":
        tree.update_pool("shared", {"create_ephemeral_subpools": step[1]}, now=now)
    elif kind == "tree":
        trees.update_tree_config(
            "t",
            {"max_running_operation_count": step[1], "max_ephemeral_pools_per_user": step[2]},
            now=now,
        )
    elif kind == "scan":
        trees.scan_pending_operations(now=now)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action, min_size=1, max_size=35))
def test_counters_always_equal_a_recount(steps: list[tuple[Any, ...]]) -> None:
    trees = _build()
    tree = trees.tree("t")
    counter = [0]
    for index, step in enumerate(steps):
        before = state(tree)
        try:
            _run(trees, step, counter, float(index))
        except (SchedulerError, ConfigError):
            assert state(tree) == before, f"refused {step} changed the tree"
        problems = tree.check_invariants()
        assert problems == [], f"after {step}: {problems}"
        for operation in trees.operations.values():
            if operation.state.is_final:
                assert operation.id not in tree.operations
            else:
                entry = tree.operations[operation.id]
                expected = "running" if entry.running else "pending"
                assert operation.state.value == expected
        # a pending operation always has a full pool on its path (otherwise it would run)
        for entry in tree.operations.values():
            if not entry.running:
                assert any(
                    level.running_operation_count >= tree.max_running_operation_count(level)
                    for level in entry.pool.ancestors()
                )
