"""The native selector against the pure-Python one it replaced, heap by heap.

Both get the same tree and the same random sequence of refreshes, activations and
deactivations (operations and pools); after every step every node must have the same
satisfaction (bit for bit), position, activity and heap layout, and the descent the same leaf.
Equal satisfactions are common in the draws, so ties are broken by order as in the reference.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling import selector_reference as reference
from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.selector import Selector, SelectorNode
from ytsched.scheduling.state import ElementState

VIEW = ShareView.create((0.1,) * 5, (0.2,) * 5, (0.0,) * 5, (1.0,) * 5)
SATS = [0.0, -0.0, 0.25, 0.5, 0.5, 1.0, 2.0, 1e9, 0.1 + 0.2, 0.3, *(i / 16 for i in range(1, 16))]


def _element(name: str, parent: ElementState | None, operation: bool) -> ElementState:
    return ElementState(
        name=name, is_operation=operation, parent=parent, view=VIEW, usage=(0.0,) * 5
    )


def _native_dump(node: SelectorNode) -> object:
    return (
        node.element.name,
        repr(node.sat),
        node.pos,
        node.self_active,
        [_native_dump(child) for child in node.heap],
    )


def _reference_dump(node: reference.SelectorNode) -> object:
    return (
        node.element.name,
        repr(node.sat),
        node.pos,
        node.self_active,
        [_reference_dump(child) for child in node.heap],
    )


ACTIONS = ["sat", "sat", "on", "on", "off", "pool_on", "pool_off", "pool_sat"]


@st.composite
def _scenario(draw: st.DrawFn) -> tuple[list[list[int]], list[tuple[str, int, float]]]:
    shape = draw(
        st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=4), min_size=1, max_size=3)
    )
    # Long runs of steps (a seeded generator: hypothesis keeps drawn lists short), so that
    # heaps fill up and removals from their middle need sifts up as well as down.
    rng = draw(st.randoms(use_true_random=False))
    steps = [
        (rng.choice(ACTIONS), rng.randrange(500), rng.choice(SATS))
        for _ in range(draw(st.integers(0, 300)))
    ]
    return shape, steps


@settings(max_examples=200, deadline=None)
@given(_scenario())
def test_native_heaps_equal_reference(
    data: tuple[list[list[int]], list[tuple[str, int, float]]],
) -> None:
    shape, steps = data
    root = _element("<Root>", None, False)
    native = Selector(root)
    ref = reference.Selector(root)
    pools: list[tuple[ElementState, SelectorNode, reference.SelectorNode]] = []
    operations: list[tuple[ElementState, SelectorNode, reference.SelectorNode]] = []
    # Three levels: top pools, their child pools (some empty), operations in those.
    for top_index, children in enumerate(shape):
        top = _element(f"p{top_index}", root, False)
        top_native = native.add(top, native.root, top_index)
        top_ref = ref.add(top, ref.root, top_index)
        top_native.self_active = top_ref.self_active = True
        pools.append((top, top_native, top_ref))
        for child_index, count in enumerate(children):
            pool = _element(f"p{top_index}.{child_index}", top, False)
            pool_native = native.add(pool, top_native, child_index)
            pool_ref = ref.add(pool, top_ref, child_index)
            pool_native.self_active = pool_ref.self_active = True
            pools.append((pool, pool_native, pool_ref))
            for op_index in range(count):
                op = _element(f"p{top_index}.{child_index}o{op_index}", pool, True)
                # the order of operations after child pools, as the build gives it
                order = op_index % 3
                operations.append(
                    (op, native.add(op, pool_native, order), ref.add(op, pool_ref, order))
                )
    for action, index, value in steps:
        if action.startswith("pool"):
            element, native_node, ref_node = pools[index % len(pools)]
        elif operations:
            element, native_node, ref_node = operations[index % len(operations)]
        else:
            continue
        if action == "sat":
            element.local_sat = value
            native.refresh(native_node)
            ref.refresh(ref_node)
        elif action in ("on", "pool_on"):
            native.activate(native_node)
            ref.activate(ref_node)
        elif action in ("off", "pool_off"):
            native.deactivate(native_node)
            ref.deactivate(ref_node)
        else:
            # A pool's own satisfaction moves (an update's slices): synced before it is read.
            element.local_sat = value
            native.sync_own_sats()
        assert _native_dump(native.root) == _reference_dump(ref.root)
        best_native = native.best_leaf()
        best_ref = ref.best_leaf()
        assert (best_native.name if best_native else None) == (best_ref.name if best_ref else None)
        for _, native_node, ref_node in pools + operations:
            assert native.is_active(native_node) == ref.is_active(ref_node)
            # Also nodes outside every heap (a pool left without active children shows its
            # own satisfaction, as the preemptive selectors' index dumps read it).
            assert repr(native_node.sat) == repr(ref_node.sat)
            assert native_node.self_active == ref_node.self_active


def test_disposed_selector_has_no_links() -> None:
    root = _element("<Root>", None, False)
    selector = Selector(root)
    pool = _element("p", root, False)
    pool_node = selector.add(pool, selector.root, 0)
    pool_node.self_active = True
    op = _element("o", pool, True)
    op_node = selector.add(op, pool_node, 0)
    selector.activate(op_node)
    assert selector.best_leaf() is op
    assert [child.element.name for child in selector.root.heap] == ["p"]
    selector.dispose()
    assert op_node.parent is None
    assert op_node.owner is None
    assert selector.root.heap == []
