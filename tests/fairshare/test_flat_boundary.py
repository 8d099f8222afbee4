"""The Python<->native boundary (issue 13): the native flat-input reader and lazy elements.

The reader (``src/native/flat_input.cpp``) must give the Python builder's arrays bit for bit, or
decline so that the Python builder runs and raises its own error; lazily created elements must
read the same values, with the same identities, in whatever order a caller asks for them.
"""

from __future__ import annotations

import dataclasses
import math
import random
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fairshare.differential import differences, element_values
from tests.fairshare.strategies import snapshots
from ytsched.fairshare import flat, native
from ytsched.fairshare.model import (
    FifoSortParameter,
    IntegralGuarantees,
    IntegralGuaranteeType,
    OperationSpec,
    PoolSpec,
    SchedulingMode,
    TreeSnapshot,
    UpdateOptions,
)
from ytsched.fairshare.update import run_update
from ytsched.snapshot import parse_snapshot

pytestmark = pytest.mark.skipif(not native.native_available(), reason="native core not built")


def _same_flat(a: flat.FlatTree, b: flat.FlatTree) -> None:
    assert a.in_f.shape == b.in_f.shape and a.in_i.shape == b.in_i.shape
    assert a.in_f.tobytes() == b.in_f.tobytes()
    assert a.in_i.tobytes() == b.in_i.tobytes()
    assert a.opts_f.tobytes() == b.opts_f.tobytes()
    assert a.opts_i.tobytes() == b.opts_i.tobytes()
    assert a.pool_names == b.pool_names
    assert a.operation_names == b.operation_names
    assert a.root_index == b.root_index
    assert a.name_index() == b.name_index()


def _read_natively(snapshot: TreeSnapshot) -> bool:
    """Whether the native reader accepts ``snapshot`` (rather than declining)."""
    reader = flat._native_reader()
    n = len(snapshot.pools) + len(snapshot.operations)
    options = snapshot.options
    read = reader(
        snapshot.pools,
        snapshot.operations,
        snapshot.total_resource_limits,
        options.use_only_gpu_strong_guarantees,
        2,
        options.consider_vanilla_operations_as_gang,
        flat._KINDS,
        np.empty((n, flat.IN_F)),
        np.empty((n, flat.IN_I), dtype=np.int32),
    )
    return read is not None


def _integral(rng: random.Random) -> IntegralGuarantees:
    kind = rng.choice(list(IntegralGuaranteeType))
    return IntegralGuarantees(
        guarantee_type=kind,
        resource_flow=tuple(rng.choice([0.0, 1.5, 3]) for _ in range(5)),
        burst_guarantee_resources=tuple(rng.choice([0.0, 2.0, 7]) for _ in range(5)),
        relaxed_share_multiplier_limit=rng.choice([None, 0.0, 2.5]),
        can_accept_free_volume=rng.choice([True, False]),
        should_distribute_free_volume_among_children=rng.choice([None, True, False]),
    )


def random_snapshot(seed: int) -> TreeSnapshot:
    """A random valid snapshot using every field the flat input reads (ints and floats mixed,
    list and tuple vectors, every enum member, GPU-only guarantees and vanilla gangs)."""
    rng = random.Random(seed)
    pools = [PoolSpec("<Root>", None)]
    holders: list[str] = []
    for index in range(rng.randint(0, 30)):
        parents = [p.name for p in pools if p.mode is not SchedulingMode.FIFO]
        mode = rng.choice([SchedulingMode.FAIR_SHARE, SchedulingMode.FIFO])
        vector = tuple if rng.random() < 0.8 else list
        pool = PoolSpec(
            name=f"p{index}",
            parent=rng.choice(parents),
            mode=mode,
            weight=rng.choice([None, 1.0, 2, 0.5]),
            strong_guarantee_resources=rng.choice(
                [{}, {1: 10.0}, {2: 1, 3: 100.0}, {0: 1.0, 2: 2.0}]
            ),
            resource_limits=vector(rng.choice([math.inf, 50.0, 7]) for _ in range(5)),
            integral_guarantees=_integral(rng),
            accumulated_resource_volume=tuple(rng.choice([0.0, 12.5, 3]) for _ in range(5)),
            last_integral_share_ratio=rng.choice([0.0, 0.25, 1]),
            fifo_sort_parameters=tuple(rng.sample(list(FifoSortParameter), rng.randint(0, 3))),
            compute_promised_guarantee_fair_share=rng.random() < 0.2,
            enable_fifo_children_reordering_for_guarantee_utilization=rng.random() < 0.5,
            enable_step_function_for_gang_operations=rng.random() < 0.5,
        )
        pools.append(pool)
        holders.append(pool.name)
    operations = []
    for index in range(rng.randint(0, 60)):
        demand = tuple(rng.choice([0.0, 1.0, 4, 100.0]) for _ in range(5))
        usage = tuple(d * rng.choice([0, 0.5, 1]) for d in demand)
        operations.append(
            OperationSpec(
                name=f"op{index}",
                parent=rng.choice(holders or ["<Root>"]),
                resource_demand=demand,
                resource_usage=usage,
                resource_limits=tuple(rng.choice([math.inf, 3.0]) for _ in range(5)),
                weight=rng.choice([1.0, 2, 0.25]),
                start_time=rng.choice([None, 0.0, 5, 1e9]),
                pending_job_count=rng.choice([0, 3, 10]),
                is_gang=rng.random() < 0.2,
                operation_type=rng.choice([None, "vanilla", "map"]),
            )
        )
    options = UpdateOptions(
        use_only_gpu_strong_guarantees=rng.random() < 0.3,
        consider_vanilla_operations_as_gang=rng.random() < 0.5,
    )
    return TreeSnapshot(
        total_resource_limits=(100.0, 100, 8.0, 1000.0, 0.0),
        pools=pools,
        operations=operations,
        options=options,
        now=rng.choice([None, 10.0]),
        previous_update_time=rng.choice([None, 5.0]),
    )


@pytest.mark.parametrize("seed", range(40))
def test_native_reader_matches_python_builder(seed: int) -> None:
    snapshot = random_snapshot(seed)
    assert _read_natively(snapshot)
    _same_flat(flat.build_flat(snapshot), flat.build_flat_python(snapshot))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(max_pools=8, max_operations=12))
def test_native_reader_matches_python_builder_on_parsed_snapshots(document: dict[str, Any]) -> None:
    snapshot = parse_snapshot(document)
    assert _read_natively(snapshot)
    _same_flat(flat.build_flat(snapshot), flat.build_flat_python(snapshot))


class _Pool(PoolSpec):
    __slots__ = ()


def _pool(snapshot: TreeSnapshot, **changes: Any) -> TreeSnapshot:
    pools = list(snapshot.pools)
    pools[1] = dataclasses.replace(pools[1], **changes)
    return dataclasses.replace(snapshot, pools=pools)


def _operation(snapshot: TreeSnapshot, **changes: Any) -> TreeSnapshot:
    operations = list(snapshot.operations)
    operations[0] = dataclasses.replace(operations[0], **changes)
    return dataclasses.replace(snapshot, operations=operations)


def _base() -> TreeSnapshot:
    pools = [
        PoolSpec("<Root>", None),
        PoolSpec("a", "<Root>"),
        PoolSpec("f", "<Root>", mode=SchedulingMode.FIFO),
    ]
    operations = [
        OperationSpec("x", "a", resource_demand=(2.0, 2.0, 0.0, 2.0, 0.0)),
        OperationSpec("y", "f", resource_demand=(1.0, 1.0, 0.0, 1.0, 0.0)),
    ]
    return TreeSnapshot((10.0, 10.0, 1.0, 10.0, 0.0), pools, operations)


NAN = math.nan
HOSTILE: dict[str, Callable[[TreeSnapshot], TreeSnapshot]] = {
    "pool weight nan": lambda s: _pool(s, weight=NAN),
    "pool weight zero": lambda s: _pool(s, weight=0.0),
    "pool weight bool": lambda s: _pool(s, weight=True),
    "pool weight string": lambda s: _pool(s, weight="2"),
    "pool limits negative": lambda s: _pool(s, resource_limits=(1.0, -1.0, 0.0, 0.0, 0.0)),
    "pool limits short": lambda s: _pool(s, resource_limits=(1.0, 1.0)),
    "pool limits generator-free iterable": lambda s: _pool(s, resource_limits=range(5)),
    "pool guarantee unknown resource": lambda s: _pool(s, strong_guarantee_resources={7: 1.0}),
    "pool guarantee negative": lambda s: _pool(s, strong_guarantee_resources={1: -1.0}),
    "pool guarantee huge int": lambda s: _pool(s, strong_guarantee_resources={1: 2**80}),
    "pool volume infinite": lambda s: _pool(
        s, accumulated_resource_volume=(math.inf, 0.0, 0.0, 0.0, 0.0)
    ),
    "pool ratio nan": lambda s: _pool(s, last_integral_share_ratio=NAN),
    "pool too many fifo parameters": lambda s: _pool(
        s, fifo_sort_parameters=(*FifoSortParameter, FifoSortParameter.WEIGHT)
    ),
    "pool fifo parameter as string": lambda s: _pool(s, fifo_sort_parameters=("weight",)),
    "pool mode as string": lambda s: _pool(s, mode="fifo"),
    "pool unknown parent": lambda s: _pool(s, parent="nowhere"),
    "pool under a fifo pool": lambda s: _pool(s, parent="f"),
    "pool cycle": lambda s: _pool(s, parent="a"),
    "pool second root": lambda s: _pool(s, parent=None),
    "pool duplicate name": lambda s: _pool(s, name="f"),
    "pool name not a string": lambda s: _pool(s, name=5),
    "pool subclass": lambda s: dataclasses.replace(
        s, pools=[s.pools[0], _Pool("a", "<Root>"), s.pools[2]]
    ),
    "integral type as string": lambda s: _pool(
        s,
        integral_guarantees=IntegralGuarantees(guarantee_type="burst"),  # type: ignore[arg-type]
    ),
    "integral flow nan": lambda s: _pool(
        s, integral_guarantees=IntegralGuarantees(resource_flow=(NAN, 0.0, 0.0, 0.0, 0.0))
    ),
    "integral can accept as int": lambda s: _pool(
        s,
        integral_guarantees=IntegralGuarantees(can_accept_free_volume=2),  # type: ignore[arg-type]
    ),
    "operation usage above demand": lambda s: _operation(
        s, resource_usage=(3.0, 0.0, 0.0, 0.0, 0.0)
    ),
    "operation demand nan": lambda s: _operation(s, resource_demand=(NAN, 0.0, 0.0, 0.0, 0.0)),
    "operation unknown parent": lambda s: _operation(s, parent="nowhere"),
    "operation under an operation": lambda s: _operation(s, parent="y"),
    "operation named like a pool": lambda s: _operation(s, name="a"),
    "operation duplicate name": lambda s: _operation(s, name="y"),
    "operation weight negative": lambda s: _operation(s, weight=-1.0),
    "operation start nan": lambda s: _operation(s, start_time=NAN),
    "operation start minus infinity": lambda s: _operation(s, start_time=-math.inf),
    "operation pending infinite": lambda s: _operation(s, pending_job_count=math.inf),
    "operation gang as int": lambda s: _operation(s, is_gang=1),
    "operation type not a string": lambda s: _operation(s, operation_type=3),
    "operations a tuple": lambda s: dataclasses.replace(s, operations=tuple(s.operations)),
    "total infinite": lambda s: dataclasses.replace(
        s, total_resource_limits=(math.inf, 1.0, 1.0, 1.0, 1.0)
    ),
    "total as list": lambda s: dataclasses.replace(s, total_resource_limits=[1.0] * 5),
    "no pools": lambda s: dataclasses.replace(s, pools=[], operations=[]),
}


def _outcome(build: Callable[[TreeSnapshot], flat.FlatTree], snapshot: TreeSnapshot) -> Any:
    try:
        tree = build(snapshot)
    except Exception as error:
        return (type(error), str(error), getattr(error, "code", None))
    return (tree.in_f.tobytes(), tree.in_i.tobytes(), tree.pool_names, tree.operation_names)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_gives_the_python_builders_outcome(name: str) -> None:
    snapshot = HOSTILE[name](_base())
    assert _outcome(flat.build_flat, snapshot) == _outcome(flat.build_flat_python, snapshot)


def test_valid_base_is_read_natively() -> None:
    assert _read_natively(_base())


@pytest.mark.parametrize("name", ["pool subclass", "pool weight bool", "operations a tuple"])
def test_unknown_types_are_declined(name: str) -> None:
    snapshot = HOSTILE[name](_base())
    if type(snapshot.operations) is list:
        assert not _read_natively(snapshot)


# --- lazy elements ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_lazy_elements_read_the_same_in_any_order(seed: int) -> None:
    snapshot = random_snapshot(seed)
    reference = run_update(snapshot, engine="python")
    in_order = run_update(snapshot, engine="native")
    assert differences(reference, in_order) == []
    shuffled = run_update(snapshot, engine="native")
    rows = [("operation", name) for name in shuffled.operations] + [
        ("pool", name) for name in shuffled.pools
    ]
    random.Random(seed).shuffle(rows)
    for kind, name in rows:
        mapping = shuffled.operations if kind == "operation" else shuffled.pools
        expected = (in_order.operations if kind == "operation" else in_order.pools)[name]
        assert element_values(mapping[name]) == element_values(expected)
    assert list(shuffled.pools) == list(reference.pools)
    assert list(shuffled.operations) == list(reference.operations)


def test_lazy_elements_keep_identity_and_rows() -> None:
    snapshot = random_snapshot(3)
    result = run_update(snapshot)
    pools, operations = result.pools, result.operations
    assert isinstance(pools, native.ElementsByName)
    assert isinstance(operations, native.ElementsByName)
    for name, element in operations.items():
        assert operations[name] is element
        assert element.parent is pools[element.parent.name]  # type: ignore[union-attr]
        assert element in element.parent.children  # type: ignore[union-attr]
        assert operations.row(name) == len(pools) + list(operations).index(name)
    for name, element in pools.items():
        assert pools.get(name) is element and name in pools
        for child in element.children:
            assert child.parent is element
    assert result.root is pools["<Root>"]
    some = next(iter(operations), None)
    if some is not None:
        assert some not in pools and pools.get(some) is None
        with pytest.raises(KeyError):
            pools.row(some)
    with pytest.raises(KeyError):
        pools["nowhere"]
    assert "nowhere" not in operations


def test_result_arrays_columns_match_the_attributes() -> None:
    result = run_update(random_snapshot(5))
    arrays = native.result_arrays(result)
    assert arrays is not None
    out_f, _out_i = arrays
    for mapping in (result.pools, result.operations):
        assert isinstance(mapping, native.ElementsByName)
        for name, element in mapping.items():
            row = mapping.row(name)
            total = tuple(out_f[row, native.OUT_FAIR_SHARE_TOTAL : native.OUT_FAIR_SHARE_TOTAL + 5])
            assert total == element.fair_share.total
            assert float(out_f[row, native.OUT_WEIGHT]) == element.weight
            usage = out_f[row, native.OUT_USAGE_SHARE : native.OUT_USAGE_SHARE + 5]
            assert tuple(usage) == element.usage_share
    assert native.result_arrays(run_update(random_snapshot(5), engine="python")) is None


def test_only_created_elements_are_linked_and_forgetting_frees_them() -> None:
    snapshot = random_snapshot(7)
    result = run_update(snapshot)
    assert native.linked_elements(result) == [result.root]
    if result.operations:
        name = next(iter(result.operations))
        element = result.operations[name]
        linked = native.linked_elements(result)
        assert element in linked and result.root in linked
        assert len(linked) < len(result.pools) + len(result.operations)
    native.forget_elements(result)
    assert native.linked_elements(result) == []
    reference = run_update(snapshot, engine="python")
    assert len(native.linked_elements(reference)) == 1 + len(reference.pools) + len(
        reference.operations
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(max_pools=6, max_operations=8), st.randoms(use_true_random=False))
def test_read_all_creates_every_element(document: dict[str, Any], rng: random.Random) -> None:
    result = run_update(parse_snapshot(document))
    count = native.read_all(result)
    assert count == len(result.pools) + len(result.operations)
    assert len(native.linked_elements(result)) == count


def test_threads_reading_one_result_see_one_element_per_row() -> None:
    result = run_update(random_snapshot(11))
    seen: list[list[int]] = []

    def read() -> None:
        seen.append([id(element) for element in result.operations.values()])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(ids == seen[0] for ids in seen)
    assert seen[0] == [id(result.operations[name]) for name in result.operations]
