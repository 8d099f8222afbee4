"""The fast paths build exactly the reference implementation's functions.

:mod:`ytsched.fairshare.fast_plf` re-implements the piecewise-linear machinery of
:mod:`ytsched.fairshare.plf` (the straightforward port of YTsaurus's library) for speed.  It
promises identical results, segment for segment and bit for bit, so these tests compare with
``==`` and no tolerance: first each primitive on random monotone functions (with jumps,
crossings, limits and guarantees), then whole updates on random trees, where every element's
three functions and fair share must agree with the ones built under
:func:`~ytsched.fairshare.functions.reference_implementation`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.strategies import snapshots
from ytsched.fairshare import fast_plf, functions, plf
from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import UpdateOptions
from ytsched.fairshare.update import UpdateResult
from ytsched.resources import ZERO, Vector, vadd
from ytsched.snapshot import compute

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from treegen import generate_tree

PRIMITIVE_SETTINGS = settings(max_examples=300, deadline=None)
TREE_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# --- random functions ----------------------------------------------------------------------

# A few fixed magnitudes make equal values (plateaus, equal components, exact hits of limits
# and guarantees) common, which is where the merge rule and the jump handling matter.
SHARES = st.sampled_from([0.0, 0.0, 0.05, 0.1, 0.25, 1 / 3, 0.5, 0.7, 1.0]) | st.floats(0.0, 1.2)


@st.composite
def vector_chains(draw: st.DrawFn, right_bound: float | None = None) -> plf.PLF:
    """A non-decreasing vector function from 0 on ``[0, right_bound]`` with jumps and plateaus."""
    bound = right_bound if right_bound is not None else draw(st.sampled_from([1.0, 2.0, 3.5]))
    steps = draw(st.integers(1, 8))
    cuts = sorted(draw(st.lists(st.floats(0.0, bound), min_size=steps - 1, max_size=steps - 1)))
    xs = [0.0, *cuts, bound]
    value = [0.0] * 5
    builder = plf.Builder()
    builder.add_point(0.0, ZERO)
    constant = draw(st.lists(st.booleans(), min_size=5, max_size=5))
    for x in xs[1:]:
        for _ in range(draw(st.integers(1, 2))):  # a second point at the same x is a jump
            for r in range(5):
                if not constant[r] and draw(st.booleans()):
                    value[r] += draw(st.sampled_from([0.0, 0.01, 0.1, 0.3]) | st.floats(0, 0.5))
            builder.add_point(x, (value[0], value[1], value[2], value[3], value[4]))
    return builder.finish(plf.VECTOR_OPS)


@st.composite
def scalar_chains(draw: st.DrawFn) -> plf.PLF:
    """A non-decreasing scalar function on ``[0, 1]`` (like one term of the MFFBS minimum)."""
    steps = draw(st.integers(1, 6))
    cuts = sorted(draw(st.lists(st.floats(0.0, 1.0), min_size=steps - 1, max_size=steps - 1)))
    value = draw(st.floats(0.0, 1.0))
    builder = plf.Builder()
    builder.add_point(0.0, value)
    for x in [*cuts, 1.0]:
        for _ in range(draw(st.integers(1, 2))):
            value += draw(st.sampled_from([0.0, 0.25]) | st.floats(0.0, 1.0))
            builder.add_point(x, value)
    return builder.finish(plf.SCALAR_OPS)


def _vector(data: st.DataObject) -> Vector:
    v = data.draw(st.lists(SHARES, min_size=5, max_size=5))
    return (v[0], v[1], v[2], v[3], v[4])


def _element(limits: Vector, guarantee: Vector) -> Element:
    element = Element(name="element", is_operation=False, is_root=False)
    element.limits_share = limits
    element.strong_guarantee_share = guarantee
    return element


def _reference_mffbs(fsbff: plf.PLF, limits: Vector, guarantee: Vector) -> plf.PLF:
    with functions.reference_implementation():
        return functions._max_fit_factor_by_suggestion(_element(limits, guarantee), fsbff)


# --- primitives ----------------------------------------------------------------------------


@PRIMITIVE_SETTINGS
@given(st.data())
def test_max_fit_factor_by_suggestion_matches_reference(data: st.DataObject) -> None:
    fsbff = data.draw(vector_chains())
    limits = _vector(data)
    guarantee = _vector(data)
    expected = _reference_mffbs(fsbff, limits, guarantee)
    xs, ys = fast_plf.max_fit_factor_by_suggestion(*fsbff.chain(), limits, guarantee)
    assert plf.PLF.from_chain(xs, ys, plf.SCALAR_OPS).segments == expected.segments


@PRIMITIVE_SETTINGS
@given(scalar_chains(), scalar_chains())
def test_pointwise_min_matches_reference(a: plf.PLF, b: plf.PLF) -> None:
    expected = plf.pointwise_min(a, b)
    xs, ys = fast_plf.pointwise_min(a.chain(), b.chain())
    assert plf.PLF.from_chain(xs, ys, plf.SCALAR_OPS).segments == expected.segments


@PRIMITIVE_SETTINGS
@given(st.data())
def test_compose_and_compress_match_reference(data: st.DataObject) -> None:
    fsbff = data.draw(vector_chains())
    mffbs = _reference_mffbs(fsbff, _vector(data), _vector(data))
    expected = fsbff.compose(mffbs)
    xs, ys = fast_plf.compose(*fsbff.chain(), *mffbs.chain())
    assert plf.PLF.from_chain(xs, ys, plf.VECTOR_OPS).segments == expected.segments
    cx, cy = fast_plf.compress(xs, ys)
    assert plf.PLF.from_chain(cx, cy, plf.VECTOR_OPS).segments == plf.compress(expected).segments


@PRIMITIVE_SETTINGS
@given(st.lists(vector_chains(right_bound=1.0), min_size=1, max_size=5), st.data())
def test_pool_sums_match_reference(children: list[plf.PLF], data: st.DataObject) -> None:
    scales = [data.draw(st.sampled_from([1.0, 2.0, 3.0, 10.0])) for _ in children]
    scaled = [c.scale_argument(s).extend_right(1.0) for c, s in zip(children, scales, strict=True)]
    chains = [
        fast_plf.scale_and_extend(*c.chain(), s) for c, s in zip(children, scales, strict=True)
    ]
    assert [plf.PLF.from_chain(*c, plf.VECTOR_OPS).segments for c in chains] == [
        f.segments for f in scaled
    ]
    total = fast_plf.sum_chains(chains)
    assert plf.PLF.from_chain(*total, plf.VECTOR_OPS).segments == plf.sum_functions(scaled).segments
    pool = _element(ZERO, ZERO)
    expected = functions._improved_fsbff(pool, scaled)
    improved = fast_plf.improved_sum(chains)
    assert improved is not None
    (xs, ys), parts = improved
    assert plf.PLF.from_chain(xs, ys, plf.VECTOR_OPS).segments == expected.segments
    assert pool.child_fsbff is not None
    assert [
        plf.PLF.from_chain(*parts.chain(index), plf.VECTOR_OPS).segments
        for index in range(len(chains))
    ] == [f.segments for f in pool.child_fsbff]
    # The children's values straight from the parts, as distribute_vector reads them.
    for fit_factor in [0.0, 0.5, 1.0, 1.25, data.draw(st.floats(0.0, float(parts.count - 1)))]:
        if fit_factor <= parts.count - 1:
            expected_shares = [f.value_at(fit_factor) for f in pool.child_fsbff]
            assert parts.shares(fit_factor) == expected_shares
            total = ZERO
            for share in expected_shares:
                total = vadd(total, share)
            assert parts.total(fit_factor) == total


@PRIMITIVE_SETTINGS
@given(st.data(), st.booleans())
def test_operation_fsbff_matches_reference(data: st.DataObject, step: bool) -> None:
    usage = _vector(data)
    extra = _vector(data)
    demand: Vector = (
        usage[0] + extra[0],
        usage[1] + extra[1],
        usage[2] + extra[2],
        usage[3] + extra[3],
        usage[4] + extra[4],
    )
    parent = Element(name="pool", is_operation=False, is_root=False)
    operation = Element(name="op", is_operation=True, is_root=False, parent=parent)
    operation.usage_share = usage
    operation.demand_share = demand
    operation.is_gang_like = step
    options = UpdateOptions(enable_step_function_for_gang_operations=True)
    expected = functions._operation_fsbff(operation, options)
    xs, ys = fast_plf.operation_fsbff(usage, demand, step)
    assert plf.PLF.from_chain(xs, ys, plf.VECTOR_OPS).segments == expected.segments


@PRIMITIVE_SETTINGS
@given(st.data())
def test_numpy_versions_match_python_versions(data: st.DataObject) -> None:
    """The numpy versions (used above size thresholds) against the Python ones, forced on."""
    fsbff = data.draw(vector_chains())
    limits = _vector(data)
    guarantee = _vector(data)
    fx, fv = fsbff.chain()
    ax = np.asarray(fx)
    av = np.asarray(fv, dtype=float)
    saved = fast_plf._VECTOR_CROSSINGS
    fast_plf._VECTOR_CROSSINGS = data.draw(st.sampled_from([0, 16]))
    try:
        mffbs = fast_plf.max_fit_factor_by_suggestion_np(ax, av, limits, guarantee)
        expected_mffbs = fast_plf.max_fit_factor_by_suggestion(fx, fv, limits, guarantee)
        if mffbs is not None:
            assert (mffbs[0].tolist(), mffbs[1].tolist()) == expected_mffbs
        mx, my = expected_mffbs
        assert fast_plf.compose_np(ax, av, np.asarray(mx), np.asarray(my)) == fast_plf.compose(
            fx, fv, mx, my
        )
        a = data.draw(scalar_chains()).chain()
        b = data.draw(scalar_chains()).chain()
        minimum = fast_plf.pointwise_min_np(
            (np.asarray(a[0]), np.asarray(a[1])), (np.asarray(b[0]), np.asarray(b[1]))
        )
        assert (minimum[0].tolist(), minimum[1].tolist()) == fast_plf.pointwise_min(a, b)
    finally:
        fast_plf._VECTOR_CROSSINGS = saved
    children = [data.draw(vector_chains(right_bound=1.0)) for _ in range(3)]
    total = fast_plf.sum_chains_np([child.chain() for child in children])
    assert plf.PLF.from_chain(*total, plf.VECTOR_OPS).segments == (
        plf.sum_functions(children).segments
    )


# --- whole updates -------------------------------------------------------------------------

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"enable_fast_fifo_fair_share_by_fit_factor_computation": True},
    {"enable_step_function_for_gang_operations": True},
    {
        "enable_step_function_for_gang_operations": True,
        "enable_improved_fair_share_by_fit_factor_computation": True,
        "enable_improved_fair_share_by_fit_factor_computation_distribution_gap": True,
        "enable_fifo_children_reordering_for_guarantee_utilization": True,
    },
]


def _everything(result: UpdateResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, element in [*result.pools.items(), *result.operations.items()]:
        assert element.fsbff is not None
        assert element.mffbs is not None
        assert element.fsbs is not None
        out[name] = (
            element.fsbff.segments,
            element.mffbs.segments,
            element.fsbs.segments,
            [f.segments for f in element.child_fsbff or []],
            element.fair_share,
            element.promised_guarantee_fair_share,
            element.proposed_integral_share,
            element.effective_fifo_index,
        )
    return out


def _assert_same(document: dict[str, Any]) -> None:
    fast = _everything(compute(document))
    with functions.reference_implementation():
        reference = _everything(compute(document))
    assert fast.keys() == reference.keys()
    for name, value in reference.items():
        assert fast[name] == value, name


@TREE_SETTINGS
@given(snapshots(), st.sampled_from(OPTION_SETS))
def test_update_matches_reference_on_random_trees(
    document: dict[str, Any], options: dict[str, Any]
) -> None:
    _assert_same({**document, "options": {**document.get("options", {}), **options}})


@settings(max_examples=12, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(OPTION_SETS),
    st.sampled_from([0.0, 0.3]),
    st.integers(2, 5),
)
def test_update_matches_reference_on_generated_trees(
    seed: int, options: dict[str, Any], integral_fraction: float, depth: int
) -> None:
    document = generate_tree(
        12, 60, depth=depth, seed=seed, integral_fraction=integral_fraction, options=options
    )
    _assert_same(document)
