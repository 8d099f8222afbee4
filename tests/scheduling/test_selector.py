"""The best-leaf descent against a brute-force recomputation (reference §6.2)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.state import ElementState

VIEW = ShareView.create((0.1,) * 5, (0.2,) * 5, (0.0,) * 5, (1.0,) * 5)


def element(name: str, parent: ElementState | None, operation: bool) -> ElementState:
    return ElementState(
        name=name, is_operation=operation, parent=parent, view=VIEW, usage=(0.0,) * 5
    )


def brute_force(
    element_node: SelectorNode, active: dict[str, bool]
) -> tuple[tuple[float, int], ElementState] | None:
    """(key, best leaf) of an active subtree, or None."""
    if element_node.element.is_operation:
        if not active[element_node.element.name]:
            return None
        return (element_node.element.local_sat, element_node.order), element_node.element
    if not active[element_node.element.name]:
        return None
    best: tuple[tuple[float, int], ElementState] | None = None
    for child in children_of[id(element_node)]:
        found = brute_force(child, active)
        if found is None:
            continue
        key = (found[0][0], child.order)
        if best is None or key < best[0]:
            best = (key, found[1])
    if best is None:
        return None
    return (best[0][0], element_node.order), best[1]


children_of: dict[int, list[SelectorNode]] = {}


def check_structure(node: SelectorNode) -> None:
    """Every heap is ordered by key, its items know their positions, keys are ``(sat,
    order)`` and a pool with active children carries the satisfaction of the best one: the
    invariants the incremental sifts must keep (a wrong skip of a sift would break them
    before it changed a best leaf)."""
    assert node.key == (node.sat, node.order)
    heap = node.heap
    for index, item in enumerate(heap):
        assert item.pos == index
        assert item.parent is node
        if index:
            assert not item.key < heap[(index - 1) >> 1].key
        check_structure(item)
    if heap:
        assert node.sat == heap[0].sat
        assert heap[0].key == min(item.key for item in heap)


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[int], list[tuple[str, int, float]]]:
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    steps = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["sat", "on", "off", "pool_on", "pool_off"]),
                st.integers(0, 200),
                st.sampled_from([0.0, 0.25, 0.5, 0.5, 1.0, 2.0, 1e9]),
            ),
            max_size=80,
        )
    )
    return shape, steps


@settings(max_examples=150, deadline=None)
@given(scenario())
def test_best_leaf_matches_brute_force(
    data: tuple[list[int], list[tuple[str, int, float]]],
) -> None:
    shape, steps = data
    children_of.clear()
    root = element("<Root>", None, False)
    selector = Selector(root)
    children_of[id(selector.root)] = []
    operations: list[SelectorNode] = []
    pools: list[SelectorNode] = []
    active: dict[str, bool] = {"<Root>": True}
    # two levels of pools under the root, operations under the second level
    for p, count in enumerate(shape):
        pool = element(f"p{p}", root, False)
        pool_node = selector.add(pool, selector.root, p)
        pool_node.self_active = True
        children_of[id(selector.root)].append(pool_node)
        children_of[id(pool_node)] = []
        pools.append(pool_node)
        active[pool.name] = True
        for o in range(count):
            op = element(f"p{p}o{o}", pool, True)
            op.local_sat = 0.5
            node = selector.add(op, pool_node, o)
            children_of[id(pool_node)].append(node)
            operations.append(node)
            active[op.name] = False
    for action, index, value in steps:
        if action in ("sat", "on", "off"):
            node = operations[index % len(operations)]
            if action == "sat":
                node.element.local_sat = value
                selector.refresh(node)
            elif action == "on":
                selector.activate(node)
                active[node.element.name] = True
            else:
                selector.deactivate(node)
                active[node.element.name] = False
        else:
            pool_node = pools[index % len(pools)]
            if action == "pool_on":
                selector.activate(pool_node)
                active[pool_node.element.name] = True
            else:
                selector.deactivate(pool_node)
                active[pool_node.element.name] = False
        check_structure(selector.root)
        expected = brute_force(selector.root, active)
        found = selector.best_leaf()
        assert (found.name if found else None) == (expected[1].name if expected else None)
