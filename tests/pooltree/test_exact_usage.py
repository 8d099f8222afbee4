"""Operations' usages from exact integer sums (``pooltree.exact_usage``): whenever the sums
give a usage, it is bit for bit the fold ``Operation.resource_usage`` computes, and they give
none when they cannot be trusted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pooltree.helpers import GIB, scheduler
from ytsched.pooltree import PoolTrees, snapshot
from ytsched.pooltree.exact_usage import LARGEST_EXACT, ExactUsage, pack, unpack
from ytsched.pooltree.operations import Job, Operation

_ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["start", "start", "start", "complete", "abort", "release"]),
        st.integers(min_value=0, max_value=10_000),
        st.sampled_from([None, "physical", "other"]),
    ),
    max_size=30,
)


def _operation(cpus: list[float]) -> tuple[PoolTrees, Operation]:
    trees, _ = scheduler(cpu=10_000)
    spec = {
        "tasks": {
            f"t{index}": {"job_count": 50, "cpu_limit": cpu, "memory_limit": (index + 1) * GIB}
            for index, cpu in enumerate(cpus)
        },
        "max_failed_job_count": 10_000,
    }
    return trees, trees.start_operation("op", user="u", spec=spec, now=0.0)


def _apply(
    trees: PoolTrees, operation: Operation, action: str, value: int, tree: str | None
) -> None:
    running = list(operation.running_jobs.values())
    if action == "start":
        waiting = [task for task in operation.tasks.values() if task.waiting]
        if waiting:
            operation.start_job(waiting[value % len(waiting)].name, 1.0, tree=tree)
    elif running:
        job = running[value % len(running)]
        if action == "release":
            operation.release_job_usage(job)
        else:
            getattr(trees, f"{action}_job")(operation.id, job.id, now=1.0)


@settings(max_examples=80, deadline=None)
@given(
    cpus=st.lists(st.sampled_from([1.0, 2.0, 16.0, 0.5, 3.0]), min_size=1, max_size=3),
    updates=st.lists(_ACTIONS, min_size=1, max_size=8),
)
def test_memoized_usage_is_the_fold(
    cpus: list[float], updates: list[list[tuple[str, int, str | None]]]
) -> None:
    trees, operation = _operation(cpus)
    memo: snapshot.UsageMemo = {}
    for actions in updates:
        for action, value, tree in actions:
            _apply(trees, operation, action, value, tree)
        ended, _, _ = snapshot.task_figures(operation)
        for name in ("physical", "other"):
            exact = operation.exact_usage.usage(name, len(operation.running_jobs))
            fold = operation.resource_usage(name)
            if exact is not None:
                assert repr(exact) == repr(fold)
        fresh: snapshot.UsageMemo = {}
        usage = snapshot._memoized_usage(operation, "physical", memo, fresh, ended)
        assert repr(usage) == repr(operation.resource_usage("physical"))
        memo = fresh
    # Whole cores only: the sums are always usable.
    if 0.5 not in cpus:
        assert operation.exact_usage.exact


def test_a_job_not_counted_turns_the_sums_off() -> None:
    """A job put into ``running_jobs`` directly (as a revived operation's are) leaves the
    count behind for good: the sums are not used, the fold is."""
    trees, operation = _operation([1.0])
    operation.start_job("t0", 1.0, tree="physical")
    job = Job("op/t0/9/0", "t0", 9, 0, (1.0, 2.0, 0.0, 4.0, 0.0), 1.0, None, "physical")
    operation.running_jobs[job.id] = job
    assert operation.exact_usage.usage("physical", len(operation.running_jobs)) is None
    operation.start_job("t0", 2.0, tree="physical")
    trees.complete_job("op", next(iter(operation.running_jobs)), now=3.0)
    assert operation.exact_usage.usage("physical", len(operation.running_jobs)) is None
    ended, _, _ = snapshot.task_figures(operation)
    usage = snapshot._memoized_usage(operation, "physical", {}, {}, ended)
    assert usage == operation.resource_usage("physical")


def test_totals_beyond_two_to_the_53_are_not_used() -> None:
    usage = ExactUsage()
    big = float(LARGEST_EXACT // 2)
    first = Job("a", "t", 0, 0, (1.0, 1.0, 0.0, big, 0.0), 0.0, None, "physical")
    second = Job("b", "t", 1, 0, (1.0, 1.0, 0.0, big, 0.0), 0.0, None, "physical")
    usage.started(first)
    assert usage.usage("physical", 1) == (1.0, 1.0, 0.0, big, 0.0)
    usage.started(second)
    assert usage.usage("physical", 2) == (2.0, 2.0, 0.0, 2 * big, 0.0)
    third = Job("c", "t", 2, 0, (1.0, 1.0, 0.0, 1.0, 0.0), 0.0, None, None)
    usage.started(third)
    assert usage.usage("physical", 3) is None
    assert usage.usage("other", 3) == (1.0, 1.0, 0.0, 1.0, 0.0)
    usage.ended(third)
    assert usage.usage("physical", 2) is not None


def test_checked_resources_are_reused_only_for_the_same_tuple() -> None:
    """The last integral tuple's conversion is reused for the very same object only: equal
    values in another tuple, alternating tuples and a fractional one after them all give the
    sums (or their end) that checking every job gives."""
    usage = ExactUsage()
    small = (1.0, 2.0, 0.0, 4.0, 0.0)
    large = (3.0, 16.0, 0.0, 2.0**40, 0.0)
    for resources, sign in [(small, 1), (small, 1), (large, 1), (small, -1), (large, 1)]:
        usage._add("physical", resources, sign)
    usage._add("physical", (1.0, 2.0, 0.0, 4.0, 0.0), 1)
    assert {tree: unpack(sums) for tree, sums in usage.sums.items()} == {
        "physical": [8, 36, 0, 8 + 2 * 2**40, 0]
    }
    usage._add(None, small, -1)
    assert unpack(usage.sums["physical"]) == [8, 36, 0, 8 + 2 * 2**40, 0]
    assert unpack(usage.sums[None]) == [-1, -2, 0, -4, 0]
    usage._add("physical", (0.5, 1.0, 0.0, 1.0, 0.0), 1)
    assert not usage.exact
    assert usage.sums == {}


def test_a_shared_vector_is_checked_once_and_a_new_one_again() -> None:
    """The integers of the last vector that passed are reused only for that very object: an
    equal vector gives the same sums, a non-integral one still turns the sums off."""
    usage = ExactUsage()
    shared = (1.0, 4.0, 0.0, 8.0, 0.0)
    for index in range(3):
        usage.started(Job(f"j{index}", "t", index, 0, shared, 0.0, None, "physical"))
    equal = (1.0, 4.0, 0.0, 8.0, 0.0)
    usage.started(Job("e", "t", 9, 0, equal, 0.0, None, "physical"))
    assert usage.usage("physical", 4) == (4.0, 16.0, 0.0, 32.0, 0.0)
    usage.ended(Job("j0", "t", 0, 0, shared, 0.0, None, "physical"))
    assert usage.usage("physical", 3) == (3.0, 12.0, 0.0, 24.0, 0.0)
    usage.started(Job("h", "t", 10, 0, (1.0, 0.5, 0.0, 1.0, 0.0), 0.0, None, "physical"))
    assert usage.usage("physical", 4) is None
    usage.started(Job("k", "t", 11, 0, shared, 0.0, None, "physical"))
    assert usage.usage("physical", 5) is None  # off for good


_FIELDS = st.integers(min_value=-(2**100), max_value=2**100)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_FIELDS, _FIELDS, _FIELDS, _FIELDS, _FIELDS), max_size=20))
def test_packed_sums_are_the_sums_of_the_fields(
    vectors: list[tuple[int, int, int, int, int]],
) -> None:
    """Adding packed vectors adds every field on its own, negative fields included."""
    total = 0
    fields = [0, 0, 0, 0, 0]
    for vector in vectors:
        total += pack(vector)
        fields = [a + b for a, b in zip(fields, vector, strict=True)]
        assert unpack(total) == fields
    for vector in vectors:
        total -= pack(vector)
    assert total == 0


_SUM_FIELDS = st.lists(
    st.one_of(
        st.integers(min_value=0, max_value=LARGEST_EXACT + 2),
        st.integers(min_value=-(2**127), max_value=2**127 - 1),
        st.sampled_from([0, 1, 2**53 - 1, 2**53, 2**53 + 1, 2**64, -1, -(2**53)]),
    ),
    min_size=5,
    max_size=5,
)


@settings(max_examples=300)
@given(_SUM_FIELDS, _SUM_FIELDS)
def test_usage_reads_packed_fields_as_unpack(tree_fields: list[int], shared: list[int]) -> None:
    """Whatever the packed sums hold (negative or too large fields too), ``usage`` gives
    exactly the floats of :func:`unpack`'s fields, or ``None`` when one is above
    :data:`LARGEST_EXACT`: the byte-reading fast path changes no answer."""
    exact = ExactUsage()
    exact.sums = {"t": pack(tuple(tree_fields)), None: pack(tuple(shared))}  # type: ignore[arg-type]
    totals = unpack(exact.sums["t"] + exact.sums[None])
    expected = None if any(t > LARGEST_EXACT for t in totals) else tuple(map(float, totals))
    assert exact.usage("t", 0) == expected
