"""Syntax errors: exact positions, messages, and strictness."""

from __future__ import annotations

import pickle

import pytest

from ytsched.yson import YsonError, loads


def _error(text: str | bytes) -> YsonError:
    with pytest.raises(YsonError) as info:
        loads(text)
    return info.value


def test_error_is_a_value_error_with_position() -> None:
    error = _error('{\n    "a" = 1;\n    "b" = 2 = 3;\n}')
    assert isinstance(error, ValueError)
    assert (error.line, error.column, error.offset) == (3, 13, 27)
    assert error.reason == "expected ';' or '}' after map item, found '='"
    assert str(error) == (
        "YSON syntax error at line 3, column 13: expected ';' or '}' after map item, found '='"
    )


def test_error_pickles() -> None:
    error = _error("[1 2]")
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, YsonError)
    assert (copy.reason, copy.line, copy.column, copy.offset) == (
        error.reason,
        error.line,
        error.column,
        error.offset,
    )
    assert str(copy) == str(error)


# (input, line, column, message fragment)
CASES = [
    # missing separator between map items, on the next line
    ('{\n    "a" = 1;\n    "b" = 2\n    "c" = 3;\n}', 4, 5, "after map item, found '\"c\"'"),
    ("{a=1 b=2}", 1, 6, "expected ';' or '}' after map item, found 'b'"),
    ("[1 2]", 1, 4, "expected ';' or ']' after list item, found '2'"),
    ("[1; 2;; 3]", 1, 7, "expected a list item or ']', found ';'"),
    ("[;]", 1, 2, "expected a list item or ']', found ';'"),
    ("{;}", 1, 2, "expected a map key or '}', found ';'"),
    ("{1 = 2}", 1, 2, "expected a map key or '}', found '1'"),
    ("{%true = 2}", 1, 2, "expected a map key or '}', found '%true'"),
    ('{"a" 1}', 1, 6, "expected '=' after map key, found '1'"),
    ("{a}", 1, 3, "expected '=' after map key, found '}'"),
    ("{a = }", 1, 6, "expected a value, found '}'"),
    ("{a = 1]", 1, 7, "expected ';' or '}' after map item, found ']'"),
    ("[1}", 1, 3, "expected ';' or ']' after list item, found '}'"),
    ("]", 1, 1, "expected a value, found ']'"),
    ("=", 1, 1, "expected a value, found '='"),
    # end of input in every state
    ("", 1, 1, "expected a value, found end of input"),
    ("  \n\t ", 2, 3, "expected a value, found end of input"),
    ("// only a comment\n", 2, 1, "expected a value, found end of input"),
    ("[1", 1, 3, "expected ';' or ']' after list item, found end of input"),
    ("[1;", 1, 4, "expected a list item or ']', found end of input"),
    ("{a", 1, 3, "expected '=' after map key, found end of input"),
    ("{a=", 1, 4, "expected a value, found end of input"),
    ("{a=1;\n", 2, 1, "expected a map key or '}', found end of input"),
    ("<a=1>", 1, 6, "expected a value, found end of input"),
    # trailing garbage
    ("{} x", 1, 4, "expected end of input after the top-level value, found 'x'"),
    ("1 2", 1, 3, "expected end of input after the top-level value, found '2'"),
    ("{};", 1, 3, "expected end of input after the top-level value, found ';'"),
    ("[1];", 1, 4, "expected end of input after the top-level value, found ';'"),
    ('"a" "b"', 1, 5, "found '\"b\"'"),
    ("{\n}\n}", 3, 1, "expected end of input after the top-level value, found '}'"),
    # attributes
    ("<a=1><b=2>3", 1, 6, "a value cannot have more than one set of attributes"),
    ("[<a=1>]", 1, 7, "expected a value, found ']'"),
    ("<a=1 b=2>3", 1, 6, "expected ';' or '>' after attribute, found 'b'"),
    ("<a 1>3", 1, 4, "expected '=' after attribute name, found '1'"),
    ("<;>3", 1, 2, "expected an attribute name or '>', found ';'"),
    ("{a=1>", 1, 5, "expected ';' or '}' after map item, found '>'"),
    # lexical errors
    ('"abc', 1, 1, "unterminated string literal"),
    ('{\n  "a" = "abc\\"\n}', 2, 9, "unterminated string literal"),
    ("[1; /* never closed", 1, 5, "unterminated block comment"),
    ("[1; / 2]", 1, 5, "unexpected character '/'"),
    ("[1; @]", 1, 5, "unexpected character '@'"),
    ("[1; \u00a0]", 1, 5, "unexpected character '\\xa0'"),
    ("1abc", 1, 1, "invalid number literal '1abc'"),
    ("[1.2.3]", 1, 2, "invalid number literal '1.2.3'"),
    ("-1u", 1, 1, "invalid number literal '-1u'"),
    ("1e", 1, 1, "invalid number literal '1e'"),
    ("{a = .}", 1, 6, "invalid number literal '.'"),
    ("-", 1, 1, "unexpected character '-'"),
    ("%foo", 1, 1, "invalid literal '%foo'"),
    ("[%True]", 1, 2, "invalid literal '%True'"),
    ("%", 1, 1, "invalid literal '%'"),
    # escapes (the position is the backslash)
    ('"ab\\q"', 1, 4, "invalid escape sequence '\\q'"),
    ('[\n"ok";\n  "x\\x4"]', 3, 5, "'\\x' must be followed by two hex digits"),
    ('"\\400"', 1, 2, "octal escape '\\400' is out of range"),
    ('{"k\\u0041" = 1}', 1, 4, "invalid escape sequence '\\u'"),
    ('"é\\q"', 1, 3, "invalid escape sequence"),  # columns count characters
]


@pytest.mark.parametrize(("text", "line", "column", "message"), CASES)
def test_syntax_errors(text: str, line: int, column: int, message: str) -> None:
    error = _error(text)
    assert (error.line, error.column) == (line, column), str(error)
    assert message in error.reason, str(error)
    # offset agrees with line/column
    lines = text.split("\n")
    assert error.offset == sum(len(row) + 1 for row in lines[: line - 1]) + column - 1


def test_duplicate_keys() -> None:
    error = _error('{"a" = 1; "b" = 2; "a" = 3}')
    assert (error.line, error.column) == (1, 20)
    assert error.reason == "duplicate map key 'a'"

    error = _error('{\n  "pool" = {};\n  pool = 1;\n}')
    assert (error.line, error.column) == (3, 3)
    assert "duplicate map key 'pool'" in error.reason

    # the same key after unescaping is still a duplicate
    assert "duplicate map key 'A'" in _error(r'{"A" = 1; "\x41" = 2}').reason

    error = _error("<x=1; x=2> 3")
    assert (error.line, error.column) == (1, 7)
    assert error.reason == "duplicate attribute 'x'"


def test_same_key_in_different_maps_is_fine() -> None:
    assert loads("{a = {a = 1}; b = <a = 2> {a = 3}}")["a"] == {"a": 1}


def test_integer_with_too_many_digits() -> None:
    error = _error("[" + "1" * 5000 + "]")
    assert (error.line, error.column) == (1, 2)
    assert "too many digits" in error.reason
    assert "too many digits" in _error('{"a" = ' + "9" * 5000 + ";}").reason
    assert "too many digits" in _error("9" * 5000 + "u").reason


def test_non_utf8_bytes_positions_count_bytes() -> None:
    # Not valid UTF-8 as a whole, so columns count bytes ("é" is two of them).
    error = _error(b'{"\xc3\xa9\xff" = 1; x}')
    assert (error.line, error.column) == (1, 14)
    assert error.reason == "expected '=' after map key, found '}'"


def test_no_partial_result_on_late_error() -> None:
    text = "[" + "{a=1;b=2};" * 1000 + "{a=1;a=2}]"
    error = _error(text)
    assert error.reason == "duplicate map key 'a'"
    assert error.column == len(text) - 4
