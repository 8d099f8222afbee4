"""Defaults of ``ytsched server``'s own options, in one place.

:class:`ytsched.server.cluster.ServiceConfig` and the ``ytsched server`` command both read
them; this module imports nothing, so the command line stays quick to start.
"""

NODE_HEARTBEAT_TIMEOUT = 15.0
"""Seconds without a heartbeat after which a node is offline."""
HEARTBEAT_PERIOD = 1.0
"""Seconds between node heartbeats, told to nodes."""
HISTORY_SAMPLES = 720
"""Samples of pool and operation shares kept for the Web UI's charts."""
HISTORY_PERIOD = 5.0
"""Seconds between history samples."""
UI_REFRESH_PERIOD = 5.0
"""Seconds between the Web UI's live refreshes of a page."""
