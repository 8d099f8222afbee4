"""The best-leaf descent: which operation gets the next allocation on a heartbeat.

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

The heaps live in native code (``src/native/selector.cpp``, :class:`NativeSelector`): elements
are integer ids over flat arrays, and the sifts, the descent, activation and the refresh up the
path after a start or an end run there, one call from Python each (they were a third of the
interpreter's work per allocation started).  The native heaps make the same comparisons in the
same order as the Python ones they replaced (``tests/scheduling/selector_reference.py``, which
the tests run side by side), so every heap is laid out as before.  :class:`SelectorNode` is the
Python handle of one id: its element, parent and order, and the native fields as properties.

The same structure serves the regular stage (one selector per tree over every schedulable
operation) and the preemptive stages (one per stage over the operations of its priority, the
subtree they induce, as ``BuildOperationSubsetInducedSubtree`` does).  All are rebuilt at each
fair-share update and kept current as usage changes; stage-local deactivations are undone after
the stage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ytsched.extensions import load_extension
from ytsched.resources import Vector

if TYPE_CHECKING:
    from ytsched.scheduling._selector import NativeSelector
    from ytsched.scheduling.satisfaction import ShareView
    from ytsched.scheduling.state import ElementState


_NATIVE = load_extension(
    "ytsched.scheduling._selector", "YTSCHED_SELECTOR_LIBRARY", "the native selector"
)
"""The compiled heaps (``YTSCHED_SELECTOR_LIBRARY`` loads another build of them, see
:mod:`ytsched.extensions`) and the usage sums that feed them (``src/native/usage_sums.cpp``)."""

_NATIVE_SELECTOR: type[NativeSelector] = _NATIVE.NativeSelector

add_usage: Callable[[ElementState, Vector], None] = _NATIVE.add_usage
"""``add_usage(element, delta)``: ``usage += delta`` on ``element`` and every ancestor, each
sum as the interpreter computes it (``src/native/usage_sums.cpp``)."""

sum_usages: Callable[[list[tuple[ElementState, Vector]]], None] = _NATIVE.sum_usages
"""``sum_usages(pairs)``: :func:`add_usage` for each ``(element, delta)`` in order, with each
element's usage written once at the end (the same doubles: each usage is its own accumulator
and receives the same additions in the same order); the post-update's fold of operations'
usages into their ancestors in one call."""

scan: Callable[..., tuple[int, Vector]] = _NATIVE.scan
"""The preemptible lists' classification loop (``preemptible._scan``)."""

vadd: Callable[[Vector, Vector], Vector] = _NATIVE.vadd
""":func:`ytsched.resources.vadd` natively (the same five sums in order)."""

vsub: Callable[[Vector, Vector], Vector] = _NATIVE.vsub
""":func:`ytsched.resources.vsub` natively (the same five differences in order)."""

vneg: Callable[[Vector], Vector] = _NATIVE.vneg
"""``(-v[0], ..., -v[4])`` natively."""

fits: Callable[[Vector, Vector], bool] = _NATIVE.fits
"""``satisfaction.fits``."""

local_satisfaction: Callable[[ShareView, Vector], float] = _NATIVE.local_satisfaction
"""``ShareView.local_satisfaction(view, usage)`` (its body)."""

apply_usage: Callable[[ElementState, Vector, object], None] = _NATIVE.apply_usage
"""``apply_usage(element, delta, core)``: :func:`add_usage`, then the element's ``local_sat``
from :func:`local_satisfaction` and, when it has a node, ``core.refresh(node.id, sat)`` (see
``TreeState.apply_usage_delta``), in one call."""

walk_passes: Callable[..., float | None] = _NATIVE.walk_passes
"""``scheduler.last_pass_time``'s tick walk for floats (``NotImplemented`` for anything else:
the caller then walks in Python)."""

restart_setup: Callable[[Vector], None] = _NATIVE.restart_setup
restart: Callable[..., tuple[int, Vector, int, Vector]] = _NATIVE.restart
"""``preemptible._restart`` (``src/native/preempt.cpp``); ``restart_setup`` gives it ``ZERO``."""

template_setup: Callable[..., None] = _NATIVE.template_setup
template_from_shares: Callable[..., Any] = _NATIVE.template_from_shares
"""``native_template.template_from_shares`` (``src/native/preempt.cpp``); ``template_setup``
gives it the classes it fills.  Every native function is taken from this one loaded module:
importing ``_selector`` elsewhere would load the installed build beside the one
``YTSCHED_SELECTOR_LIBRARY`` names (the sanitizer job's)."""


class SelectorNode:
    """An element's place in one selector: the handle of its native id."""

    __slots__ = ("core", "element", "id", "order", "owner", "parent")

    def __init__(
        self,
        owner: Selector,
        element: ElementState,
        parent: SelectorNode | None,
        order: int,
        node_id: int,
    ) -> None:
        self.owner: Selector | None = owner
        """The selector (``None`` once disposed: it holds its nodes, they hold it)."""
        self.core = owner.core
        self.element = element
        self.parent = parent
        self.order = order
        self.id = node_id

    @property
    def sat(self) -> float:
        """Operation: its satisfaction; pool: that of its best active child (its own local
        satisfaction while it has none)."""
        return self.core.sat(self.id)

    @sat.setter
    def sat(self, value: float) -> None:
        self.core.set_sat(self.id, value)

    @property
    def key(self) -> tuple[float, int]:
        """``(sat, order)``: the heap order."""
        return (self.core.sat(self.id), self.order)

    @property
    def pos(self) -> int:
        """Index in the parent's heap; -1 while not there (inactive)."""
        return self.core.pos(self.id)

    @property
    def self_active(self) -> bool:
        """The element's own eligibility (an operation may schedule; a pool matches the node)."""
        return self.core.self_active(self.id)

    @self_active.setter
    def self_active(self, value: bool) -> None:
        self.core.set_self_active(self.id, value)

    @property
    def heap(self) -> list[SelectorNode]:
        """Active children in heap order (pools only; a copy, for diagnostics and tests)."""
        owner = self.owner
        if owner is None:
            return []
        nodes = owner.nodes
        return [nodes[child] for child in self.core.heap(self.id)]


class Selector:
    """Active elements of (part of) a tree, ordered for the best-leaf descent."""

    def __init__(self, root: ElementState, *, indexed: bool = False) -> None:
        self.core = _NATIVE_SELECTOR(root.local_sat)
        self.nodes: list[SelectorNode] = []
        """Id -> handle."""
        self.root = SelectorNode(self, root, None, 0, 0)
        self.nodes.append(self.root)
        self.index: dict[str, SelectorNode] | None = {} if indexed else None
        """Element name -> node, for selectors whose nodes are not stored on the elements."""

    def add(self, element: ElementState, parent: SelectorNode, order: int) -> SelectorNode:
        """A new, inactive node under ``parent``."""
        node_id = self.core.add(parent.id, order, element.is_operation, element.local_sat)
        node = SelectorNode(self, element, parent, order, node_id)
        self.nodes.append(node)
        if self.index is not None:
            self.index[element.name] = node
        return node

    def node_for(self, element: ElementState) -> SelectorNode | None:
        if self.index is not None:
            return self.index.get(element.name)
        return element.node

    def best_leaf(self) -> ElementState | None:
        """The operation the descent picks, or ``None`` when nothing is active."""
        leaf = self.core.best_leaf()
        return None if leaf < 0 else self.nodes[leaf].element

    def any_active(self) -> bool:
        """Is any operation active (the root's heap not empty)?"""
        return self.core.best_leaf() >= 0

    def is_active(self, node: SelectorNode) -> bool:
        return self.core.is_active(node.id)

    def activate(self, node: SelectorNode) -> None:
        self.core.activate(node.id)

    def deactivate(self, node: SelectorNode) -> None:
        self.core.deactivate(node.id)

    def refresh(self, node: SelectorNode) -> None:
        """An operation's satisfaction changed (to its element's ``local_sat``): reposition it
        and its ancestors."""
        self.core.refresh(node.id, node.element.local_sat)

    def sync_own_sats(self) -> None:
        """Pools' local satisfactions changed after the build (an update's slices): a pool
        left without active children takes its element's current one, as the build does."""
        core = self.core
        for node in self.nodes:
            core.set_own_sat(node.id, node.element.local_sat)

    def dispose(self) -> None:
        """Break the selector's reference cycles (it holds its nodes, they hold it)."""
        for node in self.nodes:
            node.owner = None
            node.parent = None
        self.nodes = []
        if self.index is not None:
            self.index = {}
