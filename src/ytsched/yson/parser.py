"""Strict text-YSON parser: `loads` and `load`.

Why strict: YSON is what YTsaurus hands us (scheduler snapshots, pool configs),
and a lenient reader that guesses turns a truncated or hand-mangled file into
silently wrong scheduling input.  So every deviation from the grammar is a
`YsonError` pointing at the exact line and column, duplicate map keys are
rejected instead of "last one wins", anything after the top-level value is an
error, and nothing partial is ever returned.

Why an explicit stack: nesting depth is then limited only by memory (no
``RecursionError`` on deep input), and the whole parse is one flat loop whose
hot paths -- especially the fused ``"key" = scalar;`` map items produced by the
lexer (see `._lexer`) -- execute only a handful of bytecodes per token.  That is
what makes a pure-Python parser fast enough for megabyte-sized snapshots.

Grammar accepted (text YSON)::

    value      := [attributes] (map | list | scalar)
    attributes := "<" [item (";" item)* [";"]] ">"
    map        := "{" [item (";" item)* [";"]] "}"
    item       := string "=" value
    list       := "[" [value (";" value)* [";"]] "]"
    scalar     := string | int | uint | double | %true | %false | "#"

plus whitespace and ``//`` / ``/* */`` comments between tokens.  Strings are
either quoted (C escapes) or unquoted identifiers ``[A-Za-z_][A-Za-z0-9_.-]*``.
Integers are arbitrary-precision (YTsaurus itself limits them to 64 bits).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any, Final, Protocol, cast

from . import _lexer as lx
from .errors import YsonError
from .values import WithAttributes, YsonUint

__all__ = ["load", "loads"]


class _Token(Protocol):
    """The subset of ``re.Match`` the parser uses, as it is for our patterns.

    The token patterns always match (they end with catch-all alternatives), and
    every alternative has a capturing group, so ``lastindex`` is never ``None``.
    """

    @property
    def lastindex(self) -> int: ...

    def group(self, index: int, /) -> str: ...

    def start(self, index: int = 0, /) -> int: ...

    def end(self, index: int = 0, /) -> int: ...


_Matcher = Callable[[str, int], _Token]

_FAST: Final = cast(_Matcher, lx.FAST_TOKEN.match)
_SLOW: Final = cast(_Matcher, lx.SLOW_TOKEN.match)

# Parser states: what the next token may be.
_S_VALUE: Final = 0  # a value (after '=', after '>', at the top level)
_S_ITEM: Final = 1  # a list item or ']'
_S_KEY: Final = 2  # a map/attribute key or the closing '}' / '>'
_S_EQ: Final = 3  # '=' after a key
_S_SEP: Final = 4  # ';' or the closing bracket after a container item
_S_END: Final = 5  # end of input after the top-level value

# Kinds of the container being filled.
_C_TOP: Final = 0
_C_LIST: Final = 1
_C_MAP: Final = 2
_C_ATTRS: Final = 3

_MAX_SHOWN: Final = 30


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse one text-YSON value from ``data``.

    ``bytes`` input is decoded as UTF-8; if it is not valid UTF-8 it is parsed
    byte-wise and each string literal is decoded on its own (UTF-8, or latin-1
    code points if that literal is not valid UTF-8).

    Returns plain Python values (``dict``, ``list``, ``str``, ``int``,
    `YsonUint`, ``float``, ``bool``, ``None``); values that carry attributes
    come back wrapped in `WithAttributes`.

    Raises:
        YsonError: on any syntax error (with line and column).
        TypeError: if ``data`` is not text or bytes.
    """
    if isinstance(data, str):
        return _parse(data, _FAST, lx.decode_text_literal)
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _parse(raw.decode("latin-1"), _SLOW, lx.decode_latin1_literal)
        return _parse(text, _FAST, lx.decode_text_literal)
    raise TypeError(f"YSON input must be str or bytes, not {type(data).__name__}")


def load(fp: IO[str] | IO[bytes]) -> Any:
    """Parse one text-YSON value from a text or binary file object."""
    return loads(fp.read())


def _parse(text: str, match: _Matcher, decode: Callable[[str], str]) -> Any:
    """Parse ``text`` with the given token matcher and literal decoder."""
    slow = _SLOW
    percent = lx.PERCENT_LITERALS
    # Saved parent contexts: (container, kind, current key, pending attributes).
    stack: list[tuple[Any, int, str, dict[str, Any] | None]] = []
    cur: Any = None  # the dict or list being filled (None at the top level)
    ctype = _C_TOP
    key = ""  # the key whose value comes next, when cur is a dict
    attrs: dict[str, Any] | None = None  # attributes for the next value
    state = _S_VALUE
    result: Any = None
    pos = 0
    while True:
        m = match(text, pos)
        k = m.lastindex

        if k <= lx.FKEYEQ:
            # Fused tokens; valid only where a key may start.
            if state == _S_KEY:
                if k == lx.FKEYEQ:
                    key = m.group(k)
                    if key in cur:
                        raise _duplicate_key(text, m.start(k) - 1, key, ctype)
                    state = _S_VALUE
                else:
                    item_key = m.group(lx.FKEY)
                    if item_key in cur:
                        raise _duplicate_key(text, m.start(lx.FKEY) - 1, item_key, ctype)
                    if k == lx.FFLOAT:
                        cur[item_key] = float(m.group(k))
                    elif k == lx.FINT:
                        try:
                            cur[item_key] = int(m.group(k))
                        except ValueError:
                            raise _int_too_long(text, m.start(k)) from None
                    elif k == lx.FSTR:
                        cur[item_key] = m.group(k)
                    else:
                        cur[item_key] = None
                pos = m.end()
                continue
            m = slow(text, pos)
            k = m.lastindex

        pos = m.end()
        sep = False
        if k == lx.RBRACE_SEP or k == lx.RBRACE:
            if ctype != _C_MAP or (state != _S_KEY and state != _S_SEP):
                raise _unexpected(text, m, state, ctype)
            value: Any = cur
            cur, ctype, key, attrs = stack.pop()
            sep = k == lx.RBRACE_SEP
        elif state <= _S_ITEM:
            # A value is expected.
            if k == lx.LBRACE:
                stack.append((cur, ctype, key, attrs))
                cur = {}
                ctype = _C_MAP
                attrs = None
                state = _S_KEY
                continue
            if k == lx.INT:
                try:
                    value = int(m.group(k))
                except ValueError:
                    raise _int_too_long(text, m.start(k)) from None
            elif k == lx.FLOAT:
                value = float(m.group(k))
            elif k == lx.STR:
                try:
                    value = decode(m.group(k))
                except lx.EscapeError as exc:
                    raise YsonError.at(text, m.start(k) + exc.index, exc.reason) from None
            elif k == lx.ENTITY:
                value = None
            elif k == lx.IDENT:
                value = m.group(k)
            elif k == lx.LBRACKET:
                stack.append((cur, ctype, key, attrs))
                cur = []
                ctype = _C_LIST
                attrs = None
                state = _S_ITEM
                continue
            elif k == lx.UINT:
                try:
                    value = YsonUint(m.group(k)[:-1])
                except ValueError:
                    raise _int_too_long(text, m.start(k)) from None
            elif k == lx.PCT:
                literal = m.group(k)
                if literal not in percent:
                    raise _invalid_literal(text, m.start(k), literal)
                value = percent[literal]
            elif k == lx.LT:
                if attrs is not None:
                    raise YsonError.at(
                        text, m.start(k), "a value cannot have more than one set of attributes"
                    )
                stack.append((cur, ctype, key, None))
                cur = {}
                ctype = _C_ATTRS
                state = _S_KEY
                continue
            elif (k == lx.RBRACKET_SEP or k == lx.RBRACKET) and state == _S_ITEM:
                value = cur
                cur, ctype, key, attrs = stack.pop()
                sep = k == lx.RBRACKET_SEP
            else:
                raise _unexpected(text, m, state, ctype)
        elif state == _S_KEY:
            if k == lx.STR or k == lx.IDENT:
                if k == lx.STR:
                    try:
                        key = decode(m.group(k))
                    except lx.EscapeError as exc:
                        raise YsonError.at(text, m.start(k) + exc.index, exc.reason) from None
                else:
                    key = m.group(k)
                if key in cur:
                    raise _duplicate_key(text, _token_start(m, k), key, ctype)
                state = _S_EQ
                continue
            if k == lx.GT and ctype == _C_ATTRS:
                collected: dict[str, Any] = cur
                cur, ctype, key, _ = stack.pop()
                attrs = collected
                state = _S_VALUE
                continue
            raise _unexpected(text, m, state, ctype)
        elif state == _S_SEP:
            if k == lx.SEMI:
                state = _S_ITEM if ctype == _C_LIST else _S_KEY
                continue
            if (k == lx.RBRACKET_SEP or k == lx.RBRACKET) and ctype == _C_LIST:
                value = cur
                cur, ctype, key, attrs = stack.pop()
                sep = k == lx.RBRACKET_SEP
            elif k == lx.GT and ctype == _C_ATTRS:
                collected = cur
                cur, ctype, key, _ = stack.pop()
                attrs = collected
                state = _S_VALUE
                continue
            else:
                raise _unexpected(text, m, state, ctype)
        elif state == _S_EQ:
            if k == lx.EQ:
                state = _S_VALUE
                continue
            raise _unexpected(text, m, state, ctype)
        else:  # _S_END
            if k == lx.EOF:
                return result
            raise _unexpected(text, m, state, ctype)

        # A complete value: attach pending attributes and store it.
        if attrs is not None:
            if attrs:
                value = WithAttributes(value, attrs)
            attrs = None
        if ctype == _C_LIST:
            cur.append(value)
            state = _S_ITEM if sep else _S_SEP
        elif ctype == _C_TOP:
            if sep:
                raise _unexpected(text, m, _S_END, ctype, offset=pos - 1)
            result = value
            state = _S_END
        else:
            cur[key] = value
            state = _S_KEY if sep else _S_SEP


# --- error construction (slow path, only runs when the input is invalid) -----------


def _token_start(m: _Token, k: int) -> int:
    """Offset of the first character of the token matched as group ``k``."""
    return m.start(k) - 1 if k == lx.STR else m.start(k)


def _expectation(state: int, ctype: int) -> str:
    if state == _S_VALUE:
        return "expected a value"
    if state == _S_ITEM:
        return "expected a list item or ']'"
    if state == _S_KEY:
        if ctype == _C_ATTRS:
            return "expected an attribute name or '>'"
        return "expected a map key or '}'"
    if state == _S_EQ:
        if ctype == _C_ATTRS:
            return "expected '=' after attribute name"
        return "expected '=' after map key"
    if state == _S_SEP:
        if ctype == _C_LIST:
            return "expected ';' or ']' after list item"
        if ctype == _C_ATTRS:
            return "expected ';' or '>' after attribute"
        return "expected ';' or '}' after map item"
    return "expected end of input after the top-level value"


def _unexpected(
    text: str, m: _Token, state: int, ctype: int, *, offset: int | None = None
) -> YsonError:
    """The error for token ``m`` (or the token at ``offset``) in ``state``."""
    k = m.lastindex
    if offset is None:
        offset = _token_start(m, k)
        lexical = _lexical_error(text, m, k, offset)
        if lexical is not None:
            return lexical
    if offset >= len(text):
        found = "end of input"
    else:
        token = _SLOW(text, offset)
        tk = token.lastindex
        end = token.end(tk) + (1 if tk == lx.STR else 0)
        if tk in (lx.RBRACE_SEP, lx.RBRACKET_SEP):
            end = offset + 1
        shown = text[offset:end]
        if len(shown) > _MAX_SHOWN:
            shown = shown[: _MAX_SHOWN - 3] + "..."
        found = repr(shown)
    return YsonError.at(text, offset, f"{_expectation(state, ctype)}, found {found}")


def _lexical_error(text: str, m: _Token, k: int, offset: int) -> YsonError | None:
    """An error about the token itself, which takes precedence over grammar."""
    if k == lx.BAD:
        char = text[offset]
        if char == '"':
            return YsonError.at(text, offset, "unterminated string literal")
        if text.startswith("/*", offset):
            return YsonError.at(text, offset, "unterminated block comment")
        return YsonError.at(text, offset, f"unexpected character {char!r}")
    if k == lx.BADNUM:
        return YsonError.at(text, offset, f"invalid number literal {m.group(k)!r}")
    if k == lx.PCT and m.group(k) not in lx.PERCENT_LITERALS:
        return _invalid_literal(text, offset, m.group(k))
    return None


def _invalid_literal(text: str, offset: int, literal: str) -> YsonError:
    return YsonError.at(
        text,
        offset,
        f"invalid literal {literal!r} (expected %true, %false, %nan, %inf, %+inf or %-inf)",
    )


def _duplicate_key(text: str, offset: int, key: str, ctype: int) -> YsonError:
    what = "attribute" if ctype == _C_ATTRS else "map key"
    return YsonError.at(text, offset, f"duplicate {what} {key!r}")


def _int_too_long(text: str, offset: int) -> YsonError:
    return YsonError.at(text, offset, "integer literal has too many digits")
