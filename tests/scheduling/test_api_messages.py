"""The heartbeat path's message builders equal the dataclass constructors they replace."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ytsched.scheduling.api import (
    AbortJob,
    FinishedJob,
    HeartbeatResponse,
    InterruptionReason,
    InterruptJob,
    JobOutcome,
    StartJob,
    finished_job,
    heartbeat_response,
    start_job,
)

_names = st.text(max_size=8)
_vectors = st.tuples(*[st.floats(allow_nan=False)] * 5)


@given(_names, _names, _names, _vectors, st.none() | _names, st.none() | _names)
def test_start_job_is_the_constructor(
    operation_id: str,
    job_id: str,
    task: str,
    resources: tuple[float, float, float, float, float],
    command: str | None,
    signal: str | None,
) -> None:
    built = start_job(operation_id, job_id, task, resources, command, signal)
    expected = StartJob(operation_id, job_id, task, resources, command, signal)
    assert type(built) is StartJob
    assert built == expected
    assert built.environment == {}
    assert built.environment is not start_job("a", "b", "c", resources, None, None).environment


@given(_names, _names, st.sampled_from(JobOutcome), st.none() | _names, st.booleans())
def test_finished_job_is_the_constructor(
    operation_id: str, job_id: str, outcome: JobOutcome, error: str | None, interrupted: bool
) -> None:
    built = finished_job(operation_id, job_id, outcome, error, interrupted)
    assert type(built) is FinishedJob
    assert built == FinishedJob(operation_id, job_id, outcome, error, interrupted)
    assert hash(built) == hash(FinishedJob(operation_id, job_id, outcome, error, interrupted))
    try:
        built.job_id = "other"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a built FinishedJob must stay frozen")


def test_heartbeat_response_is_the_constructor() -> None:
    start = (StartJob("op", "op/main/0/0", "main", (1.0, 0.0, 0.0, 0.0, 0.0)),)
    interrupt = (InterruptJob("op", "op/main/1/0", InterruptionReason.PREEMPTION, 1.0, "x"),)
    abort = (AbortJob("op", "op/main/2/0", InterruptionReason.PREEMPTION, "y"),)
    built = heartbeat_response(start, interrupt, abort)
    assert type(built) is HeartbeatResponse
    assert built == HeartbeatResponse(start=start, interrupt=interrupt, abort=abort)
    assert heartbeat_response((), (), ()) == HeartbeatResponse()


def test_built_messages_stay_frozen() -> None:
    built = start_job("op", "job", "main", (1.0, 0.0, 0.0, 0.0, 0.0), None, None)
    try:
        built.job_id = "other"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a built StartJob must stay frozen")
