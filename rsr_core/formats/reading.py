"""Reading files with errors that say where and what was expected."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import cache
from types import ModuleType
from typing import Any, TypeVar

import jiter
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
PREVIEW_CHARS = 200
"""How much of an offending value an error message quotes."""
MAX_JSON_VALUES = 5_000_000
"""The most values (objects, arrays and the items in them) one JSON file may hold: parsed, each costs tens to
hundreds of bytes, so a file of small values costs many times its size in memory."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays one JSON file may have (the root is level 1; ATIF trajectories,
subagents included, nest fewer than 15): what is stored is read back, shown and written out again by code that
descends into it, and a value hundreds of levels deep exhausts Python's recursion there."""
MAX_EPOCH_SECONDS = 253_402_300_799
"""The last second of the year 9999: a larger number is no time in seconds (epoch milliseconds, say)."""
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,39}$")
_SHOWN_PARTS = 8


class FormatError(ValueError):
    """A file is not in the format it must be in; the message names the field or line and the expectation."""


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_text(data: bytes, what: str = "text") -> str:
    """UTF-8 text, or a FormatError naming the offending byte, its offset and line."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise FormatError(
            f"binary data (NUL byte at offset {nul}, line {_line_of(data, nul)}); expected UTF-8 {what}"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {_line_of(data, exc.start)}); "
            f"expected UTF-8 {what}"
        ) from None


def _structure(data: bytes, start: int, end: int) -> int:
    return data.count(b",", start, end) + data.count(b"{", start, end) + data.count(b"[", start, end)


def too_many_values(data: bytes, limit: int = MAX_JSON_VALUES) -> bool:
    """Does a JSON text hold more than `limit` values (objects, arrays and their items: its commas, braces
    and brackets outside strings)? Counting stops at the limit; no copy of the text is made."""
    if len(data) <= limit:  # each of them is a byte: no more bytes, no more of them (nearly every file)
        return False
    if _structure(data, 0, len(data)) <= limit:
        return False  # strings included, and still few enough
    count = pos = 0
    for match in _JSON_STRING.finditer(data):
        count += _structure(data, pos, match.start())
        if count > limit:
            return True
        pos = match.end()
    return count + _structure(data, pos, len(data)) > limit


def parse_json_bytes(data: bytes, what: str = "JSON", strict: bool = True) -> Any:
    """Parse JSON from bytes; errors name the line and column. A file of more than `MAX_JSON_VALUES` values is
    refused before it is parsed; one that names a key twice in an object or nests deeper than `MAX_JSON_DEPTH`
    is refused naming where (see `load_json`), unless not `strict` (a look at a file that is read for its
    content later, strictly)."""
    many = too_many_values(data)
    if strict and not many:
        try:
            value = jiter.from_json(data, catch_duplicate_keys=True)
        except ValueError:
            pass  # the reading below finds what is wrong, and says it in its own words
        else:
            return _within_depth(value)
    text = decode_text(data, what)
    if not text.strip():
        raise FormatError(f"empty file; expected {what}")
    if many:
        raise FormatError(
            f"{what} holds more than {MAX_JSON_VALUES:,} values (objects, arrays and their items), the limit "
            "for one file; not read"
        )
    try:
        return load_json(text) if strict else json.loads(text)
    except FormatError:
        raise
    except json.JSONDecodeError as exc:
        hint = " (the file ends early: truncated?)" if exc.pos >= len(text.rstrip()) else ""
        raise FormatError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise FormatError(f"invalid JSON: {str(exc)[:PREVIEW_CHARS]}") from None
    except RecursionError:  # deeper than the parser goes: far beyond the limit
        raise FormatError(f"{what}: {DEPTH_LIMIT_TEXT}") from None


class _DuplicateKey(Exception):
    """An object named a key twice; where is found afterwards (the parser's hook does not know)."""


class _Pairs(list):
    """An object as its (key, value) pairs, repeats kept: only to locate a duplicate key."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


def load_json(text: str) -> Any:
    """`json.loads`, refusing (FormatError naming the path) an object that names a key twice, which json would
    silently resolve to the last value (a reward of 0.0 then 1.0 read as 1.0), and nesting deeper than
    `MAX_JSON_DEPTH`. json's own errors (JSONDecodeError, ValueError, RecursionError) pass through."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey:
        raise FormatError(_duplicate_message(json.loads(text, object_pairs_hook=_Pairs))) from None
    return _within_depth(value)


def _within_depth(value: Any) -> Any:
    """`value`, or a FormatError naming where it nests deeper than `MAX_JSON_DEPTH`."""
    if too_deep(value):
        raise FormatError(_depth_message(value))
    return value


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH, native: bool = True) -> bool:
    """Does a parsed JSON value nest objects and arrays more than `limit` levels deep (the root is level 1)?

    Every value is visited once. The walk here goes level by level, not recursively, so any depth is measured;
    where the package was built with it, limits up to `_NATIVE_DEPTH_MAX` are walked in C instead
    (`rsr_core/formats/_depth.c`, one call deeper per level; not with `native` False)."""
    if native and limit <= _NATIVE_DEPTH_MAX and (fast := _native_depth()) is not None:
        return bool(fast.too_deep(value, limit))
    if value.__class__ is not dict and value.__class__ is not list:
        return False
    level = [value]
    for depth in range(1, limit + 1):
        below: list[Any] = []
        for item in level:
            for child in item.values() if item.__class__ is dict else item:
                if child.__class__ is dict or child.__class__ is list:
                    below.append(child)
        if not below:
            return False
        if depth == limit:
            return True
        level = below
    return False  # limit < 1: nothing is measured


_NATIVE_DEPTH_MAX = 1_000
"""The deepest limit the C walk is given: it goes one call deeper per level."""


@cache
def _native_depth() -> ModuleType | None:
    """The C build of `too_deep`; None where the package was installed without it (no C compiler)."""
    try:
        from rsr_core.formats import _depth  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _depth


def _children(value: Any) -> list[tuple[str | int, Any]]:
    if type(value) is _Pairs:
        return list(value)
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def _first(value: Any, found: Any) -> tuple[tuple[str | int, ...], Any] | None:
    """(path, value) of the first container in document order for which `found(container, depth)` holds."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if found(item, len(path) + 1):
            return path, item
        stack.extend(
            ((*path, key), child)
            for key, child in reversed(_children(item))
            if isinstance(child, dict | list)
        )
    return None


def json_path(path: tuple[str | int, ...]) -> str:
    """`steps[3].extra.rsr` for a path of keys and indexes ("root" for the empty path); a long path is cut in
    the middle and odd or long keys are quoted and cut, so that a hostile file cannot flood a message."""
    if not path:
        return "root"
    parts = [_path_part(part, i == 0) for i, part in enumerate(path)]
    if len(parts) > _SHOWN_PARTS:
        parts = [*parts[: _SHOWN_PARTS - 2], ".…", parts[-1]]
    return "".join(parts)


def _path_part(part: str | int, first: bool) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    if _SIMPLE_KEY.match(part):
        return part if first else f".{part}"
    cut = part[:40] + ("…" if len(part) > 40 else "")
    return f"[{json.dumps(cut, ensure_ascii=False)}]"


def _duplicate_message(pairs_doc: Any) -> str:
    def repeats(item: Any, _depth: int) -> bool:
        return type(item) is _Pairs and len({k for k, _ in item}) != len(item)

    hit = _first(pairs_doc, repeats)
    if hit is None:  # not reached: the hook saw a repeat
        return "an object names a key twice; not read"
    path, pairs = hit
    seen: set[str] = set()
    key = ""
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    return (
        f"{json_path(path)}: key {json.dumps(key[:PREVIEW_CHARS], ensure_ascii=False)} appears twice in one "
        "object (which value is meant is ambiguous); not read"
    )


DEPTH_LIMIT_TEXT = (
    f"objects and arrays nested more than {MAX_JSON_DEPTH} levels deep, the limit for one file; not read"
)


def _depth_message(value: Any) -> str:
    hit = _first(value, lambda _item, depth: depth > MAX_JSON_DEPTH)
    return f"{json_path(hit[0]) if hit else 'root'}: {DEPTH_LIMIT_TEXT}"


def timestamp_text(value: Any, where: str) -> str | None:
    """A stored timestamp: a string as written (ISO 8601 expected; others are kept, and read as no time),
    a number as epoch seconds converted to ISO 8601 UTC, null as None; anything else a FormatError."""
    if value is None or isinstance(value, str):
        return value
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MAX_EPOCH_SECONDS
    ):
        return datetime.fromtimestamp(value, UTC).isoformat()
    raise FormatError(
        f"{where}: expected an ISO 8601 time string, epoch seconds (0 to {MAX_EPOCH_SECONDS}) or null, "
        f"got {preview(value)}"
    )


def sha256(*parts: bytes | str) -> str:
    """Hex SHA-256 over the parts, length-prefixed so boundaries matter."""
    h = hashlib.sha256()
    for part in parts:
        raw = part.encode() if isinstance(part, str) else part
        h.update(len(raw).to_bytes(8, "little"))
        h.update(raw)
    return h.hexdigest()


def expect(cond: bool, where: str, expected: str, got: Any = None) -> None:
    """Raise a FormatError 'where: expected …, got …' unless cond holds."""
    if not cond:
        raise FormatError(f"{where}: expected {expected}, got {preview(got)}")


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """JSON-like text of `value` cut at about `limit` characters.

    Its cost is bounded by `limit`, not by the value: a YAML alias bomb is a small document whose value,
    written out in full, is billions of characters long.
    """
    out: list[str] = []
    used = 0
    for piece in _pieces(value, limit):
        out.append(piece)
        used += len(piece)
        if used > limit:
            return "".join(out)[: max(limit - 3, 0)] + "..."
    return "".join(out)


def _pieces(value: Any, limit: int) -> Iterator[str]:
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield (", " if i else "") + json.dumps(str(key)[: limit + 1]) + ": "
            yield from _pieces(item, limit)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ", "
            yield from _pieces(item, limit)
        yield "]"
    elif isinstance(value, str):
        yield json.dumps(value[: limit + 1])
    elif value is None or isinstance(value, bool | float):
        yield json.dumps(value)
    elif isinstance(value, int):
        # str() of an int beyond Python's digit limit raises; its size says enough.
        yield str(value) if value.bit_length() < 4000 else f"<an integer of {value.bit_length()} bits>"
    else:
        yield json.dumps(str(value)[: limit + 1])


_set_attribute = object.__setattr__
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """`cls.model_construct(**values)` (no validation) without its per-field bookkeeping.

    Parsing builds a model per step and per command, already checked field by field; when `values` names
    exactly the model's fields this is the same object at a fraction of the cost (cheapest when they come
    in field order), else it defers to `model_construct`.
    """
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(cls.__pydantic_fields__)
    if len(values) != len(names) or cls.__pydantic_post_init__:
        return cls.model_construct(**values)
    if tuple(values) != names:
        if values.keys() != set(names):
            return cls.model_construct(**values)
        values = {name: values[name] for name in names}
    obj = cls.__new__(cls)
    _set_attribute(obj, "__dict__", values)
    _set_attribute(obj, "__pydantic_fields_set__", set(names))
    _set_attribute(obj, "__pydantic_extra__", None)
    _set_attribute(obj, "__pydantic_private__", None)
    return obj
