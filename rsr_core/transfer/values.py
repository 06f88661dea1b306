"""The values typed shell text uses, in every form the answer-transfer check compares: as the shell reads it,
as its Python programs spell it, as its echo/printf output and written files hold it, as joined string
literals, decoded (escapes, base64, base32, hex, URL escapes), reversed, and rot13 (when the text asks for it).

A run is read as one session, keystroke batch after batch, so that variables, files and half-typed lines
carry over; where the session is at a clean line end, its state is kept and only what follows is read again.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from rsr_core.transfer.decode import deep_decodings, rot13
from rsr_core.transfer.shellnorm import read_more
from rsr_core.transfer.shellrun import ShellView
from rsr_core.transfer.tokens import has_word, tokens

_ROT13_MARKERS = ("rot13", "rot_13", "n-za-m")
_SPACE = re.compile(r"\s+")
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff]")
_ERASED = re.compile("[^\n\x7f\b][\x7f\b]")
# String literals joined by juxtaposition or an operator, as awk ("a" "b"), perl ("a" . "b"), JavaScript or
# Python ("a" + "b") join them.
_JOINED = re.compile(r"""(["'])[ \t]*(?:[.+][ \t]*)?\1""")
_LITERAL = re.compile(r""""([^"'\n]*)"|'([^"'\n]*)'""")  # innermost literals: no quotes inside


@dataclass(frozen=True)
class View:
    """One reading of a text: how it was obtained ('' for the shell's own reading) and the text."""

    how: str
    text: str


def plain(text: str) -> str:
    """Unicode compatibility forms folded (fullwidth digits, ligatures), invisible characters removed and
    backspaces applied (what the terminal line holds)."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    while _ERASED.search(text):
        text = _ERASED.sub("", text)
    return text.replace("\x7f", "").replace("\b", "")


def _with_transforms(base: list[View], rot: bool) -> list[View]:
    views = list(base)
    for v in base:
        views += [View(v.how or how, got) for how, got in deep_decodings(v.text)]
    views += [View(f"{v.how}, reversed" if v.how else "reversed", v.text[::-1]) for v in list(views)]
    if rot:
        views += [View(f"{v.how}, rot13" if v.how else "rot13", rot13(v.text)) for v in list(views)]
    return views


@lru_cache(maxsize=50_000)
def _readings(item: str, how: str, rot: bool) -> tuple[View, ...]:
    return tuple(_with_transforms([View(how, item)], rot))


@lru_cache(maxsize=50_000)
def _item_tokens(item: str, how: str, min_len: int, rot: bool) -> tuple[tuple[str, str], ...]:
    return tuple((tok, v.how) for v in _readings(item, how, rot) for tok in tokens(v.text, min_len))


def _joined_literals(typed: str) -> list[str]:
    # Only literals that a join produced: a lone quoted program is code, read elsewhere.
    marked = _JOINED.sub("\0", typed.replace("\0", ""))
    return [(a or b).replace("\0", "") for a, b in _LITERAL.findall(marked) if "\0" in a + b]


@dataclass(frozen=True)
class Reading:
    """What a session's keystrokes so far spell out."""

    typed: str
    """The keystrokes as typed (Unicode look-alikes folded)."""
    items: tuple[tuple[str, tuple[str, ...]], ...]
    """(how, pieces of text) for the shell's reading, the output and files, Python data, joined literals."""
    rot: bool
    """The keystrokes ask for rot13."""

    def tokens(self, min_len: int) -> dict[str, tuple[str, str]]:
        """lower-cased token -> (token as found, how it was obtained), over every reading."""
        found: dict[str, tuple[str, str]] = {}
        for how, pieces in self.items:
            for piece in set(pieces):
                for tok, got in _item_tokens(piece, how, min_len, self.rot):
                    found.setdefault(tok.lower(), (tok, got))
        return found

    def label(self, token_lower: str, how: str) -> str:
        """How a token was spelled, for evidence: '' when it was typed as it is."""
        return "" if token_lower in self.typed.lower() else how or "assembled by the shell"

    def phrase_texts(self) -> list[str]:
        """Lower-cased texts, whitespace runs collapsed, in which multi-word values are searched."""
        out = [collapsed("\n".join(pieces)) for _, pieces in self.items]
        for how, pieces in self.items:
            out += [collapsed(v.text) for p in set(pieces) for v in _readings(p, how, self.rot)[1:]]
        return out


class Session:
    """Reads a run's keystrokes batch after batch."""

    def __init__(self) -> None:
        self.typed = ""
        self._clean_at = 0
        self._clean = ShellView()

    def add(self, keys: str) -> Reading:
        """Type `keys` and read the session so far."""
        self.typed = plain(self.typed + keys)  # a backspace may erase what an earlier batch typed
        view = self._clean.copy()
        try:
            if read_more(self.typed[self._clean_at :], view):
                self._clean_at, self._clean = len(self.typed), view.copy()
        except RecursionError:  # nesting deeper than any honest command: read it as plain text
            view = self._clean.copy()
            view.text.append(self.typed[self._clean_at :])
        through = ", ".join(sorted(view.notes))
        items = (
            ("", tuple(view.text)),
            # what each command printed, and the terminal as a whole (`echo -n a; echo b` shows `ab`)
            (
                f"output of {through}" if through else "",
                (*view.output, "".join(view.output), *view.files.values()),
            ),
            ("built by Python", tuple(view.python)),
            ("joined string literals", tuple(_joined_literals(self.typed))),
        )
        return Reading(self.typed, items, any(m in self.typed.lower() for m in _ROT13_MARKERS))


def observed_views(text: str) -> list[str]:
    """What an observation shows, lower-cased, in the same forms (a value decoded or reversed from what the
    run saw was derived, not transferred)."""
    return [v.text.lower() for v in _with_transforms([View("", text)], rot=True)]


def value_tokens(typed: str, min_len: int) -> dict[str, tuple[str, str]]:
    """lower-cased token -> (token, how it was spelled: '' when typed as it is) over every reading of `typed`."""
    reading = Session().add(typed)
    return {low: (tok, reading.label(low, how)) for low, (tok, how) in reading.tokens(min_len).items()}


def phrase_found(phrase_lower: str, texts_lower: list[str]) -> bool:
    """A multi-word hidden value in any text, whitespace runs compared as one space."""
    return any(has_word(v, phrase_lower) for v in texts_lower)


def collapsed(text: str) -> str:
    """Lower-cased, whitespace runs as one space (how phrases are compared)."""
    return _SPACE.sub(" ", text.lower())
