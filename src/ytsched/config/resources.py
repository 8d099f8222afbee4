"""Resource maps in configs: ``{cpu = 10; user_memory = 1024; user_slots = 5}``.

A map names some of the five resources (``user_slots, cpu, gpu, memory, network``; ``memory``
is also accepted as ``user_memory``, the spelling of absolute resources in YTsaurus).  What a
missing resource means depends on the option: nothing guaranteed in a guarantee, no limit in a
limit.  cpu is rounded to 0.01 like YTsaurus's fixed-point cpu; the others are integers.
"""

from __future__ import annotations

from pydantic import field_validator

from ytsched.config.base import ConfigModel, option
from ytsched.resources import (
    CPU_INDEX,
    INFINITE_AMOUNT,
    RESOURCE_COUNT,
    RESOURCE_NAMES,
    Vector,
    round_amount,
)


class ResourceAmounts(ConfigModel):
    """Absolute amounts of some resources; unnamed resources are *unspecified*."""

    user_slots: int | None = option(None, "Job slots (one per job).", ge=0)
    cpu: float | None = option(None, "Cores (fixed point, 0.01 steps).", ge=0, allow_inf_nan=False)
    gpu: int | None = option(None, "GPUs.", ge=0)
    memory: int | None = option(None, "Bytes of memory.", "user_memory", ge=0)
    network: int | None = option(None, "Abstract network units.", ge=0)

    @field_validator("cpu")
    @classmethod
    def _round_cpu(cls, value: float | None) -> float | None:
        return None if value is None else round_amount(CPU_INDEX, value)

    def specified(self) -> dict[int, float]:
        """``{resource index: amount}`` for the resources the map names."""
        result: dict[int, float] = {}
        for index, name in enumerate(RESOURCE_NAMES):
            value = getattr(self, name)
            if value is not None:
                result[index] = float(value)
        return result

    def to_vector(self, missing: float) -> Vector:
        """All five amounts, ``missing`` for the unnamed ones."""
        values = [missing] * RESOURCE_COUNT
        for index, amount in self.specified().items():
            values[index] = amount
        return (values[0], values[1], values[2], values[3], values[4])

    def limits_vector(self) -> Vector:
        """As a limit: unnamed resources are unlimited (``INFINITE_AMOUNT``)."""
        return self.to_vector(INFINITE_AMOUNT)

    def as_map(self) -> dict[str, float]:
        """The named resources with canonical names."""
        return {RESOURCE_NAMES[index]: amount for index, amount in self.specified().items()}

    def is_empty(self) -> bool:
        return not self.specified()
