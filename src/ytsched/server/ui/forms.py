"""The pool settings form: from form fields to one validated, all-or-nothing pool change.

The form shows the pool's own (explicitly set) attributes; what the administrator submits is
compared with them, and only the differences become a patch:

* a field left as shown changes nothing;
* an empty field means "not set": an attribute that was set is reset to its default (what
  ``remove //sys/pool_trees/<tree>/<pool>/@<attribute>`` does), an unset one stays unset;
* resource maps (guarantees, limits, integral flows) are edited resource by resource; resources
  the form does not show (``network``) are kept.

Text that is not a number is refused here, next to its field, before anything is applied.
The patch then goes through :func:`ytsched.server.pool_objects.update_pool_attributes`, the
``set`` command's own permission check and validation, so the UI can accept nothing the API
would refuse; a refusal is shown next to the field it names (the error's ``field``/``option``
attribute, else a field named in its message), and changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ytsched.errors import YtschedError
from ytsched.node.resources import parse_amount
from ytsched.server import pool_objects
from ytsched.server.cluster import Cluster

Kind = Literal["number", "integer", "amount", "choice"]
RESOURCE_FIELDS = ("cpu", "memory", "gpu", "user_slots")
MAX_FIELD_LENGTH = 64


@dataclass(frozen=True, slots=True)
class FormField:
    key: str
    """Dotted path in the pool config; also the input's name and id."""
    label: str
    kind: Kind
    group: str
    choices: tuple[str, ...] = ()
    hint: str = ""


def _resource_fields(attribute: str, group: str) -> tuple[FormField, ...]:
    hints = {"memory": "bytes; K, M, G, T suffixes", "cpu": "cores"}
    return tuple(
        FormField(f"{attribute}.{name}", name, "amount", group, hint=hints.get(name, ""))
        for name in RESOURCE_FIELDS
    )


FIELDS: tuple[FormField, ...] = (
    FormField("weight", "weight", "number", "Scheduling", hint="> 0"),
    FormField("mode", "mode", "choice", "Scheduling", choices=("fair_share", "fifo")),
    FormField("max_operation_count", "max operations", "integer", "Scheduling"),
    FormField("max_running_operation_count", "max running operations", "integer", "Scheduling"),
    *_resource_fields("strong_guarantee_resources", "Strong guarantee"),
    *_resource_fields("resource_limits", "Resource limits"),
    FormField(
        "integral_guarantees.guarantee_type",
        "guarantee type",
        "choice",
        "Integral guarantee",
        choices=("none", "burst", "relaxed"),
    ),
    *_resource_fields("integral_guarantees.resource_flow", "Integral resource flow"),
    *_resource_fields("integral_guarantees.burst_guarantee_resources", "Integral burst guarantee"),
)
FIELD_KEYS = {f.key: f for f in FIELDS}
GROUPS = tuple(dict.fromkeys(f.group for f in FIELDS))
TOP_LEVEL = tuple(dict.fromkeys(f.key.split(".", 1)[0] for f in FIELDS))


@dataclass(slots=True)
class FormState:
    """What the form shows: the values, and errors by field (``""``: the whole form)."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _lookup(config: Mapping[str, Any], key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _format_bytes(value: int) -> str:
    for suffix, unit in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if value >= unit and value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)


def display(form_field: FormField, value: Any) -> str:
    """A config value as the form shows it (what parsing it back gives the same value)."""
    if value is None:
        return ""
    if form_field.key.endswith(".memory") and isinstance(value, int | float):
        return _format_bytes(int(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def current_values(config: Mapping[str, Any]) -> dict[str, str]:
    return {f.key: display(f, _lookup(config, f.key)) for f in FIELDS}


def _parse(form_field: FormField, text: str) -> Any:
    """The typed value of one field (None for empty); ``ValueError`` with a message if bad."""
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_FIELD_LENGTH:
        raise ValueError("value is too long")
    if form_field.kind == "choice":
        if text not in form_field.choices:
            raise ValueError(f"must be one of {', '.join(form_field.choices)}")
        return text
    if form_field.kind == "integer":
        if not text.lstrip("-").isdigit():
            raise ValueError(f"{text!r} is not a whole number")
        return int(text)
    if form_field.kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{text!r} is not a finite number")
        return number
    resource = form_field.key.rsplit(".", 1)[1]
    try:
        amount = parse_amount(resource, text)
    except YtschedError as error:
        raise ValueError(error.message) from None
    return amount if resource == "cpu" else int(amount)


def _set_path(document: dict[str, Any], key: str, value: Any) -> None:
    """Set (or, for None, remove) a dotted key; emptied maps are removed too."""
    parts = key.split(".")
    node = document
    trail: list[tuple[dict[str, Any], str]] = []
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is None:
                return
            child = node[part] = {}
        trail.append((node, part))
        node = child
    if value is None:
        node.pop(parts[-1], None)
        for parent, part in reversed(trail):
            if parent[part]:
                break
            del parent[part]
    else:
        node[parts[-1]] = value


def build_patch(
    config: Mapping[str, Any], submitted: Mapping[str, str]
) -> tuple[dict[str, Any], FormState]:
    """The patch of top-level attributes a submitted form asks for, and the form to re-show.

    Fields missing from the submission are taken as shown (unchanged).
    """
    shown = current_values(config)
    values = {key: str(submitted.get(key, shown[key])) for key in FIELD_KEYS}
    state = FormState(values)
    desired: dict[str, Any] = {
        name: _copy(config[name]) for name in TOP_LEVEL if config.get(name) is not None
    }
    for form_field in FIELDS:
        text = values[form_field.key]
        if text.strip() == shown[form_field.key]:
            continue
        try:
            parsed = _parse(form_field, text)
        except ValueError as error:
            state.errors[form_field.key] = str(error)
            state.codes[form_field.key] = "InvalidArgument"
            continue
        _set_path(desired, form_field.key, parsed)
    patch: dict[str, Any] = {}
    if state.errors:
        return patch, state
    for name in TOP_LEVEL:
        before = config.get(name)
        after = desired.get(name)
        if before != after:
            patch[name] = after
    state.changed = sorted(patch)
    return patch, state


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _field_named(named: str) -> str | None:
    """The form field for an option path an error names (its first field for a map)."""
    if named in FIELD_KEYS:
        return named
    matches = [key for key in FIELD_KEYS if key.startswith(named + ".")]
    if matches:
        return matches[0]
    parent = named
    while "." in parent:
        parent = parent.rsplit(".", 1)[0]
        if parent in FIELD_KEYS:
            return parent
    return None


def field_of(error: YtschedError) -> str:
    """The form field an error is about (``""`` when it names none)."""
    named = error.attributes.get("field") or error.attributes.get("option")
    if isinstance(named, str) and (key := _field_named(named)) is not None:
        return key
    for key in sorted(FIELD_KEYS, key=len, reverse=True):
        if key in error.message:
            return key
    for key in FIELD_KEYS:
        if key.split(".", 1)[0] in error.message:
            return key
    return ""


def field_errors(error: YtschedError) -> dict[str, str]:
    """Every field an error names: a config error lists each refused option separately."""
    found: dict[str, str] = {}
    items = error.attributes.get("errors")
    if isinstance(items, list):
        for item in items:
            if not isinstance(item, Mapping):
                continue
            named, message = item.get("field"), item.get("message")
            key = _field_named(named) if isinstance(named, str) else None
            if key is not None and isinstance(message, str) and key not in found:
                found[key] = f"{named}: {message}"
    if not found:
        found[field_of(error)] = error.message
    return found


REFUSALS_TO_RAISE = frozenset(
    {"AuthorizationError", "AuthenticationError", "ResolveError", "NoSuchPoolTree", "NoSuchPool"}
)
"""Errors that are not about a value: the page answers them (403, 404) instead of the form."""


def submit(
    cluster: Cluster, user: str, tree: str, pool: str, submitted: Mapping[str, str]
) -> FormState:
    """Validate and apply a submitted form (all or nothing); the form state to show.

    The pool must exist and the user must have ``administer`` on it before any value is even
    looked at: a refusal there raises (the page answers 404 or 403) and changes nothing.
    """
    live = pool_objects.editable_pool(cluster, tree, pool)
    cluster.require_pool_permission(user, "administer", tree, pool)
    config = live.config.model_dump(mode="json", exclude_unset=True)
    patch, state = build_patch(config, submitted)
    if not state.ok or not patch:
        return state
    try:
        pool_objects.update_pool_attributes(cluster, user, tree, pool, patch)
    except YtschedError as error:
        if error.code in REFUSALS_TO_RAISE:
            raise
        for key, message in field_errors(error).items():
            state.errors[key] = message
            state.codes[key] = error.code
        state.changed = []
    return state
