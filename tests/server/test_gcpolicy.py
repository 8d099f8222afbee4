"""The service's garbage-collector policy: freeze at start, periodic steps, restore."""

from __future__ import annotations

import gc

from ytsched.server.gcpolicy import UNREACHABLE_THRESHOLD, CollectorPolicy


class Cycle:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_policy_freezes_defers_full_collections_and_restores() -> None:
    now = [0.0]
    pauses: list[tuple[int, float]] = []
    before = gc.get_threshold()
    policy = CollectorPolicy(
        freeze_period=10.0,
        full_period=100.0,
        clock=lambda: now[0],
        observe=lambda generation, seconds, _: pauses.append((generation, seconds)),
    )
    policy.install()
    try:
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[1:] == (UNREACHABLE_THRESHOLD, UNREACHABLE_THRESHOLD)
        assert pauses and pauses[-1][0] == 2  # the start-up collection was observed
        assert policy.maintain() is None

        now[0] = 10.0
        frozen = gc.get_freeze_count()
        kept = [Cycle() for _ in range(1000)]
        assert policy.maintain() == "freeze"
        assert gc.get_freeze_count() >= frozen + 1000

        # A cycle that became garbage after it was frozen waits for the full period.
        del kept
        now[0] = 20.0
        frozen = gc.get_freeze_count()
        assert policy.maintain() == "freeze"
        assert gc.get_freeze_count() >= frozen  # not reclaimed by a freeze step
        now[0] = 100.0
        assert policy.maintain() == "full"
        assert gc.get_freeze_count() < frozen  # reclaimed by the full step
    finally:
        policy.uninstall()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert policy.maintain() is None


def test_survivors_of_a_young_collection_are_frozen() -> None:
    now = [0.0]
    policy = CollectorPolicy(freeze_period=10.0, full_period=100.0, clock=lambda: now[0])
    policy.install()
    try:
        frozen = gc.get_freeze_count()
        kept = [Cycle() for _ in range(1000)]
        garbage = [Cycle() for _ in range(500)]
        del garbage
        gc.collect(0)
        # the garbage cycles were freed, the survivors left the young generation frozen
        assert gc.get_freeze_count() >= frozen + 1000
        assert gc.get_count()[1] == 0
        # ... and garbage frozen meanwhile waits for the full period
        del kept
        now[0] = 10.0
        assert policy.maintain() == "freeze"
        now[0] = 100.0
        frozen = gc.get_freeze_count()
        assert policy.maintain() == "full"
        assert gc.get_freeze_count() <= frozen - 1000
    finally:
        policy.uninstall()


def test_install_and_uninstall_are_idempotent() -> None:
    before = gc.get_threshold()
    policy = CollectorPolicy()
    policy.install()
    policy.install()
    policy.uninstall()
    policy.uninstall()
    assert gc.get_threshold() == before
    assert policy._callback not in gc.callbacks
