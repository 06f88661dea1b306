"""Reading files with errors that say where and what was expected."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
PREVIEW_CHARS = 200
"""How much of an offending value an error message quotes."""
MAX_JSON_VALUES = 5_000_000
"""The most values (objects, arrays and the items in them) one JSON file may hold: parsed, each costs tens to
hundreds of bytes, so a file of small values costs many times its size (an array of 80 million empty arrays, a
240 MB file, took 8.8 GB)."""
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


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
    if _structure(data, 0, len(data)) <= limit:
        return False  # strings included, and still few enough
    count = pos = 0
    for match in _JSON_STRING.finditer(data):
        count += _structure(data, pos, match.start())
        if count > limit:
            return True
        pos = match.end()
    return count + _structure(data, pos, len(data)) > limit


def parse_json_bytes(data: bytes, what: str = "JSON") -> Any:
    """Parse JSON from bytes; errors name the line and column. A file of more than `MAX_JSON_VALUES` values is
    refused before it is parsed."""
    text = decode_text(data, what)
    if not text.strip():
        raise FormatError(f"empty file; expected {what}")
    if too_many_values(data):
        raise FormatError(
            f"{what} holds more than {MAX_JSON_VALUES:,} values (objects, arrays and their items), the limit "
            "for one file; not read"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (the file ends early: truncated?)" if exc.pos >= len(text.rstrip()) else ""
        raise FormatError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise FormatError(f"invalid JSON: {str(exc)[:PREVIEW_CHARS]}") from None
    except RecursionError:
        raise FormatError(f"{what} nested too deeply") from None


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
