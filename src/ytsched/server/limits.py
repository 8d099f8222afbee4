"""Bounded work per request: every size a user controls has a limit, checked on arrival.

A scheduler is shared infrastructure; one careless script must not make it allocate without
bound.  The limits, with YTsaurus's names and defaults where YTsaurus has the same limit:

* ``max_task_count`` (100) and ``max_total_job_count`` (100,000) of a vanilla operation are
  the controller agent's ``vanilla_operation_options``
  (``yt/yt/server/controller_agent/config.cpp``, ``TVanillaOperationOptions``), refused at
  submission with YTsaurus's messages ("Maximum total job count exceeded: N > M",
  ``yt/yt/server/controller_agent/controllers/vanilla_controller.cpp``).
* ``max_request_body_size`` (16 MiB) bounds every API request body, checked from
  ``Content-Length`` before anything is read and again while reading; a larger body is a 413
  ``RequestTooLarge``.  ``max_spec_size`` (1 MiB of JSON) bounds an operation spec,
  ``max_string_length`` (64 KiB) every string in a request.  YTsaurus has no public option of
  these names (its proxies and masters bound requests in their own ways), so the names are
  ours (docs/conformance.md).
* Every JSON body is parsed strictly once before the framework sees it: ``NaN``,
  ``Infinity``, numbers that overflow a double and integers outside YSON's int64/uint64 are
  refused with ``InvalidArgument`` naming the problem, instead of reaching the live model (or
  ``int()``'s 4,300-digit guard, which raised past every handler).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ytsched.server.asgi import header, read_body, send_json
from ytsched.server.errors import ApiError, client_disconnected

KIB = 1024
MIB = 1024 * KIB
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1
MAX_DEPTH = 64
"""Nesting depth of a JSON body (a spec is a few levels deep)."""


@dataclass(frozen=True, slots=True)
class RequestLimits:
    max_request_body_size: int = 16 * MIB
    max_string_length: int = 64 * KIB
    max_spec_size: int = 1 * MIB
    max_task_count: int = 100
    max_total_job_count: int = 100_000


class _Refused(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows (non-finite values are refused)")


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 20:
        raise _Refused(f"an integer of {digits} digits is out of range (int64/uint64)")
    value = int(text)
    if not INT_MIN <= value <= UINT_MAX:
        raise _Refused(f"integer {value} is out of range (int64/uint64)")
    return value


def _parse_float(text: str) -> float:
    if len(text) > 400:
        raise _Refused(f"a number of {len(text)} characters is not a reasonable double")
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text[:40]} overflows a double")
    return value


def strict_json(body: bytes, limits: RequestLimits) -> Any:
    """Parse a request body, refusing what no command accepts (see the module docstring)."""
    try:
        value = json.loads(
            body,
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
        )
    except _Refused as error:
        raise ApiError("InvalidArgument", f"malformed request: body: {error}") from None
    except RecursionError:
        raise ApiError("InvalidArgument", "malformed request: body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError("InvalidArgument", f"malformed request: body is not JSON: {error}") from None
    _check_sizes(value, limits)
    return value


def _check_sizes(value: Any, limits: RequestLimits) -> None:
    """Strings no longer than ``max_string_length``, nesting no deeper than ``MAX_DEPTH``."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ApiError(
                "InvalidArgument", f"malformed request: body is nested deeper than {MAX_DEPTH}"
            )
        if isinstance(item, str):
            if len(item) > limits.max_string_length:
                raise ApiError(
                    "RequestTooLarge",
                    f"string at {where or '/'} has {len(item)} characters, more than"
                    f" max_string_length ({limits.max_string_length})",
                    limit="max_string_length",
                    value=len(item),
                )
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, f"{where}/{str(key)[:64]}", depth + 1))
                stack.append((child, f"{where}/{str(key)[:64]}", depth + 1))
        elif isinstance(item, list):
            stack.extend((child, f"{where}/{index}", depth + 1) for index, child in enumerate(item))


def check_spec(spec: dict[str, Any], limits: RequestLimits) -> None:
    """Refuse an operation spec larger than ``max_spec_size`` (as compact JSON)."""
    try:
        size = len(json.dumps(spec, separators=(",", ":"), allow_nan=False))
    except (TypeError, ValueError) as error:
        raise ApiError("InvalidConfig", f"operation spec is not a JSON document: {error}") from None
    if size > limits.max_spec_size:
        raise ApiError(
            "RequestTooLarge",
            f"operation spec is {size} bytes, more than max_spec_size ({limits.max_spec_size})",
            limit="max_spec_size",
            value=size,
        )


def check_vanilla_limits(job_counts: dict[str, int], limits: RequestLimits) -> None:
    """The controller agent's ``vanilla_operation_options`` limits, with its messages."""
    if len(job_counts) > limits.max_task_count:
        raise ApiError(
            "MaxTaskCountExceeded",
            f"Maximum number of tasks exceeded: {len(job_counts)} > {limits.max_task_count}",
            limit="max_task_count",
        )
    total = sum(job_counts.values())
    if total > limits.max_total_job_count:
        raise ApiError(
            "MaxTotalJobCountExceeded",
            f"Maximum total job count exceeded: {total} > {limits.max_total_job_count}",
            limit="max_total_job_count",
        )


class BoundedRequests:
    """ASGI middleware: bodies are bounded in size and JSON bodies parsed strictly first.

    The body is read here (at most ``max_request_body_size`` bytes) and replayed to the
    application; a refusal is answered directly with the usual ``{code, message, attributes}``.
    """

    def __init__(self, app: ASGIApp, limits: RequestLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        from ytsched.server.ytapi.protocol import is_yt_request

        if is_yt_request(scope):
            # The YTsaurus protocol (YSON bodies, parameters in headers) bounds its bodies
            # itself and answers refusals in its own shape (ytsched.server.ytapi).
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read(scope, receive)
            if body and _is_json(scope):
                strict_json(body, self.limits)
        except ApiError as error:
            await _answer(send, 413 if error.code == "RequestTooLarge" else 400, error)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, scope: Scope, receive: Receive) -> bytes:
        limit = self.limits.max_request_body_size
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(int(declared), limit)
        return await read_body(
            receive, limit, lambda size: _too_large(size, limit), client_disconnected
        )


def _too_large(size: int, limit: int) -> ApiError:
    return ApiError(
        "RequestTooLarge",
        f"request body of {size} bytes exceeds max_request_body_size ({limit} bytes)",
        limit="max_request_body_size",
        value=size,
    )


def _is_json(scope: Scope) -> bool:
    content_type = header(scope, b"content-type") or ""
    return str(scope["path"]).startswith("/api/") or "json" in content_type


async def _answer(send: Send, status: int, error: ApiError) -> None:
    await send_json(send, status, json.dumps(error.to_dict(), separators=(",", ":")).encode())
