"""Tokens of command text for the answer-transfer check, and which of them are trivial.

A command's text is cut three ways so that a value is found however it is embedded: chunks (split on
whitespace, quotes and shell operators: `DB_URL=sqlite:///app.db`, `s/x/ZR-8841-QX/`), parts (chunks split on
`/ = , : @ …`: `ZR-8841-QX`, `8841`) and words (runs of letters and digits: `8841`). Every cut is checked; a
token is evidence-worthy only when it is not trivial (see transfer_trivial_tokens_v1.json).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from rsr_core import prompts

TRIVIAL_FILE = "transfer_trivial_tokens_v1.json"

_CHUNK_SPLIT = re.compile(r"[\s'\"`;|&<>(){}\[\]\\]+")
_PART_SPLIT = re.compile(r"[/=,:@?#%+*!^~$]+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_FLAG = re.compile(r"^--?[A-Za-z][\w-]*$")
_STRIP = ".,:;!?-_'\"$=+*#%@^~/"
_LIST_KEYS = ("shell", "commands", "python", "sql", "awk_sed", "words")


@dataclass(frozen=True)
class Trivial:
    """The trivial-token vocabulary (lower-cased) and the scratch path prefixes."""

    words: frozenset[str]
    scratch_prefixes: tuple[str, ...]


@cache
def trivial() -> Trivial:
    """The vocabulary of the versioned data file (read once, on first use)."""
    data = prompts.load_json(TRIVIAL_FILE)
    words = frozenset(w.lower() for key in _LIST_KEYS for w in data.get(key, []))
    return Trivial(words, tuple(data.get("scratch_prefixes", [])))


def _trivial_word(word: str, vocab: Trivial) -> bool:
    return word.lower() in vocab.words or (len(word) == 1 and word.islower())


def is_trivial(token: str, min_len: int) -> bool:
    """Whether a token can never be evidence: too short, a flag, listed, punctuation only, a scratch path, or
    made only of listed words and single lower-case letters (`line.strip`, `s/int/float/`: code, not data)."""
    if len(token) < min_len or not any(c.isalnum() for c in token):
        return True
    vocab = trivial()
    if token.lower() in vocab.words or _FLAG.match(token) or token.startswith(vocab.scratch_prefixes):
        return True
    return all(_trivial_word(w, vocab) for w in _WORD.findall(token))


def _clean(token: str) -> str:
    # A leading slash stays: /srv/data is a path, and paths are compared whole.
    return (
        token.lstrip(_STRIP.replace("/", "")).rstrip(_STRIP) if token.startswith("/") else token.strip(_STRIP)
    )


def tokens(text: str, min_len: int) -> set[str]:
    """Every non-trivial chunk, part and word of `text` (original case)."""
    vocab = trivial()
    out: set[str] = set()
    for chunk in _CHUNK_SPLIT.split(text):
        if not chunk or chunk.lower() in vocab.words:
            continue  # a listed name is trivial down to its pieces (sqlite_master is not 'master')
        name, eq, value = chunk.partition("=")
        if eq and _FLAG.match(name):
            chunk = value  # --port=8080: the option's name is how, its value may be what
        if _FLAG.match(chunk) or chunk.startswith(vocab.scratch_prefixes):
            # An option's name or a scratch file's name is how, not what; only digits in it could be a value.
            out.update(w for w in _WORD.findall(chunk) if any(c.isdigit() for c in w) and len(w) >= min_len)
            continue
        candidates = {_clean(chunk)}
        for part in _PART_SPLIT.split(chunk):
            part = _clean(part)
            if part.lower() in vocab.words:
                continue
            candidates.add(part)
            candidates.update(_clean(p) for p in part.split("."))  # ZR-8841-QX.bak
            candidates.update(_WORD.findall(part))
        out.update(c for c in candidates if not is_trivial(c, min_len))
    return out


def has_word(text_lower: str, token_lower: str) -> bool:
    """`token` occurs in `text` not glued to letters or digits on either side (both already lower-cased)."""
    if token_lower not in text_lower:
        return False
    pattern = rf"(?<![a-z0-9]){re.escape(token_lower)}(?![a-z0-9])"
    return re.search(pattern, text_lower) is not None
