"""Validation of a whole pool layout, run before any change is applied.

A change (new pool, new config, move, rename, new tree config) is applied only if the layout it
would produce passes every rule; otherwise the tree stays exactly as it was.  The rules are
those of the master (``yt/yt/server/master/scheduler_pool_server/scheduler_pool.cpp``,
``scheduler_pool-inl.h``) and of the scheduler's pools config parser
(``yt/yt/server/scheduler/strategy/pools_config_parser.cpp``):

* presets named by a pool exist in the tree's ``pool_config_presets``;
* fifo pools have no child pools (explicit or ephemeral);
* a pool that names any strong-guarantee resource names the tree's main resource;
* integral settings are complete: a burst pool has a flow and a burst guarantee, a relaxed
  pool a flow and no burst guarantee, both naming the main resource; an integral pool's
  children have no flow or burst;
* per resource and for each of strong guarantee, resource flow and burst guarantee: a child may
  set a value only if its parent (other than the root) sets that resource, and the parent's
  value is at least the sum of its children's.  Operation-count limits are not summed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ytsched.config.pool import PoolConfig, apply_presets
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tree import ROOT_POOL_NAME, TreeConfig
from ytsched.pooltree.errors import SchedulerError
from ytsched.resources import RESOURCE_NAMES

SUM_TOLERANCE = 1e-6
"""Slack when comparing a parent's amount with the sum of its children's (cpu is decimal)."""


@dataclass(slots=True)
class LayoutPool:
    """One pool of a proposed layout."""

    name: str
    parent: str | None
    config: PoolConfig
    is_ephemeral: bool = False


def where(pool: str, tree: str) -> str:
    return f"pool {pool!r} in tree {tree!r}"


def validate_pool_name(name: str, tree: str, regex: str) -> None:
    """Names of explicit pools: non-empty, not ``<Root>``, matching the pool-name regex.

    The ``$`` of ephemeral subpools (``pool$user``) is reserved, so explicit names never clash
    with them.
    """
    if not isinstance(name, str) or not name:
        raise SchedulerError("InvalidPoolName", f"tree {tree!r}: pool name must not be empty")
    if name == ROOT_POOL_NAME:
        raise SchedulerError(
            "InvalidPoolName", f"tree {tree!r}: {ROOT_POOL_NAME!r} is reserved for the root"
        )
    if "$" in name or re.fullmatch(regex, name) is None:
        raise SchedulerError(
            "InvalidPoolName",
            f"tree {tree!r}: pool name {name!r} must match {regex!r} (and '$' is reserved for"
            " ephemeral subpools)",
            pool=name,
        )


def _check_integral(name: str, tree: str, config: PoolConfig, main: str) -> None:
    integral = config.integral_guarantees
    kind = integral.guarantee_type
    if kind == "none":
        return
    what = f"{where(name, tree)}: integral_guarantees"
    flow = integral.resource_flow.as_map()
    if main not in flow:
        raise SchedulerError(
            "InvalidIntegralGuarantees",
            f"{what}: a {kind} pool needs resource_flow naming the main resource {main!r}",
            pool=name,
        )
    if kind == "burst" and main not in integral.burst_guarantee_resources.as_map():
        raise SchedulerError(
            "InvalidIntegralGuarantees",
            f"{what}: a burst pool needs burst_guarantee_resources naming the main resource"
            f" {main!r}",
            pool=name,
        )


def validate_layout(
    tree: str, layout: dict[str, LayoutPool], config: TreeConfig
) -> dict[str, PoolConfig]:
    """Check every rule; return the effective (preset-applied) config of every pool.

    ``layout`` must hold the root and list parents before children.
    """
    presets = config.pool_config_presets
    main = config.main_resource
    effective: dict[str, PoolConfig] = {}
    children: dict[str, list[LayoutPool]] = {name: [] for name in layout}
    for pool in layout.values():
        if pool.parent is not None:
            children[pool.parent].append(pool)
        for preset in pool.config.preset_names:
            if preset not in presets:
                known = ", ".join(sorted(presets)) or "none"
                raise SchedulerError(
                    "NoSuchPoolConfigPreset",
                    f"{where(pool.name, tree)}: config preset {preset!r} does not exist in the"
                    f" tree's pool_config_presets (known: {known})",
                    pool=pool.name,
                    preset=preset,
                )
        effective[pool.name] = apply_presets(pool.config, presets)

    for pool in layout.values():
        own = effective[pool.name]
        kids = children[pool.name]
        if kids and own.mode == "fifo":
            raise SchedulerError(
                "FifoPoolWithSubpools",
                f"{where(pool.name, tree)}: a fifo pool cannot have child pools, but it has"
                f" {', '.join(repr(k.name) for k in kids)}",
                pool=pool.name,
            )
        if pool.is_ephemeral or pool.parent is None:
            continue
        guarantee = own.strong_guarantee_resources.as_map()
        if guarantee and main not in guarantee:
            raise SchedulerError(
                "MainResourceNotConfigured",
                f"{where(pool.name, tree)}: strong_guarantee_resources names"
                f" {', '.join(sorted(guarantee))} but not the tree's main resource {main!r}",
                pool=pool.name,
            )
        _check_integral(pool.name, tree, own, main)
        if own.integral_guarantees.guarantee_type != "none":
            for kid in kids:
                kid_integral = effective[kid.name].integral_guarantees
                if (
                    not kid_integral.resource_flow.is_empty()
                    or not kid_integral.burst_guarantee_resources.is_empty()
                ):
                    raise SchedulerError(
                        "InvalidIntegralGuarantees",
                        f"{where(kid.name, tree)}: its parent {pool.name!r} is a"
                        f" {own.integral_guarantees.guarantee_type} pool, so it cannot have"
                        " resource_flow or burst_guarantee_resources",
                        pool=kid.name,
                    )
        if kids:
            _check_children_guarantees(tree, pool.name, own, kids, effective)
    return effective


def _check_children_guarantees(
    tree: str,
    parent: str,
    parent_config: PoolConfig,
    kids: list[LayoutPool],
    effective: dict[str, PoolConfig],
) -> None:
    getters: list[tuple[str, Callable[[PoolConfig], ResourceAmounts]]] = [
        ("strong_guarantee_resources", lambda c: c.strong_guarantee_resources),
        ("integral_guarantees.resource_flow", lambda c: c.integral_guarantees.resource_flow),
        (
            "integral_guarantees.burst_guarantee_resources",
            lambda c: c.integral_guarantees.burst_guarantee_resources,
        ),
    ]
    for option_name, get in getters:
        parent_amounts = get(parent_config).as_map()
        for resource in RESOURCE_NAMES:
            total = 0.0
            setters: list[str] = []
            for kid in kids:
                if kid.is_ephemeral:
                    continue
                value = get(effective[kid.name]).as_map().get(resource)
                if value is None:
                    continue
                if resource not in parent_amounts:
                    raise SchedulerError(
                        "GuaranteeNotConfiguredAtParent",
                        f"{where(kid.name, tree)}: {option_name}.{resource} is explicitly"
                        f" configured at child {kid.name!r} but is not configured at parent"
                        f" {parent!r}",
                        pool=kid.name,
                        parent=parent,
                        option=f"{option_name}.{resource}",
                    )
                if not parent_config.allow_children_guarantees:
                    raise SchedulerError(
                        "ChildrenGuaranteesNotAllowed",
                        f"{where(kid.name, tree)}: {option_name}.{resource} is explicitly"
                        f" configured at child {kid.name!r} but parent {parent!r} does not allow"
                        " children guarantees",
                        pool=kid.name,
                        parent=parent,
                        option=f"{option_name}.{resource}",
                    )
                total += value
                setters.append(kid.name)
            if setters:
                check_children_sum(
                    where(parent, tree),
                    parent,
                    f"{option_name}.{resource}",
                    parent_amounts[resource],
                    total,
                    setters,
                )


def check_children_sum(
    place: str, parent: str, option: str, parent_amount: float, total: float, setters: list[str]
) -> None:
    """A parent's amount must cover the sum of its children's (``GuaranteesExceedParent``).

    The one rule for live pool trees, the simulator's scenarios and ``fair-share`` snapshots.
    """
    if total > parent_amount + SUM_TOLERANCE:
        raise SchedulerError(
            "GuaranteesExceedParent",
            f"{place}: {option} ({parent_amount:g}) is less than the sum of children"
            f" guarantees ({total:g}: {', '.join(repr(s) for s in setters)})",
            pool=parent,
            option=option,
        )
