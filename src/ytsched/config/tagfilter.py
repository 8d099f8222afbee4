"""Boolean tag expressions: ``node_tag_filter`` and ``scheduling_tag_filter``.

YTsaurus selects nodes with boolean formulas over node tags (``yt/yt/core/misc/boolean_formula``):
tag names combined with ``&`` (and), ``|`` (or), ``!`` (not) and parentheses, e.g.
``gpu & !(dc1 | dc2)``.  A tag is any run of characters other than whitespace, the operators
and parentheses, so addresses like ``127.0.0.1:9012`` and numeric tags work.  The empty formula
matches every node.  Precedence: ``!`` binds tightest, then ``&``, then ``|``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Union

_TOKEN_RE = re.compile(r"\s*(?:([&|!()])|([^\s&|!()]+))")


class TagFilterError(ValueError):
    """A tag expression does not parse."""


@dataclass(frozen=True, slots=True)
class Tag:
    name: str


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


Node = Union[Tag, Not, And, Or]  # noqa: UP007 - used at runtime in the dataclasses above


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN_RE.match(text, position)
        if match is None:  # pragma: no cover - the pattern accepts any non-space character
            raise TagFilterError(f"cannot parse tag filter {text!r} at position {position}")
        tokens.append(match.group(1) or match.group(2))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    def _peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _fail(self, what: str) -> TagFilterError:
        return TagFilterError(f"invalid tag filter {self.text!r}: {what}")

    def parse(self) -> Node:
        node = self._or()
        if self._peek() is not None:
            raise self._fail(f"unexpected {self._peek()!r}")
        return node

    def _or(self) -> Node:
        node = self._and()
        while self._peek() == "|":
            self.index += 1
            node = Or(node, self._and())
        return node

    def _and(self) -> Node:
        node = self._not()
        while self._peek() == "&":
            self.index += 1
            node = And(node, self._not())
        return node

    def _not(self) -> Node:
        token = self._peek()
        if token == "!":
            self.index += 1
            return Not(self._not())
        if token == "(":
            self.index += 1
            node = self._or()
            if self._peek() != ")":
                raise self._fail("missing ')'")
            self.index += 1
            return node
        if token is None:
            raise self._fail("unexpected end of expression")
        if token in {"&", "|", ")"}:
            raise self._fail(f"unexpected {token!r}")
        self.index += 1
        return Tag(token)


def _evaluate(node: Node, tags: Collection[str]) -> bool:
    if isinstance(node, Tag):
        return node.name in tags
    if isinstance(node, Not):
        return not _evaluate(node.operand, tags)
    if isinstance(node, And):
        return _evaluate(node.left, tags) and _evaluate(node.right, tags)
    return _evaluate(node.left, tags) or _evaluate(node.right, tags)


@dataclass(frozen=True, slots=True)
class TagFilter:
    """A parsed tag expression; ``TagFilter.parse("")`` matches everything."""

    text: str
    root: Node | None

    @staticmethod
    def parse(text: str) -> TagFilter:
        if text.strip() == "":
            return TagFilter(text="", root=None)
        return TagFilter(text=text, root=_Parser(text).parse())

    @property
    def is_empty(self) -> bool:
        return self.root is None

    def matches(self, tags: Collection[str]) -> bool:
        return True if self.root is None else _evaluate(self.root, tags)


def validate_tag_filter(text: str) -> str:
    """Field validator helper: raise ``ValueError`` when ``text`` does not parse."""
    TagFilter.parse(text)
    return text
