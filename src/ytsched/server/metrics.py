"""Prometheus metrics at ``/metrics``.

Latencies and counters are recorded as things happen; per-pool gauges (usage, demand, fair
share, operation counts) are read from the orchid when Prometheus scrapes, so the update loop
pays nothing for them.  Each service has its own registry (tests run several in one process).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    def __init__(self, cluster: Cluster) -> None:
        self.registry = CollectorRegistry()
        self.heartbeat_seconds = Histogram(
            "ytsched_heartbeat_duration_seconds",
            "Time to process one node heartbeat (scheduling included).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.update_seconds = Histogram(
            "ytsched_fair_share_update_duration_seconds",
            "Time of one periodic fair-share update of all trees.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.update_step_seconds = Histogram(
            "ytsched_fair_share_update_longest_step_seconds",
            "Per update, its longest step on the event loop: the longest any request waited"
            " for the update (the engine itself runs in a worker thread).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.update_publish_seconds = Histogram(
            "ytsched_fair_share_update_publish_seconds",
            "Per update, the step that put the new scheduling state in place (built aside in"
            " slices before it).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.update_rebuilds = Counter(
            "ytsched_fair_share_update_state_rebuilds",
            "Updates whose scheduling state was built in the publishing step after all"
            " (a config, spec or schedulability changed while it was built aside).",
            registry=self.registry,
        )
        self.update_recomputations = Counter(
            "ytsched_fair_share_update_recomputations",
            "Fair-share computations done again because a pool, tree config or operation's"
            " pool changed while an update ran in steps.",
            registry=self.registry,
        )
        self.gc_pause_seconds = Histogram(
            "ytsched_gc_pause_seconds",
            "Pauses of Python's cyclic garbage collector, by generation (every request and"
            " heartbeat waits meanwhile).",
            ["generation"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.gc_collected = Counter(
            "ytsched_gc_collected_objects",
            "Objects the cyclic garbage collector freed (garbage in reference cycles, which"
            " reference counting cannot free), by generation.",
            ["generation"],
            registry=self.registry,
        )
        self.heartbeats = Counter(
            "ytsched_heartbeats", "Node heartbeats processed.", registry=self.registry
        )
        self.jobs_started = Counter(
            "ytsched_jobs_started", "Jobs started on nodes.", registry=self.registry
        )
        self.registry.register(_StateCollector(cluster))

    def observe_heartbeat(self, seconds: float, started: int) -> None:
        self.heartbeat_seconds.observe(seconds)
        self.heartbeats.inc()
        if started:
            self.jobs_started.inc(started)

    def observe_update(self, seconds: float) -> None:
        self.update_seconds.observe(seconds)

    def observe_update_step(
        self, seconds: float, publish: float = 0.0, rebuilt: int = 0, recomputed: int = 0
    ) -> None:
        self.update_step_seconds.observe(seconds)
        if recomputed:
            self.update_recomputations.inc(recomputed)
        self.update_publish_seconds.observe(publish)
        if rebuilt:
            self.update_rebuilds.inc(rebuilt)

    def observe_gc_pause(self, generation: int, seconds: float, collected: int = 0) -> None:
        self.gc_pause_seconds.labels(generation=str(generation)).observe(seconds)
        if collected:
            self.gc_collected.labels(generation=str(generation)).inc(collected)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _StateCollector(Collector):
    """Gauges computed from the live state at scrape time."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def collect(self) -> Iterator[Metric]:
        cluster = self.cluster
        labels = ["tree", "pool"]
        resource_labels = ["tree", "pool", "resource"]
        usage = GaugeMetricFamily(
            "ytsched_pool_resource_usage", "Resources used by running jobs.", labels=resource_labels
        )
        demand = GaugeMetricFamily(
            "ytsched_pool_resource_demand", "Resources demanded.", labels=resource_labels
        )
        fair_share = GaugeMetricFamily(
            "ytsched_pool_fair_share",
            "Fair share per resource (of the tree).",
            labels=resource_labels,
        )
        fair_share_ratio = GaugeMetricFamily(
            "ytsched_pool_fair_share_ratio", "Dominant fair share.", labels=labels
        )
        usage_ratio = GaugeMetricFamily(
            "ytsched_pool_usage_ratio", "Dominant usage share.", labels=labels
        )
        operations = GaugeMetricFamily(
            "ytsched_pool_operation_count", "Running and pending operations.", labels=labels
        )
        running = GaugeMetricFamily(
            "ytsched_pool_running_operation_count", "Running operations.", labels=labels
        )
        # Each tree's pools map from the orchid cache: a scrape never builds the whole orchid.
        for tree in list(cluster.trees.trees):
            pools = cluster.orchid_cache.get(("pool_trees", tree, "pools"), tree)
            for pool, attributes in pools.items():
                for resource, amount in (attributes.get("resource_usage") or {}).items():
                    usage.add_metric([tree, pool, resource], float(amount))
                for resource, amount in (attributes.get("resource_demand") or {}).items():
                    demand.add_metric([tree, pool, resource], float(amount))
                total = (attributes.get("detailed_fair_share") or {}).get("total") or {}
                for resource, amount in total.items():
                    fair_share.add_metric([tree, pool, resource], float(amount))
                fair_share_ratio.add_metric(
                    [tree, pool], float(attributes.get("fair_share_ratio") or 0)
                )
                usage_ratio.add_metric([tree, pool], float(attributes.get("usage_ratio") or 0))
                operations.add_metric([tree, pool], float(attributes.get("operation_count", 0)))
                running.add_metric(
                    [tree, pool], float(attributes.get("running_operation_count", 0))
                )
        yield from (usage, demand, fair_share, fair_share_ratio, usage_ratio, operations, running)
        by_state = GaugeMetricFamily("ytsched_operations", "Operations by state.", labels=["state"])
        counts: dict[str, int] = {}
        for record in cluster.operations.values():
            counts[record.row.state] = counts.get(record.row.state, 0) + 1
        for state, count in sorted(counts.items()):
            by_state.add_metric([state], float(count))
        yield by_state
        nodes = GaugeMetricFamily("ytsched_nodes", "Exec nodes by state.", labels=["state"])
        node_counts: dict[str, int] = {}
        for info in cluster.nodes.nodes.values():
            node_counts[info.state] = node_counts.get(info.state, 0) + 1
        for state, count in sorted(node_counts.items()):
            nodes.add_metric([state], float(count))
        yield nodes
        yield GaugeMetricFamily(
            "ytsched_running_jobs", "Jobs running on nodes.", value=float(len(cluster.jobs.running))
        )
