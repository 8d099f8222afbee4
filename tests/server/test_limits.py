"""Bounded work per request: job and task counts, spec and string sizes, body size, strict JSON.

Each refusal leaves the state unchanged (no operation is created) and is a 4xx with a stable
code and a message naming the limit.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.server.conftest import ADMIN, Service
from ytsched.server.limits import RequestLimits, strict_json

HEADERS = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}


def _operation_count(service: Service) -> int:
    return len(service.call("list_operations")["operations"])


def _vanilla(job_count: int, tasks: int = 1) -> dict[str, object]:
    return {
        "pool": "batch",
        "tasks": {f"t{i}": {"job_count": job_count, "command": "true"} for i in range(tasks)},
    }


def test_job_and_task_counts_have_ytsaurus_limits(service: Service) -> None:
    before = _operation_count(service)
    for job_count in (100_001, 10**7, 10**9):
        try:
            service.call("start_op", spec=_vanilla(job_count))
        except Exception as failure:
            body = failure.body  # type: ignore[attr-defined]
            assert failure.status == 400  # type: ignore[attr-defined]
            assert body["code"] == "MaxTotalJobCountExceeded"
            assert body["message"] == f"Maximum total job count exceeded: {job_count} > 100000"
        else:
            raise AssertionError("accepted")
    # The limit is on the total over tasks.
    assert service.error("start_op", spec=_vanilla(60_000, tasks=2)) == (
        400,
        "MaxTotalJobCountExceeded",
    )
    assert service.error("start_op", spec=_vanilla(1, tasks=101)) == (400, "MaxTaskCountExceeded")
    assert _operation_count(service) == before
    assert service.call("start_op", spec=_vanilla(1, tasks=100))["operation_id"]


def test_spec_and_string_sizes_are_bounded(service: Service) -> None:
    before = _operation_count(service)
    big = {"pool": "batch", "annotations": {f"k{i}": "x" * 60_000 for i in range(20)}}
    assert service.error("start_op", spec=big) == (413, "RequestTooLarge")
    long_command = _vanilla(1)
    long_command["tasks"]["t0"]["command"] = "x" * (64 * 1024 + 1)  # type: ignore[index]
    assert service.error("start_op", spec=long_command) == (413, "RequestTooLarge")
    assert _operation_count(service) == before


def test_body_size_limit_on_the_whole_api(service: Service) -> None:
    limit = RequestLimits().max_request_body_size
    body = b'{"path": "//sys/pools", "value": "' + b"x" * limit + b'"}'
    response = service.http.post("/api/v4/set", content=body, headers=HEADERS)
    assert response.status_code == 413
    answer = response.json()
    assert answer["code"] == "RequestTooLarge"
    assert "max_request_body_size" in answer["message"]


def test_hostile_json_is_invalid_argument_not_a_500(service: Service) -> None:
    weight_path = "//sys/pools/research/@weight"
    before = service.call("get", path=weight_path)["value"]
    prefix = '{"path": "' + weight_path + '", "value": '
    values = ["NaN", "Infinity", "-Infinity", "1e5000", "9" * 5000, "18446744073709551616"]
    bodies = [prefix + value + "}" for value in values]
    bodies += [prefix + "[" * 5000 + "]" * 5000 + "}", prefix, "\xff\xfe garbage"]
    for text in bodies:
        response = service.http.post("/api/v4/set", content=text.encode(), headers=HEADERS)
        assert response.status_code == 400, (text[:60], response.text)
        assert response.json()["code"] == "InvalidArgument", text[:60]
    assert service.call("get", path=weight_path)["value"] == before


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5), children, max_size=4),
        max_leaves=20,
    )
)
def test_strict_json_accepts_exactly_finite_values_in_range(value: object) -> None:
    text = json.dumps(value)

    def acceptable(item: object) -> bool:
        if isinstance(item, float):
            return item == item and item not in (float("inf"), float("-inf"))
        if isinstance(item, bool) or item is None or isinstance(item, str):
            return True
        if isinstance(item, int):
            return -(2**63) <= item <= 2**64 - 1
        if isinstance(item, list):
            return all(acceptable(child) for child in item)
        assert isinstance(item, dict)
        return all(acceptable(child) for child in item.values())

    try:
        parsed = strict_json(text.encode(), RequestLimits())
    except Exception as error:
        assert getattr(error, "code", None) == "InvalidArgument"
        assert not acceptable(value)
    else:
        assert acceptable(value)
        assert parsed == json.loads(text)
