"""The YTsaurus wire format helpers: query strings, formats, error maps and codes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ytsched.errors import YtschedError
from ytsched.server.ytapi import wire
from ytsched.server.ytapi.codes import CODES, yt_code
from ytsched.yson.values import WithAttributes


def test_query_string_nesting_and_integers() -> None:
    parsed = wire.parse_query("path=//a&limit=10&x=1e3&a[b][0]=1&a[b][1]=y&l[]=p&l[]=q&neg=-4")
    assert parsed == {
        "path": "//a",
        "limit": 10,
        "x": "1e3",
        "a": {"b": [1, "y"]},
        "l": ["p", "q"],
        "neg": -4,
    }


@pytest.mark.parametrize(
    "query", ["a[b=1", "a=1&a=2", "a=1&a[b]=2", "a[2000]=1", "a" + "[x]" * 8 + "=1"]
)
def test_bad_query_strings_are_refused(query: str) -> None:
    with pytest.raises(wire.WireError):
        wire.parse_query(query)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), st.integers(-(10**6), 10**6)))
def test_flat_integer_queries_round_trip(values: dict[str, int]) -> None:
    query = "&".join(f"{key}={value}" for key, value in values.items())
    assert wire.parse_query(query) == values


def test_format_names_with_attributes() -> None:
    assert wire.format_name("json") == ("json", {})
    assert wire.format_name("<format=pretty>yson") == ("yson", {"format": "pretty"})
    assert wire.format_name({"$value": "yson", "$attributes": {"format": "binary"}}) == (
        "yson",
        {"format": "binary"},
    )
    with pytest.raises(wire.WireError):
        wire.format_name(3)


def test_values_with_attributes_in_both_formats() -> None:
    value = {"$attributes": {"weight": 2.0}, "$value": {"team": {}}}
    assert wire.to_yson(value) == WithAttributes({"team": {}}, {"weight": 2.0})
    assert wire.from_yson(WithAttributes({"team": {}}, {"weight": 2.0})) == value
    content, kind = wire.encode({"value": value}, "yson")
    assert kind == "application/x-yt-yson-text"
    assert content.decode().replace(" ", "") == '{"value"=<"weight"=2.;>{"team"={};};}'
    assert wire.encode({"v": 1}, None) == (b'{"v":1}', "application/json")


def test_error_maps_have_integer_codes_and_keep_our_code() -> None:
    error = YtschedError("NoSuchOperation", "no such operation", operation_id="x")
    assert wire.error_map(error) == {
        "code": 1915,
        "message": "no such operation",
        "attributes": {"operation_id": "x", "ytsched_code": "NoSuchOperation"},
        "inner_errors": [],
    }
    nested = wire.convert_errors(
        {
            "error": {
                "code": "OperationAborted",
                "message": "m",
                "inner_errors": [{"code": "ResolveError", "message": "r"}],
            }
        }
    )
    assert nested["error"]["code"] == 1
    assert nested["error"]["inner_errors"][0]["code"] == 500


def test_code_table_uses_ytsaurus_numbers() -> None:
    assert yt_code("ResolveError") == 500
    assert yt_code("AuthorizationError") == 901
    assert yt_code("AuthenticationError") == 900
    assert yt_code("TooManyOperations") == 202
    assert yt_code("InvalidOperationState") == 201
    assert yt_code("NoSuchJob") == 1916
    assert yt_code("SomethingNew") == 1
    assert all(isinstance(code, int) and code > 0 for code in CODES.values())
