"""Compatibility: the module the SQLite store lived in before the store had two engines.

Code written against it keeps working: ``Store`` here is the SQLite engine (as it was); new code
uses :class:`ytsched.store.Store` (the interface) and :func:`ytsched.store.open_store`.
"""

from ytsched.store.rows import JobRow, NodeRow, OperationRow, TreeRows, token_hash
from ytsched.store.sqlite import SQLiteStore as Store

__all__ = ["JobRow", "NodeRow", "OperationRow", "Store", "TreeRows", "token_hash"]
