"""The YTsaurus HTTP proxy wire format: parameters in, values and errors out.

Parameters of a command come from three places, merged in this order (later wins), as the
YTsaurus HTTP proxy does (``yt/yt/server/http_proxy/context.cpp``, ``helpers.cpp``):

1. the query string (``path=//sys&attributes[0]=weight``; integer-looking values are integers);
2. the ``X-YT-Parameters`` header, in the format named by ``X-YT-Header-Format``
   (``json`` by default, ``yson`` / ``<format=text>yson`` as the Python client sends);
3. for commands without input data, the body of a ``POST`` (``Content-Type`` JSON or YSON).

Values go out in ``output_format`` (a parameter, the ``X-YT-Output-Format`` header, or the
``Accept`` type; JSON by default, as ``yt/yt/server/http_proxy/formats.cpp`` infers it): ``json``
or ``yson`` (text; ``<format=pretty>yson`` indents; a request for binary YSON gets text YSON,
which every YSON reader accepts).  Errors are YTsaurus error maps with integer codes, in the body
and in the ``X-YT-Error`` / ``X-YT-Response-Code`` headers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from ytsched import yson
from ytsched.errors import YtschedError
from ytsched.server.ytapi.codes import yt_code
from ytsched.yson.values import WithAttributes

MAX_NESTING = 6
MAX_LIST_INDEX = 1024


class WireError(YtschedError):
    """A request the protocol layer cannot read (bad header, body or query string)."""

    def __init__(self, message: str, **attributes: object) -> None:
        super().__init__("InvalidRequest", message, **attributes)


# --- values between JSON / YSON and plain Python ---------------------------------------------


def from_yson(value: Any) -> Any:
    """A parsed YSON value as the commands take it: attributes become ``$attributes``."""
    if isinstance(value, WithAttributes):
        return {"$attributes": from_yson(value.attributes), "$value": from_yson(value.value)}
    if isinstance(value, dict):
        return {str(k): from_yson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_yson(v) for v in value]
    return value


def to_yson(value: Any) -> Any:
    """The reverse of :func:`from_yson`: ``{"$attributes", "$value"}`` maps carry attributes."""
    if isinstance(value, dict):
        if "$value" in value and set(value) <= {"$value", "$attributes"}:
            return WithAttributes(to_yson(value["$value"]), to_yson(value.get("$attributes", {})))
        return {k: to_yson(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_yson(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A parameter without its YSON attributes (``<append=%true>//path`` is ``//path``)."""
    if isinstance(value, dict) and "$value" in value and set(value) <= {"$value", "$attributes"}:
        return value["$value"]
    return value


def format_name(value: Any) -> tuple[str, dict[str, Any]]:
    """``<format=pretty>yson`` -> ("yson", {"format": "pretty"})."""
    if isinstance(value, dict) and "$value" in value:
        attributes = value.get("$attributes") or {}
        return str(value["$value"]), dict(attributes) if isinstance(attributes, dict) else {}
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("<"):
            try:
                return format_name(from_yson(yson.loads(text)))
            except ValueError as error:
                raise WireError(f"cannot parse format {value!r}: {error}") from None
        return text, {}
    raise WireError(f"format must be a string, got {value!r}")


def _parse_document(data: bytes | str, fmt: Any, what: str) -> Any:
    name, _ = format_name(fmt)
    try:
        if name == "json":
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            return json.loads(text)
        if name == "yson":
            return from_yson(yson.loads(data))
    except (ValueError, UnicodeDecodeError) as error:
        raise WireError(f"cannot parse {what} as {name}: {error}", format=name) from None
    raise WireError(f"{what}: format {name!r} is not supported (json or yson)", format=name)


def parse_header_parameters(headers: Mapping[str, str]) -> dict[str, Any]:
    raw = headers.get("x-yt-parameters")
    if raw is None:
        return {}
    fmt = headers.get("x-yt-header-format", "json")
    value = _parse_document(raw.encode("latin-1"), fmt, "X-YT-Parameters")
    if not isinstance(value, dict):
        raise WireError("X-YT-Parameters must be a map")
    return value


def parse_body_parameters(body: bytes, content_type: str) -> dict[str, Any]:
    if not body.strip():
        return {}
    fmt = "yson" if "yson" in content_type else "json"
    value = _parse_document(body, fmt, "request body")
    if not isinstance(value, dict):
        raise WireError("request body must be a map of parameters")
    return value


def parse_input(body: bytes, input_format: Any) -> Any:
    """The input value of a command with structured input (``set``)."""
    return _parse_document(body, input_format if input_format is not None else "yson", "input")


def _query_value(text: str) -> Any:
    try:
        number = int(text)
    except ValueError:
        return text
    return number if str(number) == text.lstrip("+") or text == "0" else text


def _split_name(name: str) -> list[str]:
    bracket = name.find("[")
    if bracket < 0:
        return [name]
    parts = [name[:bracket]]
    rest = name[bracket:]
    while rest:
        if not rest.startswith("[") or "]" not in rest:
            raise WireError(f"unmatched bracket in query argument {name!r}")
        close = rest.index("]")
        parts.append(rest[1:close])
        rest = rest[close + 1 :]
        if len(parts) > MAX_NESTING + 1:
            raise WireError(f"nesting limit reached in query argument {name!r}")
    return parts


def _insert(root: dict[str, Any], parts: list[str], value: Any, name: str) -> None:
    current: Any = root
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        nxt = parts[index + 1] if not last else None
        empty: Any = [] if nxt is not None and (nxt == "" or nxt.isdigit()) else {}
        if isinstance(current, list):
            position = len(current) if part == "" else int(part) if part.isdigit() else -1
            if position < 0 or position > MAX_LIST_INDEX:
                raise WireError(f"invalid list index in query argument {name!r}")
            while len(current) <= position:
                current.append(None)
            if last:
                current[position] = value
            else:
                if current[position] is None:
                    current[position] = empty
                current = current[position]
        else:
            if last:
                if part in current:
                    raise WireError(f"conflicting values in query argument {name!r}")
                current[part] = value
            else:
                current = current.setdefault(part, empty)
                if not isinstance(current, list | dict):
                    raise WireError(f"conflicting values in query argument {name!r}")


def parse_query(query: str) -> dict[str, Any]:
    """Query-string parameters, with ``a[b][0]=x`` nesting as YTsaurus reads them."""
    result: dict[str, Any] = {}
    for name, text in parse_qsl(query, keep_blank_values=True):
        _insert(result, _split_name(name), _query_value(text), name)
    return result


# --- output -------------------------------------------------------------------------------------


def encode(value: Any, output_format: Any) -> tuple[bytes, str]:
    """A structured value in the requested format, with its content type."""
    name, attributes = format_name(output_format) if output_format is not None else ("json", {})
    if name == "json":
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        return text.encode("utf-8"), "application/json"
    if name == "yson":
        pretty = attributes.get("format") == "pretty"
        # The CLI prints the answer as is: a pretty value ends its line.
        text = yson.dumps(to_yson(value), pretty=pretty) + ("\n" if pretty else "")
        return text.encode("utf-8"), "application/x-yt-yson-text"
    raise WireError(f"output format {name!r} is not supported (json or yson)", format=name)


def error_map(error: YtschedError) -> dict[str, Any]:
    """A YTsaurus error (``code``, ``message``, ``attributes``, ``inner_errors``)."""
    attributes = {k: v for k, v in error.attributes.items() if k != "inner_errors"}
    attributes["ytsched_code"] = error.code
    inner = error.attributes.get("inner_errors")
    return {
        "code": yt_code(error.code),
        "message": error.message,
        "attributes": json.loads(json.dumps(attributes, default=str)),
        "inner_errors": convert_errors(inner) if isinstance(inner, list) else [],
    }


def convert_errors(value: Any) -> Any:
    """Error maps inside a value (``@result/error``, a job's ``error``) with integer codes."""
    if isinstance(value, list):
        return [convert_errors(v) for v in value]
    if not isinstance(value, dict):
        return value
    converted = {k: convert_errors(v) for k, v in value.items()}
    code = converted.get("code")
    if "message" in converted and isinstance(code, str):
        attributes = dict(converted.get("attributes") or {})
        attributes.setdefault("ytsched_code", code)
        converted["code"] = yt_code(code)
        converted["attributes"] = attributes
        converted.setdefault("inner_errors", [])
    return converted
