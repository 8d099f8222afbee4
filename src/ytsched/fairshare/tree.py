"""Build the element tree of one update from a snapshot, checking its structure."""

from __future__ import annotations

from collections.abc import Container

from ytsched.errors import SnapshotError
from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import OperationSpec, SchedulingMode, TreeSnapshot
from ytsched.resources import GPU_INDEX, dominates


def build_tree(snapshot: TreeSnapshot) -> tuple[Element, dict[str, Element], dict[str, Element]]:
    """Link pools and operations into a tree rooted at the single parentless pool.

    Raises :class:`~ytsched.errors.SnapshotError` for duplicate names, missing parents, a
    missing or second root, FIFO pools with child pools, and usage above demand.
    """
    options = snapshot.options
    pools: dict[str, Element] = {}
    root: Element | None = None
    for spec in snapshot.pools:
        if spec.name in pools:
            raise SnapshotError("DuplicateElementName", f"pool {spec.name!r} is defined twice")
        element = Element(
            name=spec.name, is_operation=False, is_root=spec.parent is None, pool=spec
        )
        element.resource_limits = spec.resource_limits
        element.weight = 1.0 if spec.weight is None else spec.weight
        element.integral.accumulated_volume = spec.accumulated_resource_volume
        element.integral.last_share_ratio = spec.last_integral_share_ratio
        pools[spec.name] = element
        if spec.parent is None:
            if root is not None:
                raise SnapshotError(
                    "MultipleRoots",
                    f"pools {root.name!r} and {spec.name!r} both have no parent;"
                    " exactly one root is allowed",
                )
            root = element
            element.resource_limits = snapshot.total_resource_limits
    if root is None:
        raise SnapshotError("MissingRoot", "no pool without a parent: the tree has no root")

    for spec in snapshot.pools:
        if spec.parent is None:
            continue
        parent = pools.get(spec.parent)
        if parent is None:
            raise SnapshotError(
                "UnknownParent", f"pool {spec.name!r}: parent {spec.parent!r} does not exist"
            )
        element = pools[spec.name]
        if parent.mode is SchedulingMode.FIFO:
            raise SnapshotError(
                "FifoPoolWithSubpools",
                f"pool {spec.name!r}: its parent {parent.name!r} is a fifo pool,"
                " and fifo pools may hold only operations",
            )
        element.parent = parent
        parent.children.append(element)
    _check_acyclic(root, pools)

    operations: dict[str, Element] = {}
    for op in snapshot.operations:
        check_operation(op, operations, pools)
        parent = pools[op.parent]
        element = Element(
            name=op.name, is_operation=True, is_root=False, operation=op, parent=parent
        )
        element.weight = op.weight
        element.resource_demand = op.resource_demand
        element.resource_usage = op.resource_usage
        element.resource_limits = op.resource_limits
        element.is_gang_like = op.is_gang or (
            options.consider_vanilla_operations_as_gang and op.operation_type == "vanilla"
        )
        parent.children.append(element)
        operations[op.name] = element

    # Explicit strong-guarantee config per element; the rest is inferred later.
    for element in pools.values():
        pool_spec = element.pool
        assert pool_spec is not None
        explicit = dict(pool_spec.strong_guarantee_resources)
        if options.use_only_gpu_strong_guarantees:
            explicit = {GPU_INDEX: explicit[GPU_INDEX]} if GPU_INDEX in explicit else {}
        element.explicit_strong_guarantee = explicit
    return root, pools, operations


def check_operation(op: OperationSpec, operations: Container[str], pools: Container[str]) -> None:
    """The structural checks of one operation row, shared by both engines' input builders
    (:func:`build_tree` and :func:`ytsched.fairshare.flat.build_flat`), so they refuse the
    same snapshots with the same codes: a name seen before, a parent that is not a pool, usage
    above demand."""
    if op.name in operations or op.name in pools:
        raise SnapshotError("DuplicateElementName", f"element {op.name!r} is defined twice")
    if op.parent not in pools:
        raise SnapshotError(
            "UnknownParent", f"operation {op.name!r}: parent {op.parent!r} does not exist"
        )
    if not dominates(op.resource_demand, op.resource_usage):
        raise SnapshotError(
            "UsageAboveDemand",
            f"operation {op.name!r}: resource_usage exceeds resource_demand"
            " (demand must include usage)",
        )


def _check_acyclic(root: Element, pools: dict[str, Element]) -> None:
    reachable = 0
    stack = [root]
    while stack:
        element = stack.pop()
        reachable += 1
        stack.extend(element.children)
    if reachable != len(pools):
        unreachable = sorted(
            name for name, element in pools.items() if not _reaches_root(element, root)
        )
        raise SnapshotError(
            "ParentCycle",
            "pools form a cycle and never reach the root: " + ", ".join(unreachable[:10]),
        )


def _reaches_root(element: Element, root: Element) -> bool:
    seen: set[int] = set()
    current: Element | None = element
    while current is not None and id(current) not in seen:
        if current is root:
            return True
        seen.add(id(current))
        current = current.parent
    return False
