"""ytsched: a hierarchical fair-share cluster scheduler with the semantics of YTsaurus.

The library entry points for one fair-share update are :func:`ytsched.snapshot.compute`
(snapshot document in, element tree out) and :func:`ytsched.fairshare.update.run_update`
(typed :class:`~ytsched.fairshare.model.TreeSnapshot` in).
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ytsched.client import Client


def __getattr__(name: str) -> object:
    """``ytsched.Client`` without importing the HTTP stack on ``import ytsched``."""
    if name == "Client":
        from ytsched.client import Client

        return Client
    raise AttributeError(f"module 'ytsched' has no attribute {name!r}")


__all__ = ["Client", "__version__"]
