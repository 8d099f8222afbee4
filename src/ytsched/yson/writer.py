"""Text-YSON writer: `dumps` and `dump`.

The output is always re-readable by `loads` and reproduces the value exactly:

* strings are always quoted (never written as bare identifiers, so a string
  such as ``"true"`` or ``"1"`` cannot change type on the way back); control
  characters, ``"`` and ``\\`` are C-escaped and everything else is written as
  is (non-ASCII text is UTF-8 once encoded);
* floats use ``repr`` (the shortest text that round-trips) in YSON spelling:
  ``1.`` rather than ``1.0``, and ``%nan`` / ``%inf`` / ``%-inf``;
* `YsonUint` keeps its ``u`` suffix; ``bool`` is ``%true`` / ``%false``;
  ``None`` is the entity ``#``.

Like YTsaurus's own text writer, every map item, list item and attribute is
followed by ``;``.  The compact form has no whitespace at all
(``{"a"=1;"b"=[1;2;];}``); the pretty form puts one item per line, indented
like the snapshots YTsaurus writes.  Types without a YSON meaning raise
``TypeError`` rather than being stringified behind the caller's back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import IO, Any, Final

from .values import WithAttributes, YsonUint

__all__ = ["dump", "dumps"]

_NEEDS_ESCAPE: Final = re.compile(r'[\x00-\x1f"\\\x7f]')
_ESCAPES: Final = {chr(code): f"\\x{code:02x}" for code in range(0x20)} | {
    "\x7f": "\\x7f",
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def _escape_char(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def _quote(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _float(number: float) -> str:
    if math.isfinite(number):
        text = float.__repr__(number)
        # "1.0" -> "1." (YSON style); repr always has '.' or an exponent.
        return text[:-1] if text.endswith(".0") else text
    if number != number:
        return "%nan"
    return "%inf" if number > 0 else "%-inf"


def _int(number: int) -> str:
    return int.__repr__(number)


def _uint(number: int) -> str:
    return int.__repr__(number) + "u"


def _bool(flag: bool) -> str:
    return "%true" if flag else "%false"


def _entity(_: None) -> str:
    return "#"


# Exact-type fast path for scalars; subclasses go through `_scalar_fallback`.
_SCALARS: Final[dict[type, Any]] = {
    str: _quote,
    int: _int,
    float: _float,
    bool: _bool,
    type(None): _entity,
    YsonUint: _uint,
}


def _scalar_fallback(value: Any) -> str | None:
    """Text of a scalar whose type is a subclass of a supported one.

    Returns ``None`` for containers and attributed values; raises ``TypeError``
    for anything YSON cannot represent.
    """
    if isinstance(value, dict | list | tuple | Mapping | WithAttributes):
        return None
    if isinstance(value, bool):
        return _bool(value)
    if isinstance(value, YsonUint):
        return _uint(value)
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _quote(str.__str__(value))
    raise TypeError(f"Object of type {type(value).__name__} is not YSON serializable")


def _key(key: Any) -> str:
    if type(key) is str:
        return _quote(key)
    if isinstance(key, str):
        return _quote(str.__str__(key))
    raise TypeError(f"YSON map keys must be str, not {type(key).__name__}")


class _Writer:
    """Appends the text of a value to ``out``.

    ``unit`` is one level of indentation and ``nl`` (passed down the recursion)
    the newline plus indentation of the current level; both are empty in the
    compact form, which is therefore the pretty form with no whitespace.
    """

    __slots__ = ("_active", "_eq", "_gap", "_out", "_unit")

    def __init__(self, out: list[str], pretty: bool, indent: int) -> None:
        self._out = out
        self._unit = " " * indent if pretty else ""
        self._eq = " = " if pretty else "="
        self._gap = " " if pretty else ""
        self._active: set[int] = set()  # ids of the containers being written

    def write(self, value: Any, nl: str) -> None:
        formatter = _SCALARS.get(type(value))
        if formatter is not None:
            self._out.append(formatter(value))
            return
        text = _scalar_fallback(value)
        if text is not None:
            self._out.append(text)
        elif isinstance(value, WithAttributes):
            if value.attributes:
                self._map(value.attributes, nl, "<", ">")
                self._out.append(self._gap)
            self.write(value.value, nl)
        elif isinstance(value, Mapping):
            self._map(value, nl, "{", "}")
        else:
            self._list(value, nl)

    def _enter(self, container: object) -> None:
        ident = id(container)
        if ident in self._active:
            raise ValueError("Circular reference detected while writing YSON")
        self._active.add(ident)

    def _map(self, mapping: Mapping[Any, Any], nl: str, opening: str, closing: str) -> None:
        out = self._out
        if not mapping:
            out.append(opening + closing)
            return
        self._enter(mapping)
        inner = nl + self._unit
        prefix = nl and inner  # "" in the compact form
        eq = self._eq
        scalars = _SCALARS
        out.append(opening)
        for key, item in mapping.items():
            out.append(prefix + (_quote(key) if type(key) is str else _key(key)) + eq)
            formatter = scalars.get(type(item))
            if formatter is not None:
                out.append(formatter(item) + ";")
            else:
                self.write(item, inner)
                out.append(";")
        out.append(nl + closing)
        self._active.discard(id(mapping))

    def _list(self, items: list[Any] | tuple[Any, ...], nl: str) -> None:
        out = self._out
        if not items:
            out.append("[]")
            return
        self._enter(items)
        inner = nl + self._unit
        prefix = nl and inner
        scalars = _SCALARS
        out.append("[")
        for item in items:
            formatter = scalars.get(type(item))
            if formatter is not None:
                out.append(prefix + formatter(item) + ";")
            else:
                out.append(prefix)
                self.write(item, inner)
                out.append(";")
        out.append(nl + "]")
        self._active.discard(id(items))


def dumps(value: Any, *, pretty: bool = False, indent: int = 4) -> str:
    """Serialize ``value`` to text YSON.

    Args:
        value: ``dict`` (``str`` keys) / other ``Mapping``, ``list``/``tuple``,
            ``str``, ``int``, `YsonUint`, ``float``, ``bool``, ``None`` or
            `WithAttributes`, nested arbitrarily.
        pretty: one item per line with indentation instead of the compact form.
        indent: spaces per nesting level in the pretty form.

    Raises:
        TypeError: for unsupported value types or non-``str`` map keys.
        ValueError: for circular references or a negative ``indent``.
    """
    if indent < 0:
        raise ValueError(f"indent must be non-negative, got {indent}")
    out: list[str] = []
    _Writer(out, pretty, indent).write(value, "\n" if pretty else "")
    return "".join(out)


def dump(value: Any, fp: IO[str], *, pretty: bool = False, indent: int = 4) -> None:
    """Serialize ``value`` to text YSON and write it to the text file ``fp``."""
    fp.write(dumps(value, pretty=pretty, indent=indent))
