"""Exec nodes as the service sees them: registration on heartbeat, liveness, user tags.

A node joins the live model (``PoolTrees.register_node``) on its first heartbeat, and again
after it was offline.  A node silent for ``node_heartbeat_timeout`` is offline: it leaves the
model, which aborts its jobs so that they are scheduled elsewhere.  After a restart the nodes
that were online are registered again at once with their jobs attached, and get the same
timeout to heartbeat before they are declared offline.

A node's tags are the ones it declares plus ``@user_tags`` set by an administrator
(``//sys/cluster_nodes/<address>/@user_tags``), which are kept across restarts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ytsched.config.base import parse_config
from ytsched.config.resources import ResourceAmounts
from ytsched.resources import Vector
from ytsched.server.errors import ApiError
from ytsched.store import NodeRow

if TYPE_CHECKING:
    from ytsched.server.cluster import Cluster

log = logging.getLogger("ytsched.server")


@dataclass(slots=True)
class NodeInfo:
    address: str
    tags: list[str]
    resource_limits: dict[str, float]
    last_seen: float
    state: str = "online"
    registered_at: float = 0.0
    heartbeat_count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class NodeTracker:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.nodes: dict[str, NodeInfo] = {}
        self.user_tags: dict[str, list[str]] = {}
        self._limits: dict[str, tuple[dict[str, float], dict[str, float], Vector]] = {}
        """address -> (the limits as last sent, parsed: canonical map, vector); see
        :meth:`parsed_limits`."""

    def parsed_limits(self, address: str, raw: dict[str, float]) -> tuple[dict[str, float], Vector]:
        """A heartbeat's ``resource_limits`` validated: canonical names, and as a vector.

        A node sends the same limits every second; validating them through the config model
        each time was ~4% of the server's time at 2,000 heartbeats a second, so the result
        for the node's last limits is kept and reused while the node sends an equal map
        (validation is a function of the map alone).  Invalid limits are never kept: they
        raise here every time, before the node is touched.  The returned map is shared:
        callers copy it before keeping it.
        """
        cached = self._limits.get(address)
        if cached is not None and cached[0] == raw:
            return cached[1], cached[2]
        limits = parse_config(ResourceAmounts, raw, f"node {address!r}: resource_limits")
        entry = (dict(raw), limits.as_map(), limits.to_vector(0.0))
        self._limits[address] = entry
        return entry[1], entry[2]

    def all_tags(self, info: NodeInfo) -> list[str]:
        return sorted(set(info.tags) | set(self.user_tags.get(info.address, ())))

    def _persist(self, info: NodeInfo) -> None:
        self.cluster.store.save_node(
            NodeRow(
                info.address,
                info.tags,
                self.user_tags.get(info.address, []),
                info.resource_limits,
                info.last_seen,
            )
        )

    def register(self, info: NodeInfo) -> None:
        """Put a node into the live model (inside a transaction)."""
        limits = parse_config(
            ResourceAmounts, info.resource_limits, f"node {info.address!r}: resource_limits"
        )
        trees = self.cluster.trees
        if info.address in trees.nodes:
            trees.unregister_node(info.address)
        trees.register_node(info.address, tags=self.all_tags(info), resource_limits=limits)
        info.state = "online"
        self.nodes[info.address] = info
        self._persist(info)

    def on_heartbeat(
        self, address: str, tags: list[str], resource_limits: dict[str, float], now: float
    ) -> NodeInfo:
        """Note a heartbeat; the store learns of new, returning or changed nodes.

        Registration in the live model is the scheduling layer's (it registers unknown nodes
        and follows their tags and limits); the service keeps liveness and persistence.
        """
        tags = sorted(set(tags))
        info = self.nodes.get(address)
        if info is None or info.state != "online":
            log.info("node %s %s", address, "registered" if info is None else "is back online")
            info = NodeInfo(address, tags, dict(resource_limits), now, registered_at=now)
            self.nodes[address] = info
            changed = True
        else:
            changed = tags != info.tags or resource_limits != info.resource_limits
            info.tags = tags
            info.resource_limits = dict(resource_limits)
        info.last_seen = now
        info.heartbeat_count += 1
        if changed:
            with self.cluster.store.transaction():
                self._persist(info)
        return info

    def check_liveness(self, now: float) -> None:
        timeout = self.cluster.config.node_heartbeat_timeout
        for info in list(self.nodes.values()):
            if info.state == "online" and now - info.last_seen > timeout:
                self.set_offline(info, f"no heartbeat for {now - info.last_seen:.1f}s")

    def set_offline(self, info: NodeInfo, reason: str) -> None:
        """The node leaves the model; its jobs are aborted and will be rescheduled."""
        cluster = self.cluster
        info.state = "offline"
        info.extra["offline_reason"] = reason
        log.warning("node %s is offline (%s); its jobs are aborted", info.address, reason)
        with cluster.store.transaction():
            # Jobs lost with the node are aborted with YTsaurus's EAbortReason::NodeOffline.
            for job_id in sorted(cluster.jobs.running_on(info.address)):
                cluster.store.set_job_interruption(
                    job_id, {"reason": "node_offline", "explanation": f"node offline: {reason}"}
                )
            if info.address in cluster.trees.nodes:
                cluster.trees.unregister_node(info.address)
            cluster.jobs.reconcile_node(info.address)
            cluster.store.delete_node(info.address)
            cluster.sync_operations()

    def set_user_tags(self, address: str, tags: object) -> None:
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise ApiError("InvalidAttribute", "@user_tags must be a list of non-empty strings")
        info = self.nodes.get(address)
        if info is None:
            raise ApiError("NoSuchNode", f"node {address!r} is not known", node=address)
        previous = self.user_tags.get(address)
        self.user_tags[address] = list(dict.fromkeys(tags))
        try:
            if info.state == "online":
                self.cluster.trees.set_node_tags(address, self.all_tags(info))
        except Exception:
            if previous is None:
                self.user_tags.pop(address, None)
            else:
                self.user_tags[address] = previous
            raise
        with self.cluster.store.transaction():
            self.cluster.store.set_meta("node_user_tags", self.user_tags)
            if info.state == "online":
                self._persist(info)
            self.cluster.jobs.reconcile_node(address)
            self.cluster.sync_operations()

    def node(self, address: str) -> NodeInfo:
        info = self.nodes.get(address)
        if info is None:
            raise ApiError("NoSuchNode", f"node {address!r} is not known", node=address)
        return info
