"""Parsing YPath strings: ``//sys/pool_trees/default/research/@weight``.

A path is a rooted sequence of node names, optionally followed by ``@attribute`` and further
segments inside the attribute's value (``@config/max_operation_count``); ``/@`` alone asks for
all attributes.  ``\\`` escapes ``/``, ``@`` and itself inside names, as in YTsaurus.
"""

from __future__ import annotations

from dataclasses import dataclass

from ytsched.server.errors import ApiError


@dataclass(frozen=True, slots=True)
class YPath:
    text: str
    nodes: tuple[str, ...]
    attribute: str | None = None
    """``None``: the node itself; ``""``: all attributes (``/@``); else the attribute name."""
    inner: tuple[str, ...] = ()
    """Segments inside the attribute value."""

    @property
    def is_attribute(self) -> bool:
        return self.attribute is not None


def _split(body: str, text: str) -> list[tuple[str, bool]]:
    """Segments with a flag telling whether each started with an unescaped ``@``."""
    segments: list[tuple[str, bool]] = []
    current: list[str] = []
    is_attr = False
    index = 0
    at_start = True
    while index < len(body):
        char = body[index]
        if char == "\\":
            if index + 1 >= len(body):
                raise ApiError("InvalidPath", f"path {text!r} ends with a lone backslash")
            current.append(body[index + 1])
            index += 2
            at_start = False
            continue
        if char == "/":
            segments.append(("".join(current), is_attr))
            current, is_attr, at_start = [], False, True
        elif char == "@" and at_start:
            is_attr = True
            at_start = False
        else:
            current.append(char)
            at_start = False
        index += 1
    segments.append(("".join(current), is_attr))
    return segments


def parse(text: object) -> YPath:
    """Parse a rooted YPath; refuses relative paths, empty names and misplaced ``@``."""
    if not isinstance(text, str) or not text.startswith("//"):
        raise ApiError("InvalidPath", f"path {text!r} must be a string starting with '//'")
    body = text[2:].rstrip("/") if text != "//" else ""
    if not body:
        return YPath(text, ())
    nodes: list[str] = []
    attribute: str | None = None
    inner: list[str] = []
    for name, is_attr in _split(body, text):
        if attribute is None and not is_attr:
            if not name:
                raise ApiError("InvalidPath", f"path {text!r} has an empty node name")
            nodes.append(name)
        elif attribute is None:
            attribute = name
        else:
            if is_attr or not name:
                raise ApiError("InvalidPath", f"path {text!r}: bad segment inside an attribute")
            inner.append(name)
    return YPath(text, tuple(nodes), attribute, tuple(inner))
