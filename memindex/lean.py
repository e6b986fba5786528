"""sqlite3 and JSON for the prompt hook, without the standard library's Python layers.

The hook's budget is the start of an interpreter that imports `sqlite3` and `json`. The
`json` package imports `re` (and through it enum, functools, collections) and `sqlite3`
imports `datetime`, a large share of that start (docs/benchmarks.md), for parts memindex
never uses (regex fallbacks of the C scanner, date adapters). Their C modules do the same work,
so the hook's modules take them from here; where a C module is missing (another Python
implementation) the packages are used instead. `tests/test_lean.py` checks both paths
against `json` itself.
"""

from __future__ import annotations

__all__ = ["dumps", "loads", "sqlite3"]

try:
    import _sqlite3 as sqlite3  # the classes, connect and exceptions of `sqlite3` itself
except ImportError:  # pragma: no cover - CPython always has it where sqlite3 works
    import sqlite3  # type: ignore[no-redef]

try:
    import _json
except ImportError:  # pragma: no cover
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"  # JSON's own whitespace: what json.loads skips around a document
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Options:
    """What the C scanner reads from a `json.JSONDecoder`, with json.loads' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = _json.make_scanner(_Options()) if _json is not None else None
_encode = (
    _json.make_encoder(None, None, _json.encode_basestring_ascii, None, ":", ",", False, False, True)
    if _json is not None
    else None
)


def loads(data: str | bytes | bytearray) -> object:
    """`json.loads`, same results and ValueError (JSONDecodeError) on bad input."""
    if _scan is None:
        return _full_json().loads(data)
    if not isinstance(data, str):
        data = bytes(data)
        if 0 in data[:4]:  # json reads this as UTF-16 or UTF-32
            return _full_json().loads(data)
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:  # UTF-16/32 or lone surrogates: json's own detection
            return _full_json().loads(data)
        if data.startswith("\ufeff"):
            return _full_json().loads(data.encode("utf-8"))  # json skips a BOM in bytes only
    start = len(data) - len(data.lstrip(_WHITESPACE))
    try:
        value, end = _scan(data, start)
    except RecursionError:
        raise
    except Exception:  # noqa: BLE001
        # Bad input: json itself raises the error it would have. (The scanner raises
        # StopIteration for no value, and, in 3.11, SystemError for other errors when
        # `json.decoder` is not loaded: it looks its JSONDecodeError up, not imports it.)
        return _full_json().loads(data)
    if data[end:].strip(_WHITESPACE):
        return _full_json().loads(data)  # raises its "Extra data" error
    return value


def dumps(value: object) -> str:
    """`json.dumps(value, separators=(",", ":"))`: compact, ASCII, for SQL parameters."""
    if _encode is None:
        return _full_json().dumps(value, separators=(",", ":"))
    return "".join(_encode(value, 0))


def _full_json():
    import json  # error messages and rare encodings: the hook's usual path never gets here

    return json
