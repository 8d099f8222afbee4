"""Reading snapshot files: YSON or JSON, chosen by extension or sniffed from the content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ytsched.errors import SnapshotError


def read_document(path: str | Path) -> Any:
    """Parse a ``.yson`` or ``.json`` file (other names: JSON if it starts like JSON).

    Raises :class:`SnapshotError` naming the file and, for syntax errors, line and column.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise SnapshotError("UnreadableFile", f"{file}: cannot read: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SnapshotError(
            "InvalidEncoding", f"{file}: not UTF-8 text (byte {error.start})"
        ) from None
    return parse_text(text, source=str(file), kind=_kind(file, text))


def _kind(file: Path, text: str) -> str:
    suffix = file.suffix.lower()
    if suffix in (".yson", ".json"):
        return suffix[1:]
    stripped = text.lstrip()
    if stripped.startswith(('{"', "[{", "[\n", "[]", "{}")) and "=" not in stripped[:200]:
        return "json"
    return "yson"


def parse_text(text: str, *, source: str, kind: str) -> Any:
    if kind == "json":
        try:
            return json.loads(text, parse_int=_bounded_int)
        except json.JSONDecodeError as error:
            raise SnapshotError(
                "SyntaxError",
                f"{source}: JSON syntax error at line {error.lineno}, column {error.colno}:"
                f" {error.msg}",
            ) from None
        except _TooManyDigits as error:
            raise SnapshotError("SyntaxError", f"{source}: {error}") from None
        except RecursionError:
            raise SnapshotError("SyntaxError", f"{source}: JSON nested too deeply") from None
    from ytsched import yson

    try:
        return yson.loads(text)
    except yson.YsonError as error:
        raise SnapshotError("SyntaxError", f"{source}: {error}") from None
    except RecursionError:
        raise SnapshotError("SyntaxError", f"{source}: YSON nested too deeply") from None


class _TooManyDigits(ValueError):
    pass


def _bounded_int(text: str) -> int:
    """JSON integers of at most 20 digits (uint64); longer ones are refused, not converted
    (``int()`` of a 5,000-digit literal raises past every handler)."""
    digits = len(text.lstrip("-"))
    if digits > 20:
        raise _TooManyDigits(f"an integer literal of {digits} digits is out of range (uint64)")
    return int(text)
