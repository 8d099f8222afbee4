"""Persistence of the scheduler service: one SQLite database in the data directory.

Why SQLite: a single file, transactions, and write-ahead logging give the service crash safety
(``kill -9`` loses nothing that was committed) without another process to run.  Only the service
layer (``ytsched.server``) touches it; the pure layers never see a database.
"""

from ytsched.store.db import JobRow, NodeRow, OperationRow, Store

__all__ = ["JobRow", "NodeRow", "OperationRow", "Store"]
