"""Which file the dynamic loader gives for each library name: glibc's loader cache, read without its tools.

glibc's loader looks a library name (`libz.so.1`) up in /etc/ld.so.cache before it searches any directory, and
`ldconfig` rebuilds that cache from the library directories, naming each library by the SONAME inside the file
(whatever the file is called). So a library the agent adds under a name the image already resolves takes that
name over as soon as anything runs `ldconfig`: the agent itself, or a package install in the tests' own
`test.sh`. The verifier compares the image's cache with the agent's cache and with a cache rebuilt from the
agent's filesystem (loader_check.py); a name that resolves to another file than in the image is ground.

The format (glibc 2.32 and later write only the new one; an older file may hold the old format first):
the magic `glibc-ld.so.cache1.1`, the entry count and the string table's size, then 24-byte entries (flags,
key offset, value offset, OS version, hwcap) whose offsets count from the magic.
"""

from __future__ import annotations

import struct

MAGIC = b"glibc-ld.so.cache1.1"
HEADER = struct.Struct("<20sII")
ENTRY = struct.Struct("<iIIIQ")
ENTRIES_AT = 48
MAX_CACHE_BYTES = 16 * 1024 * 1024


class CacheFormatError(ValueError):
    """The bytes are not a loader cache this module can read."""


def _string(data: bytes, start: int, offset: int) -> str:
    at = start + offset
    end = data.find(b"\0", at)
    if at >= len(data) or end < 0:
        raise CacheFormatError(f"a string offset ({offset}) points outside the cache")
    return data[at:end].decode("utf-8", errors="surrogateescape")


def parse_cache(data: bytes) -> dict[str, frozenset[str]]:
    """Each library name of the cache and the files it resolves to (one per ABI or hardware variant).
    Raises CacheFormatError on anything else."""
    start = data.find(MAGIC)
    if start < 0:
        raise CacheFormatError("no glibc-ld.so.cache1.1 header")
    if len(data) - start < ENTRIES_AT:
        raise CacheFormatError("the header is cut short")
    _, count, _ = HEADER.unpack_from(data, start)
    if ENTRIES_AT + count * ENTRY.size > len(data) - start:
        raise CacheFormatError(f"{count} entries do not fit in {len(data) - start} bytes")
    names: dict[str, set[str]] = {}
    for i in range(count):
        _, key, value, _, _ = ENTRY.unpack_from(data, start + ENTRIES_AT + i * ENTRY.size)
        names.setdefault(_string(data, start, key), set()).add(_string(data, start, value))
    return {name: frozenset(paths) for name, paths in names.items()}


def taken_over(image: dict[str, frozenset[str]], now: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """The image's library names that now resolve to a file the image's cache did not give them, with those
    files. A name the image did not know is not listed: nothing of the image asks for it."""
    return {
        name: sorted(now[name] - paths)
        for name, paths in sorted(image.items())
        if now.get(name, paths) - paths
    }
