"""The node-level tests the idle paths ask per heartbeat and per parked node
(``scheduler._has_spare``, and ``fits`` in ``heartbeat_would_act``) are native calls: they
give what the Python expressions they replace give, on any floats (signed zeros, infinities,
NaN, values around the epsilon)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ytsched.scheduling.satisfaction import RESOURCE_EPSILON, fits
from ytsched.scheduling.scheduler import _has_spare

_EDGES = st.sampled_from(
    [0.0, -0.0, 1.0, 32.0, RESOURCE_EPSILON, -RESOURCE_EPSILON, 1e-12, float("inf"), float("nan")]
)
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | _EDGES
_VECTORS = st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS, _FLOATS)


def _spare_reference(
    limits: tuple[float, ...], usage: tuple[float, ...], min_spare: tuple[float, ...]
) -> bool:
    return all(min_spare[i] <= limits[i] - usage[i] + RESOURCE_EPSILON for i in range(5))


@given(
    limits=_VECTORS, usage=_VECTORS, min_spare=_VECTORS, max_started=st.none() | st.integers(-2, 3)
)
def test_has_spare_is_the_python_test(
    limits: tuple[float, float, float, float, float],
    usage: tuple[float, float, float, float, float],
    min_spare: tuple[float, float, float, float, float],
    max_started: int | None,
) -> None:
    expected = (max_started is None or max_started > 0) and _spare_reference(
        limits, usage, min_spare
    )
    assert _has_spare(limits, usage, min_spare, max_started) is expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(usage=_VECTORS, limits=_VECTORS)
def test_fits_is_the_python_test(
    usage: tuple[float, float, float, float, float],
    limits: tuple[float, float, float, float, float],
) -> None:
    expected = all(usage[i] <= limits[i] + RESOURCE_EPSILON for i in range(5))
    assert fits(usage, limits) is expected


def test_small_ints_as_python_gives_them() -> None:
    """Integer amounts (a caller's own vectors) take the generic path with the same answer."""
    assert _has_spare((4, 4, 0, 8, 0), (3, 4, 0, 8, 0), (1, 0, 0, 0, 0), None)
    assert not _has_spare((4, 4, 0, 8, 0), (3, 4, 0, 8, 0), (2, 0, 0, 0, 0), None)
    assert not _has_spare((4, 4, 0, 8, 0), (0, 0, 0, 0, 0), (0, 0, 0, 0, 0), 0)
