"""Reading files with errors that say where and what was expected."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


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


def read_text(path: Path, what: str = "text") -> str:
    """Read a text file strictly as UTF-8."""
    return decode_text(path.read_bytes(), what)


def parse_json_bytes(data: bytes, what: str = "JSON") -> Any:
    """Parse JSON from bytes; errors name the line and column."""
    text = decode_text(data, what)
    if not text.strip():
        raise FormatError(f"empty file; expected {what}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (the file ends early: truncated?)" if exc.pos >= len(text.rstrip()) else ""
        raise FormatError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}") from None


def read_json(path: Path, what: str = "JSON") -> tuple[Any, bytes]:
    """Parse a JSON file; returns the value and the raw bytes (for content hashing)."""
    data = path.read_bytes()
    return parse_json_bytes(data, what), data


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
        shown = json.dumps(got, default=str)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        raise FormatError(f"{where}: expected {expected}, got {shown}")


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
