"""The reader's two stages over one rewrite: did it use a value it could not have derived itself?

Static stage: a token of the rewrite's commands (any token — quoted or not, words, paths, numbers, codes,
here-doc bodies — in any form the shell or a Python one-liner turns back into it: see values.py) is evidence when
it is not trivial (tokens.py), the runbook, the source run, the solution or the tests contain it, and neither the
instruction nor anything the run saw before using it (its prompt, earlier observations, decoded or reversed)
showed it. What the run saw is read as the screen shows it (seen.py). This is the static stage; when it finds
nothing and the run's output or final state may hold a hidden value, the replay stage (replay.py) runs the
commands again without the task's files and flags a hidden value that comes out of them before the run saw it.
Every evidence line names its stage (stages.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rsr_core.models import Runbook, Task, Trajectory
from rsr_core.transfer.literals import hidden_phrases
from rsr_core.transfer.replay import ReplayResult, typed_keys
from rsr_core.transfer.seen import screen_text, screen_views
from rsr_core.transfer.stages import REPLAY_MARK, STATIC_MARK
from rsr_core.transfer.tokens import has_word, tokens
from rsr_core.transfer.values import Session, collapsed, observed_views, phrase_found

MAX_SHOWN = 60  # longest value quoted in an evidence line


@dataclass(frozen=True)
class HiddenCorpus:
    """Where values the run could not see are written, lower-cased."""

    places: tuple[tuple[str, str], ...]
    phrases: tuple[tuple[str, str], ...]  # (multi-word value, where)

    @classmethod
    def of(cls, runbook: Runbook, source: Trajectory, task: Task, public: str, min_len: int) -> HiddenCorpus:
        """The runbook, the source run (commands and what they showed), the solution and the tests; multi-word
        values the instruction (`public`, collapsed) does not contain."""
        run = "\n".join(
            [c.keystrokes for s in source.steps for c in s.commands]
            + [s.observation or "" for s in source.steps]
        )
        places = [
            ("the runbook", runbook.text()),
            ("the source run", run),
            ("the solution", "\n".join(f.content for f in task.files if f.role == "solution")),
            ("the tests", "\n".join(f.content for f in task.files if f.role == "test")),
        ]
        phrases = [
            (p, where) for p, where in hidden_phrases(task, source, min_len) if collapsed(p) not in public
        ]
        return cls(
            tuple((where, text.lower()) for where, text in places if text),
            tuple((collapsed(p), where) for p, where in phrases),
        )

    def where(self, token_lower: str) -> list[str]:
        """The places that contain the token as a whole word."""
        return [where for where, text in self.places if has_word(text, token_lower)]


def _line(step: int, value: str, how: str, where: list[str]) -> str:
    shown = value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 1] + "…"
    form = f" ({how})" if how else ""
    places = _places(where)
    return f"step {step}: {shown!r}{form} is used before the run saw it {STATIC_MARK}; it is in {places}"


def _places(where: list[str]) -> str:
    return " and ".join(where) if len(where) < 3 else ", ".join(where[:-1]) + " and " + where[-1]


def _shown_in_pieces(low: str, seen: list[str], min_len: int, made: str) -> bool:
    """Did one screen show the value in two pieces, each a whole word of at least `min_len` characters (a value
    printed across two lines or fields, typed joined), neither of them in `made` — what the run typed before,
    or what its replay produced without the data? Pieces the run put on the screen itself are no sight of the
    value."""
    splits = [(low[:i], low[i:]) for i in range(min_len, len(low) - min_len + 1)]
    return any(
        has_word(s, a) and has_word(s, b) and not has_word(made, a) and not has_word(made, b)
        for s in seen
        for a, b in splits
    )


def _seen_views(observation: str) -> list[str]:
    # The screen text in every decoded form; its other readings (wrapping joined, dumps read back) as they are.
    views = screen_views(observation)
    return [collapsed(v) for v in observed_views(views[0])] + [collapsed(v) for v in views[1:]]


@dataclass
class StaticReading:
    """The static stage's reading of a run: its evidence, and what the run had seen and typed before each
    step (what the replay stage compares with)."""

    hidden: HiddenCorpus
    evidence: list[str]
    seen: list[str]
    seen_before: dict[int, int]
    """step index -> how many entries of `seen` were on screen before its keystrokes."""
    typed_through: dict[int, str]
    """step index -> the keystrokes typed up to and with it, lower-cased."""
    shown: bool
    """A hidden value appears in what the run showed (its output may hold one it could not have seen)."""
    observed: dict[int, str]
    """step index -> what its own observation showed (its views joined)."""


def read_statically(
    rewrite: Trajectory, runbook: Runbook, source: Trajectory, task: Task, min_len: int = 4
) -> StaticReading:
    """The static stage over a rewrite."""
    public = collapsed(screen_text((task.instruction or "") + "\n" + (rewrite.instruction or "")))
    hidden = HiddenCorpus.of(runbook, source, task, public, min_len)
    seen: list[str] = [public]
    seen_before: dict[int, int] = {}
    typed_through: dict[int, str] = {}
    session, used, used_phrases = Session(), set[str](), set[str]()
    evidence: list[str] = []
    shown = False
    observed: dict[int, str] = {}
    for step in rewrite.steps:
        if step.private_guidance:
            continue
        if step.source != "agent":
            seen.append(collapsed(screen_text(step.message)))  # the prompt shows the initial terminal state
            continue
        seen_before[step.index] = len(seen)
        typed_before = session.typed.lower()
        reading = session.add("".join(typed_keys(c.keystrokes) for c in step.commands))
        typed_through[step.index] = session.typed.lower()
        flagged: list[str] = []
        if hidden.phrases:
            texts = reading.phrase_texts()
            for phrase, where in hidden.phrases:
                if phrase in used_phrases or not phrase_found(phrase, texts):
                    continue
                used_phrases.add(phrase)
                if not any(phrase in s for s in seen):
                    flagged.append(phrase)
                    evidence.append(_line(step.index, phrase, "", [where]))
        found = reading.tokens(min_len)
        for low in sorted(set(found) - used, key=len, reverse=True):
            used.add(low)
            if any(low in s for s in seen) or any(low in f for f in flagged):
                continue
            places = hidden.where(low)
            if places and not _shown_in_pieces(low, seen, min_len, typed_before):
                flagged.append(low)
                tok, how = found[low]
                evidence.append(_line(step.index, tok, reading.label(low, how), places))
        views = _seen_views(step.observation or "")
        shown = shown or any(
            hidden.where(t.lower()) for t in tokens(views[0], min_len) if t.lower() not in public
        )
        seen += views
        observed[step.index] = "\n".join(views)
    return StaticReading(hidden, evidence, seen, seen_before, typed_through, shown, observed)


def deterministic_transfer(
    rewrite: Trajectory, runbook: Runbook, source: Trajectory, task: Task, min_len: int = 4
) -> list[str]:
    """Static evidence lines, one per transferred value (empty when none)."""
    return read_statically(rewrite, runbook, source, task, min_len).evidence


def replay_evidence(reading: StaticReading, result: ReplayResult, min_len: int = 4) -> list[str]:
    """Evidence lines of the replay stage: a hidden value that came out of the replayed commands while a step
    ran, neither typed as it is by then (the static stage read those) nor seen before that step, nor (when only
    the source run holds it) shown by that step's own output."""
    evidence: list[str] = []
    flagged: set[str] = set()
    last = max(reading.seen_before, default=0)
    emissions = sorted(result.emissions, key=lambda e: e.step)
    texts = [screen_text(e.text) for e in emissions]
    for em, text in zip(emissions, texts, strict=True):
        before = reading.seen[: reading.seen_before.get(em.step, len(reading.seen))]
        typed = reading.typed_through.get(em.step, reading.typed_through.get(last, ""))
        made: str | None = None  # what the replay produced before this step, joined once it is needed
        where_out = em.how if em.how.startswith("written") else em.how + " by the commands"
        found = sorted(tokens(text, min_len), key=len, reverse=True)
        for tok in found:
            low = tok.lower()
            if (
                low in flagged
                or has_word(typed, low)
                or any(low in s for s in before)
                or any(low in f for f in flagged)
            ):
                continue
            places = reading.hidden.where(low)
            if not places:
                continue
            # What the base image prints by itself (a version, a listing) and the run's own screen showed at that
            # step is no answer when only the source run shows it too; a value of the tests, the solution or the
            # runbook stays evidence however it came out.
            if places == ["the source run"] and low in reading.observed.get(em.step, ""):
                continue
            if made is None:
                made = " ".join(t.lower() for e, t in zip(emissions, texts, strict=True) if e.step < em.step)
            if not _shown_in_pieces(low, before, min_len, made):
                flagged.add(low)
                shown = tok if len(tok) <= MAX_SHOWN else tok[: MAX_SHOWN - 1] + "…"
                evidence.append(
                    f"{REPLAY_MARK}step {em.step}: {shown!r} {where_out} in a sandbox without the task's files, "
                    f"before the run saw it; it is in {_places(places)}"
                )
    return evidence
