"""The OpenAPI description lists the error answers the API gives, not FastAPI's 422."""

from __future__ import annotations

from tests.server.conftest import Service


def test_every_command_documents_its_error_answers(service: Service) -> None:
    schema = service.http.get("/openapi.json").json()
    assert schema["components"]["schemas"]["Error"]["required"] == ["code", "message", "attributes"]
    commands = {path: ops for path, ops in schema["paths"].items() if path.startswith("/api/v4/")}
    assert "/api/v4/start_op" in commands and "/api/v4/node_heartbeat" in commands
    for path, operations in commands.items():
        for operation in operations.values():
            statuses = set(operation["responses"])
            assert "422" not in statuses, path
            assert {"200", "400", "401", "403", "404", "413"} <= statuses, path
    # A body the API refuses really is answered with one of the documented statuses.
    response = service.http.post("/api/v4/get", content=b"{", headers={"Authorization": "x"})
    assert str(response.status_code) in schema["paths"]["/api/v4/get"]["post"]["responses"]
