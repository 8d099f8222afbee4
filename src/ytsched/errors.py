"""Typed errors with stable codes.

Every problem with user input becomes a :class:`YtschedError` carrying a CamelCase ``code``
(stable across releases, in the YTsaurus style), a message that names the offending thing, and
optional attributes.  The CLI prints them as one line and exits with status 2; the service will
return them as 4xx bodies.
"""

from __future__ import annotations


class YtschedError(Exception):
    """Base of all user-facing errors."""

    def __init__(self, code: str, message: str, **attributes: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.attributes = attributes

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "attributes": dict(self.attributes)}


class SnapshotError(YtschedError):
    """A snapshot (or pool-tree description) is malformed or inconsistent."""
