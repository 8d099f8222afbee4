"""Resources: absolute amounts, share vectors and the dominant resource.

YTsaurus tracks exactly five resources in a fixed order (``user_slots, cpu, gpu, memory,
network``; see ``yt/yt/library/vector_hdrf/job_resources.h``).  Every share vector and every
absolute amount in ytsched uses that order, as a plain tuple of five floats, so the hot paths of
the fair-share update can do arithmetic without dictionaries.

Absolute amounts follow the YTsaurus types: cpu is a fixed-point number with two decimal digits,
the other resources are integers.  A missing resource in a *limit* means "unlimited"; in demand
and usage it means zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Final

RESOURCE_NAMES: Final = ("user_slots", "cpu", "gpu", "memory", "network")
"""The five resources, in the YTsaurus order (index 0..4)."""

RESOURCE_COUNT: Final = 5
CPU_INDEX: Final = 1
GPU_INDEX: Final = 2
MEMORY_INDEX: Final = 3

RESOURCE_ALIASES: Final = {"user_memory": "memory"}
"""Input spellings accepted besides the canonical names (absolute amounts use ``user_memory``)."""

INFINITE_AMOUNT: Final = float(2**63 - 1) / 4
MAX_INPUT_AMOUNT: Final = 2**64 - 1
"""The largest amount an input may give (YSON's uint64); larger ones are refused."""
"""YTsaurus represents an unlimited amount as the type's maximum divided by four."""

Vector = tuple[float, float, float, float, float]
"""A share vector or absolute amounts, indexed like :data:`RESOURCE_NAMES`."""

ZERO: Final[Vector] = (0.0, 0.0, 0.0, 0.0, 0.0)
ONES: Final[Vector] = (1.0, 1.0, 1.0, 1.0, 1.0)
EPSILON: Final = 1e-9
"""``NVectorHdrf::Epsilon``: tolerance of share comparisons."""
EPSILON_VECTOR: Final[Vector] = (EPSILON, EPSILON, EPSILON, EPSILON, EPSILON)
INFINITE_RESOURCES: Final[Vector] = (
    INFINITE_AMOUNT,
    INFINITE_AMOUNT,
    INFINITE_AMOUNT,
    INFINITE_AMOUNT,
    INFINITE_AMOUNT,
)


class ResourceError(ValueError):
    """A resource map names an unknown resource or holds a bad amount."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def canonical_resource_name(name: str) -> str:
    """Map an input spelling (``user_memory``) to its canonical name, or raise."""
    canonical = RESOURCE_ALIASES.get(name, name)
    if canonical not in RESOURCE_NAMES:
        raise ResourceError(
            f"unknown resource {name!r} (expected one of {', '.join(RESOURCE_NAMES)}"
            " or user_memory)",
            field=name,
        )
    return canonical


def round_amount(index: int, value: float) -> float:
    """Round an absolute amount to the grid of its YTsaurus type.

    cpu is ``TFixedPointNumber<i64, 2>`` (0.01 steps); the rest are integers.  Infinite values
    stay infinite.
    """
    if value >= INFINITE_AMOUNT:
        return INFINITE_AMOUNT
    if index == CPU_INDEX:
        return round(value * 100.0) / 100.0
    return float(round(value))


def parse_amounts(
    raw: Mapping[str, object] | None,
    *,
    missing: float,
    what: str,
    allow_negative: bool = False,
) -> Vector:
    """Read a resource map (``{cpu = 10; user_memory = 1024}``) into a vector.

    ``missing`` fills resources the map does not name (0 for demand, infinity for limits).
    Raises :class:`ResourceError` naming ``what`` and the offending resource.
    """
    values = [missing] * RESOURCE_COUNT
    if raw is None:
        return (values[0], values[1], values[2], values[3], values[4])
    if not isinstance(raw, Mapping):
        raise ResourceError(f"{what}: expected a map of resources, got {type(raw).__name__}")
    seen: set[str] = set()
    for key, value in raw.items():
        name = canonical_resource_name(str(key))
        if name in seen:
            raise ResourceError(f"{what}: resource {name!r} given twice", field=str(key))
        seen.add(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ResourceError(
                f"{what}.{key}: expected a number, got {type(value).__name__}", field=str(key)
            )
        if isinstance(value, int) and value > MAX_INPUT_AMOUNT:
            raise ResourceError(
                f"{what}.{key}: amount {value} is beyond uint64 ({MAX_INPUT_AMOUNT})",
                field=str(key),
            )
        amount = float(value)
        if math.isnan(amount):
            raise ResourceError(f"{what}.{key}: amount is NaN", field=str(key))
        if math.isinf(amount) or amount > MAX_INPUT_AMOUNT:
            # %inf, Infinity or a literal like 1e5000 that overflowed: a mistake, not a limit
            # (an unlimited resource is simply left out of a limits map).
            raise ResourceError(
                f"{what}.{key}: amount {value} is not a finite amount within uint64",
                field=str(key),
            )
        if amount < 0 and not allow_negative:
            raise ResourceError(f"{what}.{key}: amount {value} is negative", field=str(key))
        index = RESOURCE_NAMES.index(name)
        values[index] = round_amount(index, amount) if math.isfinite(amount) else INFINITE_AMOUNT
    return (values[0], values[1], values[2], values[3], values[4])


def amounts_to_map(vector: Iterable[float]) -> dict[str, float]:
    """A vector as a ``{resource: value}`` map with canonical names."""
    return dict(zip(RESOURCE_NAMES, vector, strict=True))


def share_of(amounts: Vector, total: Vector) -> Vector:
    """``amount / total`` per resource; a resource whose total is 0 has share 0.

    Mirrors ``TResourceVector::FromJobResources`` (0/0 -> 0 and x/0 -> 0).
    """
    return (
        amounts[0] / total[0] if total[0] else 0.0,
        amounts[1] / total[1] if total[1] else 0.0,
        amounts[2] / total[2] if total[2] else 0.0,
        amounts[3] / total[3] if total[3] else 0.0,
        amounts[4] / total[4] if total[4] else 0.0,
    )


def dominant_resource(amounts: Vector, total: Vector) -> str:
    """The resource with the largest ``amount/total``, skipping zero totals.

    Ties keep the earlier resource; when every ratio is 0 the answer is ``cpu``
    (``GetDominantResource`` in ``job_resources.cpp``).
    """
    best = CPU_INDEX
    best_ratio = 0.0
    for index in range(RESOURCE_COUNT):
        if total[index] > 0:
            ratio = amounts[index] / total[index]
            if ratio > best_ratio:
                best_ratio = ratio
                best = index
    return RESOURCE_NAMES[best]


def max_resource_ratio(amounts: Vector, total: Vector) -> float:
    """Largest ``amount/total`` over resources with a non-zero total (0 if none)."""
    result = 0.0
    for index in range(RESOURCE_COUNT):
        if total[index] > 0:
            result = max(result, amounts[index] / total[index])
    return result


def min_resource_ratio(amounts: Vector, total: Vector) -> float:
    """Smallest ``amount/total`` over resources with a non-zero total (0 if none)."""
    result: float | None = None
    for index in range(RESOURCE_COUNT):
        if total[index] > 0:
            ratio = amounts[index] / total[index]
            result = ratio if result is None else min(result, ratio)
    return 0.0 if result is None else result


def scale_amounts(amounts: Vector, factor: float) -> Vector:
    """Absolute amounts times a double, rounded to each type's grid (``TJobResources * double``)."""
    return (
        round_amount(0, amounts[0] * factor),
        round_amount(1, amounts[1] * factor),
        round_amount(2, amounts[2] * factor),
        round_amount(3, amounts[3] * factor),
        round_amount(4, amounts[4] * factor),
    )


# --- share-vector arithmetic ---------------------------------------------------------------


def vadd(a: Vector, b: Vector) -> Vector:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])


def vsub(a: Vector, b: Vector) -> Vector:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4])


def vscale(a: Vector, k: float) -> Vector:
    return (a[0] * k, a[1] * k, a[2] * k, a[3] * k, a[4] * k)


def vmin(a: Vector, b: Vector) -> Vector:
    return (
        a[0] if a[0] < b[0] else b[0],
        a[1] if a[1] < b[1] else b[1],
        a[2] if a[2] < b[2] else b[2],
        a[3] if a[3] < b[3] else b[3],
        a[4] if a[4] < b[4] else b[4],
    )


def vmax(a: Vector, b: Vector) -> Vector:
    return (
        a[0] if a[0] > b[0] else b[0],
        a[1] if a[1] > b[1] else b[1],
        a[2] if a[2] > b[2] else b[2],
        a[3] if a[3] > b[3] else b[3],
        a[4] if a[4] > b[4] else b[4],
    )


def vconst(x: float) -> Vector:
    return (x, x, x, x, x)


def dominates(a: Vector, b: Vector) -> bool:
    """``a >= b`` in every component (YTsaurus ``Dominates``)."""
    return a[0] >= b[0] and a[1] >= b[1] and a[2] >= b[2] and a[3] >= b[3] and a[4] >= b[4]


def vmaxcomp(a: Vector) -> float:
    """The largest component (``MaxComponent``)."""
    return max(a)


def vsum(vectors: Iterable[Vector]) -> Vector:
    s0 = s1 = s2 = s3 = s4 = 0.0
    for v in vectors:
        s0 += v[0]
        s1 += v[1]
        s2 += v[2]
        s3 += v[3]
        s4 += v[4]
    return (s0, s1, s2, s3, s4)
