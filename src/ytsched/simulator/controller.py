"""What the simulated controller agent checks about an operation: suitable exec nodes exist.

YTsaurus's controller agent runs ``CheckAvailableExecNodes`` every
``available_exec_nodes_check_period`` for each operation
(``yt/yt/server/controller_agent/controllers/operation_controller_detail.cpp``).  Until it has
*observed* a suitable node (one in the operation's trees that matches its scheduling tag filter
there and whose resource limits hold the minimum needs of a task with pending jobs, or any
started allocation), a check that finds none fails the operation with
``NoOnlineNodeToScheduleAllocation`` (4410; ``NoOnlineNodeToScheduleJob`` before the
allocation rename).  The check is skipped while the scheduler has been connected for less than
``safe_scheduler_online_time`` or fewer than ``safe_online_node_count`` nodes are online
(``ShouldSkipSanityCheck``).  Once a node was observed the check never fails the operation
(only the banned-node variant remains, which ytsched does not model).

The simulator runs the check per operation from its start until a node is observed; it costs
nothing when the option is off and one scan of the nodes (stopping at the first suitable one)
per check otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ytsched.config.base import ConfigModel, Duration, option
from ytsched.config.tagfilter import TagFilter
from ytsched.pooltree import Operation, PoolTrees
from ytsched.resources import RESOURCE_NAMES

ERROR_CODE = "NoOnlineNodeToScheduleAllocation"


class ControllerAgentSection(ConfigModel):
    """Controller-agent options of a scenario (``TControllerAgentConfig`` names)."""

    enable_available_exec_nodes_check: bool = option(
        True, "Fail operations that no online node can serve (CheckAvailableExecNodes)."
    )
    available_exec_nodes_check_period: Duration = option(
        5_000, "Period of the check, per operation (ms).", gt=0
    )
    safe_scheduler_online_time: Duration = option(
        600_000, "No check while the scheduler has been connected for less than this (ms)."
    )
    safe_online_node_count: int = option(
        1, "No check while fewer nodes than this are online.", ge=0
    )


@dataclass(frozen=True, slots=True)
class NodeSurvey:
    found: bool
    non_matching_filter_node_count: int
    matching_but_insufficient_resources_node_count_per_task: dict[str, dict[str, int]]


def survey(trees: PoolTrees, operation: Operation, addresses: Iterable[str]) -> NodeSurvey:
    """Is there an online node the operation could run a job on (see the module docstring)?"""
    filters: dict[str, TagFilter | None] = {}
    spec = operation.spec
    for tree in operation.pool_trees:
        text = spec.tree_options(tree).scheduling_tag_filter or spec.scheduling_tag_filter
        filters[tree] = TagFilter.parse(text) if text else None
    pending = [task for task in operation.tasks.values() if task.waiting]
    non_matching = 0
    insufficient: dict[str, dict[str, int]] = {}
    for address in addresses:
        node = trees.nodes.get(address)
        if node is None or node.state != "online" or node.tree not in filters:
            non_matching += 1
            continue
        tag_filter = filters[node.tree]
        if tag_filter is not None and not tag_filter.matches(node.all_tags):
            non_matching += 1
            continue
        if not pending:
            return NodeSurvey(True, non_matching, insufficient)
        limits = node.resource_limits
        for task in pending:
            short = [
                name
                for index, name in enumerate(RESOURCE_NAMES)
                if task.resources[index] > limits[index]
            ]
            if not short:
                return NodeSurvey(True, non_matching, insufficient)
            counts = insufficient.setdefault(task.name, {})
            for name in short:
                counts[name] = counts.get(name, 0) + 1
    return NodeSurvey(False, non_matching, insufficient)


def failure_message(operation: Operation) -> str:
    """YTsaurus's message: the operation's filter and its trees."""
    formula = operation.spec.scheduling_tag_filter or ""
    trees = ", ".join(operation.pool_trees)
    return (
        f'No online nodes that match operation scheduling tag filter "{formula}" and have'
        f" sufficient resources to schedule an allocation found in trees [{trees}]"
    )
