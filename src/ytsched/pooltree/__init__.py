"""The live model of pool trees, pools and operations that the simulator and service drive.

* :class:`PoolTrees`: all trees, the default tree, nodes, operations and jobs;
* :class:`PoolTree`: one tree's pools and operations, limits, pool changes, engine input and
  orchid view;
* :class:`Operation`: tasks, jobs, demand and the state machine with its history.
"""

from ytsched.pooltree.errors import SchedulerError
from ytsched.pooltree.operations import Job, JobState, Operation, OperationState, Transition
from ytsched.pooltree.pool import Pool, TreeOperation
from ytsched.pooltree.snapshot import update_options
from ytsched.pooltree.tree import PoolTree
from ytsched.pooltree.trees import Node, PoolTrees

__all__ = [
    "Job",
    "JobState",
    "Node",
    "Operation",
    "OperationState",
    "Pool",
    "PoolTree",
    "PoolTrees",
    "SchedulerError",
    "Transition",
    "TreeOperation",
    "update_options",
]
