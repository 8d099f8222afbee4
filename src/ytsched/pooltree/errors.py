"""Errors of pool trees, admission and operations (codes follow YTsaurus where it has one)."""

from __future__ import annotations

from ytsched.errors import YtschedError


class SchedulerError(YtschedError):
    """A refused request: bad pool change, refused operation start, unknown object, ..."""
