"""``LogNormalDuration.samples`` (an operation's job durations drawn at once) gives the very
doubles, in order, that as many :meth:`sample` calls give from the same generator state."""

from __future__ import annotations

import math
import random
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ytsched.simulator.scenario import LogNormalDuration


def _one_by_one(distribution: LogNormalDuration, rng: random.Random, count: int) -> list[float]:
    """The draws as the model defines them (the expression before ``samples`` existed)."""
    low = distribution.min / 1000.0
    high = math.inf if distribution.max is None else distribution.max / 1000.0
    return [
        min(
            max(
                rng.lognormvariate(math.log(distribution.median / 1000.0), distribution.sigma), low
            ),
            high,
        )
        for _ in range(count)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    median=st.integers(1, 10**7),
    sigma=st.floats(0.0, 3.0),
    low=st.integers(0, 10**6),
    span=st.none() | st.integers(0, 10**7),
    count=st.integers(0, 40),
    seed=st.integers(0, 2**32),
)
def test_samples_are_the_draws_one_by_one(
    median: int, sigma: float, low: int, span: int | None, count: int, seed: int
) -> None:
    distribution = LogNormalDuration.model_validate(
        {"median": median, "sigma": sigma, "min": low, "max": None if span is None else low + span}
    )
    drawn = distribution.samples(random.Random(seed), count)
    rng = random.Random(seed)
    single = [distribution.sample(rng) for _ in range(count)]
    expected = _one_by_one(distribution, random.Random(seed), count)
    pack = struct.Struct(f"{count}d").pack
    assert pack(*drawn) == pack(*single) == pack(*expected)
