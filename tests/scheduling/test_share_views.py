"""``ShareView.create`` (written per resource, with ``measured`` kept for the last total)
equals the plain definition of each field, bit for bit (by ``repr``, which tells ``-0.0``
from ``0.0``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ytsched.resources import EPSILON
from ytsched.scheduling.satisfaction import ShareView


def reference_view(
    fair: tuple[float, ...],
    demand: tuple[float, ...],
    usage: tuple[float, ...],
    total: tuple[float, ...],
) -> ShareView:
    """Each field from its definition (the fields' docstrings), in generator form."""
    blocked = tuple(fair[i] >= demand[i] for i in range(5))
    fair_amounts = tuple(fair[i] * total[i] for i in range(5))
    measured = tuple(i for i in range(5) if total[i])
    return ShareView(
        fair,  # type: ignore[arg-type]
        demand,  # type: ignore[arg-type]
        usage,  # type: ignore[arg-type]
        total,  # type: ignore[arg-type]
        blocked,  # type: ignore[arg-type]
        all(blocked),
        all(x <= EPSILON for x in fair),
        fair_amounts,  # type: ignore[arg-type]
        measured,
        tuple(i for i in measured if not blocked[i] and fair_amounts[i] != 0.0),
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
    expected = reference_view(fair, demand, usage, total)
    # Twice: the second call reads the kept ``measured`` of the same total.
    for _ in range(2):
        got = ShareView.create(fair, demand, usage, total)  # type: ignore[arg-type]
        assert repr(got) == repr(expected)
        assert got == expected


def test_share_view_with_another_total_of_equal_value() -> None:
    """The kept ``measured`` is for that very total; another object is computed anew."""
    fair = demand = usage = (0.1, 0.1, 0.0, 0.1, 0.0)
    first = ShareView.create(fair, demand, usage, (1.0, 1.0, 0.0, 1.0, 0.0))
    second = ShareView.create(fair, demand, usage, (1.0, 0.0, 1.0, 1.0, 0.0))
    assert first.measured == (0, 1, 3)
    assert second.measured == (0, 2, 3)
