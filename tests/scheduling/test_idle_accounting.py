"""Idle heartbeats accounted in closed form give the preemptive-scheduling timestamp the
heartbeat-by-heartbeat walk gives, bit for bit (``scheduler.last_pass_time``)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ytsched.scheduling.scheduler import last_pass_time


def _walk(
    last: float | None, backoff: float, phase: float, first: int, stop: int, period: float
) -> float | None:
    """What ``process_heartbeat`` does for each idle heartbeat, one at a time."""
    for k in range(first, stop):
        time = phase + k * period
        if last is None or time > last + backoff:
            last = time
    return last


_PERIODS = st.one_of(
    st.sampled_from([0.1, 1.0, 5.0, 5.000000000000001, 30.0, 60.0]),
    st.floats(min_value=1e-3, max_value=120.0),
)
_BACKOFFS = st.one_of(
    st.sampled_from([0.0, 4.999999999999999, 5.0, 5.000000000000001, 30.0]),
    st.floats(min_value=0.0, max_value=120.0),
)


@settings(max_examples=600, deadline=None)
@given(
    period=_PERIODS,
    backoff=_BACKOFFS,
    phase_fraction=st.floats(min_value=0.0, max_value=0.999999),
    first=st.integers(min_value=0, max_value=2_000_000),
    count=st.integers(min_value=0, max_value=300),
    last_offset=st.one_of(st.none(), st.floats(min_value=-200.0, max_value=200.0)),
)
@example(period=5.0, backoff=5.0, phase_fraction=0.3, first=17_000, count=200, last_offset=0.0)
@example(period=30.0, backoff=5.0, phase_fraction=0.7, first=2_879, count=3, last_offset=-1.0)
def test_closed_form_is_the_walk(
    period: float,
    backoff: float,
    phase_fraction: float,
    first: int,
    count: int,
    last_offset: float | None,
) -> None:
    phase = phase_fraction * period
    start = phase + first * period
    last = None if last_offset is None else start + last_offset
    stop = first + count
    expected = _walk(last, backoff, phase, first, stop, period)
    assert repr(last_pass_time(last, backoff, phase, first, stop, period)) == repr(expected)


def test_a_tick_equal_to_the_backoff_is_walked() -> None:
    """Period equal to the backoff: whether a pass is due depends on rounding (both happen),
    so the closed form must not apply, and the walk's answer is what comes back."""
    period = backoff = 5.0
    phase = 0.123456789  # a phase where rounding makes a few passes due (most are not)
    due = skipped = 0
    for k in range(1, 20_000):
        previous = phase + (k - 1) * period
        got = last_pass_time(previous, backoff, phase, k, k + 1, period)
        assert repr(got) == repr(_walk(previous, backoff, phase, k, k + 1, period))
        if got == previous:
            skipped += 1
        else:
            due += 1
    assert due > 0 and skipped > 0


@settings(max_examples=200, deadline=None)
@given(
    period=st.one_of(st.integers(min_value=1, max_value=60), st.floats(1e-3, 120.0)),
    backoff=st.one_of(st.integers(min_value=0, max_value=60), st.floats(0.0, 120.0)),
    phase=st.one_of(st.integers(min_value=0, max_value=30), st.floats(0.0, 30.0)),
    first=st.one_of(st.integers(0, 1000), st.just(2**70)),
    count=st.integers(min_value=0, max_value=50),
    last=st.one_of(st.none(), st.integers(-100, 100), st.floats(-100.0, 100.0)),
)
def test_the_walk_keeps_python_numbers(
    period: float, backoff: float, phase: float, first: int, count: int, last: float | None
) -> None:
    """The walk runs natively for floats only: ints (and ticks beyond a C integer) take the
    Python loop, so the result is the very number, of the very type, the walk gives."""
    stop = first + count
    expected = _walk(last, backoff, phase, first, stop, period)
    got = last_pass_time(last, backoff, phase, first, stop, period)
    assert (type(got), repr(got)) == (type(expected), repr(expected))
