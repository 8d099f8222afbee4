"""Request bodies of the HTTP API (they make the published OpenAPI schema).

Parameter names are those of the YTsaurus driver commands (``path``, ``attributes``,
``ignore_existing``, ``operation_type``, ``abort_message``, ...).  Unknown keys are refused so
that a misspelt parameter is an error, not silently ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

NAME = Field(min_length=1, max_length=1024)


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PathRequest(Request):
    path: str = Field(max_length=4096, description="A YPath, e.g. //sys/pools/research/@weight")


class GetRequest(PathRequest):
    attributes: list[str] | None = Field(None, description="Attributes to return with the value")
    fields: list[str] | None = Field(None, description="Orchid: keep only these fields")


class SetRequest(PathRequest):
    value: Any = Field(description="The new value (any JSON value)")
    recursive: bool = False
    force: bool = False


class ListRequest(PathRequest):
    attributes: list[str] | None = None


class RemoveRequest(PathRequest):
    recursive: bool = False
    force: bool = False


class CreateRequest(Request):
    type: str = Field(max_length=64, description="scheduler_pool_tree, scheduler_pool or user")
    path: str | None = Field(None, max_length=4096)
    attributes: dict[str, Any] | None = None
    ignore_existing: bool = False
    recursive: bool = False


class StartOperationRequest(Request):
    operation_type: str = Field("vanilla", max_length=64)
    spec: dict[str, Any]
    mutation_id: str | None = Field(None, min_length=1, max_length=128)
    """Makes a retried start idempotent: the same id returns the operation it started."""


class OperationRequest(Request):
    operation_id: str = NAME


class AbortOperationRequest(OperationRequest):
    abort_message: str | None = Field(None, max_length=65536)


class SuspendOperationRequest(OperationRequest):
    abort_running_jobs: bool = False


class UpdateParametersRequest(OperationRequest):
    parameters: dict[str, Any]


class GetOperationRequest(OperationRequest):
    attributes: list[str] | None = None


class ListOperationsRequest(Request):
    user: str | None = Field(None, max_length=1024)
    state: str | None = Field(None, max_length=64)
    pool: str | None = Field(None, max_length=1024)
    limit: int = Field(100, ge=1, le=10_000)


class ListJobsRequest(OperationRequest):
    job_state: str | None = Field(None, max_length=64)
    limit: int = Field(1000, ge=1, le=100_000)


class JobRequest(Request):
    job_id: str = NAME
    operation_id: str | None = Field(None, max_length=1024)


class AbortJobRequest(JobRequest):
    interrupt_timeout: int | None = Field(
        None, ge=0, le=86_400_000, description="ms: interrupt instead of abort"
    )


class CheckPermissionRequest(Request):
    user: str = NAME
    permission: str = Field(max_length=64)
    path: str = Field(max_length=4096)


class TransferPoolResourcesRequest(Request):
    pool_tree: str = NAME
    source_pool: str = NAME
    destination_pool: str = NAME
    resource_delta: dict[str, Any] = Field(
        description="strong_guarantee_resources, resource_flow, burst_guarantee_resources,"
        " max_operation_count, max_running_operation_count"
    )


class IssueTokenRequest(Request):
    user: str = NAME


class FinishedJobReport(Request):
    operation_id: str = Field(max_length=1024)
    job_id: str = NAME
    outcome: Literal["completed", "failed", "aborted"]
    error: str | None = Field(None, max_length=65536)
    interrupted: bool = False
    exit_code: int | None = Field(None, ge=-(2**31), le=2**31)
    stdout: str | None = None
    stderr: str | None = None


class HeartbeatRequest(Request):
    address: str = Field(min_length=1, max_length=256)
    resource_limits: dict[str, float]
    tags: list[str] = Field(default_factory=list, max_length=1000)
    running_job_ids: list[str] = Field(default_factory=list)
    finished_jobs: list[FinishedJobReport] = Field(default_factory=list)
