"""The update path's written-out views and statuses equal their definitions, bit for bit:
``share_view`` is ``ShareView.create`` field by field (by ``repr``, which tells ``-0.0``
from ``0.0``), and ``operation_status`` is ``schedulable_status`` with the operation's
tolerance."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.scheduling.satisfaction import ShareView
from ytsched.scheduling.share_views import share_view
from ytsched.scheduling.starvation import (
    operation_status,
    operation_tolerance,
    schedulable_status,
)

# Shares near each other and near the thresholds (zero, 1e-9, 1e-4 apart) as well as
# arbitrary ones, so that blocked, zero and tolerance cases all occur.
_COMPONENT = st.one_of(
    st.sampled_from([0.0, -0.0, 1e-9, 2e-9, 1e-4, 0.1, 0.5, 0.5 + 1e-10, 0.5 + 2e-4, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
_VECTOR = st.tuples(_COMPONENT, _COMPONENT, _COMPONENT, _COMPONENT, _COMPONENT)
_TOTAL = st.tuples(*[st.sampled_from([0.0, 1.0, 32.0, 1000.0, 2.0**40]) for _ in range(5)])


@settings(max_examples=400, deadline=None)
@given(_VECTOR, _VECTOR, _VECTOR, _TOTAL)
def test_share_view_is_create(
    fair: tuple[float, ...],
    demand: tuple[float, ...],
    usage: tuple[float, ...],
    total: tuple[float, ...],
) -> None:
    expected = ShareView.create(fair, demand, usage, total)  # type: ignore[arg-type]
    # Twice: the second call reads the kept ``measured`` of the same total.
    for _ in range(2):
        got = share_view(fair, demand, usage, total)  # type: ignore[arg-type]
        assert repr(got) == repr(expected)
        assert got == expected


def test_share_view_with_another_total_of_equal_value() -> None:
    """The kept ``measured`` is for that very total; another object is computed anew."""
    fair = demand = usage = (0.1, 0.1, 0.0, 0.1, 0.0)
    first = share_view(fair, demand, usage, (1.0, 1.0, 0.0, 1.0, 0.0))
    second = share_view(fair, demand, usage, (1.0, 0.0, 1.0, 1.0, 0.0))
    assert first.measured == (0, 1, 3)
    assert second.measured == (0, 2, 3)


@settings(max_examples=400, deadline=None)
@given(_VECTOR, _VECTOR, _VECTOR, _TOTAL, st.sampled_from([0.0, 0.5, 0.8, 1.0, 1.5]))
def test_operation_status_is_the_status_with_the_operation_tolerance(
    fair: tuple[float, ...],
    demand: tuple[float, ...],
    usage: tuple[float, ...],
    total: tuple[float, ...],
    tolerance: float,
) -> None:
    view = ShareView.create(fair, demand, usage, total)  # type: ignore[arg-type]
    expected = schedulable_status(view, operation_tolerance(view, tolerance), view.usage_share)
    assert operation_status(view, tolerance) is expected
