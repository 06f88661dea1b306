"""`parse_json_bytes` reads a file in Rust (jiter) and, where that refuses it, as Python's json does: either way
the value and the refusal are json's, with its duplicate-key and depth checks."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsr_core.formats.reading import FormatError, decode_text, load_json, parse_json_bytes, too_many_values


def _slow(data: bytes):
    """What the reading gave before the Rust parser: json's value, or a refusal (json's own errors are put in
    words by `parse_json_bytes`; the checks of this module in the same words as before)."""
    try:
        return "ok", load_json(decode_text(data, "JSON"))
    except FormatError as exc:
        return "refused", str(exc)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return "refused", None


def _fast(data: bytes):
    try:
        return "ok", parse_json_bytes(data)
    except FormatError as exc:
        return "refused", str(exc)


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "refused":
        return b[1] is None or a[1] == b[1]
    return repr(a[1]) == repr(b[1])  # NaN, -0.0 and int vs float told apart


EDGES = [
    b'"\\ud800"',  # a lone surrogate: jiter refuses it, json reads it
    b'{"a": "\\udfff tail"}',
    b"[" * 70 + b"]" * 70,  # deeper than the limit, and than jiter goes
    b"[" * 300 + b"]" * 300,
    b'{"a": {"b": 1, "b": 2}}',  # duplicate keys, found where they are
    b'{"\\u0061": 1, "a": 2}',
    b'[{"k": 0}, {"k": 1, "k": 1}]',
    b'{"a": "x\x01y"}',  # raw control character: not JSON
    b'{"a": "tab\there"}',
    b"[1" + b"0" * 5000 + b"]",  # beyond the digits Python converts
    b"[1" + b"0" * 300 + b"]",
    b"[1.0e999, -1e400, NaN, Infinity, -Infinity, -0, -0.0, 1E5, 2.2250738585072011e-308]",
    b"\xef\xbb\xbf{}",  # a byte order mark
    b'{"a": "\xff"}',  # not UTF-8
    b'"\xed\xa0\x80"',  # a surrogate written in UTF-8, an overlong form, a code point beyond U+10FFFF
    b'"\xc0\xaf"',
    b'"\xf4\x90\x80\x80"',
    b'{"a": 1}\x00',
    b"",
    b"   \n",
    b"[1] x",
    b"[1,]",
    b'{"a": 1,}',
    b"[01]",
    b'{"a": true, "b": false, "c": null, "d": "\\u0000", "e": "\x7f"}',
    b'{"ok": "\\ud83d\\ude00", "n": 123456789012345678901234567890}',
]


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_edges_read_as_json_reads_them(data):
    assert _same(_fast(data), _slow(data)), (_fast(data), _slow(data))


def test_a_lone_surrogate_is_read_not_refused():
    # The one value jiter refuses that json reads: the fallback must give json's value.
    assert parse_json_bytes(b'["\\ud800"]') == ["\ud800"]


def test_duplicate_keys_and_depth_are_refused_naming_where():
    with pytest.raises(FormatError, match=r'^steps\[1\]\.extra: key "k" appears twice'):
        parse_json_bytes(b'{"steps": [{}, {"extra": {"k": 1, "k": 2}}]}')
    with pytest.raises(FormatError, match="nested more than 64 levels deep"):
        parse_json_bytes(b"[" * 70 + b"]" * 70)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from([None, 2]), st.booleans())
def test_any_document_reads_as_json_reads_it(value, indent, ascii_only):
    data = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    fast, slow = _fast(data), _slow(data)
    assert _same(fast, slow), (data[:200], fast, slow)
    if fast[0] == "ok" and isinstance(value, float) and not math.isinf(value):
        assert fast[1] == value


def _string_end(data: bytes, start: int) -> int | None:
    """Where the JSON string opened by the quote at `start` ends (past its closing quote); None when no string
    starts there (no closing quote, or a backslash before a line end or at the end)."""
    at = start + 1
    while at < len(data):
        if data[at] == ord('"'):
            return at + 1
        if data[at] == ord("\\"):
            if at + 1 >= len(data) or data[at + 1] == ord("\n"):
                return None
            at += 2
        else:
            at += 1
    return None


def _values_outside_strings(data: bytes) -> int:
    """The definition: commas, braces and brackets of the text outside its strings, counted one by one."""
    count = at = 0
    while at < len(data):
        end = _string_end(data, at) if data[at] == ord('"') else None
        if end is not None:
            at = end
            continue
        count += data[at] in b",{["
        at += 1
    return count


_TEXTS = st.one_of(
    st.builds(lambda v: json.dumps(v, separators=(",", ":")).encode(), JSON),
    st.builds(lambda v: json.dumps(v, indent=2).encode(), JSON),
    st.binary(max_size=40),  # the bound is checked before the text is parsed: any bytes at all
    st.lists(st.sampled_from([b",", b"{", b"[", b'"', b"\\", b"]", b"a"]), max_size=40).map(b"".join),
)


@settings(max_examples=500, deadline=None)
@given(_TEXTS, st.integers(0, 6))
def test_too_many_values_counts_what_is_outside_strings_at_any_limit(data, slack):
    """The bound on values per file against its definition, at limits around the file's size and its count
    (a text no longer than the limit is taken without counting)."""
    count = _values_outside_strings(data)
    for limit in {count - 1, count, len(data) - slack, len(data), len(data) + 1}:
        if limit >= 0:
            assert too_many_values(data, limit) == (count > limit), (limit, count, len(data))
