"""The scheduler service: Cypress-style commands, operations, node heartbeats, persistence.

Layout: :mod:`cluster` is the single-threaded core that owns the live pool trees, the
scheduler, the store and the operation records; :mod:`cypress`, :mod:`operations` and
:mod:`heartbeats` implement the commands over it; :mod:`app` exposes them over HTTP (FastAPI),
:mod:`runner` runs uvicorn with the periodic fair-share update.
"""
