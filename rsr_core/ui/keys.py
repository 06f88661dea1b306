"""Widget and component keys for values that come from a corpus or a URL (trajectory, job and block ids).

Streamlit reserves `__` inside a component's key (it joins a key and an event name with it), and a key is kept
in the session's state: an id of any characters and any length must not reach one as it is. Every such key is
a fixed prefix and a digest of the values, the same for the same values in every run."""

from __future__ import annotations

import hashlib


def widget_key(prefix: str, *values: object) -> str:
    """The key `<prefix>-<digest of values>`; `prefix` is the program's own name for the widget (letters, digits
    and single underscores)."""
    joined = "\x1f".join(str(v) for v in values)
    digest = hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{prefix}-{digest}"
