"""Configuration models: one source of truth for every option's name, aliases, type, default
and validation (tree config, pool config, operation spec, scheduler-wide options).

See :mod:`ytsched.config.base` for the conventions (aliases, durations in milliseconds, errors).
"""

from ytsched.config.base import (
    MAX_WEIGHT,
    MIN_WEIGHT,
    ConfigError,
    ConfigModel,
    Duration,
    parse_config,
    parse_duration,
    patched,
)
from ytsched.config.operation import (
    OPERATION_TYPES,
    OperationSpec,
    PoolTreeOperationOptions,
    RuntimeParametersUpdate,
    TaskSpec,
)
from ytsched.config.pool import (
    EphemeralSubpoolConfig,
    IntegralGuaranteesConfig,
    OffloadingPoolSettings,
    PoolConfig,
    PoolPresetConfig,
    apply_presets,
)
from ytsched.config.resources import ResourceAmounts
from ytsched.config.strategy import StrategyConfig
from ytsched.config.tagfilter import TagFilter, TagFilterError
from ytsched.config.tree import ROOT_POOL_NAME, TreeConfig, TreeIntegralGuaranteesConfig

__all__ = [
    "MAX_WEIGHT",
    "MIN_WEIGHT",
    "OPERATION_TYPES",
    "ROOT_POOL_NAME",
    "ConfigError",
    "ConfigModel",
    "Duration",
    "EphemeralSubpoolConfig",
    "IntegralGuaranteesConfig",
    "OffloadingPoolSettings",
    "OperationSpec",
    "PoolConfig",
    "PoolPresetConfig",
    "PoolTreeOperationOptions",
    "ResourceAmounts",
    "RuntimeParametersUpdate",
    "StrategyConfig",
    "TagFilter",
    "TagFilterError",
    "TaskSpec",
    "TreeConfig",
    "TreeIntegralGuaranteesConfig",
    "apply_presets",
    "parse_config",
    "parse_duration",
    "patched",
]
