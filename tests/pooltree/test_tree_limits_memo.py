"""``PoolTrees.tree_resource_limits`` reuses its last sum while no node changed.

The memo is keyed on a process-wide count of node changes (every assignment to a ``Node``
attribute, every registration and removal).  Random sequences of node registrations,
removals, tag and limit changes and tree filter changes (which move nodes between trees or
into the error state) compare the memoized answer with a sum from scratch after every step,
bit for bit (``repr``, so ``-0.0`` and ``0.0`` differ).
"""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.pooltree import PoolTrees, SchedulerError

_AMOUNTS = st.sampled_from([0.0, 0.1, 0.2, 0.3, 1.0, 3.0, 1e16, 1e-300])
_MEMORY = st.sampled_from([0, 1, 3, 2**40, 10**17 + 1])
_TAGS = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)
_FILTERS = st.sampled_from(["a", "b", "!a", "a | b", "c", ""])

_STEP = st.one_of(
    st.tuples(st.just("register"), st.integers(0, 5), _TAGS, _AMOUNTS, _MEMORY),
    st.tuples(st.just("unregister"), st.integers(0, 5)),
    st.tuples(st.just("tags"), st.integers(0, 5), _TAGS),
    st.tuples(st.just("limits"), st.integers(0, 5), _AMOUNTS, _MEMORY),
    st.tuples(st.just("filter"), st.sampled_from(["x", "y"]), _FILTERS),
)


def _apply(trees: PoolTrees, step: tuple[object, ...]) -> None:
    kind = step[0]
    address = f"n{step[1]}"
    if kind == "register" and address not in trees.nodes:
        _, _, tags, cpu, memory = step
        trees.register_node(address, tags, {"cpu": cpu, "user_memory": memory})  # type: ignore[arg-type]
    elif kind == "unregister" and address in trees.nodes:
        trees.unregister_node(address)
    elif kind == "tags" and address in trees.nodes:
        trees.set_node_tags(address, step[2])  # type: ignore[arg-type]
    elif kind == "limits" and address in trees.nodes:
        trees.set_node_resource_limits(address, {"cpu": step[2], "user_memory": step[3]})
    elif kind == "filter":
        # A filter that would put a node in two trees is refused.
        with contextlib.suppress(SchedulerError):
            trees.update_tree_config(str(step[1]), {"node_tag_filter": step[2]})


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=30))
def test_memoized_tree_limits_are_the_sum_from_scratch(steps: list[tuple[object, ...]]) -> None:
    trees = PoolTrees()
    trees.create_tree("x", {"node_tag_filter": "a"})
    trees.create_tree("y", {"node_tag_filter": "b"})
    for step in steps:
        _apply(trees, step)
        for name in ("x", "y"):
            assert repr(trees.tree_resource_limits(name)) == repr(trees._sum_limits(name))
            # Asked again with nothing changed: the memoized answer, still the same.
            assert repr(trees.tree_resource_limits(name)) == repr(trees._sum_limits(name))


def test_a_node_changed_in_place_is_seen() -> None:
    """Assigning to a node's attributes (as the service's and simulator's actions do through
    ``PoolTrees``) invalidates the memo, whoever assigns."""
    trees = PoolTrees()
    trees.create_tree("x")
    trees.register_node("n0", [], {"cpu": 2.0})
    assert trees.tree_resource_limits("x") == trees.nodes["n0"].resource_limits
    trees.nodes["n0"].resource_limits = (1.0, 5.0, 0.0, 0.0, 0.0)
    assert trees.tree_resource_limits("x") == (1.0, 5.0, 0.0, 0.0, 0.0)
    trees.nodes["n0"].state = "error"
    assert trees.tree_resource_limits("x") == (0.0, 0.0, 0.0, 0.0, 0.0)
