"""ytsched: a hierarchical fair-share cluster scheduler with the semantics of YTsaurus.

The library entry points for one fair-share update are :func:`ytsched.snapshot.compute`
(snapshot document in, element tree out) and :func:`ytsched.fairshare.update.run_update`
(typed :class:`~ytsched.fairshare.model.TreeSnapshot` in).
"""

__version__ = "0.1.0"
