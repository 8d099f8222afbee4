"""The scenario file: cluster, pool trees, scheduler options, workload, timed actions.

One document (YSON or JSON) says everything a simulation needs, so that a run is reproducible
from the file and a seed alone.  Its sections follow the inputs of YTsaurus's own simulator
(``yt/yt/tools/scheduler_simulator``: node groups, a ``//sys/pool_trees`` export with
attributes, the scheduler config, an operation trace), gathered into one file and extended with
what a what-if study needs: job-duration distributions instead of a recorded trace, how jobs
react to an interruption signal, and timed actions (pool changes, node changes, aborts).

Everything is validated here, before anything runs.  An invalid file raises
:class:`ScenarioError` whose message starts with the path inside the file
(``operations[3].spec.tasks.main.job_duration.mean: ...``), so a person can find the mistake.
Option names, defaults and validation of trees, pools and operation specs are not restated:
they come from :mod:`ytsched.config` (the scenario's models extend those).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ytsched.config.base import ConfigError, ConfigModel, Duration, error_location, option
from ytsched.config.operation import OperationSpec, OperationType, TaskSpec
from ytsched.config.resources import ResourceAmounts
from ytsched.config.strategy import StrategyConfig
from ytsched.errors import YtschedError
from ytsched.simulator.controller import ControllerAgentSection
from ytsched.yson import WithAttributes

MS = 1000.0
"""Milliseconds per second: durations are written in ms (YTsaurus ``TDuration``), run in s."""


class ScenarioError(YtschedError):
    """A scenario file is invalid; ``path`` names the place inside the file."""


def scenario_error(path: str, message: str, code: str = "InvalidScenario") -> ScenarioError:
    where = path or "<scenario>"
    return ScenarioError(code, f"{where}: {message}", path=path)


# --- job durations ----------------------------------------------------------------------------


_Model = ConfigModel
"""Scenario models are config models: unknown keys refused, immutable."""


class ConstantDuration(_Model):
    distribution: Literal["constant"] = "constant"
    value: Duration = option(..., "Every job runs this long (ms or '10m').")

    def sample(self, rng: random.Random) -> float:
        return self.value / MS


class InfiniteDuration(_Model):
    """Jobs that never end on their own (services): only interruption or abort ends them."""

    distribution: Literal["infinite"] = "infinite"

    def sample(self, rng: random.Random) -> float:
        return math.inf


class _Clamped(_Model):
    min: Duration = option(0, "Shortest duration drawn (ms).")
    max: Duration | None = option(None, "Longest duration drawn (ms); unset: no bound.")

    def clamp(self, seconds: float) -> float:
        low, high = self.bounds()
        return min(max(seconds, low), high)

    def bounds(self) -> tuple[float, float]:
        """The shortest and longest duration drawn, in seconds (``inf``: no bound)."""
        return self.min / MS, math.inf if self.max is None else self.max / MS

    @model_validator(mode="after")
    def _bounds(self) -> _Clamped:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"max ({self.max} ms) is below min ({self.min} ms)")
        return self


class UniformDuration(_Clamped):
    distribution: Literal["uniform"] = "uniform"
    max: Duration | None = option(..., "Longest duration (ms).")

    def sample(self, rng: random.Random) -> float:
        assert self.max is not None
        return rng.uniform(self.min / MS, self.max / MS)


class ExponentialDuration(_Clamped):
    distribution: Literal["exponential"] = "exponential"
    mean: Duration = option(..., "Mean duration (ms).", gt=0)

    def sample(self, rng: random.Random) -> float:
        return self.clamp(rng.expovariate(MS / self.mean))


class NormalDuration(_Clamped):
    distribution: Literal["normal"] = "normal"
    mean: Duration = option(..., "Mean duration (ms).")
    stddev: Duration = option(..., "Standard deviation (ms).")

    def sample(self, rng: random.Random) -> float:
        return self.clamp(rng.gauss(self.mean / MS, self.stddev / MS))


class LogNormalDuration(_Clamped):
    distribution: Literal["lognormal"] = "lognormal"
    median: Duration = option(..., "Median duration (ms).", gt=0)
    sigma: float = option(..., "Standard deviation of the logarithm.", ge=0)

    def sample(self, rng: random.Random) -> float:
        return self.samples(rng, 1)[0]

    def samples(self, rng: random.Random, count: int) -> list[float]:
        """``count`` draws of :meth:`sample`, in order: the parameters and bounds are
        converted once, not per job (an operation's jobs are drawn when it starts)."""
        mu = math.log(self.median / MS)
        sigma = self.sigma
        low, high = self.bounds()
        draw = rng.lognormvariate
        return [min(max(draw(mu, sigma), low), high) for _ in range(count)]


def _scalar_duration(value: object) -> object:
    """``"10m"``, ``600000`` and ``"infinite"`` are shorthands of the tagged forms."""
    if value == "infinite":
        return {"distribution": "infinite"}
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return {"distribution": "constant", "value": value}
    return value


DurationDistribution = Annotated[
    ConstantDuration
    | InfiniteDuration
    | UniformDuration
    | ExponentialDuration
    | NormalDuration
    | LogNormalDuration,
    Field(discriminator="distribution"),
    BeforeValidator(_scalar_duration),
]
"""A job duration: a constant (``"10m"``), ``"infinite"``, or a tagged distribution
(``{distribution = lognormal; median = "5m"; sigma = 0.8}``)."""

DISTRIBUTION_NAMES = frozenset(
    {"constant", "infinite", "uniform", "exponential", "normal", "lognormal"}
)


# --- operations -----------------------------------------------------------------------------

SIMULATION_TASK_FIELDS = frozenset({"job_duration", "job_durations", "finish_after_interruption"})


class ScenarioTaskSpec(TaskSpec):
    """A vanilla task plus how long its jobs run and how they take an interruption signal."""

    job_duration: DurationDistribution | None = option(
        None, "Duration of each job: a constant, 'infinite', or a distribution."
    )
    job_durations: tuple[Duration, ...] | None = option(
        None, "Explicit durations, one per job (ms); instead of job_duration."
    )
    finish_after_interruption: DurationDistribution | None = option(
        None,
        "How long a job takes to finish (as completed) after its interruption signal; unset:"
        " the job ignores interruptions and is aborted when the timeout ends.",
    )

    @model_validator(mode="after")
    def _durations(self) -> ScenarioTaskSpec:
        if (self.job_duration is None) == (self.job_durations is None):
            raise ValueError("set exactly one of job_duration and job_durations")
        if self.job_durations is not None and len(self.job_durations) != self.job_count:
            raise ValueError(
                f"job_durations has {len(self.job_durations)} entries but job_count is"
                f" {self.job_count}"
            )
        return self

    def base_durations(self, rng: random.Random) -> list[float]:
        """Seconds of work of every job index, drawn in index order."""
        if self.job_durations is not None:
            return [value / MS for value in self.job_durations]
        assert self.job_duration is not None
        distribution = self.job_duration
        if isinstance(distribution, LogNormalDuration):
            return distribution.samples(rng, self.job_count)
        return [distribution.sample(rng) for _ in range(self.job_count)]


class ScenarioOperationSpec(OperationSpec):
    """An operation spec whose tasks carry simulation fields."""

    tasks: dict[str, ScenarioTaskSpec] = option(  # type: ignore[assignment]
        {}, "Tasks of the operation, by name, with job durations."
    )

    def engine_spec(self) -> OperationSpec:
        """The spec without simulation fields, as the scheduler receives it."""
        data = self.model_dump(
            exclude_unset=True,
            exclude={"tasks": {"__all__": set(SIMULATION_TASK_FIELDS)}},
        )
        return OperationSpec.model_validate(data)


class Repeat(_Model):
    count: int = option(..., "Number of copies (ids get '-1', '-2', ... appended).", ge=1)
    interval: Duration = option(0, "Time between consecutive starts (ms).")


class ScenarioOperation(_Model):
    id: str | None = option(None, "Operation id; default 'op-<index>'.", min_length=1)
    start_time: Duration = option(0, "When the operation is started (ms from the start).")
    user: str = option("root", "User starting it (names its ephemeral pool).", min_length=1)
    type: OperationType = option("vanilla", "Operation type.")
    spec: ScenarioOperationSpec = option(..., "Spec: pool, pool_trees, tasks, preemption_mode.")
    repeat: Repeat | None = option(None, "Start this many copies, `interval` apart.")

    @model_validator(mode="after")
    def _tasks(self) -> ScenarioOperation:
        if not self.spec.tasks:
            raise ValueError("spec.tasks: an operation needs at least one task")
        for name, task in self.spec.tasks.items():
            if (
                self.type == "vanilla"
                and task.finish_after_interruption is not None
                and task.interruption_signal is None
            ):
                raise ValueError(
                    f"spec.tasks.{name}: finish_after_interruption needs an interruption_signal"
                    " (a vanilla job learns of an interruption only through its signal)"
                )
        return self


# --- cluster --------------------------------------------------------------------------------


class NodeGroup(_Model):
    name: str = option("node", "Group name; node addresses are '<name>-<index>'.", min_length=1)
    count: int = option(..., "Number of nodes.", ge=0)
    resource_limits: ResourceAmounts = option(..., "What each node offers.")
    tags: tuple[str, ...] = option((), "Node tags (matched by trees' node_tag_filter).")


class Cluster(_Model):
    heartbeat_period: Duration = option(
        5_000, "Period of every node's heartbeat (ms); phases are random, seeded.", gt=0
    )
    node_groups: tuple[NodeGroup, ...] = option(..., "Groups of identical nodes.", min_length=1)

    @field_validator("node_groups")
    @classmethod
    def _unique(cls, groups: tuple[NodeGroup, ...]) -> tuple[NodeGroup, ...]:
        names = [group.name for group in groups]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"node group name {name!r} is used twice")
        return groups


class SchedulerSection(StrategyConfig):
    """Scheduler-wide options (``fair_share_update_period``, ...) and tree overrides."""

    tree_config_overrides: dict[str, Any] = option(
        {}, "Options set in the config of every tree, over the exported ones."
    )

    def strategy(self) -> StrategyConfig:
        data = self.model_dump(exclude_unset=True, exclude={"tree_config_overrides"})
        return StrategyConfig.model_validate(data)


# --- actions --------------------------------------------------------------------------------


class _Action(_Model):
    time: Duration = option(..., "When the action happens (ms from the start).")


class SetPoolAttribute(_Action):
    action: Literal["set_pool_attribute"]
    tree: str | None = option(None, "Tree; default: the default tree.")
    pool: str = option(..., "Pool name.")
    attribute: str = option(..., "Pool option, e.g. weight or strong_guarantee_resources.")
    value: Any = option(..., "New value; null resets the option.")


class UpdateTreeConfig(_Action):
    action: Literal["update_tree_config"]
    tree: str | None = option(None, "Tree; default: the default tree.")
    config: dict[str, Any] = option(..., "Options to set (null resets).")


class UpdateOperationParameters(_Action):
    action: Literal["update_operation_parameters"]
    operation: str = option(..., "Operation id.")
    parameters: dict[str, Any] = option(..., "pool, weight, scheduling_options_per_pool_tree.")


class AbortOperation(_Action):
    action: Literal["abort_operation"]
    operation: str = option(..., "Operation id.")


class CompleteOperation(_Action):
    action: Literal["complete_operation"]
    operation: str = option(..., "Operation id.")


class AddNodes(_Action):
    action: Literal["add_nodes"]
    group: NodeGroup = option(..., "Nodes to add (a new group, or more of an existing one).")


class RemoveNodes(_Action):
    action: Literal["remove_nodes"]
    group: str = option(..., "Group whose nodes are removed (the highest indices first).")
    count: int | None = option(None, "How many; unset: all of them.", ge=1)


class UpdateNodes(_Action):
    """A node reports other tags or resource limits (YTsaurus tests set ``user_tags`` and
    ``resource_limits_overrides`` of exec nodes): the node may change trees, and a node
    whose usage exceeds its new limits has jobs preempted."""

    action: Literal["update_nodes"]
    group: str | None = option(None, "Group whose nodes change (the highest indices first).")
    node: str | None = option(None, "Instead of group: one node's address.", min_length=1)
    count: int | None = option(None, "With group: how many; unset: all of them.", ge=1)
    tags: tuple[str, ...] | None = option(None, "New tags (replace the old ones).")
    resource_limits: ResourceAmounts | None = option(
        None, "New resource limits (replace the old ones; unnamed resources are 0)."
    )

    @model_validator(mode="after")
    def _target(self) -> UpdateNodes:
        if (self.group is None) == (self.node is None):
            raise ValueError("set exactly one of group and node")
        if self.count is not None and self.group is None:
            raise ValueError("count needs group")
        if self.tags is None and self.resource_limits is None:
            raise ValueError("set tags, resource_limits or both")
        return self


class MovePool(_Action):
    """Move an explicit pool, with its subtree, operations and their usage, under another
    parent (a Cypress ``move`` of the pool node)."""

    action: Literal["move_pool"]
    tree: str | None = option(None, "Tree; default: the default tree.")
    pool: str = option(..., "Pool to move.", min_length=1)
    parent: str | None = option(..., "New parent pool; null: the root.")


class RestartScheduler(_Action):
    """The scheduler process restarts: its in-memory scheduling state is lost and rebuilt
    from what survives a restart in YTsaurus (pool trees and their persisted integral
    volumes, operations, the jobs nodes report as running)."""

    action: Literal["restart_scheduler"]


Action = Annotated[
    SetPoolAttribute
    | UpdateTreeConfig
    | UpdateOperationParameters
    | AbortOperation
    | CompleteOperation
    | AddNodes
    | RemoveNodes
    | UpdateNodes
    | MovePool
    | RestartScheduler,
    Field(discriminator="action"),
]
ACTION_NAMES = frozenset(
    {
        "set_pool_attribute",
        "update_tree_config",
        "update_operation_parameters",
        "abort_operation",
        "complete_operation",
        "add_nodes",
        "remove_nodes",
        "update_nodes",
        "move_pool",
        "restart_scheduler",
    }
)


# --- the document ---------------------------------------------------------------------------


class ScenarioDocument(_Model):
    duration: Duration = option(..., "Simulated time (ms or '1d').", gt=0)
    seed: int = option(0, "Seed of every random choice (heartbeat phases, job durations).")
    orchid_period: Duration = option(
        60_000, "Period of orchid snapshots (ms); 0 disables them.", ge=0
    )
    cluster: Cluster = option(..., "Node groups and heartbeat period.")
    pool_trees: Any = option(..., "A //sys/pool_trees export with attributes.")
    scheduler: SchedulerSection = option(SchedulerSection(), "Scheduler options.")
    controller_agent: ControllerAgentSection = option(
        ControllerAgentSection(), "Controller-agent checks (available exec nodes)."
    )
    operations: tuple[ScenarioOperation, ...] = option((), "The workload.")
    actions: tuple[Action, ...] = option((), "Timed changes.")
    trace_operations: tuple[str, ...] = option(
        (), "Operations whose usage, demand and fair share are sampled and plotted."
    )


# --- pool trees -----------------------------------------------------------------------------

IGNORED_POOL_ATTRIBUTES = frozenset(
    {"acl", "inherit_acl", "owner", "id", "type", "name", "creation_time", "modification_time"}
)
"""Cypress attributes an export may carry that are not pool options (access control and
system attributes); they do not change scheduling, so they are dropped."""


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """One explicit pool of an export, parents before children."""

    name: str
    parent: str | None
    config: dict[str, Any]
    path: str
    """Where it is in the file (for errors)."""


@dataclass(frozen=True, slots=True)
class TreeSpec:
    name: str
    config: dict[str, Any]
    pools: tuple[PoolSpec, ...]
    path: str
    """Where it is in the file (for errors)."""


@dataclass(frozen=True, slots=True)
class PoolTreesSpec:
    default_tree: str | None
    trees: tuple[TreeSpec, ...]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _split(value: Any, path: str) -> tuple[dict[str, Any], Any]:
    """(attributes, value) of a YSON value with attributes, or of its JSON form."""
    if isinstance(value, WithAttributes):
        return dict(value.attributes), value.value
    if isinstance(value, Mapping) and ("$attributes" in value or "$value" in value):
        extra = set(value) - {"$attributes", "$value"}
        if extra:
            raise scenario_error(path, f"unexpected keys {sorted(extra)} beside $attributes")
        attributes = value.get("$attributes", {})
        if not isinstance(attributes, Mapping):
            raise scenario_error(_join(path, "$attributes"), "expected a map of attributes")
        return dict(attributes), value.get("$value", {})
    return {}, value


def _children(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise scenario_error(path, f"expected a map of child pools, got {type(value).__name__}")
    return value


def parse_pool_trees(document: Any, path: str = "pool_trees") -> PoolTreesSpec:
    """Read a ``//sys/pool_trees`` export: trees with ``@config``, nested pools whose
    attributes are their options, and ``@default_tree`` on the map itself."""
    attributes, value = _split(document, path)
    default_tree = attributes.pop("default_tree", None)
    if default_tree is not None and not isinstance(default_tree, str):
        raise scenario_error(_join(path, "@default_tree"), "expected a tree name (a string)")
    for key in attributes:
        if key not in IGNORED_POOL_ATTRIBUTES:
            raise scenario_error(_join(path, f"@{key}"), "unknown attribute of //sys/pool_trees")
    trees_map = _children(value, path)
    if not trees_map:
        raise scenario_error(path, "no pool tree")
    trees: list[TreeSpec] = []
    for tree_name, tree_value in trees_map.items():
        tree_path = _join(path, str(tree_name))
        tree_attributes, pools_value = _split(tree_value, tree_path)
        config = tree_attributes.pop("config", {})
        if not isinstance(config, Mapping):
            raise scenario_error(f"{tree_path}.@config", "expected a map of tree options")
        for key in tree_attributes:
            if key not in IGNORED_POOL_ATTRIBUTES:
                raise scenario_error(
                    f"{tree_path}.@{key}", "unknown tree attribute (tree options go in @config)"
                )
        pools: list[PoolSpec] = []
        _collect_pools(_children(pools_value, tree_path), None, tree_path, pools)
        trees.append(TreeSpec(str(tree_name), dict(config), tuple(pools), tree_path))
    if default_tree is None and len(trees) == 1:
        default_tree = trees[0].name
    if default_tree is not None and default_tree not in {tree.name for tree in trees}:
        raise scenario_error(_join(path, "@default_tree"), f"no tree named {default_tree!r}")
    return PoolTreesSpec(default_tree, tuple(trees))


def _collect_pools(
    children: Mapping[str, Any], parent: str | None, path: str, out: list[PoolSpec]
) -> None:
    for name, value in children.items():
        pool_path = _join(path, str(name))
        attributes, grandchildren = _split(value, pool_path)
        config = {k: v for k, v in attributes.items() if k not in IGNORED_POOL_ATTRIBUTES}
        out.append(PoolSpec(str(name), parent, config, pool_path))
        _collect_pools(_children(grandchildren, pool_path), str(name), pool_path, out)


# --- the scenario ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OperationPlan:
    """One operation to start (copies of a repeated entry are separate plans)."""

    id: str
    start_time: float
    user: str
    type: str
    spec: ScenarioOperationSpec
    engine_spec: OperationSpec
    index: int
    """Position in the file's ``operations`` list."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario, times in seconds."""

    document: ScenarioDocument
    pool_trees: PoolTreesSpec
    operations: tuple[OperationPlan, ...]

    @property
    def duration(self) -> float:
        return self.document.duration / MS

    @property
    def seed(self) -> int:
        return self.document.seed

    def with_pool_trees(self, pool_trees: Any, source: str) -> Scenario:
        """The same scenario under another pool configuration (a what-if study); errors name
        ``source`` (the file of the export) and the path inside it."""
        try:
            parsed = parse_pool_trees(pool_trees, "")
            scenario = Scenario(self.document, parsed, self.operations)
            _check_actions(scenario)
            check_buildable(scenario)
        except YtschedError as error:
            raise ScenarioError(
                error.code, f"{source}: {error.message}", **error.attributes
            ) from None
        return scenario


def _format_location(location: Sequence[int | str]) -> str:
    parts: list[str] = []
    previous: int | str | None = None
    before_previous: int | str | None = None
    for item in location:
        skip = (
            previous in ("job_duration", "finish_after_interruption") and item in DISTRIBUTION_NAMES
        ) or (before_previous == "actions" and isinstance(previous, int) and item in ACTION_NAMES)
        if not skip:
            if isinstance(item, int):
                parts.append(f"[{item}]")
            else:
                parts.append(f".{item}" if parts else str(item))
        before_previous, previous = previous, item
    return "".join(parts)


def _from_validation(error: ValidationError) -> ScenarioError:
    problems: list[tuple[str, str]] = []
    for item in error.errors(include_url=False):
        loc, message = error_location(item)
        path = _format_location(loc)
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        problems.append((path, message))
    path, message = problems[0]
    return ScenarioError(
        "InvalidScenario",
        f"{path or '<scenario>'}: {message}",
        path=path,
        errors=[{"path": p, "message": m} for p, m in problems],
    )


def load_scenario(document: Any, trace: Sequence[ScenarioOperation] = ()) -> Scenario:
    """Validate a parsed scenario document (dict from YSON or JSON); ``trace`` adds recorded
    operations (see :mod:`ytsched.simulator.trace`) after the file's own."""
    if isinstance(document, WithAttributes):
        raise scenario_error("", "the scenario document must not carry attributes")
    if not isinstance(document, Mapping):
        raise scenario_error("", f"expected a map, got {type(document).__name__}")
    try:
        parsed = ScenarioDocument.model_validate(dict(document))
    except ValidationError as error:
        raise _from_validation(error) from None
    if trace:
        parsed = _with_trace(parsed, trace)
    from ytsched.simulator.limits import check_run, check_scenario

    check_scenario(parsed)
    check_run(parsed.duration / MS, parsed.orchid_period / MS)
    pool_trees = parse_pool_trees(parsed.pool_trees)
    operations = _expand_operations(parsed.operations)
    scenario = Scenario(parsed, pool_trees, operations)
    _check_actions(scenario)
    check_buildable(scenario)
    return scenario


def _with_trace(document: ScenarioDocument, trace: Sequence[ScenarioOperation]) -> ScenarioDocument:
    """The document with the trace's operations appended (ids must not collide)."""
    own = {entry.id for entry in document.operations if entry.id is not None}
    for entry in trace:
        if entry.id in own:
            raise scenario_error(
                "trace", f"operation id {entry.id!r} is used by the scenario and by the trace"
            )
    return document.model_copy(update={"operations": document.operations + tuple(trace)})


def _expand_operations(entries: Sequence[ScenarioOperation]) -> tuple[OperationPlan, ...]:
    plans: list[OperationPlan] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        base = entry.id or f"op-{index}"
        engine_spec = entry.spec.engine_spec()
        copies = entry.repeat.count if entry.repeat is not None else 1
        interval = entry.repeat.interval / MS if entry.repeat is not None else 0.0
        for copy in range(copies):
            operation_id = base if entry.repeat is None else f"{base}-{copy + 1}"
            if operation_id in seen:
                other = seen[operation_id]
                raise scenario_error(
                    f"operations[{index}].id",
                    f"operation id {operation_id!r} is also used by operations[{other}]",
                )
            seen[operation_id] = index
            plans.append(
                OperationPlan(
                    id=operation_id,
                    start_time=entry.start_time / MS + copy * interval,
                    user=entry.user,
                    type=entry.type,
                    spec=entry.spec,
                    engine_spec=engine_spec,
                    index=index,
                )
            )
    return tuple(plans)


def _check_actions(scenario: Scenario) -> None:
    operation_ids = {plan.id for plan in scenario.operations}
    tree_names = {tree.name for tree in scenario.pool_trees.trees}
    groups = {group.name for group in scenario.document.cluster.node_groups}
    for index, traced in enumerate(scenario.document.trace_operations):
        if traced not in operation_ids:
            raise scenario_error(
                f"trace_operations[{index}]", f"no operation {traced!r} in the scenario"
            )
    for index, action in enumerate(scenario.document.actions):
        path = f"actions[{index}]"
        if isinstance(action, UpdateOperationParameters | AbortOperation | CompleteOperation):
            if action.operation not in operation_ids:
                raise scenario_error(
                    f"{path}.operation", f"no operation {action.operation!r} in the scenario"
                )
        elif isinstance(action, SetPoolAttribute | UpdateTreeConfig | MovePool):
            if action.tree is not None and action.tree not in tree_names:
                raise scenario_error(f"{path}.tree", f"no pool tree {action.tree!r}")
            if action.tree is None and scenario.pool_trees.default_tree is None:
                raise scenario_error(f"{path}.tree", "several trees and no default: name one")
        elif isinstance(action, AddNodes):
            groups.add(action.group.name)
        elif (
            isinstance(action, RemoveNodes | UpdateNodes)
            and action.group is not None
            and action.group not in groups
        ):
            raise scenario_error(f"{path}.group", f"no node group {action.group!r}")


def check_buildable(scenario: Scenario) -> None:
    """Build the trees and nodes once, so configuration errors surface at load time."""
    from ytsched.simulator.cluster import build_pool_trees

    build_pool_trees(scenario)


def config_error_at(path: str, error: ConfigError | YtschedError) -> ScenarioError:
    """A tree/pool/operation error re-raised with the place in the file."""
    return ScenarioError(error.code, f"{path}: {error.message}", path=path, **error.attributes)
