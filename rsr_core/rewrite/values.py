"""The values typed shell text uses, in every form the answer-transfer check compares: as the shell reads it,
as its Python programs spell it, as its echo/printf output and written files hold it, decoded (escapes, base64,
base32, hex, URL escapes), reversed, and rot13 (when the text asks for rot13)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rsr_core.rewrite.decode import deep_decodings, rot13
from rsr_core.rewrite.shellnorm import read_shell
from rsr_core.rewrite.tokens import has_word, tokens

_ROT13_MARKERS = ("rot13", "rot_13", "n-za-m", "n-za-m")
_SPACE = re.compile(r"\s+")
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff]")
# String literals joined by juxtaposition or an operator, as awk ("a" "b"), perl ("a" . "b"), JavaScript or
# Python ("a" + "b") join them.
_JOINED = re.compile(r"""(["'])[ \t]*(?:[.+][ \t]*)?\1""")
_LITERAL = re.compile(r""""([^"'\n]*)"|'([^"'\n]*)'""")  # innermost literals: no quotes inside


@dataclass(frozen=True)
class View:
    """One reading of a text: how it was obtained ('' for the shell's own reading) and the text."""

    how: str
    text: str


def _with_transforms(base: list[View], rot: bool) -> list[View]:
    views = list(base)
    for v in base:
        views += [View(v.how or how, got) for how, got in deep_decodings(v.text)]
    views += [View(f"{v.how}, reversed" if v.how else "reversed", v.text[::-1]) for v in list(views)]
    if rot:
        views += [View(f"{v.how}, rot13" if v.how else "rot13", rot13(v.text)) for v in list(views)]
    return views


def plain(text: str) -> str:
    """Unicode compatibility forms folded (fullwidth digits, ligatures) and invisible characters removed."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def command_views(typed: str) -> list[View]:
    """Every reading of typed shell text (see the module docstring)."""
    typed = plain(typed)
    shell = read_shell(typed)
    # Only literals that a join produced: a lone quoted program is code, read elsewhere.
    marked = _JOINED.sub("\0", typed.replace("\0", ""))
    joined = "\n".join((a or b).replace("\0", "") for a, b in _LITERAL.findall(marked) if "\0" in a + b)
    through = ", ".join(sorted(shell.notes))
    base = [
        View("", "\n".join(shell.text)),
        View(f"output of {through}" if through else "", "\n".join([*shell.output, *shell.files.values()])),
        View("built by Python", "\n".join(shell.python)),
        View("joined string literals", joined),
    ]
    return _with_transforms(base, any(m in typed.lower() for m in _ROT13_MARKERS))


def observed_views(text: str) -> list[str]:
    """What an observation shows, lower-cased, in the same forms (a value decoded or reversed from what the
    run saw was derived, not transferred)."""
    views = _with_transforms([View("", text)], rot=True)
    return [v.text.lower() for v in views]


def value_tokens(typed: str, min_len: int) -> dict[str, tuple[str, str]]:
    """lower-cased token -> (token as written, how it was obtained), over every reading of `typed`.
    A token visible in the typed text itself is labelled '' whatever reading found it first."""
    raw = typed.lower()
    found: dict[str, tuple[str, str]] = {}
    for view in command_views(typed):
        for tok in tokens(view.text, min_len):
            low = tok.lower()
            how = "" if low in raw else view.how or "assembled by the shell"
            if low not in found or (found[low][1] and not how):
                found[low] = (tok, how)
    return found


def phrase_found(phrase_lower: str, views_lower: list[str]) -> bool:
    """A multi-word hidden value in any view, whitespace runs compared as one space."""
    return any(has_word(v, phrase_lower) for v in views_lower)


def collapsed(text: str) -> str:
    """Lower-cased, whitespace runs as one space (how phrases are compared)."""
    return _SPACE.sub(" ", text.lower())
