"""Deterministic decodings of text, so a value is recognised in the forms a sandbox can turn back into it:
backslash escapes (`\\x5a`, octal, `\\u`), base64 / base32 and hex (`5a52…`, `5a:52`, `0x5a52`), a gzip, zlib,
bzip2 or xz stream they hold inflated, URL escapes, and rot13. Decoding is a pure function of the text; nothing
is executed."""

from __future__ import annotations

import base64
import binascii
import bz2
import codecs
import lzma
import re
import urllib.parse
import zlib

_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|0[0-7]{1,3}|[0-7]{1,3}|[abefnrtv\\'\"])"
)
# C, awk, perl, printf's format and $'…' read at most three octal digits (`\0641` is `4` then `1`); echo -e and
# printf %b read a leading 0 and three more.
_ESCAPE_C = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|[abefnrtv\\'\"])")
_GZIP_MAGIC = b"\x1f\x8b"
MAX_INFLATED = 1 << 20  # a gzip stream is followed this far (no bombs)
_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
}
_B64 = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_B32 = re.compile(r"[A-Z2-7]{8,}={0,6}")
_HEX_RUN = re.compile(r"(?:0x)?((?:[0-9A-Fa-f]{2}){4,})")
_HEX_SPACED = re.compile(r"(?:(?:0x)?[0-9A-Fa-f]{2}[\s:,-]+){3,}(?:0x)?[0-9A-Fa-f]{2}")
_URL = re.compile(r"%[0-9A-Fa-f]{2}")
MAX_DECODE = 20_000  # longest text decoded (longer encoded blobs are archives, not values)


def _escape_char(body: str) -> str:
    kind = body[0]
    if kind == "x":
        return chr(int(body[1:], 16))
    if kind in "uU":
        code = int(body[1:], 16)
        return chr(code) if code <= 0x10FFFF else ""
    if kind.isdigit():
        return chr(int(body, 8) & 0xFF)
    return _SIMPLE[kind]


def unescape(text: str, c_octal: bool = False) -> str:
    """Backslash escapes as `echo -e` and printf %b read them (`\\0nnn`), or with `c_octal` as C, awk, perl,
    Python, printf's format and `$'…'` do (at most three octal digits)."""
    if "\\" not in text:
        return text
    return (_ESCAPE_C if c_octal else _ESCAPE).sub(lambda m: _escape_char(m.group(1)), text)


def inflate(raw: bytes) -> bytes:
    """A gzip, zlib, bzip2 or xz stream decompressed (at most MAX_INFLATED bytes), or the bytes as they are."""
    try:
        if raw.startswith(_GZIP_MAGIC):
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, MAX_INFLATED)
        if len(raw) > 2 and raw[0] == 0x78 and (raw[0] * 256 + raw[1]) % 31 == 0:
            return zlib.decompressobj().decompress(raw, MAX_INFLATED)
        if raw.startswith(b"BZh"):
            return bz2.BZ2Decompressor().decompress(raw, MAX_INFLATED)
        if raw.startswith(b"\xfd7zXZ\x00"):
            return lzma.LZMADecompressor().decompress(raw, MAX_INFLATED)
    except (zlib.error, OSError, EOFError, lzma.LZMAError):
        return raw
    return raw


def _printable(raw: bytes) -> str | None:
    raw = inflate(raw)  # gzip, then base64: the same value
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.strip()
    if len(stripped) < 3 or not all(c.isprintable() or c in "\n\t\r" for c in text):
        return None
    return text


def _b64(candidate: str) -> str | None:
    body = candidate.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _b32(candidate: str) -> str | None:
    body = candidate.rstrip("=")
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _hex(candidate: str) -> str | None:
    digits = re.sub(r"0x|[\s:,-]", "", candidate)
    if len(digits) % 2:
        return None
    try:
        return _printable(bytes.fromhex(digits))
    except ValueError:
        return None


def decodings(text: str) -> list[tuple[str, str]]:
    """(how, decoded text) for every decodable piece of `text`: escapes, base64, base32, hex, URL escapes."""
    if len(text) > MAX_DECODE * 50:
        return []
    out: list[tuple[str, str]] = []
    plain = unescape(text)
    if plain != text:
        out.append(("decoded escapes", plain))
    c_style = unescape(text, c_octal=True)
    if c_style not in (text, plain):
        out.append(("decoded escapes", c_style))
    for source in {text, plain}:
        for m in _B64.finditer(source):
            if len(m.group()) <= MAX_DECODE and (got := _b64(m.group())):
                out.append(("decoded base64", got))
        for m in _B32.finditer(source):
            if len(m.group()) <= MAX_DECODE and (got := _b32(m.group())):
                out.append(("decoded base32", got))
        for m in [*_HEX_RUN.finditer(source), *_HEX_SPACED.finditer(source)]:
            if len(m.group()) <= MAX_DECODE and (got := _hex(m.group())):
                out.append(("decoded hex", got))
        if _URL.search(source):
            out.append(("decoded URL escapes", urllib.parse.unquote(source)))
    return out


def deep_decodings(text: str, depth: int = 2) -> list[tuple[str, str]]:
    """Decodings, and decodings of those (base64 of hex, escapes inside base64, …), `depth` levels deep."""
    found = decodings(text)
    frontier = found
    for _ in range(depth - 1):
        frontier = [(how, got) for _, text_ in frontier for how, got in decodings(text_)]
        found += frontier
    return found


def rot13(text: str) -> str:
    """rot13, as `tr 'A-Za-z' 'N-ZA-Mn-za-m'` and codecs compute it."""
    return codecs.encode(text, "rot13")
