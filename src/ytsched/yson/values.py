"""Python-side representations of the YSON values that have no exact builtin.

Most YSON values map onto builtins (map -> ``dict``, list -> ``list``, string ->
``str``, int64 -> ``int``, double -> ``float``, boolean -> ``bool``, entity ->
``None``).  Two things do not:

* unsigned integers (``12u``) must stay distinguishable from signed ones, or a
  load/dump round trip would silently change ``12u`` into ``12``; hence the
  ``int`` subclass `YsonUint`, which behaves like an ``int`` everywhere else;
* attributes (``<a = 1> value``) can decorate any value, including scalars and
  ``#``.  Rather than subclassing every builtin, a value that carries attributes
  is wrapped in `WithAttributes`; values without attributes are returned as
  plain Python objects, which keeps the common case cheap and easy to use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, SupportsIndex, SupportsInt

__all__ = ["WithAttributes", "YsonUint", "strip_attributes"]


class YsonUint(int):
    """A non-negative integer that is written as a YSON uint64 (``12u``).

    Arithmetic returns plain ``int``; only values built from this class (or
    parsed from ``12u``) are written with the ``u`` suffix.
    """

    __slots__ = ()

    def __new__(cls, value: str | SupportsInt | SupportsIndex = 0) -> YsonUint:
        self = super().__new__(cls, value)
        if self < 0:
            raise ValueError(f"YsonUint must be non-negative, got {int(self)}")
        return self

    def __repr__(self) -> str:
        return f"YsonUint({int(self)})"


@dataclass(slots=True)
class WithAttributes:
    """A YSON value together with its attributes, e.g. ``<a = 1> "text"``.

    ``attributes`` maps attribute names to (possibly attributed) values.  A value
    can carry only one set of attributes, so ``value`` is never itself a
    `WithAttributes`.
    """

    value: Any
    attributes: dict[str, Any]

    def __post_init__(self) -> None:
        if isinstance(self.value, WithAttributes):
            raise TypeError("a YSON value cannot carry two sets of attributes")


def strip_attributes(value: Any) -> Any:
    """Return ``value`` with all attributes removed, recursively.

    Dicts and lists are rebuilt (the input is not modified); other values are
    returned as they are.
    """
    if isinstance(value, WithAttributes):
        value = value.value
    if isinstance(value, dict):
        return {key: strip_attributes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [strip_attributes(item) for item in value]
    return value
