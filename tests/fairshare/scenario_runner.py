"""Shared machinery for data-driven fair-share scenarios.

A scenario is one JSON file (``tests/data/fair_share_scenarios/*.json`` or
``tests/data/integral_scenarios/*.json``) re-expressing one upstream unit test as data.

Scenario document
=================

Top-level keys:

``name``
    Must equal the file stem.
``source``
    The upstream test it re-expresses (file, test macro, fixture, test name, instantiation).
``description``
    What behaviour the scenario checks, in our own words.
``tolerance``
    Absolute tolerance (``abs_tol``) used for every numeric comparison of the scenario.
``snapshot`` + ``expect``
    One fair-share update: the input snapshot (snapshot-format.md, form 2) and the expectations on
    the orchid-shaped output of :func:`ytsched.snapshot.compute_orchid`.
``steps``
    Instead of ``snapshot``/``expect``: a list of ``{"description"?, "snapshot", "expect"}``,
    one fair-share update each, run in order.
``carry_volumes``
    Only with ``steps``. When true, before running step *i* > 0 the runner copies the output
    ``accumulated_resource_volume`` of every pool of step *i - 1* into the input element of the
    pool with the same name, unless that element states ``accumulated_resource_volume`` itself.
    Nothing else is carried between steps: every step is otherwise a self-contained snapshot.

Expectations (``expect``)
=========================

``{"pools": {name: {path: expected}}, "operations": {name: {path: expected}}, "errors": [...]}``

*path* is an orchid attribute of the element: a top-level attribute (``fair_share_ratio``,
``limits_share``, ``fifo_index``, ...) or a dotted path into a map attribute
(``detailed_fair_share.total``, ``promised_guarantee_fair_share.total``, ...). Several paths joined
by ``" + "`` denote their sum (per resource for vectors), e.g.
``"strong_guarantee_share + proposed_integral_share"``.

*expected* is one of:

* a number: the actual scalar must satisfy
  ``math.isclose(actual, expected, rel_tol=0, abs_tol=tolerance)``;
* ``null``: the actual value must be null/absent (e.g. ``effective_fifo_index`` of a FIFO pool that
  was not reordered);
* a string or boolean: compared for equality (e.g. ``dominant_resource``);
* a resource map ``{resource: value}`` for a vector attribute: a partial map, only the listed
  resources (``user_slots``, ``cpu``, ``gpu``, ``memory``, ``network``) are checked, each value
  being a number or a comparator map (below);
* a comparator map ``{op: bound, ...}`` with ``op`` among ``"<="``, ``">="``, ``"=="``, ``"<"``,
  ``">"``; applied to a scalar attribute, or to every resource of a vector attribute. Semantics with
  tolerance ``t``: ``"=="`` is ``isclose(actual, bound, abs_tol=t)``; ``"<="`` is
  ``actual <= bound + t``; ``">="`` is ``actual >= bound - t``; ``"<"`` and ``">"`` are strict and
  ignore the tolerance.

A comparator *bound* is a number or a reference ``{"attr": path, "step": k}`` to an attribute of
the same element (``step`` defaults to the current step; it may name an earlier step, which is how
"the same result as with the other option" is expressed). When comparing a resource component, the
corresponding component of the referenced vector is used.

``errors`` lists the error codes the update must report; the set of reported codes must equal the
set listed. When ``errors`` is absent, the update must report no errors at all.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

RESOURCES = ("user_slots", "cpu", "gpu", "memory", "network")
RESOURCE_INPUT_KEYS = frozenset(RESOURCES) | {"user_memory"}
COMPARATORS = ("<=", ">=", "==", "<", ">")

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
FAIR_SHARE_SCENARIO_DIR = DATA_DIR / "fair_share_scenarios"
INTEGRAL_SCENARIO_DIR = DATA_DIR / "integral_scenarios"

ComputeOrchid = Callable[[dict[str, Any]], Mapping[str, Any]]

_SCENARIO_KEYS = frozenset(
    {"name", "source", "description", "tolerance", "snapshot", "expect", "steps", "carry_volumes"}
)
_STEP_KEYS = frozenset({"description", "snapshot", "expect"})
_SNAPSHOT_KEYS = frozenset(
    {"options", "total_resource_limits", "now", "previous_update_time", "elements"}
)
_OPTION_KEYS = frozenset(
    {
        "main_resource",
        "integral_pool_capacity_saturation_period",
        "integral_smooth_period",
        "enable_step_function_for_gang_operations",
        "enable_improved_fair_share_by_fit_factor_computation",
        "enable_improved_fair_share_by_fit_factor_computation_distribution_gap",
        "enable_fast_fifo_fair_share_by_fit_factor_computation",
        "enable_fifo_children_reordering_for_guarantee_utilization",
        "consider_vanilla_operations_as_gang",
        "use_only_gpu_strong_guarantees",
        "infer_weight_from_guarantees_share_multiplier",
    }
)
_POOL_KEYS = frozenset(
    {
        "type",
        "name",
        "parent",
        "mode",
        "weight",
        "strong_guarantee_resources",
        "resource_limits",
        "integral_guarantees",
        "accumulated_resource_volume",
        "fifo_sort_parameters",
        "compute_promised_guarantee_fair_share",
        "enable_fifo_children_reordering_for_guarantee_utilization",
        "total_fair_share",
    }
)
_OPERATION_KEYS = frozenset(
    {
        "type",
        "name",
        "parent",
        "weight",
        "resource_demand",
        "resource_usage",
        "resource_limits",
        "start_time",
        "pending_job_count",
        "is_gang",
        "operation_type",
    }
)
_INTEGRAL_KEYS = frozenset(
    {
        "guarantee_type",
        "resource_flow",
        "burst_guarantee_resources",
        "relaxed_share_multiplier_limit",
        "can_accept_free_volume",
    }
)
_DETAILED_KEYS = frozenset(
    {"strong_guarantee", "integral_guarantee", "weight_proportional", "total"}
)
# First segment of an expectation path -> allowed second segments (None: no nesting allowed).
_ATTRIBUTES: dict[str, frozenset[str] | None] = {
    "detailed_fair_share": _DETAILED_KEYS,
    "promised_guarantee_fair_share": _DETAILED_KEYS,
    **dict.fromkeys(
        (
            "fair_share_ratio",
            "usage_ratio",
            "demand_ratio",
            "dominant_resource",
            "demand_share",
            "usage_share",
            "limits_share",
            "strong_guarantee_share",
            "proposed_integral_share",
            "estimated_guarantee_share",
            "fifo_index",
            "effective_fifo_index",
            "parent",
            "mode",
            "weight",
            "total_resource_flow_ratio",
            "total_burst_ratio",
            "integral_guarantee_type",
            "specified_resource_flow_ratio",
            "specified_burst_ratio",
            "integral_pool_capacity",
            "accumulated_resource_volume",
            "accumulated_resource_ratio_volume",
            "estimated_burst_usage_duration_seconds",
        ),
        None,
    ),
}
_ERROR_CODE = re.compile(r"^[A-Z][A-Za-z0-9]*$")


class ScenarioFailure(AssertionError):
    """Raised when an engine output does not meet a scenario's expectations."""


# ----------------------------------------------------------------------------------------------
# Loading and stepping
# ----------------------------------------------------------------------------------------------


def scenario_paths(directory: Path) -> list[Path]:
    """All scenario files of a folder, sorted by name."""
    return sorted(directory.glob("*.json"))


def load_scenario(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        document: dict[str, Any] = json.load(f)
    return document


def scenario_steps(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The scenario as a list of ``{"snapshot", "expect"}`` steps (a single update is one step)."""
    if "steps" in scenario:
        return list(scenario["steps"])
    return [{"snapshot": scenario["snapshot"], "expect": scenario["expect"]}]


def carry_volumes_into(snapshot: dict[str, Any], previous_output: Mapping[str, Any]) -> None:
    """Feed the previous update's pool volumes into ``snapshot`` (in place), see module docs."""
    previous_pools = previous_output.get("pools") or {}
    for element in snapshot.get("elements", []):
        if element.get("type") != "pool" or "accumulated_resource_volume" in element:
            continue
        volume = (previous_pools.get(element["name"]) or {}).get("accumulated_resource_volume")
        if volume is not None:
            element["accumulated_resource_volume"] = dict(volume)


def run_scenario(scenario: Mapping[str, Any], compute_orchid: ComputeOrchid) -> list[Any]:
    """Run every step of ``scenario`` through ``compute_orchid`` and check its expectations.

    Returns the list of outputs (one per step). Raises :class:`ScenarioFailure` listing every
    mismatch of the first failing step.
    """
    name = scenario["name"]
    tolerance = float(scenario["tolerance"])
    carry = bool(scenario.get("carry_volumes", False))
    outputs: list[Any] = []
    steps = scenario_steps(scenario)
    for index, step in enumerate(steps):
        snapshot = copy.deepcopy(step["snapshot"])
        if carry and index > 0:
            carry_volumes_into(snapshot, outputs[-1])
        output = compute_orchid(snapshot)
        outputs.append(output)
        label = name if len(steps) == 1 else f"{name} [step {index}]"
        failures = check_expectations(label, step["expect"], outputs, tolerance)
        if failures:
            raise ScenarioFailure(f"{len(failures)} expectation(s) failed:\n" + "\n".join(failures))
    return outputs


# ----------------------------------------------------------------------------------------------
# Checking expectations
# ----------------------------------------------------------------------------------------------

_MISSING = object()


def _lookup(element_output: Mapping[str, Any], path: str) -> Any:
    value: Any = element_output
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def resolve_attribute(element_output: Mapping[str, Any], path: str) -> Any:
    """Value of an expectation path (possibly a ``" + "`` sum) in one element's output."""
    parts = [p.strip() for p in path.split("+")]
    values = [_lookup(element_output, p) for p in parts]
    if any(v is _MISSING for v in values):
        return _MISSING
    if len(values) == 1:
        return values[0]
    if all(isinstance(v, Mapping) for v in values):
        keys = set().union(*(v.keys() for v in values))
        return {k: sum(float(v.get(k, 0.0)) for v in values) for k in keys}
    if all(_is_number(v) for v in values):
        return sum(float(v) for v in values)
    return _MISSING


def _is_comparator_map(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(k in COMPARATORS for k in value)


def _compare(op: str, actual: float, bound: float, tolerance: float) -> bool:
    if op == "==":
        return math.isclose(actual, bound, rel_tol=0.0, abs_tol=tolerance)
    if op == "<=":
        return actual <= bound + tolerance
    if op == ">=":
        return actual >= bound - tolerance
    if op == "<":
        return actual < bound
    if op == ">":
        return actual > bound
    raise ValueError(f"unknown comparator {op!r}")


class _Checker:
    def __init__(self, label: str, outputs: list[Any], tolerance: float) -> None:
        self.label = label
        self.outputs = outputs
        self.tolerance = tolerance
        self.failures: list[str] = []

    def fail(self, where: str, expected: Any, actual: Any) -> None:
        actual_text = "<missing>" if actual is _MISSING else repr(actual)
        self.failures.append(f"{self.label}: {where}: expected {expected!r}, actual {actual_text}")

    def bound(self, kind: str, name: str, bound: Any, resource: str | None) -> Any:
        """Resolve a comparator bound (number or attribute reference) to a number."""
        if _is_number(bound):
            return float(bound)
        step = bound.get("step", len(self.outputs) - 1)
        element = ((self.outputs[step].get(kind) or {}).get(name)) or {}
        value = resolve_attribute(element, bound["attr"])
        if resource is not None and isinstance(value, Mapping):
            value = value.get(resource, _MISSING)
        return float(value) if _is_number(value) else _MISSING

    def scalar(
        self, where: str, kind: str, name: str, resource: str | None, expected: Any, actual: Any
    ) -> None:
        if actual is _MISSING or not _is_number(actual):
            self.fail(where, expected, actual)
            return
        if _is_number(expected):
            if not math.isclose(
                float(actual), float(expected), rel_tol=0.0, abs_tol=self.tolerance
            ):
                self.fail(where, expected, actual)
            return
        for op, raw_bound in expected.items():
            bound = self.bound(kind, name, raw_bound, resource)
            if bound is _MISSING:
                self.fail(f"{where} ({op} reference {raw_bound!r} not found)", raw_bound, actual)
            elif not _compare(op, float(actual), bound, self.tolerance):
                self.fail(f"{where} {op}", bound, actual)

    def element(self, kind: str, name: str, element: Any, expectations: Mapping[str, Any]) -> None:
        for path, expected in expectations.items():
            where = f"{kind}/{name} {path}"
            actual = resolve_attribute(element, path) if element is not None else _MISSING
            if expected is None:
                if actual is not _MISSING and actual is not None:
                    self.fail(where, None, actual)
            elif isinstance(expected, bool | str):
                if actual is _MISSING or actual != expected:
                    self.fail(where, expected, actual)
            elif _is_number(expected) or (
                _is_comparator_map(expected) and not isinstance(actual, Mapping)
            ):
                self.scalar(where, kind, name, None, expected, actual)
            elif _is_comparator_map(expected):
                for resource in RESOURCES:
                    component = actual.get(resource, _MISSING)
                    self.scalar(f"{where}[{resource}]", kind, name, resource, expected, component)
            else:
                if not isinstance(actual, Mapping):
                    self.fail(where, expected, actual)
                    continue
                for resource, expected_component in expected.items():
                    component = actual.get(resource, _MISSING)
                    self.scalar(
                        f"{where}[{resource}]", kind, name, resource, expected_component, component
                    )


def check_expectations(
    label: str, expect: Mapping[str, Any], outputs: list[Any], tolerance: float
) -> list[str]:
    """Check the last of ``outputs`` against ``expect``; return human-readable failures."""
    output = outputs[-1]
    checker = _Checker(label, outputs, tolerance)
    for kind in ("pools", "operations"):
        produced = output.get(kind) or {}
        for name, expectations in (expect.get(kind) or {}).items():
            element = produced.get(name)
            if element is None:
                checker.failures.append(f"{label}: {kind}/{name}: element missing from the output")
                continue
            checker.element(kind, name, element, expectations)
    reported = sorted({str(error.get("code")) for error in output.get("errors") or []})
    expected_errors = sorted(set(expect.get("errors") or []))
    if reported != expected_errors:
        messages = [str(error.get("message")) for error in output.get("errors") or []]
        checker.failures.append(
            f"{label}: errors: expected codes {expected_errors}, reported {reported} "
            f"(messages: {messages})"
        )
    return checker.failures


# ----------------------------------------------------------------------------------------------
# Shape validation (no engine needed)
# ----------------------------------------------------------------------------------------------


def _check_resources(
    problems: list[str], where: str, value: Any, *, allow_alias: bool = True
) -> None:
    keys = RESOURCE_INPUT_KEYS if allow_alias else frozenset(RESOURCES)
    if not isinstance(value, Mapping):
        problems.append(f"{where}: must be a map resource -> amount")
        return
    for key, amount in value.items():
        if key not in keys:
            problems.append(f"{where}: unknown resource {key!r}")
        if not _is_number(amount) or amount < 0:
            problems.append(f"{where}[{key}]: must be a non-negative number, got {amount!r}")


def _validate_snapshot(problems: list[str], where: str, snapshot: Any) -> dict[str, str]:
    """Validate a snapshot; return element name -> type for the expectation checks."""
    kinds: dict[str, str] = {}
    if not isinstance(snapshot, Mapping):
        problems.append(f"{where}: snapshot must be a map")
        return kinds
    for key in snapshot:
        if key not in _SNAPSHOT_KEYS:
            problems.append(f"{where}: unknown snapshot key {key!r}")
    for key in ("total_resource_limits", "elements"):
        if key not in snapshot:
            problems.append(f"{where}: missing {key!r}")
    options = snapshot.get("options", {})
    if not isinstance(options, Mapping):
        problems.append(f"{where}.options: must be a map")
    else:
        for key in options:
            if key not in _OPTION_KEYS:
                problems.append(f"{where}.options: unknown option {key!r}")
    totals = snapshot.get("total_resource_limits")
    if totals is not None:
        _check_resources(problems, f"{where}.total_resource_limits", totals, allow_alias=False)
        if isinstance(totals, Mapping) and set(totals) != set(RESOURCES):
            problems.append(f"{where}.total_resource_limits: must list all of {RESOURCES}")
    for key in ("now", "previous_update_time"):
        if key in snapshot and snapshot[key] is not None and not _is_number(snapshot[key]):
            problems.append(f"{where}.{key}: must be a number of seconds or null")

    elements = snapshot.get("elements", [])
    if not isinstance(elements, list):
        problems.append(f"{where}.elements: must be a list")
        return kinds
    modes: dict[str, str] = {}
    roots = 0
    for index, element in enumerate(elements):
        at = f"{where}.elements[{index}]"
        if not isinstance(element, Mapping):
            problems.append(f"{at}: must be a map")
            continue
        kind = element.get("type")
        name = element.get("name")
        at = f"{at} ({name})"
        if kind not in ("pool", "operation"):
            problems.append(f"{at}: type must be 'pool' or 'operation', got {kind!r}")
            continue
        if not isinstance(name, str) or not name:
            problems.append(f"{at}: missing name")
            continue
        if name in kinds:
            problems.append(f"{at}: duplicate element name {name!r}")
        allowed = _POOL_KEYS if kind == "pool" else _OPERATION_KEYS
        for key in element:
            if key not in allowed:
                problems.append(f"{at}: unknown {kind} field {key!r}")
        parent = element.get("parent")
        if parent is None:
            if kind != "pool" or name != "<Root>":
                problems.append(f"{at}: only the pool '<Root>' may have no parent")
            roots += 1
        elif parent not in kinds:
            problems.append(f"{at}: parent {parent!r} is not a pool listed before it")
        elif kinds[parent] != "pool":
            problems.append(f"{at}: parent {parent!r} is an operation")
        elif modes.get(parent) == "fifo" and kind != "operation":
            problems.append(f"{at}: FIFO pool {parent!r} may only have operations as children")
        if "weight" in element and (not _is_number(element["weight"]) or element["weight"] <= 0):
            problems.append(f"{at}: weight must be a positive number")
        for key in (
            "strong_guarantee_resources",
            "resource_limits",
            "resource_demand",
            "resource_usage",
            "accumulated_resource_volume",
        ):
            if key in element:
                _check_resources(problems, f"{at}.{key}", element[key])
        if kind == "pool":
            mode = element.get("mode", "fair_share")
            if mode not in ("fair_share", "fifo"):
                problems.append(f"{at}: mode must be 'fair_share' or 'fifo', got {mode!r}")
            modes[name] = mode
            integral = element.get("integral_guarantees")
            if integral is not None:
                if not isinstance(integral, Mapping):
                    problems.append(f"{at}.integral_guarantees: must be a map")
                else:
                    for key in integral:
                        if key not in _INTEGRAL_KEYS:
                            problems.append(f"{at}.integral_guarantees: unknown field {key!r}")
                    if integral.get("guarantee_type", "none") not in ("none", "burst", "relaxed"):
                        problems.append(f"{at}.integral_guarantees.guarantee_type: invalid")
                    for key in ("resource_flow", "burst_guarantee_resources"):
                        if key in integral:
                            _check_resources(
                                problems, f"{at}.integral_guarantees.{key}", integral[key]
                            )
        kinds[name] = kind
    if roots != 1:
        problems.append(f"{where}.elements: expected exactly one root pool, found {roots}")
    return kinds


def _validate_bound(problems: list[str], at: str, bound: Any, step_index: int) -> None:
    if _is_number(bound):
        return
    if not isinstance(bound, Mapping) or set(bound) - {"attr", "step"} or "attr" not in bound:
        problems.append(f"{at}: a bound must be a number or {{'attr': path, 'step'?: int}}")
        return
    _validate_path(problems, at, bound["attr"])
    step = bound.get("step", step_index)
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= step_index:
        problems.append(f"{at}: reference step must be an earlier or the current step")


def _validate_path(problems: list[str], at: str, path: Any) -> None:
    if not isinstance(path, str):
        problems.append(f"{at}: attribute path must be a string")
        return
    for part in (p.strip() for p in path.split("+")):
        head, _, rest = part.partition(".")
        if head not in _ATTRIBUTES:
            problems.append(f"{at}: unknown attribute {head!r}")
            continue
        nested = _ATTRIBUTES[head]
        if rest and (nested is None or rest not in nested):
            problems.append(f"{at}: unknown attribute path {part!r}")
        if not rest and nested is not None:
            problems.append(f"{at}: {head!r} is a map; name one of {sorted(nested)}")


def _validate_expected_value(problems: list[str], at: str, expected: Any, step_index: int) -> None:
    if expected is None or isinstance(expected, bool | str) or _is_number(expected):
        return
    if not isinstance(expected, Mapping) or not expected:
        problems.append(f"{at}: unsupported expected value {expected!r}")
        return
    if _is_comparator_map(expected):
        for op, bound in expected.items():
            _validate_bound(problems, f"{at} {op}", bound, step_index)
        return
    for resource, component in expected.items():
        if resource not in RESOURCES:
            problems.append(f"{at}: unknown resource or comparator {resource!r}")
        elif not _is_number(component):
            if not _is_comparator_map(component):
                problems.append(f"{at}[{resource}]: expected a number or a comparator map")
            else:
                for op, bound in component.items():
                    _validate_bound(problems, f"{at}[{resource}] {op}", bound, step_index)


def _validate_expect(
    problems: list[str], where: str, expect: Any, kinds: Mapping[str, str], step_index: int
) -> None:
    if not isinstance(expect, Mapping):
        problems.append(f"{where}: expect must be a map")
        return
    for key in expect:
        if key not in ("pools", "operations", "errors"):
            problems.append(f"{where}: unknown expect key {key!r}")
    for kind, element_type in (("pools", "pool"), ("operations", "operation")):
        section = expect.get(kind, {})
        if not isinstance(section, Mapping):
            problems.append(f"{where}.{kind}: must be a map")
            continue
        for name, expectations in section.items():
            if kinds.get(name) != element_type:
                problems.append(f"{where}.{kind}: no {element_type} named {name!r} in the snapshot")
            if not isinstance(expectations, Mapping) or not expectations:
                problems.append(f"{where}.{kind}.{name}: must be a non-empty map")
                continue
            for path, expected in expectations.items():
                at = f"{where}.{kind}.{name}.{path}"
                _validate_path(problems, at, path)
                _validate_expected_value(problems, at, expected, step_index)
    if "errors" in expect:
        errors = expect["errors"]
        if not isinstance(errors, list) or not errors:
            problems.append(f"{where}.errors: must be a non-empty list (omit it for no errors)")
        else:
            for code in errors:
                if not isinstance(code, str) or not _ERROR_CODE.match(code):
                    problems.append(f"{where}.errors: {code!r} is not a CamelCase error code")


def validate_scenario(scenario: Any, stem: str) -> list[str]:
    """Structural problems of one scenario document (empty list when it is well formed)."""
    problems: list[str] = []
    if not isinstance(scenario, Mapping):
        return [f"{stem}: the document must be a map"]
    for key in scenario:
        if key not in _SCENARIO_KEYS:
            problems.append(f"{stem}: unknown top-level key {key!r}")
    for key in ("name", "source", "description"):
        if not isinstance(scenario.get(key), str) or not scenario.get(key):
            problems.append(f"{stem}: {key!r} must be a non-empty string")
    if scenario.get("name") != stem:
        problems.append(f"{stem}: name {scenario.get('name')!r} differs from the file stem")
    tolerance = scenario.get("tolerance")
    if not _is_number(tolerance) or tolerance < 0:
        problems.append(f"{stem}: 'tolerance' must be a non-negative number")
    single = "snapshot" in scenario or "expect" in scenario
    if single == ("steps" in scenario):
        problems.append(f"{stem}: give either 'snapshot' and 'expect', or 'steps'")
        return problems
    if "carry_volumes" in scenario:
        if not isinstance(scenario["carry_volumes"], bool):
            problems.append(f"{stem}: 'carry_volumes' must be a boolean")
        if single:
            problems.append(f"{stem}: 'carry_volumes' only makes sense with 'steps'")
    if single:
        steps: Iterable[Any] = [scenario]
        if "snapshot" not in scenario or "expect" not in scenario:
            problems.append(f"{stem}: both 'snapshot' and 'expect' are required")
            return problems
    else:
        steps = scenario["steps"]
        if not isinstance(steps, list) or not steps:
            problems.append(f"{stem}: 'steps' must be a non-empty list")
            return problems
    for index, step in enumerate(steps):
        where = stem if single else f"{stem}.steps[{index}]"
        if not single:
            if not isinstance(step, Mapping):
                problems.append(f"{where}: a step must be a map")
                continue
            for key in step:
                if key not in _STEP_KEYS:
                    problems.append(f"{where}: unknown step key {key!r}")
            if "snapshot" not in step or "expect" not in step:
                problems.append(f"{where}: a step needs 'snapshot' and 'expect'")
                continue
        kinds = _validate_snapshot(problems, f"{where}.snapshot", step["snapshot"])
        _validate_expect(problems, f"{where}.expect", step["expect"], kinds, index)
    return problems


def validate_scenario_file(path: Path) -> list[str]:
    try:
        scenario = load_scenario(path)
    except (OSError, json.JSONDecodeError) as exc:
        return [f"{path.name}: cannot be read as JSON: {exc}"]
    return validate_scenario(scenario, path.stem)
