"""The Web UI served by ``ytsched server`` under ``/ui``: pages over the live scheduler state.

* :mod:`.session`: browser login (the API's tokens in an HttpOnly, SameSite=Strict cookie) and
  the same-origin check on form submissions;
* :mod:`.views`: page data from the orchid and the command modules;
* :mod:`.forms`: the pool settings form, applied through the ``set`` command's validation;
* :mod:`.render`: Jinja2 templates, formats, security headers;
* :mod:`.routes`: pages, live fragments (htmx), chart data (uPlot), login.

Templates and static files (including the vendored htmx and uPlot, see ``docs/ui.md``) ship
inside the package: nothing is fetched from the network, nothing needs a JavaScript toolchain.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.staticfiles import StaticFiles

from ytsched.server.ui.render import STATIC


def mount(app: FastAPI) -> None:
    """Mount the UI at ``/ui`` as an app of its own, sharing the service's cluster.

    Its own app so that its middleware stays its own: pages of a large tree are a few hundred
    KB of repetitive HTML re-sent on every refresh, so they are gzipped, while the API's hot
    path (node heartbeats) is left alone.
    """
    from ytsched.server.ui.routes import router

    ui = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    ui.state.cluster = app.state.cluster
    ui.add_middleware(GZipMiddleware, minimum_size=4096, compresslevel=5)
    ui.mount("/static", StaticFiles(directory=STATIC), name="static")
    ui.include_router(router)
    app.mount("/ui", ui)

    @ui.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        """The service's error shape (unknown pages have a route of their own: a 404 page)."""
        code = {405: "MethodNotAllowed", 404: "ResolveError"}.get(error.status_code, "HttpError")
        body = {"code": code, "message": str(error.detail), "attributes": {}}
        return JSONResponse(body, status_code=error.status_code, headers=error.headers)

    @app.get("/", include_in_schema=False)
    async def _home() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui", include_in_schema=False)
    async def _ui() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)
