"""Text YSON (YTsaurus's JSON-like format): a strict, fast, pure-Python codec.

Why our own codec: the scheduler consumes YTsaurus snapshots and pool configs
written in YSON, and we want (a) no dependency on the YTsaurus client or a C
extension, (b) exact error locations for hand-edited files, and (c) a parser
fast enough for megabyte-sized production dumps.  Only the text form is
supported; binary YSON is not.

API (mirrors ``json``)::

    loads(data) / load(fp)          -> Python value
    dumps(value, pretty=..., indent=...) / dump(value, fp, ...)

Type mapping: map <-> ``dict`` (``str`` keys), list <-> ``list`` (tuples are
written as lists), string <-> ``str``, int64 <-> ``int``, uint64 <->
`YsonUint`, double <-> ``float`` (including ``%nan``/``%inf``/``%-inf``),
``%true``/``%false`` <-> ``bool``, entity ``#`` <-> ``None``, and a value with
attributes ``<a = 1> value`` <-> `WithAttributes`.  Syntax errors raise
`YsonError` (a ``ValueError``) carrying ``line``, ``column`` and ``offset``.
"""

from .errors import YsonError
from .parser import load, loads
from .values import WithAttributes, YsonUint, strip_attributes
from .writer import dump, dumps

__all__ = [
    "WithAttributes",
    "YsonError",
    "YsonUint",
    "dump",
    "dumps",
    "load",
    "loads",
    "strip_attributes",
]
