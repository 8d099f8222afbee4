"""The heartbeat path's written-out forms against their plain definitions (issue 15, round
seven): each must return exactly what the plain form returns (``==`` on every float, the same
enum members)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduling.satisfaction_reference import (
    local_satisfaction as reference_local_satisfaction,
)
from ytsched.scheduling.preemptible import (
    PreemptibleList,
    PreemptionBounds,
    PreemptionStatus,
    preemption_level,
)
from ytsched.scheduling.satisfaction import ShareView

share = st.sampled_from([0.0, 1e-12, 0.1, 0.25, 0.5, 1.0 / 3.0, 1.0])
amount = st.sampled_from([0.0, -0.0, 1.0, 2.5, 3.0, 10.0, 48.0, 1e6])
vector = st.tuples(share, share, share, share, share)
amounts = st.tuples(amount, amount, amount, amount, amount)


@settings(max_examples=400, deadline=None)
@given(vector, vector, amounts, amounts)
def test_local_satisfaction_matches_the_plain_loops(
    fair: tuple[float, float, float, float, float],
    demand: tuple[float, float, float, float, float],
    total: tuple[float, float, float, float, float],
    usage: tuple[float, float, float, float, float],
) -> None:
    view = ShareView.create(fair, demand, (0.0,) * 5, total)
    got = view.local_satisfaction(usage)
    expected = reference_local_satisfaction(view, usage)
    assert repr(got) == repr(expected)


class _Item:
    """What the list reads of an allocation (usage and its index)."""

    def __init__(self, usage: tuple[float, float, float, float, float]) -> None:
        self.usage = usage
        self.list_index = -1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([1.0, 2.0, 4.0]), min_size=0, max_size=12),
    st.sampled_from([0.05, 0.2, 0.5, 1.0]),
    st.booleans(),
    st.booleans(),
)
def test_classify_is_status_and_level(
    cpus: list[float], fair: float, aggressive_allowed: bool, published: bool
) -> None:
    plist = PreemptibleList()
    items = [_Item((cpu, cpu, 0.0, 0.0, 0.0)) for cpu in cpus]
    for item in items:
        plist.append(item)  # type: ignore[arg-type]
    if published:
        view = ShareView.create((fair,) * 5, (1.0,) * 5, (0.0,) * 5, (16.0,) * 5)
        bounds = PreemptionBounds.create(
            view,
            preemption_satisfaction_threshold=1.0,
            aggressive_preemption_satisfaction_threshold=0.5,
            threshold=None,
        )
        plist.publish(bounds)
    for item in items:
        status = plist.status(item)  # type: ignore[arg-type]
        assert isinstance(status, PreemptionStatus)
        assert plist.classify(item, aggressive_allowed) == (  # type: ignore[arg-type]
            status,
            preemption_level(status, aggressive_allowed),
        )
