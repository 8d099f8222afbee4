"""Parsing of every YSON token kind, container and decoration (happy paths)."""

from __future__ import annotations

import io
import math

import pytest

from ytsched.yson import WithAttributes, YsonUint, load, loads, strip_attributes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("42", 42),
        ("-12", -12),
        ("+7", 7),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("-" + "9" * 100, -int("9" * 100)),
    ],
)
def test_signed_ints(text: str, expected: int) -> None:
    value = loads(text)
    assert type(value) is int
    assert value == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0u", 0), ("12u", 12), ("18446744073709551615u", 2**64 - 1), ("1" * 30 + "u", int("1" * 30))],
)
def test_unsigned_ints(text: str, expected: int) -> None:
    value = loads(text)
    assert type(value) is YsonUint
    assert value == expected
    assert repr(value) == f"YsonUint({expected})"


def test_yson_uint_rejects_negative() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        YsonUint(-1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5", -0.5),
        ("0.", 0.0),
        ("1e10", 1e10),
        ("1E+3", 1000.0),
        ("-2.5e-3", -2.5e-3),
        ("1.e2", 100.0),
        (".5e1", 5.0),
        ("+1.25", 1.25),
        ("0.6439364415630381", 0.6439364415630381),
        ("%inf", math.inf),
        ("%+inf", math.inf),
        ("%-inf", -math.inf),
    ],
)
def test_doubles(text: str, expected: float) -> None:
    value = loads(text)
    assert type(value) is float
    assert value == expected


def test_nan() -> None:
    value = loads("%nan")
    assert isinstance(value, float)
    assert math.isnan(value)
    assert math.isnan(loads("[%nan]")[0])


def test_negative_zero_keeps_sign() -> None:
    assert math.copysign(1.0, loads("-0.")) == -1.0


def test_booleans_and_entity() -> None:
    assert loads("%true") is True
    assert loads("%false") is False
    assert loads("#") is None


@pytest.mark.parametrize("word", ["true", "false", "null", "nan", "inf"])
def test_bare_words_are_strings(word: str) -> None:
    assert loads(word) == word


@pytest.mark.parametrize("ident", ["abc", "_", "_a.b-c1", "pool.child-2", "A_B"])
def test_unquoted_strings(ident: str) -> None:
    assert loads(ident) == ident


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('""', ""),
        ('"plain"', "plain"),
        ('"<Root>"', "<Root>"),
        ('"with space; = {} [] <> # %"', "with space; = {} [] <> # %"),
        (r'"a\nb"', "a\nb"),
        (r'"a\tb\rc"', "a\tb\rc"),
        (r'"back\\slash"', "back\\slash"),
        (r'"say \"hi\""', 'say "hi"'),
        (r'"\'\?"', "'?"),
        (r'"\a\b\f\v"', "\a\b\f\v"),
        (r'"\x41\x7a\x00"', "Az\x00"),
        (r'"\101\0\1234"', "A\x00S4"),
        (r'"\377"', "\xff"),  # a lone byte 0xFF is not UTF-8: kept as latin-1
        (r'"\xc3\xa9"', "é"),  # escaped UTF-8 bytes decode as UTF-8
        (r'"\xe9t\xe9"', "été"),  # invalid UTF-8: latin-1 code points
        ('"héllo €😀"', "héllo €😀"),
        ('"multi\nline"', "multi\nline"),  # raw control characters are kept
    ],
)
def test_quoted_strings(text: str, expected: str) -> None:
    assert loads(text) == expected


def test_bytes_input_is_utf8() -> None:
    assert loads('"héllo"'.encode()) == "héllo"
    assert loads(bytearray(b"[1;2]")) == [1, 2]
    assert loads(memoryview(b"{a=1}")) == {"a": 1}


def test_bytes_input_that_is_not_utf8() -> None:
    # The document as a whole is not UTF-8; each literal is decoded on its own.
    data = b'{"\xff" = "\xc3\xa9"; "k" = "caf\xe9"; "e" = "\\xc3\\xa9\xe9"}'
    assert loads(data) == {"\xff": "é", "k": "café", "e": "Ã©é"}


def test_maps() -> None:
    assert loads("{}") == {}
    assert loads("{ }") == {}
    assert loads('{"a" = 1}') == {"a": 1}
    assert loads('{"a" = 1;}') == {"a": 1}
    assert loads("{a=1;b=2}") == {"a": 1, "b": 2}
    assert loads("{a=1;b=2;}") == {"a": 1, "b": 2}
    assert loads('{"x y" = {"z" = {}}}') == {"x y": {"z": {}}}


def test_map_key_order_is_preserved() -> None:
    assert list(loads("{c=1;a=2;b=3}")) == ["c", "a", "b"]


def test_escaped_map_keys() -> None:
    assert loads(r'{"a\"b" = 1; "\x41" = 2}') == {'a"b': 1, "A": 2}


def test_lists() -> None:
    assert loads("[]") == []
    assert loads("[ ]") == []
    assert loads("[1]") == [1]
    assert loads("[1;]") == [1]
    assert loads("[1; 2; 3]") == [1, 2, 3]
    assert loads("[1; 2; 3;]") == [1, 2, 3]
    assert loads("[[]; [[]]; {};]") == [[], [[]], {}]
    assert loads('[a; "b"; 1; 2u; 3.; %true; #]') == ["a", "b", 1, 2, 3.0, True, None]


def test_map_item_shapes() -> None:
    # Every value kind as a map item, with and without the trailing ';', so both
    # the fused "key = scalar;" fast path and the general path are exercised.
    text = """{
        "i" = -3; "f" = 2.5; "s" = "x"; "n" = #; "e" = 1e3; "u" = 4u; "b" = %false;
        "m" = {}; "l" = []; ident = 1; "last" = 7
    }"""
    assert loads(text) == {
        "i": -3,
        "f": 2.5,
        "s": "x",
        "n": None,
        "e": 1000.0,
        "u": 4,
        "b": False,
        "m": {},
        "l": [],
        "ident": 1,
        "last": 7,
    }


def test_attributes_on_scalars() -> None:
    assert loads("<a = 1> 5") == WithAttributes(5, {"a": 1})
    assert loads('<a=1;b="x";> "s"') == WithAttributes("s", {"a": 1, "b": "x"})
    assert loads("<type = table> #") == WithAttributes(None, {"type": "table"})
    assert loads("<a=1>%true") == WithAttributes(True, {"a": 1})


def test_attributes_on_containers() -> None:
    assert loads("<a=1>{b=2}") == WithAttributes({"b": 2}, {"a": 1})
    assert loads("<a=1>[1;2]") == WithAttributes([1, 2], {"a": 1})
    assert loads("{x = <a=1> {}; y = [<b=2> 3; 4]}") == {
        "x": WithAttributes({}, {"a": 1}),
        "y": [WithAttributes(3, {"b": 2}), 4],
    }


def test_nested_attributes() -> None:
    value = loads('<a = <b = <c = 1> 2> 3; d = {e = <f = 4> 5}> "v"')
    assert value == WithAttributes(
        "v",
        {
            "a": WithAttributes(3, {"b": WithAttributes(2, {"c": 1})}),
            "d": {"e": WithAttributes(5, {"f": 4})},
        },
    )


def test_empty_attributes_give_plain_values() -> None:
    assert loads("<> 5") == 5
    assert loads("[<>{}]") == [{}]


def test_strip_attributes() -> None:
    value = loads("<a=1>{x = <b=2>[<c=3>1; 2]; y = <d=4>#}")
    assert strip_attributes(value) == {"x": [1, 2], "y": None}
    assert strip_attributes(5) == 5
    # The input is left untouched.
    assert isinstance(value, WithAttributes)


def test_with_attributes_cannot_nest_directly() -> None:
    with pytest.raises(TypeError):
        WithAttributes(WithAttributes(1, {"a": 1}), {"b": 2})


def test_whitespace_everywhere() -> None:
    text = ' \t\r\n{ \n\t"a"\r\n =\t1 ;\n b = [ 1 ; 2 ; ] ; c = < x = 1 > 2 }\n\n '
    assert loads(text) == {"a": 1, "b": [1, 2], "c": WithAttributes(2, {"x": 1})}


def test_comments() -> None:
    text = """
    // a line comment before the value
    /* a block
       comment */
    {
        "a" = 1; // trailing comment
        /* before a key */ "b" /* after a key */ = /* before a value */ 2 /* after */;
        "c" = "// not a comment /* either */";
        "d" = [1; /**/ 2; /* x */];
    } // after the value
    /* and a final one */"""
    assert loads(text) == {"a": 1, "b": 2, "c": "// not a comment /* either */", "d": [1, 2]}
    assert loads("1// comment at end of input without newline") == 1


def test_deep_nesting_does_not_recurse() -> None:
    depth = 5000
    value = loads("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        assert isinstance(value, list)
        value = value[0]
    assert value == []


def test_load_text_and_binary_files() -> None:
    assert load(io.StringIO('{"a" = [1; 2u]}')) == {"a": [1, YsonUint(2)]}
    assert load(io.BytesIO(b'{"a" = "\xc3\xa9"}')) == {"a": "é"}


def test_loads_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="int"):
        loads(123)  # type: ignore[arg-type]
