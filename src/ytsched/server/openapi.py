"""The published OpenAPI description: the error answers the API really gives.

FastAPI describes every route with ``200`` and ``422`` (its own validation error).  We never
answer 422 (a malformed body is a 400 ``InvalidArgument``), and every command can be refused
with a ``{code, message, attributes}`` body and one of a few statuses (``server.errors``), so
the description lists those instead: ``400``, ``401``, ``403``, ``404``, ``409``, ``413``, and
``503`` for commands that need the scheduling layer.  Routes added later get them too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A refusal, as the CLI prints it: `ytsched: error: MESSAGE [CODE]`.",
    "required": ["code", "message", "attributes"],
    "properties": {
        "code": {"type": "string", "description": "Stable error code, e.g. NoSuchPool"},
        "message": {"type": "string"},
        "attributes": {"type": "object", "additionalProperties": True},
    },
}
ERRORS = {
    "400": "Invalid request or argument (InvalidArgument, InvalidConfig, limits, ...)",
    "401": "Missing or unknown token (AuthenticationError)",
    "403": "Not permitted (AuthorizationError)",
    "404": "No such object (ResolveError, NoSuchPool, NoSuchOperation, ...)",
    "409": "Already exists (PoolAlreadyExists, ...)",
    "413": "Request body, spec or string above its limit (RequestTooLarge)",
    "503": "The scheduling layer is not available (SchedulerUnavailable)",
}
UNAUTHENTICATED = ("/ping",)


def install(app: FastAPI) -> None:
    """Post-process the generated description once, when it is first asked for."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Error"] = ERROR_SCHEMA
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)
                if path in UNAUTHENTICATED:
                    continue
                for status, description in ERRORS.items():
                    responses.setdefault(
                        status,
                        {
                            "description": description,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Error"}
                                }
                            },
                        },
                    )
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
