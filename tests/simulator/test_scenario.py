"""Scenario files: what is accepted, and errors that name the place inside the file."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.helpers import EXAMPLES, document, example, operation, pool, tree
from ytsched import yson
from ytsched.simulator import ScenarioError, load_scenario
from ytsched.simulator.scenario import parse_pool_trees


def error_of(doc: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(doc)
    return caught.value


def test_small_document_loads() -> None:
    scenario = load_scenario(document())
    assert scenario.duration == 1200.0
    assert [plan.id for plan in scenario.operations] == ["op"]
    assert scenario.pool_trees.default_tree == "physical"
    plan = scenario.operations[0]
    assert "job_duration" not in plan.engine_spec.tasks["main"].model_dump()


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yson")))
def test_examples_are_valid(name: str) -> None:
    load_scenario(example(name))


@pytest.mark.parametrize(
    ("change", "path", "fragment"),
    [
        (
            {"operations": [operation("x", "a", jobs=2, task={"cpu_limt": 1})]},
            "operations[0].spec.tasks.main.cpu_limt",
            "Extra inputs are not permitted",
        ),
        (
            {
                "operations": [
                    operation("x", "a", jobs=2, duration={"distribution": "uniform", "min": "1m"})
                ]
            },
            "operations[0].spec.tasks.main.job_duration.max",
            "Field required",
        ),
        (
            {"operations": [operation("x", "a", jobs=2, duration={"distribution": "gamma"})]},
            "operations[0].spec.tasks.main.job_duration",
            "gamma",
        ),
        (
            {
                "operations": [
                    operation("x", "a", jobs=3, duration=None, task={"job_durations": ["1m", "2m"]})
                ]
            },
            "operations[0].spec.tasks.main",
            "job_durations has 2 entries but job_count is 3",
        ),
        (
            {
                "operations": [
                    operation("x", "a", jobs=1, task={"finish_after_interruption": "10s"})
                ]
            },
            "operations[0]",
            "needs an interruption_signal",
        ),
        (
            {"cluster": {"node_groups": [{"count": 1, "resource_limits": {"cpu": -1}}]}},
            "cluster.node_groups[0].resource_limits.cpu",
            "greater than or equal to 0",
        ),
        (
            {"actions": [{"time": "1m", "action": "abort_operation", "operation": "nope"}]},
            "actions[0].operation",
            "no operation 'nope'",
        ),
        (
            {"actions": [{"time": "1m", "action": "set_pool_attribute", "pool": "a"}]},
            "actions[0].attribute",
            "Field required",
        ),
        (
            {"actions": [{"time": "1m", "action": "remove_nodes", "group": "gpu"}]},
            "actions[0].group",
            "no node group 'gpu'",
        ),
        ({"duration": "forever"}, "duration", "cannot parse duration"),
        ({"trace_operations": ["ghost"]}, "trace_operations[0]", "no operation 'ghost'"),
    ],
)
def test_errors_name_the_path(change: dict[str, Any], path: str, fragment: str) -> None:
    error = error_of(document(**change))
    assert error.code == "InvalidScenario"
    assert error.attributes["path"] == path
    assert error.message.startswith(f"{path}: ")
    assert fragment in error.message


def test_pool_errors_name_the_pool_in_the_export() -> None:
    pools = tree(
        {
            "parent": pool(
                {"strong_guarantee_resources": {"cpu": 10}},
                {"child": pool({"strong_guarantee_resources": {"cpu": 20}})},
            )
        }
    )
    error = error_of(document(pool_trees=pools))
    assert error.code == "GuaranteesExceedParent"
    assert error.message.startswith("pool_trees.physical.parent.child: ")


def test_unknown_pool_option_names_pool_and_option() -> None:
    error = error_of(document(pool_trees=tree({"a": pool({"wieght": 2})})))
    assert error.message.startswith("pool_trees.physical.a: ")
    assert "wieght" in error.message


def test_tree_config_errors_name_the_config() -> None:
    error = error_of(document(pool_trees=tree({"a": pool()}, {"max_operation_count": -1})))
    assert error.message.startswith("pool_trees.physical.@config: ")


def test_tree_config_overrides_are_validated_where_they_are() -> None:
    error = error_of(
        document(scheduler={"tree_config_overrides": {"fair_share_starvation_tolerance": 7}})
    )
    assert error.message.startswith("scheduler.tree_config_overrides: ")


def test_duplicate_operation_ids_are_refused() -> None:
    error = error_of(
        document(operations=[operation("x", "a", jobs=1), operation("x", "b", jobs=1)])
    )
    assert error.attributes["path"] == "operations[1].id"


def test_yson_export_with_attributes() -> None:
    text = """
    <default_tree = gpu> {
        physical = <config = {main_resource = cpu}> {
            prod = <strong_guarantee_resources = {cpu = 10}; acl = []> {
                etl = <weight = 2> {};
            };
        };
        gpu = <config = {node_tag_filter = gpu}> {};
    }
    """
    parsed = parse_pool_trees(yson.loads(text))
    assert parsed.default_tree == "gpu"
    physical = parsed.trees[0]
    assert physical.config == {"main_resource": "cpu"}
    assert [(p.name, p.parent) for p in physical.pools] == [("prod", None), ("etl", "prod")]
    assert physical.pools[0].config == {"strong_guarantee_resources": {"cpu": 10}}
    assert physical.pools[1].path == "pool_trees.physical.prod.etl"


def test_unknown_tree_attribute_is_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_pool_trees(yson.loads("{physical = <weight = 1> {}}"))
    assert caught.value.message.startswith("pool_trees.physical.@weight: ")


@pytest.mark.parametrize("value", ["[]", "1", "{a = b}"])
def test_default_tree_must_be_a_name(value: str) -> None:
    """A non-string ``@default_tree`` (found by the hostile-file fuzz: a list raised TypeError
    in the name lookup) is refused with its path."""
    with pytest.raises(ScenarioError) as caught:
        parse_pool_trees(yson.loads(f"<default_tree = {value}> {{physical = {{}}}}"))
    assert caught.value.message.startswith("pool_trees.@default_tree: ")


def test_several_trees_need_a_default_for_tree_less_actions() -> None:
    pools = {"one": {}, "two": {"$attributes": {"config": {"node_tag_filter": "x"}}}}
    action = {
        "time": 0,
        "action": "set_pool_attribute",
        "pool": "p",
        "attribute": "weight",
        "value": 2,
    }
    error = error_of(document(pool_trees=pools, operations=[], actions=[action]))
    assert error.attributes["path"] == "actions[0].tree"


def test_repeat_expands_operations() -> None:
    entry = operation("burst", "a", jobs=1, start="1m")
    entry["repeat"] = {"count": 3, "interval": "10m"}
    scenario = load_scenario(document(operations=[entry]))
    assert [(p.id, p.start_time) for p in scenario.operations] == [
        ("burst-1", 60.0),
        ("burst-2", 660.0),
        ("burst-3", 1260.0),
    ]


def test_distributions_are_seeded_and_clamped() -> None:
    duration = {"distribution": "exponential", "mean": "1m", "min": "10s", "max": "2m"}
    scenario = load_scenario(
        document(operations=[operation("x", "a", jobs=200, duration=duration)])
    )
    import random

    task = scenario.operations[0].spec.tasks["main"]
    first = task.base_durations(random.Random(1))
    assert first == task.base_durations(random.Random(1))
    assert min(first) >= 10.0
    assert max(first) <= 120.0
