"""The pure-Python selector that the native one replaced: the reference its tests compare with.

This is ``src/ytsched/scheduling/selector.py`` as it was before the heaps moved to
``src/native/selector.cpp``; the native heaps must make the same comparisons in the same
order, so the tests demand the same layout of every heap, not only the same best leaf.

The best-leaf descent: which operation gets the next allocation on a heartbeat.

YTsaurus keeps per-heartbeat *dynamic attributes* (``TDynamicAttributesManager`` and
``TSchedulableChildSet`` in
``yt/yt/server/scheduler/strategy/policy/scheduling_policy_detail.cpp``):

* an operation is *active* if it may schedule now; its satisfaction is its local satisfaction
  ratio on live usage;
* a pool is active if one of its children is; its satisfaction is that of its *best active
  child*, and so is its best leaf;
* the best child is active before inactive, then the lowest satisfaction.

Starting at the root and following best children gives the operation to try.  After every
start the operation's usage grows, its satisfaction changes and the choice is re-made up the
path; an operation that cannot start on this node is deactivated for the rest of the stage.

Here every pool keeps its *active* children in an indexed binary heap keyed by
``(satisfaction, order)``, so a change costs O(log children) per level.  YTsaurus leaves ties
unspecified (heap or first-found); ours are deterministic: equal satisfaction goes to the lower
``order``, which is the FIFO index in FIFO pools and otherwise child pools in creation order
before operations in attach order.

The same structure serves the regular stage (one selector per tree over every schedulable
operation) and the preemptive stages (one per stage over the operations of its priority, the
subtree they induce, as ``BuildOperationSubsetInducedSubtree`` does).  All are rebuilt at each
fair-share update and kept current as usage changes; stage-local deactivations are undone after
the stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ytsched.scheduling.state import ElementState


class SelectorNode:
    """An element's place in one selector."""

    __slots__ = ("element", "heap", "key", "order", "parent", "pos", "sat", "self_active")

    def __init__(self, element: ElementState, parent: SelectorNode | None, order: int) -> None:
        self.element = element
        self.parent = parent
        self.order = order
        self.heap: list[SelectorNode] = []
        """Active children (pools only)."""
        self.pos = -1
        """Index in the parent's heap; -1 while not there (inactive)."""
        self.sat = element.local_sat
        """Operation: its satisfaction; pool: that of its best active child."""
        self.key = (self.sat, order)
        """``(sat, order)``: the heap order."""
        self.self_active = False
        """The element's own eligibility (an operation may schedule; a pool matches the node)."""


def _sift_up(heap: list[SelectorNode], index: int) -> None:
    item = heap[index]
    key = item.key
    while index > 0:
        parent_index = (index - 1) >> 1
        parent = heap[parent_index]
        if not key < parent.key:
            break
        heap[index] = parent
        parent.pos = index
        index = parent_index
    heap[index] = item
    item.pos = index


def _sift_down(heap: list[SelectorNode], index: int) -> None:
    size = len(heap)
    item = heap[index]
    key = item.key
    while True:
        child = 2 * index + 1
        if child >= size:
            break
        candidate = heap[child]
        right = child + 1
        if right < size and heap[right].key < candidate.key:
            child = right
            candidate = heap[right]
        if not candidate.key < key:
            break
        heap[index] = candidate
        candidate.pos = index
        index = child
    heap[index] = item
    item.pos = index


def _fix(heap: list[SelectorNode], index: int) -> None:
    """Restore the heap order around ``index`` (a sift down from a leaf is a no-op, skipped)."""
    if index > 0 and heap[index].key < heap[(index - 1) >> 1].key:
        _sift_up(heap, index)
    elif 2 * index + 1 < len(heap):
        _sift_down(heap, index)


class Selector:
    """Active elements of (part of) a tree, ordered for the best-leaf descent."""

    def __init__(self, root: ElementState, *, indexed: bool = False) -> None:
        self.root = SelectorNode(root, None, 0)
        self.root.self_active = True
        self.index: dict[str, SelectorNode] | None = {} if indexed else None
        """Element name -> node, for selectors whose nodes are not stored on the elements."""

    def add(self, element: ElementState, parent: SelectorNode, order: int) -> SelectorNode:
        """A new, inactive node under ``parent``."""
        node = SelectorNode(element, parent, order)
        if self.index is not None:
            self.index[element.name] = node
        return node

    def node_for(self, element: ElementState) -> SelectorNode | None:
        if self.index is not None:
            return self.index.get(element.name)
        return element.node

    def best_leaf(self) -> ElementState | None:
        """The operation the descent picks, or ``None`` when nothing is active."""
        node = self.root
        if not node.heap:
            return None
        while node.heap:
            node = node.heap[0]
        return node.element

    def is_active(self, node: SelectorNode) -> bool:
        return node.pos >= 0 or (node.parent is None and bool(node.heap))

    # --- activity -------------------------------------------------------------------------

    def activate(self, node: SelectorNode) -> None:
        if node.self_active:
            return
        node.self_active = True
        if node.element.is_operation or node.heap:
            self._insert(node)

    def deactivate(self, node: SelectorNode) -> None:
        if not node.self_active:
            return
        node.self_active = False
        if node.pos >= 0:
            self._remove(node)

    def _insert(self, node: SelectorNode) -> None:
        while True:
            parent = node.parent
            if parent is None:
                return
            heap = parent.heap
            was_empty = not heap
            index = len(heap)
            heap.append(node)
            # A sift up that would not move the node only records its position.
            if index > 0 and node.key < heap[(index - 1) >> 1].key:
                _sift_up(heap, index)
            else:
                node.pos = index
            if was_empty:
                parent.sat = node.sat
                parent.key = (node.sat, parent.order)
                if parent.self_active and parent.parent is not None:
                    node = parent
                    continue
                return
            self._top_changed(parent)
            return

    def _remove(self, node: SelectorNode) -> None:
        while True:
            parent = node.parent
            assert parent is not None
            heap = parent.heap
            index = node.pos
            last = heap.pop()
            node.pos = -1
            if last is not node:
                heap[index] = last
                last.pos = index
                _fix(heap, index)
            if heap:
                self._top_changed(parent)
                return
            parent.sat = parent.element.local_sat
            parent.key = (parent.sat, parent.order)
            if parent.pos >= 0:
                node = parent
                continue
            return

    # --- satisfaction changes -------------------------------------------------------------

    def refresh(self, node: SelectorNode) -> None:
        """An operation's satisfaction changed: reposition it and its ancestors.

        Runs after every start and end of an allocation: :func:`_fix` is written out here
        (the same comparisons and the same sifts in the same order, so the heaps end up laid
        out exactly as before), and a sift down from a position without children is skipped
        (it would leave the item where it is)."""
        sat = node.element.local_sat
        if sat == node.sat:
            return
        node.sat = sat
        key = (sat, node.order)
        node.key = key
        index = node.pos
        if index < 0:
            return
        parent = node.parent
        assert parent is not None
        heap = parent.heap
        if index > 0 and key < heap[(index - 1) >> 1].key:
            _sift_up(heap, index)
        elif 2 * index + 1 < len(heap):
            _sift_down(heap, index)
        if heap[0].sat != parent.sat:
            self._top_changed(parent)

    def _top_changed(self, node: SelectorNode) -> None:
        """The top of ``node``'s heap may have changed: propagate its satisfaction upward."""
        while True:
            sat = node.heap[0].sat
            if sat == node.sat:
                return
            node.sat = sat
            key = (sat, node.order)
            node.key = key
            index = node.pos
            if index < 0:
                return
            parent = node.parent
            assert parent is not None
            heap = parent.heap
            if index > 0 and key < heap[(index - 1) >> 1].key:
                _sift_up(heap, index)
            elif 2 * index + 1 < len(heap):
                _sift_down(heap, index)
            node = parent
