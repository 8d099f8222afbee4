"""Token regexes and string-literal decoding for the text-YSON parser.

Why one master regex: CPython executes a regex inside the C ``_sre`` engine, so
recognising a whole token (skipping the whitespace and comments before it) costs
one ``Pattern.match`` call instead of a Python-level loop over characters.  The
alternation is ordered so that every position of the input matches *some*
alternative -- a catch-all ``BAD`` branch for any stray character and an empty
``EOF`` branch at the end -- so the parser never has to handle "no match", and
``Match.lastindex`` (the number of the capturing group of the alternative that
matched) tells it the token kind with a single attribute read.

The first alternatives are *fused* tokens covering the shapes that dominate real
data: a whole ``"key" = scalar;`` map item, and ``"key" =``.  They are pure
optimisations: the parser uses them only in the state where they are valid and
otherwise re-matches the same position with `SLOW_TOKEN`, the same pattern with
the fused branches disabled (so group numbers stay identical), which yields the
primitive tokens and therefore exact error positions.  `SLOW_TOKEN` alone is a
complete lexer; the parser also uses it for ``bytes`` input that is not valid
UTF-8, where every string literal needs per-literal decoding.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "FAST_TOKEN",
    "SLOW_TOKEN",
    "WHITESPACE",
    "EscapeError",
    "decode_latin1_literal",
    "decode_text_literal",
]

# Whitespace, then any number of comments each followed by whitespace.  Written
# so that the common case (plain spaces and newlines) needs no backtracking.
_WS: Final = r"[ \t\n\r\f\v]*(?:(?://[^\n]*|/\*.*?\*/)[ \t\n\r\f\v]*)*"

_EXP: Final = r"(?:[eE][-+]?\d+)"
_FLOAT_BODY: Final = rf"(?:\d+\.\d*{_EXP}?|\.\d+{_EXP}?|\d+{_EXP})"
# A number-ish run that none of the valid number forms matched: reported as an
# invalid number instead of as two confusing tokens.
_BADNUM_BODY: Final = r"[-+]?[\d.][\w.+\-]*"

# (group name, pattern).  The pattern of a named group is the token; the group
# numbers follow the order of this list, and the parser relies on them.
_FUSED: Final = (
    # "key" = scalar ;  -- the value groups come last so that lastindex names them.
    rf'"(?P<fkey>[^"\\]*)"{_WS}={_WS}'
    rf"(?:(?P<fint>-?\d+)"
    rf"|(?P<ffloat>-?{_FLOAT_BODY})"
    rf'|"(?P<fstr>[^"\\]*)"'
    rf"|(?P<fnull>#)"
    rf"){_WS};",
    # "key" =
    rf'"(?P<fkeyeq>[^"\\]*)"{_WS}=',
)
_PRIMITIVE: Final = (
    r"(?P<int>[-+]?\d+)(?![\w.])",
    r"(?P<float>[-+]?" + _FLOAT_BODY + r")(?![\w.])",
    r"(?P<uint>\d+u)(?![\w.])",
    r'"(?P<str>[^"\\]*(?:\\.[^"\\]*)*)"',
    r"(?P<ident>[A-Za-z_][A-Za-z0-9_.\-]*)",
    r"(?P<entity>#)",
    r"(?P<pct>%[-+]?\w*)",
    r"(?P<lbrace>\{)",
    rf"(?P<rbrace_sep>\}}){_WS};",
    r"(?P<rbrace>\})",
    r"(?P<lbracket>\[)",
    rf"(?P<rbracket_sep>\]){_WS};",
    r"(?P<rbracket>\])",
    r"(?P<lt><)",
    r"(?P<gt>>)",
    r"(?P<semi>;)",
    r"(?P<eq>=)",
    # Lexical errors, then end of input; nothing may follow these.
    rf"(?P<badnum>{_BADNUM_BODY})",
    r"(?P<bad>.)",
    r"(?P<eof>)",
)


def _build(fused: bool) -> re.Pattern[str]:
    disable = "" if fused else "(?!)"
    alternatives = [disable + alt for alt in _FUSED] + list(_PRIMITIVE)
    return re.compile(_WS + "(?:" + "|".join(alternatives) + ")", re.DOTALL | re.ASCII)


FAST_TOKEN: Final = _build(fused=True)
SLOW_TOKEN: Final = _build(fused=False)
WHITESPACE: Final = re.compile(_WS, re.DOTALL)

# Group numbers, checked against the compiled pattern below.
FKEY: Final = 1
FINT: Final = 2
FFLOAT: Final = 3
FSTR: Final = 4
FNULL: Final = 5
FKEYEQ: Final = 6
INT: Final = 7
FLOAT: Final = 8
UINT: Final = 9
STR: Final = 10
IDENT: Final = 11
ENTITY: Final = 12
PCT: Final = 13
LBRACE: Final = 14
RBRACE_SEP: Final = 15
RBRACE: Final = 16
LBRACKET: Final = 17
RBRACKET_SEP: Final = 18
RBRACKET: Final = 19
LT: Final = 20
GT: Final = 21
SEMI: Final = 22
EQ: Final = 23
BADNUM: Final = 24
BAD: Final = 25
EOF: Final = 26

_EXPECTED_GROUPS: Final = {
    "fkey": FKEY,
    "fint": FINT,
    "ffloat": FFLOAT,
    "fstr": FSTR,
    "fnull": FNULL,
    "fkeyeq": FKEYEQ,
    "int": INT,
    "float": FLOAT,
    "uint": UINT,
    "str": STR,
    "ident": IDENT,
    "entity": ENTITY,
    "pct": PCT,
    "lbrace": LBRACE,
    "rbrace_sep": RBRACE_SEP,
    "rbrace": RBRACE,
    "lbracket": LBRACKET,
    "rbracket_sep": RBRACKET_SEP,
    "rbracket": RBRACKET,
    "lt": LT,
    "gt": GT,
    "semi": SEMI,
    "eq": EQ,
    "badnum": BADNUM,
    "bad": BAD,
    "eof": EOF,
}
if FAST_TOKEN.groupindex != _EXPECTED_GROUPS or SLOW_TOKEN.groupindex != _EXPECTED_GROUPS:
    raise AssertionError("YSON token group numbers are out of sync with the pattern")

# The %-literals YSON defines.
PERCENT_LITERALS: Final[dict[str, bool | float]] = {
    "%true": True,
    "%false": False,
    "%nan": float("nan"),
    "%inf": float("inf"),
    "%+inf": float("inf"),
    "%-inf": float("-inf"),
}


class EscapeError(Exception):
    """An invalid escape sequence at ``index`` within a string literal's body."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


_ESCAPE: Final = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|([0-7]{1,3})|(.))", re.DOTALL)
_SIMPLE_ESCAPES: Final = {
    "n": b"\n",
    "t": b"\t",
    "r": b"\r",
    "\\": b"\\",
    '"': b'"',
    "'": b"'",
    "?": b"?",
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "v": b"\v",
}


def _bytes_to_str(data: bytes, errors: str = "strict") -> str:
    # YSON strings are byte strings; we decode them as UTF-8 and keep bytes that
    # are not valid UTF-8 as latin-1 code points, so no input is ever rejected
    # or silently altered because of its encoding.
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _unescape(body: str, encoding: str) -> str:
    """Decode the body of a quoted literal that contains at least one escape.

    ``body`` is the text between the quotes; its unescaped characters stand for
    their bytes in ``encoding`` (UTF-8 for text input, latin-1 for raw bytes).
    """
    errors = "surrogatepass" if encoding == "utf-8" else "strict"
    chunks: list[bytes] = []
    last = 0
    for match in _ESCAPE.finditer(body):
        start = match.start()
        if start > last:
            chunks.append(body[last:start].encode(encoding, errors))
        hex_digits, octal_digits, other = match.groups()
        if hex_digits is not None:
            chunks.append(bytes((int(hex_digits, 16),)))
        elif octal_digits is not None:
            code = int(octal_digits, 8)
            if code > 0xFF:
                raise EscapeError(start, f"octal escape '\\{octal_digits}' is out of range")
            chunks.append(bytes((code,)))
        else:
            simple = _SIMPLE_ESCAPES.get(other)
            if simple is None:
                if other == "x":
                    raise EscapeError(start, "'\\x' must be followed by two hex digits")
                raise EscapeError(start, f"invalid escape sequence '\\{other}'")
            chunks.append(simple)
        last = match.end()
    chunks.append(body[last:].encode(encoding, errors))
    # For str input, "surrogatepass" lets a lone surrogate in the text survive
    # the round trip through bytes, as it does for literals without escapes.
    return _bytes_to_str(b"".join(chunks), errors)


def decode_text_literal(body: str) -> str:
    """Decode a quoted literal's body taken from ``str`` input."""
    if "\\" not in body:
        return body
    return _unescape(body, "utf-8")


def decode_latin1_literal(body: str) -> str:
    """Decode a literal's body from bytes input that was decoded as latin-1."""
    if "\\" in body:
        return _unescape(body, "latin-1")
    if body.isascii():
        return body
    return _bytes_to_str(body.encode("latin-1"))
