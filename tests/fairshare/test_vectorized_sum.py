"""The all-children-at-once numpy sum and the retuned size thresholds change no bit.

:func:`ytsched.fairshare.fast_plf.sum_chains_np` samples every child of a pool in one set of
numpy calls (integer keys locate each point in every child at once); the version it replaced
(:func:`~ytsched.fairshare.fast_plf._sum_chains_np_per_child`, still used for inputs with a sign
bit set) samples one child at a time.  Both must return the same chain as the reference
``plf.sum_functions``, bit for bit: values are compared through their IEEE bit patterns, so even
``0.0`` against ``-0.0`` would fail.  The thresholds that choose between the Python and numpy
versions (:data:`~ytsched.fairshare.fast_plf.NUMPY_MIN_SUM_POINTS`,
:data:`~ytsched.fairshare.fast_plf.NUMPY_MIN_POINTS`) were moved; whole updates must not depend
on where they are.
"""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.strategies import snapshots
from tests.fairshare.test_fast_paths import vector_chains
from ytsched.fairshare import fast_plf, plf
from ytsched.fairshare.model import TreeSnapshot
from ytsched.fairshare.update import UpdateResult, run_update
from ytsched.resources import Vector
from ytsched.snapshot import parse_snapshot

SETTINGS = settings(max_examples=300, deadline=None)


def _bits(chain: tuple[list[float], list[Vector]]) -> bytes:
    xs, ys = chain
    packed = [struct.pack(f"<{len(xs)}d", *xs)]
    packed.extend(struct.pack("<5d", *y) for y in ys)
    return b"".join(packed)


@st.composite
def children(draw: st.DrawFn) -> list[tuple[list[float], list[Vector]]]:
    """Chains as a pool sums them: from 0, scaled, extended to at least 1, some ending later."""
    count = draw(st.integers(2, 40))
    out = []
    for _ in range(count):
        func = draw(vector_chains(right_bound=draw(st.sampled_from([1.0, 1.0, 2.0, 3.5]))))
        scale = draw(st.sampled_from([1.0, 1.0, 2.0, 3.0, 0.5, 6.0]))
        out.append(fast_plf.scale_and_extend(*func.chain(), scale))
    return out


@SETTINGS
@given(children())
def test_vectorized_sum_matches_per_child_and_reference(
    chains: list[tuple[list[float], list[Vector]]],
) -> None:
    total = fast_plf.sum_chains_np(chains)
    assert _bits(total) == _bits(fast_plf._sum_chains_np_per_child(chains))
    reference = plf.sum_functions([plf.PLF.from_chain(xs, ys, plf.VECTOR_OPS) for xs, ys in chains])
    assert _bits(total) == _bits(reference.chain())
    assert all(type(y) is tuple for y in total[1])


def test_negative_zero_takes_the_previous_path() -> None:
    """``-0.0 + 0.0 * t`` is ``+0.0``: such inputs must not take the vectorized path, but the
    one they took before it existed (Python below 48 points, per-child numpy from there on)."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0)
    negative = (-0.0, 0.0, 0.0, 0.0, 0.0)
    one = (1.0, 0.5, 0.0, 0.25, 0.0)
    small = [
        ([0.0, 0.5, 1.0], [zero, negative, negative]),
        ([0.0, 0.25, 1.0], [zero, one, one]),
    ]
    assert _bits(fast_plf.sum_chains_np(small)) == _bits(fast_plf._sum_chains_python(small))
    ramp = [(0.02 * i, 0.01 * i, 0.0, 0.0, 0.0) for i in range(1, 50)]
    large = [*small, ([0.0, *(0.02 * i for i in range(1, 50))], [zero, *ramp])]
    assert sum(len(xs) for xs, _ in large) >= 48
    assert _bits(fast_plf.sum_chains_np(large)) == _bits(fast_plf._sum_chains_np_per_child(large))


def _outputs(result: UpdateResult) -> list[Any]:
    out: list[Any] = []
    for element in [result.root, *result.pools.values(), *result.operations.values()]:
        functions = [element.fsbff, element.mffbs, element.fsbs]
        chains = [f.chain() for f in functions if f is not None]
        out.append(
            (
                element.name,
                [struct.pack(f"<{len(xs)}d", *xs) for xs, _ in chains],
                [repr(ys) for _, ys in chains],
                repr(element.fair_share),
                repr(element.promised_guarantee_fair_share),
            )
        )
    return out


def _run_with_thresholds(snapshot: TreeSnapshot, sum_points: int, points: int) -> list[Any]:
    saved = fast_plf.NUMPY_MIN_SUM_POINTS, fast_plf.NUMPY_MIN_POINTS
    fast_plf.NUMPY_MIN_SUM_POINTS, fast_plf.NUMPY_MIN_POINTS = sum_points, points
    try:
        return _outputs(run_update(snapshot))
    finally:
        fast_plf.NUMPY_MIN_SUM_POINTS, fast_plf.NUMPY_MIN_POINTS = saved


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([{}, {"enable_step_function_for_gang_operations": True}]).flatmap(
        lambda options: snapshots(max_pools=8, max_operations=40, options=options)
    )
)
def test_updates_do_not_depend_on_the_numpy_thresholds(document: dict[str, Any]) -> None:
    """Every element's functions and shares are the same with numpy always and never used."""
    snapshot = parse_snapshot(document)
    never = _run_with_thresholds(snapshot, 1 << 30, 1 << 30)
    always = _run_with_thresholds(snapshot, 0, 0)
    assert never == always
