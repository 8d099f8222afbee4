"""Scheduler-wide options that the pool-tree and scheduling layers need.

Mirrors the relevant part of ``TFairShareStrategyConfig`` / ``TStrategyConfig`` and, for the
heartbeat options (``min_spare_allocation_resources_on_node``,
``max_started_allocations_per_heartbeat``, ``allowed_node_resources_overcommit_duration``), of
``TSchedulerConfig``, all in ``yt/yt/server/lib/scheduler/config.cpp``.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from ytsched.config.base import ConfigModel, Duration, option
from ytsched.config.resources import ResourceAmounts

DEFAULT_MIN_SPARE_ALLOCATION_RESOURCES = ResourceAmounts(
    user_slots=1, cpu=1.0, memory=256 * 1024 * 1024
)
"""``GetDefaultMinSpareAllocationResourcesOnNode``: one slot, one core, 256 MiB."""


class StrategyConfig(ConfigModel):
    """Options shared by all trees."""

    max_operation_count: int = option(
        5_000, "Limit on operations known to the scheduler (all trees, not finished).", gt=0
    )
    ephemeral_pool_name_regex: str = option(
        "[-_a-z0-9:A-Z]+", "Names of pools that do not exist yet (ephemeral pools) must match."
    )
    fair_share_update_period: Duration = option(
        200, "Period of the fair-share update (ms).", ge=10, le=60_000
    )
    pending_by_pool_operation_scan_period: Duration = option(
        60_000, "Period of the re-check of all operations pending by pool limits (ms).", gt=0
    )
    min_spare_allocation_resources_on_node: ResourceAmounts = option(
        DEFAULT_MIN_SPARE_ALLOCATION_RESOURCES,
        "A heartbeat keeps scheduling on a node only while its free resources (counting the"
        " preemption discount) still hold this much; unnamed resources count as 0.",
        "min_spare_job_resources_on_node",
    )
    max_started_allocations_per_heartbeat: int | None = option(
        None, "At most this many allocations start on one node heartbeat; unset = no limit.", gt=0
    )
    allowed_node_resources_overcommit_duration: Duration = option(
        15_000,
        "A node whose usage stays above its resource limits this long has allocations aborted"
        " (reason `resource_overcommit`) until the rest fits (ms).",
        ge=0,
    )

    default_tentative_pool_trees: tuple[str, ...] = option(
        (), "Tentative trees of operations with use_default_tentative_pool_trees."
    )
    operations_without_tentative_pool_trees: tuple[str, ...] = option(
        ("sort", "map_reduce", "remote_copy"),
        "Operation types that never run in tentative trees (their tentative trees are dropped).",
    )

    @field_validator("ephemeral_pool_name_regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"not a regular expression: {error}") from None
        return value
