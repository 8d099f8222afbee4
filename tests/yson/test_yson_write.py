"""Output format of `dumps`/`dump`."""

from __future__ import annotations

import enum
import io
import math
import types
from collections import OrderedDict

import pytest

from ytsched.yson import WithAttributes, YsonUint, dump, dumps, loads


def test_compact_form() -> None:
    value = {"a": 1, "b": [1, 2], "c": {}, "d": [], "e": None}
    assert dumps(value) == '{"a"=1;"b"=[1;2;];"c"={};"d"=[];"e"=#;}'


def test_pretty_form() -> None:
    value = {"type": "pool", "parent": None, "res": {"cpu": 93818.4, "gpu": 0.0}, "l": [1, []]}
    assert dumps(value, pretty=True) == (
        "{\n"
        '    "type" = "pool";\n'
        '    "parent" = #;\n'
        '    "res" = {\n'
        '        "cpu" = 93818.4;\n'
        '        "gpu" = 0.;\n'
        "    };\n"
        '    "l" = [\n'
        "        1;\n"
        "        [];\n"
        "    ];\n"
        "}"
    )


def test_pretty_indent_width() -> None:
    assert dumps([1, [2]], pretty=True, indent=2) == "[\n  1;\n  [\n    2;\n  ];\n]"
    assert dumps({"a": 1}, pretty=True, indent=0) == '{\n"a" = 1;\n}'
    with pytest.raises(ValueError, match="indent"):
        dumps(1, pretty=True, indent=-1)


def test_pretty_scalars_and_empty_containers() -> None:
    assert dumps(5, pretty=True) == "5"
    assert dumps({}, pretty=True) == "{}"
    assert dumps([], pretty=True) == "[]"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-12, "-12"),
        (2**100, str(2**100)),
        (YsonUint(12), "12u"),
        (True, "%true"),
        (False, "%false"),
        (None, "#"),
        (1.0, "1."),
        (-0.0, "-0."),
        (100.0, "100."),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1e16, "1e+16"),
        (1e-7, "1e-07"),
        (0.000008000512032770097, "8.000512032770097e-06"),
        (math.inf, "%inf"),
        (-math.inf, "%-inf"),
        (math.nan, "%nan"),
    ],
)
def test_scalars(value: object, text: str) -> None:
    assert dumps(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("", '""'),
        ("true", '"true"'),  # strings are always quoted
        ("abc", '"abc"'),
        ('a"b\\c', r'"a\"b\\c"'),
        ("\n\t\r", r'"\n\t\r"'),
        ("\x00\x01\x1f\x7f", r'"\x00\x01\x1f\x7f"'),
        ("é€😀", '"é€😀"'),
    ],
)
def test_strings(value: str, text: str) -> None:
    assert dumps(value) == text
    assert loads(text) == value


def test_attributes() -> None:
    value = WithAttributes({"x": 1}, {"a": 1, "b": WithAttributes("s", {"c": None})})
    assert dumps(value) == '<"a"=1;"b"=<"c"=#;>"s";>{"x"=1;}'
    assert dumps(value, pretty=True) == (
        '<\n    "a" = 1;\n    "b" = <\n        "c" = #;\n    > "s";\n> {\n    "x" = 1;\n}'
    )
    assert loads(dumps(value)) == value
    assert loads(dumps(value, pretty=True)) == value


def test_empty_attributes_are_omitted() -> None:
    assert dumps(WithAttributes(5, {})) == "5"
    assert dumps([WithAttributes([], {})], pretty=True) == "[\n    [];\n]"


def test_tuples_and_mappings() -> None:
    assert dumps((1, (2, 3))) == "[1;[2;3;];]"
    assert dumps(OrderedDict(b=1, a=2)) == '{"b"=1;"a"=2;}'
    assert dumps(types.MappingProxyType({"k": "v"})) == '{"k"="v";}'


def test_subclasses_of_supported_types() -> None:
    class Color(enum.IntEnum):
        RED = 1

    class Name(str):
        pass

    class MyFloat(float):
        pass

    class MyUint(YsonUint):
        pass

    assert dumps([Color.RED, Name("x"), MyFloat(2.0), MyUint(3)]) == '[1;"x";2.;3u;]'
    assert dumps({Name("k"): 1}) == '{"k"=1;}'


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        ({1, 2}, "set"),
        (b"bytes", "bytes"),
        (object(), "object"),
        (1 + 2j, "complex"),
        ([1, {"a": {2.5}}], "set"),
    ],
)
def test_unsupported_types(value: object, type_name: str) -> None:
    with pytest.raises(TypeError, match=f"type {type_name} is not YSON serializable"):
        dumps(value)


@pytest.mark.parametrize("key", [1, None, 1.5, ("a",), b"k"])
def test_non_string_keys(key: object) -> None:
    with pytest.raises(TypeError, match=f"keys must be str, not {type(key).__name__}"):
        dumps({key: 1})


def test_circular_references() -> None:
    items: list[object] = []
    items.append(items)
    with pytest.raises(ValueError, match="Circular"):
        dumps(items)
    mapping: dict[str, object] = {}
    mapping["self"] = [mapping]
    with pytest.raises(ValueError, match="Circular"):
        dumps(mapping, pretty=True)


def test_shared_substructures_are_not_circular() -> None:
    shared = [1]
    assert dumps([shared, shared, {"a": shared}]) == '[[1;];[1;];{"a"=[1;];};]'


def test_dump_to_file() -> None:
    buffer = io.StringIO()
    dump({"a": [1, 2]}, buffer)
    assert buffer.getvalue() == '{"a"=[1;2;];}'
    buffer = io.StringIO()
    dump([1], buffer, pretty=True, indent=2)
    assert buffer.getvalue() == "[\n  1;\n]"


def test_lone_surrogates_in_str_round_trip() -> None:
    # Not representable in UTF-8, but str input/output keeps them intact.
    for text in ["\ud800", "\ud800\n", "a\udfff\x01b"]:
        assert loads(dumps(text)) == text
