"""Scheduler-wide (strategy) options that the pool-tree layer needs.

Mirrors the relevant part of ``TFairShareStrategyConfig`` / ``TStrategyConfig`` in
``yt/yt/server/lib/scheduler/config.cpp``.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from ytsched.config.base import ConfigModel, Duration, option


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

    @field_validator("ephemeral_pool_name_regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"not a regular expression: {error}") from None
        return value
