"""The Web UI's routes: pages, their live fragments, chart data, login and the pool form.

Every page is rendered whole on the server; its changing part is also served alone under
``/ui/fragments/...``, which htmx fetches every ``ui_refresh_period`` seconds and swaps in.
Handlers are ``async`` and call the cluster directly, like the API's: the live model is only
ever touched from the event loop.

Failures are pages too: an unknown pool, tree or operation answers 404 with the service's
error code (``ResolveError``, ``NoSuchPoolTree``, ``NoSuchOperation``), a refused edit 403
(``AuthorizationError``), a bad query parameter 400 (``InvalidArgument``); a request without a
valid token is sent to the login page (fragments: ``HX-Redirect``; chart data: a 401 JSON error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from ytsched.errors import YtschedError
from ytsched.resources import RESOURCE_NAMES
from ytsched.server.cluster import Cluster
from ytsched.server.errors import ApiError, http_status
from ytsched.server.ui import forms, session, views
from ytsched.server.ui.render import SECURITY_HEADERS, pool_url, render, tree_url

router = APIRouter(include_in_schema=False)
"""Paths relative to ``/ui``, where :func:`ytsched.server.ui.mount` mounts the UI app."""

MAX_FORM_BYTES = 64 * 1024
STATUS_OVERRIDES = {"CrossSiteRequest": 403, "NotFound": 404}


# --- plumbing --------------------------------------------------------------------------------


def _base(cluster: Cluster, user: str, section: str, tree: str | None = None) -> dict[str, Any]:
    """What every page's frame needs (navigation, user, refresh period)."""
    trees = sorted(cluster.trees.trees)
    current = tree or cluster.trees.default_tree or (trees[0] if trees else None)
    return {
        "user": user,
        "superuser": cluster.auth.is_superuser(user),
        "trees": trees,
        "current_tree": current,
        "section": section,
        "refresh_ms": max(100, round(cluster.config.ui_refresh_period * 1000)),
        "now": cluster.now(),
        "history_period": cluster.history.period,
        "history_samples": cluster.history.capacity,
        "resource_names": [r for r in RESOURCE_NAMES if r in views.SHOWN_RESOURCES],
    }


def _status(error: YtschedError) -> int:
    return STATUS_OVERRIDES.get(error.code, http_status(error))


def _error_response(
    request: Request, cluster: Cluster, user: str, error: YtschedError, fragment: bool
) -> Response:
    status = _status(error)
    context = {**_base(cluster, user, ""), "error": error, "status": status}
    if fragment:
        return render("error_fragment.html", context, status)
    return render("error.html", context, status)


def _unauthenticated(request: Request, kind: str) -> Response:
    target = session.login_redirect_target(request)
    if kind == "json":
        error = ApiError("AuthenticationError", "log in at /ui/login or send a Bearer token")
        return JSONResponse(error.to_dict(), status_code=401, headers=SECURITY_HEADERS)
    if kind == "fragment":
        # htmx follows HX-Redirect with a full navigation (a plain 3xx would be swapped in).
        return Response(status_code=401, headers={"HX-Redirect": target, **SECURITY_HEADERS})
    return RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)


def _serve(
    request: Request, build: Callable[[Cluster, str], Response], kind: str = "page"
) -> Response:
    """Authenticate, build the response, and turn refusals into error pages (never a 500)."""
    cluster = session.cluster_of(request)
    user = session.user_of(request)
    if user is None:
        return _unauthenticated(request, kind)
    try:
        return build(cluster, user)
    except YtschedError as error:
        if kind == "json":
            return JSONResponse(error.to_dict(), status_code=_status(error))
        return _error_response(request, cluster, user, error, kind == "fragment")


def _query(request: Request) -> dict[str, str]:
    return dict(request.query_params)


# --- login -----------------------------------------------------------------------------------


@router.get("/")
async def ui_root(request: Request) -> Response:
    def build(cluster: Cluster, user: str) -> Response:
        context = _base(cluster, user, "scheduling")
        if context["current_tree"] is None:
            raise ApiError("NoSuchPoolTree", "the cluster has no pool trees yet")
        return RedirectResponse(tree_url(context["current_tree"]), status_code=303)

    return _serve(request, build)


@router.get("/login")
async def login_page(request: Request) -> Response:
    next_url = session.safe_next(request.query_params.get("next"))
    return render("login.html", {"error": None, "next": next_url})


@router.post("/login")
async def login(request: Request) -> Response:
    if not session.same_origin(request):
        return _login_refused(request, _cross_site(), "/ui/", 403)
    fields = await _form(request)
    next_url = session.safe_next(fields.get("next"))
    token = fields.get("token", "")
    try:
        session.check_token(request, token)
    except YtschedError as error:
        return _login_refused(request, error, next_url, 401)
    response = RedirectResponse(next_url, status_code=303, headers=SECURITY_HEADERS)
    session.set_login_cookie(request, response, token)
    return response


def _login_refused(request: Request, error: YtschedError, next_url: str, status: int) -> Response:
    return render("login.html", {"error": error, "next": next_url}, status)


@router.api_route("/logout", methods=["GET", "POST"])
async def logout(request: Request) -> Response:
    """Forget the cookie (harmless to trigger from anywhere: it only logs out)."""
    response = RedirectResponse("/ui/login", status_code=303, headers=SECURITY_HEADERS)
    session.clear_login_cookie(response)
    return response


def _cross_site() -> ApiError:
    return ApiError(
        "CrossSiteRequest",
        "form submissions are accepted only from this server's own pages (Origin mismatch)",
    )


async def _form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (the only kind our forms send)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise ApiError("InvalidArgument", "form too large")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
    except (UnicodeDecodeError, ValueError) as error:
        raise ApiError("InvalidArgument", f"malformed form: {error}") from None
    return dict(pairs)


# --- scheduling page -------------------------------------------------------------------------


def _tree_context(cluster: Cluster, user: str, tree: str) -> dict[str, Any]:
    view = views.tree_orchid(cluster, tree)
    rows = views.pool_rows(view)
    return {
        **_base(cluster, user, "scheduling", tree),
        "tree": tree,
        "rows": rows,
        "summary": views.tree_summary(view, tree, rows),
    }


@router.get("/trees/{tree}")
async def scheduling_page(request: Request, tree: str) -> Response:
    return _serve(
        request, lambda cluster, user: render("scheduling.html", _tree_context(cluster, user, tree))
    )


@router.get("/fragments/trees/{tree}")
async def scheduling_fragment(request: Request, tree: str) -> Response:
    return _serve(
        request,
        lambda cluster, user: render("_tree.html", _tree_context(cluster, user, tree)),
        "fragment",
    )


# --- pool page -------------------------------------------------------------------------------


def _pool_context(cluster: Cluster, user: str, tree: str, pool: str) -> dict[str, Any]:
    view = views.tree_orchid(cluster, tree)
    attributes = views.pool_of(view, tree, pool)
    subtree = views.pool_rows(view, top=pool)
    in_subtree = {row.name for row in subtree}
    operations = sorted(
        (
            (op_id, attrs)
            for op_id, attrs in view.get("operations", {}).items()
            if attrs.get("pool") in in_subtree
        ),
        key=lambda item: (item[1].get("pool") != pool, -(item[1].get("start_time") or 0)),
    )
    integral = attributes.get("integral_guarantee_type") not in (None, "none")
    return {
        **_base(cluster, user, "scheduling", tree),
        "tree": tree,
        "pool": pool,
        "attributes": attributes,
        "children": [row for row in subtree if row.depth == 1],
        "operations": operations,
        "integral": integral,
        "ancestors": views.ancestors(view, pool),
        "config": views.explicit_config(cluster, tree, pool),
        "cypress_path": f"//sys/pool_trees/{tree}/{pool}",
    }


def _editable(cluster: Cluster, user: str, tree: str, pool: str) -> tuple[bool, str]:
    """Whether to show the settings form, or why not (a note for those who would expect it)."""
    live = cluster.tree(tree).pools.get(pool)
    if live is None or live.is_root:
        return False, "The root pool is configured through the tree's config."
    if live.is_ephemeral:
        return False, "Ephemeral pools take their settings from their parent."
    if not cluster.auth.allowed(user, "administer", cluster.acl_chain(tree, pool)):
        return False, ""
    return True, ""


def _pool_page(
    cluster: Cluster,
    user: str,
    tree: str,
    pool: str,
    form: forms.FormState | None = None,
    saved: str = "",
    status: int = 200,
) -> Response:
    context = _pool_context(cluster, user, tree, pool)
    editable, reason = _editable(cluster, user, tree, pool)
    if editable and form is None:
        form = forms.FormState(forms.current_values(context["config"]))
    groups = [(g, [f for f in forms.FIELDS if f.group == g]) for g in forms.GROUPS]
    context.update(
        form=form if editable else None,
        form_groups=groups,
        editable_reason=reason,
        saved=saved,
    )
    return render("pool.html", context, status)


@router.get("/trees/{tree}/pools/{pool}")
async def pool_page(request: Request, tree: str, pool: str) -> Response:
    saved = request.query_params.get("saved", "")[:500]

    def build(cluster: Cluster, user: str) -> Response:
        return _pool_page(cluster, user, tree, pool, saved=saved)

    return _serve(request, build)


@router.get("/fragments/trees/{tree}/pools/{pool}")
async def pool_fragment(request: Request, tree: str, pool: str) -> Response:
    return _serve(
        request,
        lambda cluster, user: render(
            "_pool_fragment.html", _pool_context(cluster, user, tree, pool)
        ),
        "fragment",
    )


@router.post("/trees/{tree}/pools/{pool}")
async def pool_settings(request: Request, tree: str, pool: str) -> Response:
    """The settings form: permission, validation and the change, all as ``set`` does them."""
    same_origin = session.same_origin(request)
    try:
        submitted = await _form(request)
    except YtschedError as error:
        submitted = {}
        failure: YtschedError | None = error
    else:
        failure = None

    def build(cluster: Cluster, user: str) -> Response:
        if not same_origin:
            raise _cross_site()
        if failure is not None:
            raise failure
        state = forms.submit(cluster, user, tree, pool, submitted)
        if not state.ok:
            return _pool_page(cluster, user, tree, pool, form=state, status=400)
        saved = ", ".join(state.changed) if state.changed else "nothing changed"
        target = pool_url(tree, pool) + "?" + urlencode({"saved": saved})
        return RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)

    return _serve(request, build)


# --- operations ------------------------------------------------------------------------------


def _operations_context(cluster: Cluster, user: str, params: dict[str, str]) -> dict[str, Any]:
    selection = views.parse_operation_filter(params)
    query = {k: v for k, v in params.items() if v}
    return {
        **_base(cluster, user, "operations"),
        "selection": selection,
        "states": views.OPERATION_STATES,
        "listed": views.list_operations(cluster, selection),
        "query": ("?" + urlencode(query)) if query else "",
    }


@router.get("/operations")
async def operations_page(request: Request) -> Response:
    params = _query(request)
    return _serve(
        request,
        lambda cluster, user: render("operations.html", _operations_context(cluster, user, params)),
    )


@router.get("/fragments/operations")
async def operations_fragment(request: Request) -> Response:
    params = _query(request)
    return _serve(
        request,
        lambda cluster, user: render(
            "_operations.html", _operations_context(cluster, user, params)
        ),
        "fragment",
    )


def _operation_context(cluster: Cluster, user: str, op_id: str) -> dict[str, Any]:
    page = views.operation_page(cluster, op_id)
    tree = next(iter(page.per_tree), None)
    return {
        **_base(cluster, user, "operations", tree),
        "op_id": page.view["id"],
        "page": page,
    }


@router.get("/operations/{op_id}")
async def operation_page(request: Request, op_id: str) -> Response:
    return _serve(
        request,
        lambda cluster, user: render("operation.html", _operation_context(cluster, user, op_id)),
    )


@router.get("/fragments/operations/{op_id}")
async def operation_fragment(request: Request, op_id: str) -> Response:
    return _serve(
        request,
        lambda cluster, user: render(
            "_operation_fragment.html", _operation_context(cluster, user, op_id)
        ),
        "fragment",
    )


# --- nodes -----------------------------------------------------------------------------------


def _nodes_context(cluster: Cluster, user: str) -> dict[str, Any]:
    return {**_base(cluster, user, "nodes"), "nodes": views.node_lines(cluster)}


@router.get("/nodes")
async def nodes_page(request: Request) -> Response:
    return _serve(
        request, lambda cluster, user: render("nodes.html", _nodes_context(cluster, user))
    )


@router.get("/fragments/nodes")
async def nodes_fragment(request: Request) -> Response:
    return _serve(
        request,
        lambda cluster, user: render("_nodes.html", _nodes_context(cluster, user)),
        "fragment",
    )


# --- chart data ------------------------------------------------------------------------------


@router.get("/api/history/pools/{tree}/{pool}")
async def pool_history(request: Request, tree: str, pool: str) -> Response:
    def build(cluster: Cluster, user: str) -> Response:
        # Polled by every open chart: look the pool up directly, not through the orchid.
        live = cluster.trees.trees.get(tree)
        if live is None:
            raise views.no_such_tree(cluster, tree)
        if pool not in live.pools:
            raise ApiError(
                "ResolveError",
                f"pool {pool!r} does not exist in tree {tree!r}",
                path=f"//sys/pool_trees/{tree}/{pool}",
            )
        data = cluster.history.pool(tree, pool) or _empty_pool_history()
        kind = live.pools[pool].effective.integral_guarantees.guarantee_type
        data["integral"] = kind != "none"
        data["period"] = cluster.history.period
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    return _serve(request, build, "json")


def _empty_pool_history() -> dict[str, Any]:
    return {"times": [], "fair_share": [], "usage": [], "demand": [], "volume": [], "capacity": []}


@router.get("/api/history/operations/{op_id}")
async def operation_history(request: Request, op_id: str) -> Response:
    tree = request.query_params.get("tree")

    def build(cluster: Cluster, user: str) -> Response:
        from ytsched.server.operations import resolve_id

        operation_id = resolve_id(cluster, op_id)
        trees = cluster.history.operation_trees(operation_id)
        name = tree if tree is not None else (trees[0] if trees else None)
        if name is not None and name not in cluster.trees.trees and name not in trees:
            raise views.no_such_tree(cluster, name)
        data = cluster.history.operation(name, operation_id) if name is not None else None
        if data is None:
            data = {"times": [], "fair_share": [], "usage": [], "demand": []}
        data["tree"] = name
        data["period"] = cluster.history.period
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    return _serve(request, build, "json")


# --- anything else under /ui -----------------------------------------------------------------


@router.api_route("/{rest:path}", methods=["GET", "POST"])
async def not_found(request: Request, rest: str) -> Response:
    def build(cluster: Cluster, user: str) -> Response:
        raise ApiError("ResolveError", f"no UI page at /ui/{rest}", path=f"/ui/{rest}")

    return _serve(request, build)
