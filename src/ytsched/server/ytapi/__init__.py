"""The YTsaurus HTTP proxy protocol (API v4), so the official ``yt`` CLI and ``yt.wrapper``
client drive ytsched.  See ``docs/yt-compatibility.md``."""

from ytsched.server.ytapi.protocol import YtApiProtocol

__all__ = ["YtApiProtocol"]
