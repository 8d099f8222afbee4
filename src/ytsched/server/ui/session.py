"""Who is looking at a UI page: the API's tokens, carried by a cookie for browsers.

The API authenticates every request with ``Authorization: Bearer <token>``; a browser cannot
add that header to a link or a form, so ``/ui/login`` takes the token once and keeps it in a
cookie that is:

* ``HttpOnly``: page scripts (and so injected ones) cannot read it;
* ``SameSite=Strict``: the browser sends it only with requests started from our own pages, so
  another site can neither submit our forms with it nor embed our pages logged in;
* limited to ``/ui`` (the API keeps requiring the header), and ``Secure`` over HTTPS.

On top of SameSite, every state-changing POST must come from our own origin: the browser's
``Origin`` header (or, where a browser omits it, ``Referer``) must name the host the request was
sent to.  That is the CSRF defence that does not depend on the cookie attribute (old browsers,
proxies that strip it) and needs no per-form secret.  Tokens never appear in URLs.

A request may also carry the bearer header itself (scripts, curl); it wins over the cookie.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import Response

from ytsched.errors import YtschedError
from ytsched.server.cluster import Cluster

COOKIE = "ytsched_ui_token"
COOKIE_PATH = "/ui"
LOGIN_URL = "/ui/login"


def cluster_of(request: Request) -> Cluster:
    cluster: Cluster = request.app.state.cluster
    return cluster


def user_of(request: Request) -> str | None:
    """The authenticated user (bearer header, else cookie), or None."""
    auth = cluster_of(request).auth
    header = request.headers.get("authorization")
    cookie = request.cookies.get(COOKIE)
    if header:
        candidate = header
    elif cookie:
        candidate = f"Bearer {cookie}"
    else:
        return None
    try:
        return auth.authenticate(candidate)
    except YtschedError:
        return None


def check_token(request: Request, token: str) -> str:
    """The user of a token typed into the login form (raises ``AuthenticationError``)."""
    return cluster_of(request).auth.authenticate(f"Bearer {token.strip()}")


def set_login_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        COOKIE,
        token.strip(),
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_login_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")


def login_redirect_target(request: Request) -> str:
    """``/ui/login?next=<this page>`` (only the path and query: never a token)."""
    here = request.url.path
    if request.url.query:
        here += "?" + request.url.query
    return f"{LOGIN_URL}?next={quote(here, safe='')}"


def safe_next(value: str | None) -> str:
    """Where to go after login: a path inside the UI, never another site (open redirect)."""
    if not value or not value.startswith("/ui/") or value.startswith("//") or "\\" in value:
        return "/ui/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "/ui/"
    return value


def same_origin(request: Request) -> bool:
    """Whether a POST was sent by a page of this server (the CSRF check, see module doc)."""
    host = request.headers.get("host")
    if not host:
        return False
    expected = f"{request.url.scheme}://{host}".lower()
    origin = request.headers.get("origin")
    if origin is not None:
        return origin.lower() == expected
    referer = request.headers.get("referer")
    if referer:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}".lower() == expected
    return False
