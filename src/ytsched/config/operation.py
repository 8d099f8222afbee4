"""Operation specs: the strategy part and the tasks of vanilla operations.

Mirrors ``TStrategyOperationSpec`` and the runtime parameters of
``yt/yt/ytlib/scheduler/config.cpp``, and ``TVanillaOperationSpec`` / ``TVanillaTaskSpec``
(``yt/yt/server/lib/controller_agent/...``, the ``tasks`` map of a vanilla operation).
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from ytsched.config.base import ConfigModel, Duration, Weight, option
from ytsched.config.resources import ResourceAmounts
from ytsched.config.tagfilter import validate_tag_filter

OPERATION_TYPES = (
    "vanilla",
    "map",
    "reduce",
    "join_reduce",
    "map_reduce",
    "sort",
    "merge",
    "erase",
    "remote_copy",
)
"""Operation types accepted by ``start_operation`` (YTsaurus ``EOperationType``)."""

OperationType = Literal[
    "vanilla",
    "map",
    "reduce",
    "join_reduce",
    "map_reduce",
    "sort",
    "merge",
    "erase",
    "remote_copy",
]

DEFAULT_JOB_MEMORY = 512 * 1024 * 1024
"""``memory_limit`` of a user job when the spec does not set it (512 MiB, as in YTsaurus)."""


class TaskSpec(ConfigModel):
    """One task of a vanilla operation: ``job_count`` identical jobs running ``command``."""

    job_count: int = option(1, "Number of jobs of the task.", ge=1)
    command: str = option("", "Shell command of each job.")
    cpu_limit: float = option(1.0, "Cores each job asks for (and is throttled to).", ge=0)
    memory_limit: int = option(DEFAULT_JOB_MEMORY, "Bytes of memory each job asks for.", ge=0)
    gpu_limit: int = option(0, "GPUs each job asks for.", ge=0)
    network_limit: int = option(0, "Network units each job asks for.", ge=0)
    interruption_signal: str | None = option(
        None,
        "Signal sent to a preempted job so it can finish within its preemption timeout (e.g."
        " `SIGINT`); a job without one is aborted at once (reason `preemption`), or after the"
        " graceful timeout on graceful preemption.",
    )
    restart_completed_jobs: bool = option(
        False, "Restart jobs that complete (long-running services)."
    )

    @field_validator("interruption_signal")
    @classmethod
    def _signal(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("SIG"):
            raise ValueError(
                f"interruption_signal must be a signal name like SIGINT, got {value!r}"
            )
        return value


class TentativeTreeEligibilityConfig(ConfigModel):
    """When a task may run in a tentative tree, and when the tree is banned for it."""

    sample_job_count: int = option(
        10,
        "Jobs of a task that must complete in a tentative tree before more may start there.",
        gt=0,
    )
    max_tentative_job_duration_ratio: float = option(
        10.0,
        "A tentative tree whose average job duration is at least this times the regular trees'"
        " is banned for the task.",
        gt=0,
    )
    min_job_duration: Duration = option(
        30_000, "Tentative average durations below this are never compared (ms)."
    )
    ignore_missing_pool_trees: bool = option(
        False, "Tentative trees that do not exist are ignored instead of refusing the start."
    )


class PoolTreeOperationOptions(ConfigModel):
    """Per-tree options of an operation (``scheduling_options_per_pool_tree/<tree>``)."""

    pool: str | None = option(None, "Pool in this tree (wins over the spec's pool).")
    weight: Weight | None = option(None, "Weight in this tree (wins over the spec's weight).")
    resource_limits: ResourceAmounts | None = option(
        None, "Resource limits in this tree (win over the spec's resource_limits)."
    )
    scheduling_tag_filter: str | None = option(
        None, "Node tag expression in this tree.", "scheduling_tag"
    )

    @field_validator("scheduling_tag_filter")
    @classmethod
    def _tag_filter(cls, value: str | None) -> str | None:
        return None if value is None else validate_tag_filter(value)


class OperationSpec(ConfigModel):
    """The scheduling part of an operation spec, plus the tasks of a vanilla operation."""

    pool: str | None = option(
        None, "Pool of the operation; unset: an ephemeral pool named after the user."
    )
    pool_trees: tuple[str, ...] | None = option(
        None, "Trees the operation runs in; unset: the default tree.", min_length=1
    )
    scheduling_options_per_pool_tree: dict[str, PoolTreeOperationOptions] = option(
        {},
        "Per-tree pool, weight, resource_limits and scheduling_tag_filter.",
        "fair_share_options_per_pool_tree",
    )
    weight: Weight | None = option(None, "Weight of the operation in its pool (default 1).")
    resource_limits: ResourceAmounts | None = option(
        None, "Resource limits of the operation, e.g. `{user_slots = 200}`."
    )
    scheduling_tag_filter: str | None = option(
        None, "Node tag expression the operation's jobs must match.", "scheduling_tag"
    )
    fair_share_starvation_timeout: Duration | None = option(
        None, "Starvation timeout of the operation (ms); only longer than its pool's counts."
    )
    fair_share_starvation_tolerance: float | None = option(
        None, "Starvation tolerance; only smaller than its pool's counts.", ge=0, le=1
    )
    non_preemptible_resource_usage_threshold: ResourceAmounts | None = option(
        None, "Per resource, the min with the inherited threshold applies."
    )
    max_unpreemptible_job_count: int | None = option(
        None,
        "At most this many of the operation's jobs are non-preemptible by count: the"
        " user_slots of its non_preemptible_resource_usage_threshold is at most this (the min"
        " with the inherited threshold).",
        "max_unpreemptible_allocation_count",
        "max_unpreemptable_job_count",
        ge=0,
    )
    preemption_mode: Literal["normal", "graceful"] = option(
        "normal",
        "`graceful`: preemptible jobs get their interruption signal in advance and the"
        " operation converges to its fair share; never a victim of starvation preemption.",
    )
    allocation_preemption_timeout: Duration | None = option(
        None, "Overrides the tree's allocation_preemption_timeout (ms).", "job_interrupt_timeout"
    )
    allocation_graceful_preemption_timeout: Duration | None = option(
        None,
        "Overrides the tree's allocation_graceful_preemption_timeout (ms).",
        "job_graceful_interrupt_timeout",
    )
    interruption_timeout: Duration | None = option(
        None, "Time an interrupted job gets to finish before it is aborted (ms)."
    )
    waiting_job_timeout: Duration | None = option(
        None,
        "How long a job may wait on its node for resources before the node aborts it (ms);"
        " with the tree's `waiting_for_resources_on_node_timeout` the larger applies.",
        ge=0,
    )
    time_limit: Duration | None = option(
        None, "The operation fails when it runs longer than this (ms).", gt=0
    )
    is_gang: bool = option(False, "All jobs of the operation run together or not at all.")
    tentative_pool_trees: tuple[str, ...] | None = option(
        None, "Trees the operation also runs in tentatively (sampled, banned when slow)."
    )
    use_default_tentative_pool_trees: bool = option(
        False, "Add the scheduler's default_tentative_pool_trees to tentative_pool_trees."
    )
    tentative_tree_eligibility: TentativeTreeEligibilityConfig = option(
        TentativeTreeEligibilityConfig(),
        "Sample size and ban rule of tentative trees (sample_job_count,"
        " max_tentative_job_duration_ratio, min_job_duration, ignore_missing_pool_trees).",
    )
    erase_trees_with_pool_limit_violations: bool = option(
        False, "Drop trees whose pool limits refuse the operation instead of failing the start."
    )
    apply_specified_resource_limits_to_demand: bool = option(
        False,
        "Cap the operation's demand by its own resource_limits (per tree), never below its usage.",
    )
    max_failed_job_count: int = option(
        10, "The operation fails when more jobs than this have failed.", ge=0
    )
    tasks: dict[str, TaskSpec] = option({}, "Tasks of a vanilla operation, by name.")
    title: str | None = option(None, "Title shown in the UI.")
    annotations: dict[str, object] = option({}, "Arbitrary user annotations.")

    @field_validator("scheduling_tag_filter")
    @classmethod
    def _tag_filter(cls, value: str | None) -> str | None:
        return None if value is None else validate_tag_filter(value)

    @model_validator(mode="after")
    def _validate(self) -> OperationSpec:
        for name in self.tasks:
            if not name:
                raise ValueError("task names must not be empty")
        if self.pool_trees is not None and len(set(self.pool_trees)) != len(self.pool_trees):
            raise ValueError("pool_trees lists a tree twice")
        return self

    def tree_options(self, tree: str) -> PoolTreeOperationOptions:
        return self.scheduling_options_per_pool_tree.get(tree) or PoolTreeOperationOptions()


class RuntimeParametersUpdate(ConfigModel):
    """Parameters of ``update_op_parameters``: pool, weight and per-tree options."""

    pool: str | None = option(None, "Move the operation to this pool in every tree.")
    weight: Weight | None = option(None, "New weight in every tree (overrides per-tree weights).")
    scheduling_options_per_pool_tree: dict[str, PoolTreeOperationOptions] = option(
        {}, "Per-tree pool, weight and resource_limits."
    )
    annotations: dict[str, object] | None = option(None, "New annotations.")
