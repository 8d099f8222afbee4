"""Errors of the service and how they map onto HTTP statuses.

Every refusal is a :class:`~ytsched.errors.YtschedError` with a stable code; the HTTP layer
answers it with the same ``{code, message, attributes}`` body the CLI prints, and a 4xx status
chosen from the code.  Only a bug in ytsched itself may produce a 5xx.
"""

from __future__ import annotations

from ytsched.errors import YtschedError


class ApiError(YtschedError):
    """A refused request raised by the service layer itself."""


STATUS_BY_CODE = {
    "AuthenticationError": 401,
    "AuthorizationError": 403,
    "ResolveError": 404,
    "NoSuchPoolTree": 404,
    "NoSuchPool": 404,
    "NoSuchOperation": 404,
    "NoSuchJob": 404,
    "NoSuchNode": 404,
    "NoSuchAttribute": 404,
    "NoSuchUser": 404,
    "PoolAlreadyExists": 409,
    "PoolTreeAlreadyExists": 409,
    "OperationAlreadyExists": 409,
    "AlreadyExists": 409,
    "RequestTooLarge": 413,
    "SchedulerUnavailable": 503,
}


def client_disconnected() -> ApiError:
    """A request whose client went away before its body was complete."""
    return ApiError("InvalidArgument", "client disconnected before sending the body")


def http_status(error: YtschedError) -> int:
    """4xx for every refusal (503 only while the scheduling layer is not available)."""
    return STATUS_BY_CODE.get(error.code, 400)


def resolve_error(path: str, what: str = "") -> ApiError:
    detail = f": {what}" if what else ""
    return ApiError("ResolveError", f"Error resolving path {path}{detail}", path=path)
