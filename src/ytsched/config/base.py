"""Shared pieces of the configuration models: the base model, durations, errors.

Every option of a tree, a pool or an operation spec is declared exactly once, as a field of a
pydantic model in this package, with its YTsaurus name, the aliases YTsaurus accepts, its type,
its default, its validation and a description (``docs/configuration.md`` is generated from the
descriptions).  Nothing else in ytsched restates a default.

Conventions (mirroring the YSON-struct configs of YTsaurus, ``yt/yt/core/ytree/yson_struct.h``):

* unknown keys are rejected (YTsaurus keeps them; we refuse them so that typos surface);
* aliases are accepted on input; the canonical name is used everywhere else;
* durations are ``TDuration`` values: an integer (or float) number of **milliseconds**, as
  YTsaurus reads them from YSON, or a string with a unit (``"30s"``, ``"100ms"``, ``"5m"``,
  ``"1h"``, ``"1d"``).  They are stored as integer milliseconds.
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ytsched.errors import YtschedError

MIN_WEIGHT = 1.4901161193847656e-08
"""sqrt(DBL_EPSILON): the smallest weight YTsaurus accepts (``TPoolConfig`` validation)."""
MAX_WEIGHT = 1.0 / MIN_WEIGHT
"""The largest accepted weight (1 / sqrt(DBL_EPSILON))."""


class ConfigError(YtschedError):
    """A configuration document (tree, pool, operation spec) is invalid."""


class ConfigModel(BaseModel):
    """Base of every configuration model: strict keys, aliases accepted, immutable.

    Scalar options are typed strictly, as YTsaurus's YSON structs read them
    (``yt/yt/core/ytree/serialize.cpp``): a boolean is not a number, a string is not a number,
    and a number is not a boolean, so ``set`` of ``%true`` into ``max_operation_count`` is
    refused instead of becoming 1 (see :func:`_scalar_problem`).  Integers are accepted for
    float options, and ``"true"`` / ``"false"`` for boolean ones, as YTsaurus accepts them.
    """

    model_config = ConfigDict(
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
        frozen=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _strict_scalars(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        kinds = _input_kinds(cls)
        for key, value in data.items():
            kind = kinds.get(key) if isinstance(key, str) else None
            if kind is None or value is None:
                continue
            problem = _scalar_problem(kind, value)
            if problem is not None:
                # ``error_from_validation`` puts ``field`` into the error's path.
                raise PydanticCustomError(
                    STRICT_SCALAR_ERROR, "{field}: {problem}", {"field": key, "problem": problem}
                )
        return data


STRICT_SCALAR_ERROR = "strict_scalar"
"""Error type of a scalar of the wrong YSON type (see :meth:`ConfigModel._strict_scalars`)."""

_KINDS: dict[type, dict[str, type]] = {}


def _input_kinds(model: type[BaseModel]) -> dict[str, type]:
    """Input key (name or alias) -> ``int`` / ``float`` / ``bool`` for the scalar options of
    ``model``; types with their own parser (durations) are left to it."""
    kinds = _KINDS.get(model)
    if kinds is None:
        kinds = {}
        for name, info in model.model_fields.items():
            if any(isinstance(meta, BeforeValidator) for meta in info.metadata):
                continue
            kind = _scalar_kind(info.annotation)
            if kind is None:
                continue
            kinds[name] = kind
            alias = info.validation_alias
            if isinstance(alias, AliasChoices):
                for choice in alias.choices:
                    if isinstance(choice, str):
                        kinds[choice] = kind
            elif isinstance(alias, str):
                kinds[alias] = kind
        _KINDS[model] = kinds
    return kinds


def _scalar_kind(annotation: Any) -> type | None:
    """``int``, ``float`` or ``bool`` for ``X`` / ``X | None`` annotations (also through
    ``Annotated`` constraints), else None; types with their own parser (durations) are left to
    it."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(args) != 1:
            return None
        annotation = args[0]
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        if any(isinstance(meta, BeforeValidator) for meta in metadata):
            return None
        annotation = base
    if annotation in (int, float, bool):
        return annotation  # type: ignore[no-any-return]
    return None


def _scalar_problem(kind: type, value: object) -> str | None:
    """Why ``value`` is not a YSON value of ``kind`` (None if it is)."""
    if kind is bool:
        if isinstance(value, bool) or value in ("true", "false"):
            return None
        return f"expected a boolean, got {type(value).__name__} {value!r}"
    if isinstance(value, bool):
        return f"expected {'an integer' if kind is int else 'a number'}, got a boolean"
    if isinstance(value, str):
        return f"expected {'an integer' if kind is int else 'a number'}, got a string {value!r}"
    return None


def option(default: Any, description: str, *aliases: str, **constraints: Any) -> Any:
    """A documented field; ``aliases`` are the other input spellings YTsaurus accepts."""
    if aliases:
        return Field(
            default,
            description=description,
            validation_alias=AliasChoices(*aliases),
            **constraints,
        )
    return Field(default, description=description, **constraints)


_DURATION_UNITS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0, "d": 86_400_000.0}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")


def parse_duration(value: object) -> int:
    """A ``TDuration`` from YSON: milliseconds as a number, or a string with a unit."""
    if isinstance(value, bool):
        raise ValueError("expected a duration (milliseconds or a string like '30s')")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"duration must be a finite number of milliseconds >= 0, got {value}")
        return round(value)
    if isinstance(value, str):
        match = _DURATION_RE.match(value)
        if match is None:
            raise ValueError(f"cannot parse duration {value!r} (use e.g. 30000, '30s', '100ms')")
        amount = float(match.group(1)) * _DURATION_UNITS[match.group(2) or "ms"]
        return round(amount)
    raise ValueError(f"expected a duration, got {type(value).__name__}")


Duration = Annotated[int, BeforeValidator(parse_duration)]
"""A duration in integer milliseconds (see :func:`parse_duration`)."""

Weight = Annotated[float, Field(ge=MIN_WEIGHT, le=MAX_WEIGHT)]
"""A weight within [sqrt(DBL_EPSILON), 1/sqrt(DBL_EPSILON)]."""

M = TypeVar("M", bound=BaseModel)


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def error_location(item: Mapping[str, Any]) -> tuple[tuple[int | str, ...], str]:
    """The location and message of one pydantic error item; a strict-scalar error names its
    field in the location (it is raised for the whole model)."""
    loc = tuple(item.get("loc", ()))
    message = str(item.get("msg", "invalid value"))
    context = item.get("ctx") or {}
    if item.get("type") == STRICT_SCALAR_ERROR and "field" in context:
        return (*loc, str(context["field"])), str(context.get("problem", message))
    return loc, message


def error_from_validation(error: ValidationError, what: str) -> ConfigError:
    """Turn a pydantic error into an ``InvalidConfig`` error naming ``what`` and the field."""
    problems = []
    for item in error.errors(include_url=False):
        loc, message = error_location(item)
        path = _location(loc)
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        problems.append((path, message))
    path, message = problems[0]
    where = f"{what}: {path}" if path else what
    return ConfigError(
        "InvalidConfig",
        f"{where}: {message}",
        field=path,
        errors=[{"field": p, "message": m} for p, m in problems],
    )


def parse_config(model: type[M], data: object, what: str) -> M:
    """Validate ``data`` (a mapping, an instance, or None for defaults) as ``model``.

    Raises :class:`ConfigError` with code ``InvalidConfig`` naming ``what`` and the field path.
    """
    if isinstance(data, model):
        return data
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            "InvalidConfig", f"{what}: expected a map, got {type(data).__name__}", field=""
        )
    try:
        return model.model_validate(dict(data))
    except ValidationError as error:
        raise error_from_validation(error, what) from None


def canonical_keys(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with every alias replaced by its canonical field name (unknown keys kept)."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            for choice in alias.choices:
                if isinstance(choice, str):
                    names[choice] = name
        elif isinstance(alias, str):
            names[alias] = name
    return {names.get(key, key): value for key, value in data.items()}


def aliases_of(model: type[BaseModel], field: str) -> list[str]:
    """The input spellings of ``field`` other than its name (for the generated docs)."""
    alias = model.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return [c for c in alias.choices if isinstance(c, str) and c != field]
    if isinstance(alias, str) and alias != field:
        return [alias]
    return []


def patched(model: type[M], current: M, patch: Mapping[str, Any], what: str) -> M:
    """``current`` with the options of ``patch`` set (``None`` resets an option), validated.

    Only options that were explicitly set stay set, so defaults keep following the model.
    """
    data = current.model_dump(exclude_unset=True)
    for key, value in canonical_keys(model, patch).items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return parse_config(model, data, what)
