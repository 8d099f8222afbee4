"""The pool-level pointwise minimum of the native core against the Python reference.

A pool's MFFBS is the minimum of its resources' inverses; the native walk takes the steps where
one inverse stays strictly below the other without the other's interpolation, and hands ties,
crossings and shared points back to the general step.  These trees make all of them: resources
whose demand shares are equal (identical inverses: ties everywhere), scaled (one strictly below
the other), or unrelated (crossings), with per-resource guarantees and limits that shift and cut
the inverses differently.  Every double must equal the reference's.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fairshare.differential import differences
from ytsched.fairshare.model import OperationSpec, PoolSpec, TreeSnapshot
from ytsched.fairshare.update import run_update
from ytsched.resources import Vector

TOTAL = (100.0, 400.0, 8.0, 1000.0, 50.0)


def _vector(values: list[float]) -> Vector:
    """Five values as the model's resource vector."""
    a, b, c, d, e = values
    return (a, b, c, d, e)


_amount = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.5, 20.0])


@st.composite
def _demand(draw: st.DrawFn) -> Vector:
    """A demand whose resources are tied, scaled or unrelated to the first one."""
    base = draw(st.floats(0.25, 10.0, allow_nan=False).map(lambda v: round(v * 4) / 4))
    out: list[float] = []
    for total in TOTAL:
        relation = draw(st.sampled_from(["tied", "scaled", "free"]))
        if relation == "tied":
            out.append(base * total / 100.0)
        elif relation == "scaled":
            out.append(base * total / 100.0 * draw(st.sampled_from([0.5, 2.0, 3.0])))
        else:
            out.append(draw(_amount))
    return _vector(out)


@st.composite
def _trees(draw: st.DrawFn) -> TreeSnapshot:
    pools = [PoolSpec(name="<Root>", parent=None)]
    operations = []
    for p in range(draw(st.integers(1, 3))):
        guarantees = draw(st.dictionaries(st.integers(0, 4), st.sampled_from([5.0, 10.0, 40.0])))
        limits = _vector(
            [draw(st.sampled_from([float("inf"), total * 0.3, total * 0.8])) for total in TOTAL]
        )
        name = f"p{p}"
        pools.append(
            PoolSpec(
                name=name,
                parent="<Root>",
                strong_guarantee_resources=guarantees,
                resource_limits=limits,
            )
        )
        for o in range(draw(st.integers(2, 8))):
            demand = draw(_demand())
            used = draw(st.sampled_from([0.0, 0.5, 1.0]))
            operations.append(
                OperationSpec(
                    name=f"{name}-op{o}",
                    parent=name,
                    resource_demand=demand,
                    resource_usage=_vector([d * used for d in demand]),
                    weight=draw(st.sampled_from([1.0, 2.0, 0.5])),
                )
            )
    return TreeSnapshot(total_resource_limits=TOTAL, pools=pools, operations=operations)


@settings(max_examples=60, deadline=None)
@given(_trees())
def test_pool_minimum_matches_reference(snapshot: TreeSnapshot) -> None:
    reference = run_update(snapshot, engine="python")
    native = run_update(snapshot, engine="native")
    found = differences(reference, native)
    assert not found, "\n".join(found)
