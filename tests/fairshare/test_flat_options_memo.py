"""The update's options computed and checked once per tree config (issue 15): the same
``UpdateOptions`` object while a tree's config is, and the flat builder's option checks and
int option array reused for it, with the same bytes and the same errors as fresh ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.pooltree.helpers import scheduler
from ytsched.errors import SnapshotError
from ytsched.fairshare import flat
from ytsched.fairshare.model import PoolSpec, TreeSnapshot, UpdateOptions
from ytsched.pooltree import snapshot


def _snapshot(options: UpdateOptions, now: float | None = 2.0) -> TreeSnapshot:
    return TreeSnapshot(
        total_resource_limits=(1.0, 1.0, 0.0, 1.0, 0.0),
        pools=[PoolSpec(name="<Root>", parent=None)],
        operations=[],
        options=options,
        now=now,
        previous_update_time=None if now is None else 1.0,
    )


def test_tree_options_follow_the_config() -> None:
    _, tree = scheduler(cpu=10)
    first = snapshot.tree_update_options(tree)
    assert snapshot.tree_update_options(tree) is first
    assert first == snapshot.update_options(tree.config)
    tree.update_config({"main_resource": "memory"})
    second = snapshot.tree_update_options(tree)
    assert second is not first
    assert second == snapshot.update_options(tree.config)
    assert second.main_resource == "memory"


@pytest.mark.parametrize("builder", [flat.build_flat, flat.build_flat_python])
def test_option_arrays_equal_fresh_ones(builder: object) -> None:
    options = UpdateOptions()
    for now in (2.0, None, 3.0):
        built = builder(_snapshot(options, now))  # type: ignore[operator]
        expected = flat._options_i_array(options, now is not None)
        assert built.opts_i.dtype == expected.dtype and built.opts_i.shape == expected.shape
        assert np.array_equal(built.opts_i, expected)
    other = dataclasses.replace(options, should_distribute_free_volume_among_children=True)
    built = flat.build_flat(_snapshot(other))
    assert np.array_equal(built.opts_i, flat._options_i_array(other, True))


def test_bad_options_raise_after_good_ones_were_checked() -> None:
    flat.build_flat(_snapshot(UpdateOptions()))
    bad = UpdateOptions(integral_smooth_period=0.0)
    for _ in range(2):  # never remembered as checked
        with pytest.raises(SnapshotError):
            flat.build_flat(_snapshot(bad))
