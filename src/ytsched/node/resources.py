"""``--resources cpu=8,memory=16G,user_slots=8,gpu=0`` and ``--tags ssd,rack1``.

Sizes take binary suffixes (``K``, ``M``, ``G``, ``T``, also ``Ki``/``KiB`` ...), as memory is
counted in bytes; cpu may be fractional.  Names are the scheduler's resources (``user_memory``
is accepted for ``memory``).  Missing ``user_slots`` defaults to the cpu count rounded down
(at least 1), so a node declared by cores alone still runs jobs.
"""

from __future__ import annotations

import re

from ytsched.errors import YtschedError
from ytsched.resources import ResourceError, canonical_resource_name

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)(?:i?B?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}


class NodeConfigError(YtschedError):
    """A bad ``--resources`` or ``--tags`` value."""


def parse_amount(name: str, text: str) -> float:
    match = _SIZE.match(text)
    if match is None:
        raise NodeConfigError(
            "InvalidResources", f"resource {name}: cannot parse amount {text!r} (e.g. 8, 16G)"
        )
    value = float(match.group(1)) * _UNITS[match.group(2).upper()]
    if name != "cpu" and value != int(value):
        raise NodeConfigError("InvalidResources", f"resource {name} must be a whole number")
    return value


def parse_resources(text: str) -> dict[str, float]:
    result: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise NodeConfigError(
                "InvalidResources", f"--resources item {item!r}: expected NAME=AMOUNT"
            )
        try:
            name = canonical_resource_name(key.strip())
        except ResourceError as error:
            raise NodeConfigError("InvalidResources", str(error)) from None
        result[name] = parse_amount(name, value)
    if "user_slots" not in result:
        result["user_slots"] = float(max(1, int(result.get("cpu", 1))))
    return result


def parse_tags(text: str) -> list[str]:
    tags = [tag.strip() for tag in text.split(",") if tag.strip()]
    for tag in tags:
        if re.fullmatch(r"[-_.:a-zA-Z0-9]+", tag) is None:
            raise NodeConfigError("InvalidTags", f"tag {tag!r}: use letters, digits and - _ . :")
    return sorted(set(tags))
