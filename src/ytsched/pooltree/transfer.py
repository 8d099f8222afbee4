"""``transfer_pool_resources``: move guarantees and operation-count limits between pools.

YTsaurus's ``TransferPoolResources`` (``yt/yt/server/master/scheduler_pool_server/
scheduler_pool_manager.cpp``, ``pool_resources.cpp``; tests in ``yt/yt/tests/integration/
scheduler/``) takes a ``resource_delta`` of

* ``strong_guarantee_resources`` (a resource map),
* ``resource_flow`` and ``burst_guarantee_resources`` (inside ``integral_guarantees``),
* ``max_operation_count`` and ``max_running_operation_count`` (integers),

subtracts it from the source pool and each of its ancestors below the lowest common ancestor of
the two pools, and adds it to the destination pool and each of its ancestors below that ancestor.
The common ancestor itself keeps its values, so a transfer never changes what the subtree as a
whole is promised.  A missing value counts as zero; a value that would become negative, or a
resulting tree that fails validation (children's guarantees above their parent's, running limit
above the operation limit, ...), refuses the whole transfer and changes nothing.

This module only computes the new pool configs; :meth:`PoolTree.set_pool_configs` validates and
installs them together.  Permissions (``write`` on every changed pool) are the service's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ytsched.config.base import ConfigError, parse_config
from ytsched.config.pool import PoolConfig
from ytsched.errors import YtschedError
from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.pool import Pool
from ytsched.pooltree.tree import PoolTree
from ytsched.pooltree.validation import where

RESOURCE_KEYS = ("strong_guarantee_resources", "resource_flow", "burst_guarantee_resources")
COUNT_KEYS = ("max_operation_count", "max_running_operation_count")
DELTA_KEYS = frozenset(RESOURCE_KEYS + COUNT_KEYS)


def _check_delta(delta: object) -> dict[str, Any]:
    if not isinstance(delta, Mapping):
        raise SchedulerError("InvalidArgument", "resource_delta must be a map")
    unknown = sorted(set(delta) - DELTA_KEYS)
    if unknown:
        raise SchedulerError(
            "InvalidArgument",
            f"resource_delta: unknown keys {unknown} (known: {', '.join(sorted(DELTA_KEYS))})",
        )
    for key in RESOURCE_KEYS:
        value = delta.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
        ):
            raise SchedulerError(
                "InvalidArgument", f"resource_delta/{key} must map resources to numbers"
            )
    for key in COUNT_KEYS:
        value = delta.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise SchedulerError("InvalidArgument", f"resource_delta/{key} must be an integer")
    return dict(delta)


def _add_resources(
    current: Mapping[str, Any] | None, delta: Mapping[str, Any], sign: int
) -> dict[str, Any]:
    result = dict(current or {})
    for name, amount in delta.items():
        result[name] = (result.get(name) or 0) + sign * amount
    return result


def _shifted(config: PoolConfig, delta: Mapping[str, Any], sign: int) -> dict[str, Any]:
    """A pool's explicitly set options with ``sign * delta`` applied."""
    data = config.model_dump(mode="json", exclude_unset=True, by_alias=False)
    if delta.get("strong_guarantee_resources"):
        data["strong_guarantee_resources"] = _add_resources(
            data.get("strong_guarantee_resources"), delta["strong_guarantee_resources"], sign
        )
    for key in ("resource_flow", "burst_guarantee_resources"):
        if delta.get(key):
            integral = dict(data.get("integral_guarantees") or {})
            integral[key] = _add_resources(integral.get(key), delta[key], sign)
            data["integral_guarantees"] = integral
    for key in COUNT_KEYS:
        if delta.get(key) is not None:
            data[key] = (data.get(key) or 0) + sign * delta[key]
    return data


def _below(pool: Pool, ancestor: Pool) -> list[Pool]:
    """``pool`` and its ancestors strictly below ``ancestor``."""
    result = []
    for current in pool.ancestors():
        if current is ancestor:
            break
        result.append(current)
    return result


def transfer_path(tree: PoolTree, source: str, destination: str) -> tuple[list[Pool], list[Pool]]:
    """The pools that lose (source side) and gain (destination side) resources."""
    src = tree.pool(source)
    dst = tree.pool(destination)
    for pool in (src, dst):
        if pool.is_ephemeral:
            raise SchedulerError(
                "InvalidArgument",
                f"{where(pool.name, tree.name)} is ephemeral;"
                " resources move between explicit pools",
            )
    if src is dst:
        raise SchedulerError("InvalidArgument", "source_pool and destination_pool must differ")
    dst_chain = {id(p) for p in dst.ancestors()}
    lca = next(p for p in src.ancestors() if id(p) in dst_chain)
    return _below(src, lca), _below(dst, lca)


def transfer_pool_resources(
    tree: PoolTree,
    source: str,
    destination: str,
    resource_delta: object,
    *,
    now: float | None = None,
) -> None:
    """Move ``resource_delta`` from ``source`` to ``destination`` in ``tree`` (all or nothing)."""
    delta = _check_delta(resource_delta)
    try:
        losing, gaining = transfer_path(tree, source, destination)
        configs: dict[str, PoolConfig] = {}
        for pool, sign in [(p, -1) for p in losing] + [(p, 1) for p in gaining]:
            configs[pool.name] = parse_config(
                PoolConfig, _shifted(pool.config, delta, sign), where(pool.name, tree.name)
            )
        tree.set_pool_configs(
            configs, now=now, reason=f"resources transferred from {source!r} to {destination!r}"
        )
    except (SchedulerError, ConfigError) as error:
        raise _wrapped(error, source, destination) from None


def _wrapped(error: YtschedError, source: str, destination: str) -> SchedulerError:
    """The refusal as YTsaurus words it, with the cause as the inner error."""
    return SchedulerError(
        error.code,
        f"Failed to transfer resources from pool {source!r} to pool {destination!r}: "
        f"{error.message}",
        src_pool=source,
        dst_pool=destination,
        inner_errors=[error.to_dict()],
    )
