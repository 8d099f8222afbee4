"""Graceful preemption: a query service shrinks to its fair share and grows back (§7.5).

The scenario of the product brief (§5): a clique (a vanilla operation whose jobs are server
instances, with an ``interruption_signal``) runs in ``preemption_mode = graceful`` alone in its
pool and uses the whole cluster.  A heavy batch operation starts in the same pool.  The
clique's allocations above its new fair share get the signal in advance — with the graceful
timeout, without anyone having to starve first — and finish; the batch operation takes the
freed room.  When the pool is idle again the clique grows back.  The contrast: the same clique
in normal mode keeps everything until the batch operation starves, then loses one allocation
per preemptive heartbeat with the short timeout.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduling.helpers import GIB, Cluster, vanilla
from ytsched.scheduling import InterruptionReason


def clique(mode: str) -> dict[str, Any]:
    return {
        "pool": "chyt",
        "preemption_mode": mode,
        "tasks": {
            "instances": {
                "job_count": 10,
                "cpu_limit": 1,
                "memory_limit": GIB,
                "interruption_signal": "SIGINT",
                "restart_completed_jobs": True,
            }
        },
    }


def service_cluster(mode: str, interrupt_delay: float | None = 5.0) -> Cluster:
    cluster = Cluster(nodes=2, interrupt_delay=interrupt_delay)
    cluster.nodes["n1"].resource_limits = cluster.nodes["n2"].resource_limits = (
        5.0,
        5.0,
        0.0,
        100.0 * GIB,
        0.0,
    )
    cluster.pool("chyt")
    cluster.operation("clique", clique(mode))
    cluster.update(0.0)
    cluster.heartbeat_all()
    assert len(cluster.running("clique")) == 10
    cluster.operation("batch", vanilla("chyt", jobs=100), user="batch")
    cluster.update(1.0)
    return cluster


def test_graceful_clique_shrinks_to_its_fair_share_with_the_graceful_timeout() -> None:
    cluster = service_cluster("graceful")
    assert cluster.op_orchid("clique")["fair_share_ratio"] == pytest.approx(0.5)
    responses = cluster.heartbeat_all(now=1.0)
    interrupts = [i for r in responses.values() for i in r.interrupt]
    assert len(interrupts) == 5  # everything above the fair share, at once, nobody starving
    assert {i.reason for i in interrupts} == {InterruptionReason.GRACEFUL_PREEMPTION}
    assert {i.timeout for i in interrupts} == {60.0}  # allocation_graceful_preemption_timeout
    assert {i.signal for i in interrupts} == {"SIGINT"}
    assert {i.operation_id for i in interrupts} == {"clique"}
    assert cluster.op_orchid("batch")["starvation_status"] == "non_starving"
    # the instances finish after 5 s; the batch operation takes their place
    for now in (6.0, 11.0, 16.0):
        cluster.update(now)
        cluster.heartbeat_all(now=now)
    assert len(cluster.running("clique")) == 5
    assert len(cluster.running("batch")) == 5
    aborted = [a for _, _, r in cluster.responses for a in r.abort if a.operation_id == "clique"]
    assert aborted == []  # instances were signalled and finished, never killed
    explanation = cluster.scheduler.explain_operation("clique")["scheduling"]["physical"]
    assert {e["reason"] for e in explanation["preempted_allocations"]} == {"graceful_preemption"}


def test_graceful_clique_grows_back_when_the_pool_is_idle() -> None:
    cluster = service_cluster("graceful")
    for now in (1.0, 6.0, 11.0):
        cluster.update(now)
        cluster.heartbeat_all(now=now)
    assert len(cluster.running("clique")) == 5
    cluster.trees.abort_operation("batch", now=20.0)
    cluster.update(20.0)
    cluster.heartbeat_all(now=20.0)
    assert len(cluster.running("clique")) == 10


def test_graceful_operation_is_never_a_victim_of_starvation_preemption() -> None:
    # the instances ignore the signal: they keep their resources until the graceful deadline;
    # the batch operation starves meanwhile but may not preempt them.
    cluster = service_cluster("graceful", interrupt_delay=None)
    cluster.heartbeat_all(now=1.0)
    for now in (2.0, 33.0, 40.0, 50.0):
        cluster.update(now)
        responses = cluster.heartbeat_all(now=now)
        assert all(r.interrupt == () for r in responses.values())
    assert cluster.op_orchid("batch")["starvation_status"] == "starving"
    responses = cluster.heartbeat_all(now=61.0)
    aborts = [a for r in responses.values() for a in r.abort]
    assert len(aborts) == 5
    assert {a.reason for a in aborts} == {InterruptionReason.INTERRUPTION_TIMEOUT}


def test_normal_clique_keeps_everything_until_the_batch_operation_starves() -> None:
    cluster = service_cluster("normal")
    for now in (1.0, 6.0, 11.0, 26.0):
        cluster.update(now)
        responses = cluster.heartbeat_all(now=now)
        assert all(r.interrupt == () for r in responses.values())
    cluster.update(32.0)  # below fair share since 1.0, 30 s timeout: starving
    assert cluster.op_orchid("batch")["starvation_status"] == "starving"
    responses = cluster.heartbeat_all(now=32.0)
    # the preemptible instances (those above the fair share in start order) are the five on
    # n2; a node heartbeat preempts for one start only, with the short timeout
    assert responses["n1"].interrupt == ()
    (interrupt,) = responses["n2"].interrupt
    assert interrupt.job_id == "clique/instances/9/0"
    assert interrupt.reason is InterruptionReason.PREEMPTION
    assert interrupt.timeout == 10.0
    assert interrupt.preempted_for_operation == "batch"
    assert interrupt.signal == "SIGINT"
    assert len(cluster.heartbeat("n2", now=33.0).interrupt) == 0  # preemptive backoff
    assert len(cluster.heartbeat("n2", now=37.5).interrupt) == 1
