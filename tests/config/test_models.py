"""Configuration models: defaults, aliases, durations, validation and errors."""

from __future__ import annotations

import dataclasses

import pytest

from ytsched.config import (
    ConfigError,
    OperationSpec,
    PoolConfig,
    PoolPresetConfig,
    ResourceAmounts,
    StrategyConfig,
    TaskSpec,
    TreeConfig,
    apply_presets,
    parse_config,
    parse_duration,
    patched,
)
from ytsched.fairshare.model import UpdateOptions
from ytsched.pooltree import update_options


def test_tree_defaults_are_gen_b_code_values() -> None:
    config = TreeConfig()
    assert config.max_operation_count == 50_000
    assert config.max_running_operation_count == 2_000
    assert config.max_operation_count_per_pool == 50
    assert config.max_running_operation_count_per_pool == 50  # docs say 8; code says 50
    assert config.default_parent_pool == "<Root>"
    assert config.forbid_immediate_operations_in_root is True
    assert config.max_ephemeral_pools_per_user == 1
    assert config.main_resource == "cpu"
    assert config.fair_share_starvation_timeout == 30_000
    assert config.fair_share_aggressive_starvation_timeout == 120_000
    assert config.fair_share_starvation_tolerance == 0.8
    assert config.preemptive_scheduling_backoff == 5_000
    assert config.allocation_preemption_timeout == 10_000
    assert config.allocation_graceful_preemption_timeout == 60_000
    assert config.preemption_satisfaction_threshold == 1.0
    assert config.aggressive_preemption_satisfaction_threshold == 0.2
    assert config.non_preemptible_resource_usage_threshold.is_empty()
    assert config.integral_guarantees.pool_capacity_saturation_period == 86_400_000
    assert config.integral_guarantees.smooth_period == 60_000
    assert StrategyConfig().max_operation_count == 5_000


def test_engine_options_are_built_from_tree_config_defaults() -> None:
    built = update_options(TreeConfig())
    assert built == UpdateOptions()
    mapped = update_options(
        TreeConfig(
            main_resource="gpu",
            infer_weight_from_guarantees_share_multiplier=2.0,
            enable_step_function_for_gang_operations=True,
            integral_guarantees={"smooth_period": 120_000, "pool_capacity_saturation_period": "1h"},
        )
    )
    assert mapped.main_resource == "gpu"
    assert mapped.infer_weight_from_guarantees_share_multiplier == 2.0
    assert mapped.enable_step_function_for_gang_operations is True
    assert mapped.integral_smooth_period == 120.0
    assert mapped.integral_pool_capacity_saturation_period == 3600.0
    # every engine switch except the two dump-loading ones is a tree option
    engine_only = {"consider_vanilla_operations_as_gang", "use_only_gpu_strong_guarantees"}
    tree_fields = set(TreeConfig.model_fields) | {
        "integral_pool_capacity_saturation_period",
        "integral_smooth_period",
        "relaxed_share_multiplier_limit",
    }
    for option in dataclasses.fields(UpdateOptions):
        assert option.name in tree_fields or option.name in engine_only


@pytest.mark.parametrize(
    ("model", "data", "field", "value"),
    [
        (PoolConfig, {"min_share_resources": {"cpu": 5}}, "strong_guarantee_resources", None),
        (TreeConfig, {"nodes_filter": "gpu"}, "node_tag_filter", "gpu"),
        (
            TreeConfig,
            {"fair_share_preemption_timeout": 1000},
            "fair_share_starvation_timeout",
            1000,
        ),
        (TreeConfig, {"job_interrupt_timeout": "2s"}, "allocation_preemption_timeout", 2000),
        (
            TreeConfig,
            {"job_graceful_interrupt_timeout": 5},
            "allocation_graceful_preemption_timeout",
            5,
        ),
        (
            TreeConfig,
            {"infer_weight_from_min_share_ratio_multiplier": 3},
            "infer_weight_from_guarantees_share_multiplier",
            3.0,
        ),
        (PoolConfig, {"scheduling_tag": "a|b"}, "scheduling_tag_filter", "a|b"),
        (
            PoolConfig,
            {"allow_regular_jobs_on_ssd_nodes": False},
            "allow_regular_allocations_on_ssd_nodes",
            False,
        ),
        (
            OperationSpec,
            {"fair_share_options_per_pool_tree": {}},
            "scheduling_options_per_pool_tree",
            {},
        ),
    ],
)
def test_aliases_are_accepted(model: type, data: dict, field: str, value: object) -> None:
    parsed = parse_config(model, data, "x")
    if value is not None:
        assert getattr(parsed, field) == value


def test_resource_aliases_and_rounding() -> None:
    config = parse_config(
        PoolConfig, {"min_share_resources": {"cpu": 1.234, "user_memory": 10}}, "p"
    )
    assert config.strong_guarantee_resources.as_map() == {"cpu": 1.23, "memory": 10.0}
    assert config.resource_limits.limits_vector()[1] > 1e18


def test_fifo_sort_parameter_alias() -> None:
    config = parse_config(PoolConfig, {"fifo_sort_parameters": ["pending_allocation_count"]}, "p")
    assert config.fifo_sort_parameters == ("pending_job_count",)


@pytest.mark.parametrize(
    ("raw", "ms"),
    [
        (1500, 1500),
        (2.4, 2),
        ("100ms", 100),
        ("30s", 30_000),
        ("5m", 300_000),
        ("1h", 3_600_000),
        ("1d", 86_400_000),
        ("250", 250),
    ],
)
def test_durations(raw: object, ms: int) -> None:
    assert parse_duration(raw) == ms


@pytest.mark.parametrize("raw", [True, -1, "soon", "5 weeks", None, float("inf")])
def test_bad_durations(raw: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(raw)


@pytest.mark.parametrize(
    ("model", "data", "fragment"),
    [
        (PoolConfig, {"wieght": 2}, "wieght: Extra inputs are not permitted"),
        (PoolConfig, {"weight": 0}, "weight: Input should be greater than or equal to"),
        (PoolConfig, {"weight": 1e9}, "weight: Input should be less than or equal to"),
        (PoolConfig, {"mode": "lifo"}, "mode: Input should be 'fair_share' or 'fifo'"),
        (
            PoolConfig,
            {"max_operation_count": 1, "max_running_operation_count": 2},
            "must not exceed",
        ),
        (PoolConfig, {"mode": "fifo", "create_ephemeral_subpools": True}, "fifo pool cannot have"),
        (PoolConfig, {"config_preset": "a", "config_presets": ["b"]}, "cannot both be set"),
        (PoolConfig, {"fifo_sort_parameters": []}, "fifo_sort_parameters"),
        (PoolConfig, {"strong_guarantee_resources": {"cpu": -1}}, "strong_guarantee_resources.cpu"),
        (
            PoolConfig,
            {"strong_guarantee_resources": {"disk": 1}},
            "strong_guarantee_resources.disk",
        ),
        (PoolConfig, {"fair_share_starvation_tolerance": 1.5}, "fair_share_starvation_tolerance"),
        (PoolConfig, {"scheduling_tag_filter": "a &"}, "invalid tag filter"),
        (
            PoolConfig,
            {
                "integral_guarantees": {
                    "guarantee_type": "relaxed",
                    "resource_flow": {"cpu": 1},
                    "burst_guarantee_resources": {"cpu": 2},
                }
            },
            "relaxed pool cannot have burst_guarantee_resources",
        ),
        (
            PoolConfig,
            {"integral_guarantees": {"relaxed_share_multiplier_limit": 11}},
            "relaxed_share_multiplier_limit",
        ),
        (
            PoolConfig,
            {
                "ephemeral_subpool_config": {
                    "max_operation_count": 1,
                    "max_running_operation_count": 3,
                }
            },
            "must not exceed",
        ),
        (
            TreeConfig,
            {
                "fair_share_starvation_timeout": 10_000,
                "fair_share_aggressive_starvation_timeout": 5_000,
            },
            "at least",
        ),
        (TreeConfig, {"aggressive_preemption_satisfaction_threshold": 2}, "must not exceed"),
        (TreeConfig, {"max_ephemeral_pools_per_user": 0}, "max_ephemeral_pools_per_user"),
        (TreeConfig, {"main_resource": "disk"}, "main_resource"),
        (TreeConfig, {"node_tag_filter": "(a"}, "missing ')'"),
        (TreeConfig, {"max_running_operation_count": 0}, "max_running_operation_count"),
        (TreeConfig, {"pool_config_presets": {"p": {"weight": 2}}}, "pool_config_presets.p.weight"),
        (OperationSpec, {"preemption_mode": "eager"}, "preemption_mode"),
        (OperationSpec, {"max_unpreemptible_job_count": -1}, "max_unpreemptible_job_count"),
        (OperationSpec, {"pool_trees": ["a", "a"]}, "lists a tree twice"),
        (OperationSpec, {"tasks": {"t": {"job_count": 0}}}, "tasks.t.job_count"),
        (OperationSpec, {"tasks": {"t": {"interruption_signal": "INT"}}}, "interruption_signal"),
        (StrategyConfig, {"ephemeral_pool_name_regex": "("}, "not a regular expression"),
    ],
)
def test_invalid_configs_name_the_field(model: type, data: dict, fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(model, data, "pool 'p' in tree 't'")
    assert caught.value.code == "InvalidConfig"
    assert caught.value.message.startswith("pool 'p' in tree 't': ")
    assert fragment in caught.value.message


def test_non_map_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="expected a map"):
        parse_config(PoolConfig, [1, 2], "pool 'p'")


def test_alias_and_name_together_is_refused() -> None:
    with pytest.raises(ConfigError):
        parse_config(
            PoolConfig,
            {"min_share_resources": {"cpu": 1}, "strong_guarantee_resources": {"cpu": 2}},
            "p",
        )


def test_patched_sets_and_resets_options() -> None:
    config = parse_config(PoolConfig, {"weight": 2, "mode": "fifo"}, "p")
    updated = patched(PoolConfig, config, {"min_share_resources": {"cpu": 3}, "weight": None}, "p")
    assert updated.weight is None
    assert updated.mode == "fifo"
    assert updated.strong_guarantee_resources.as_map() == {"cpu": 3.0}
    assert updated.model_fields_set == {"mode", "strong_guarantee_resources"}


def test_presets_apply_under_explicit_options_earlier_first() -> None:
    presets = {
        "first": PoolPresetConfig(fair_share_starvation_tolerance=0.5),
        "second": PoolPresetConfig(
            fair_share_starvation_tolerance=0.9,
            fair_share_starvation_timeout=1000,
            enable_lightweight_operations=True,
        ),
    }
    config = PoolConfig(config_presets=("first", "second"), fair_share_starvation_timeout=7)
    effective = apply_presets(config, presets)
    assert effective.fair_share_starvation_tolerance == 0.5
    assert effective.fair_share_starvation_timeout == 7
    assert effective.enable_lightweight_operations is True
    legacy = apply_presets(PoolConfig(config_preset="second"), presets)
    assert legacy.fair_share_starvation_tolerance == 0.9


def test_task_resources_and_defaults() -> None:
    task = TaskSpec()
    assert task.job_count == 1 and task.cpu_limit == 1.0 and task.memory_limit == 512 * 2**20
    spec = parse_config(
        OperationSpec,
        {"tasks": {"srv": {"job_count": 3, "cpu_limit": 10, "interruption_signal": "SIGINT"}}},
        "op",
    )
    assert spec.tasks["srv"].interruption_signal == "SIGINT"
    assert spec.preemption_mode == "normal"
    assert (
        parse_config(OperationSpec, {"preemption_mode": "graceful"}, "op").preemption_mode
        == "graceful"
    )


def test_effective_non_preemptible_threshold_folds_legacy_count() -> None:
    config = TreeConfig(max_unpreemptible_running_allocation_count=10)
    assert config.effective_non_preemptible_resource_usage_threshold.as_map() == {
        "user_slots": 10.0
    }
    assert ResourceAmounts().is_empty()
