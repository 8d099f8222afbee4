"""Integer YTsaurus error codes for ytsched's string codes.

The official client decides what went wrong by integer code (``YtResponseError.is_resolve_error``
checks 500, ``is_access_denied`` 901, ``is_no_such_operation`` 1915, ...), so every refusal on
the YTsaurus protocol carries the code YTsaurus itself would use.  Sources (repository
``ytsaurus/ytsaurus``):

* ``yt/yt/core/misc/error_code.h`` / ``yt/yt/core/misc/public.h``: ``Generic`` = 1;
* ``yt/yt/core/ytree/public.h``: ``ResolveError`` = 500, ``AlreadyExists`` = 501;
* ``yt/yt/client/security_client/public.h``: ``AuthenticationError`` = 900,
  ``AuthorizationError`` = 901, ``RequestQueueSizeLimitExceeded`` = 904;
* ``yt/yt/client/scheduler/public.h``: ``InvalidOperationState`` = 201,
  ``TooManyOperations`` = 202, ``PoolTreesAreUnspecified`` = 214;
* ``yt/yt/client/api/public.h``: ``NoSuchOperation`` = 1915, ``NoSuchJob`` = 1916,
  ``NoSuchAttribute`` = 1920 (the codes the API layer returns for ``get_operation``,
  ``get_job`` and friends, which is what the client tests for).

Everything else (validation of pools, trees, specs, parameters) is a generic error, code 1, as in
YTsaurus where the master and scheduler raise plain ``TError``s for them; the ytsched code is kept
in the error's attributes (``ytsched_code``) so nothing is lost.  The table is documented in
``docs/yt-compatibility.md``.
"""

from __future__ import annotations

GENERIC = 1
RESOLVE_ERROR = 500
AUTHENTICATION_ERROR = 900
AUTHORIZATION_ERROR = 901

CODES: dict[str, int] = {
    # yt/yt/core/ytree/public.h
    "ResolveError": RESOLVE_ERROR,
    "NoSuchPoolTree": RESOLVE_ERROR,
    "NoSuchPool": RESOLVE_ERROR,
    "NoSuchNode": RESOLVE_ERROR,
    "NoSuchUser": RESOLVE_ERROR,
    "AlreadyExists": 501,
    "PoolAlreadyExists": 501,
    "PoolTreeAlreadyExists": 501,
    "OperationAlreadyExists": 501,
    # yt/yt/client/security_client/public.h
    "AuthenticationError": AUTHENTICATION_ERROR,
    "AuthorizationError": AUTHORIZATION_ERROR,
    "RequestTooLarge": 904,
    "TooManyRequests": 904,
    # yt/yt/client/scheduler/public.h
    "InvalidOperationState": 201,
    "InvalidJobState": 201,
    "TooManyOperations": 202,
    "TooManyEphemeralPools": 202,
    "PoolTreesAreUnspecified": 214,
    # yt/yt/client/api/public.h
    "NoSuchOperation": 1915,
    "NoSuchJob": 1916,
    "NoSuchAttribute": 1920,
}


def yt_code(code: str) -> int:
    """The YTsaurus integer code of a ytsched error code (1, generic, when it has none)."""
    return CODES.get(code, GENERIC)
