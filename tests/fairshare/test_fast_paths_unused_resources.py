"""Shortcuts for resources no function uses, and the inlined evaluations, are bit-exact.

Most trees use three of the five resources (gpu and network stay zero), and the fast paths skip
a resource that is zero at every point: :func:`fast_plf.compress` (through
``_compress_three``) and :func:`fast_plf.sum_chains_np` (zero columns filled in).  The
docstrings argue why that changes no bit; these tests check it against the reference
implementation on random functions, comparing the bit patterns of every argument and value
(``==`` would let ``-0.0`` pass for ``0.0``), with signed zeros, runs of near-zero width and
all-zero functions included.  :meth:`PLF.value_at` (written-out interpolation) and
:func:`fast_plf.compose` (written-out evaluations, one merge pass) are checked the same way.
"""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fairshare.test_fast_paths import _reference_mffbs, _vector, vector_chains
from ytsched.fairshare import fast_plf, plf
from ytsched.resources import Vector

SETTINGS = settings(max_examples=300, deadline=None)


def _bits(value: Any) -> Any:
    """Bit patterns of a float, or of every float in a (nested) tuple or list."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    return [_bits(item) for item in value]


def _chain_bits(func: plf.PLF) -> Any:
    return _bits(list(func.chain()))


@st.composite
def sparse_chains(draw: st.DrawFn, signed: bool = True) -> plf.PLF:
    """A random vector chain, with some resources zero everywhere (some as ``-0.0`` when
    ``signed``)."""
    func = draw(vector_chains())
    xs, ys = func.chain()
    zero = draw(st.lists(st.booleans(), min_size=5, max_size=5))
    zeros = [0.0, -0.0] if signed else [0.0]
    signs = draw(st.lists(st.sampled_from(zeros), min_size=5, max_size=5))
    values: list[Vector] = []
    for y in ys:
        v = [signs[r] if zero[r] else y[r] for r in range(5)]
        values.append((v[0], v[1], v[2], v[3], v[4]))
    if draw(st.booleans()):
        # Squeeze the arguments towards zero: widths whose product with epsilon underflows.
        scale = draw(st.sampled_from([1e-300, 1e-310, 5e-324]))
        xs = [x * scale for x in xs]
    builder = plf.Builder()
    for x, v in zip(xs, values, strict=True):
        builder.add_point(x, v)
    return builder.finish(plf.VECTOR_OPS)


@SETTINGS
@given(sparse_chains())
def test_compress_skipping_unused_resources_matches_reference(func: plf.PLF) -> None:
    xs, ys = func.chain()
    cx, cy = fast_plf.compress(xs, ys)
    assert _bits([cx, cy]) == _chain_bits(plf.compress(func))


@SETTINGS
@given(st.lists(sparse_chains(signed=False), min_size=2, max_size=6))
def test_sum_with_unused_resources_matches_reference(children: list[plf.PLF]) -> None:
    # Inputs with a sign bit set never reach the vectorized sum (see ``sum_chains_np``).
    bound = min(c.chain()[0][-1] for c in children)
    if bound <= 0.0:
        return
    chains = [c.chain() for c in children]
    expected = plf.sum_functions(children)
    assert _bits(list(fast_plf.sum_chains_np(chains))) == _chain_bits(expected)


@SETTINGS
@given(vector_chains(), st.floats(0.0, 1.0))
def test_vector_value_at_matches_generic_interpolation(func: plf.PLF, fraction: float) -> None:
    xs, _ = func.chain()
    x = xs[0] + (xs[-1] - xs[0]) * fraction
    segments = plf.PLF(list(func.segments), plf.VECTOR_OPS)  # segment-based lookup
    assert _bits(func.value_at(x)) == _bits(segments.value_at(x))


@SETTINGS
@given(st.data())
def test_scalar_value_at_matches_generic_interpolation(data: st.DataObject) -> None:
    fsbff = data.draw(vector_chains())
    mffbs = _reference_mffbs(fsbff, _vector(data), _vector(data))
    x = data.draw(st.floats(0.0, 1.0))
    segments = plf.PLF(list(mffbs.segments), plf.SCALAR_OPS)
    assert _bits(mffbs.value_at(x)) == _bits(segments.value_at(x))


@SETTINGS
@given(st.data())
def test_compose_matches_reference_bit_for_bit(data: st.DataObject) -> None:
    # (Without ``-0.0``: there the fast paths and the reference may differ in the sign of a
    # zero, as they did before this shortcut.)
    fsbff = data.draw(sparse_chains(signed=False))
    if fsbff.chain()[0][-1] < 1e-200:
        return  # squeezed domains: the reference MFFBS is not defined on [0, 1] there
    mffbs = _reference_mffbs(fsbff, _vector(data), _vector(data))
    xs, ys = fast_plf.compose(*fsbff.chain(), *mffbs.chain())
    assert _bits([xs, ys]) == _chain_bits(fsbff.compose(mffbs))
