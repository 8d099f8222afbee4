"""Error type raised by the YSON parser.

`YsonError` subclasses `ValueError` so callers that already catch ``ValueError``
around "parse some config" code (as they would for ``json``) keep working, while
still giving programmatic access to the exact location of the problem.  Positions
are 1-based line/column numbers plus the 0-based character offset into the text
that was parsed (for ``bytes`` input that is not valid UTF-8, offsets count bytes).
"""

from __future__ import annotations

__all__ = ["YsonError"]


class YsonError(ValueError):
    """A syntax error in YSON text.

    Attributes:
        reason: the message without the location prefix.
        line: 1-based line number of the offending token.
        column: 1-based column number of the offending token.
        offset: 0-based character offset of the offending token.
    """

    reason: str
    line: int
    column: int
    offset: int

    def __init__(self, reason: str, line: int, column: int, offset: int) -> None:
        super().__init__(f"YSON syntax error at line {line}, column {column}: {reason}")
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset

    @classmethod
    def at(cls, text: str, offset: int, reason: str) -> YsonError:
        """Build an error for ``offset`` in ``text``, computing line and column."""
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return cls(reason, line, column, offset)

    def __reduce__(self) -> tuple[type[YsonError], tuple[str, int, int, int]]:
        # The default exception pickling replays ``self.args`` (the formatted
        # message), which does not match our constructor.
        return (type(self), (self.reason, self.line, self.column, self.offset))
