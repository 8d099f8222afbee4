"""The exec-node agent: declares resources and tags, heartbeats, runs jobs as processes.

:mod:`resources` parses ``--resources cpu=8,memory=16G``; :mod:`process` runs one job as a
shell command in its own process group; :mod:`agent` is the heartbeat loop.
"""

from ytsched.node.agent import NodeAgent
from ytsched.node.resources import parse_resources, parse_tags

__all__ = ["NodeAgent", "parse_resources", "parse_tags"]
