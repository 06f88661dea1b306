"""The answer-transfer filter: did a rewrite use a value it could not have derived itself?

Deterministic rule: a token of the rewrite's commands (any token — quoted or not, words, paths, numbers, codes,
here-doc bodies — in any form the shell or a Python one-liner turns back into it: see values.py) is evidence when
it is not trivial (tokens.py), the runbook, the source run, the solution or the tests contain it, and neither the
instruction nor anything the run saw before using it (its prompt, earlier observations, decoded or reversed)
showed it. A model check runs beside it; either one flagging a rewrite makes it transfer.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from rsr_core import prompts
from rsr_core.formats.commands import TMUX_KEY_NAMES
from rsr_core.models import Runbook, Task, Trajectory, TransferVerdict
from rsr_core.protocols import LLM
from rsr_core.rewrite.compress import condense
from rsr_core.rewrite.literals import hidden_phrases
from rsr_core.rewrite.llm_json import ModelOutputError, ask_json
from rsr_core.rewrite.tokens import has_word
from rsr_core.rewrite.values import Session, collapsed, observed_views, phrase_found

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


def _typed(keystrokes: str) -> str:
    # A batch that is only a tmux key name is a key press, not text: Enter and the interrupts end the line.
    name = keystrokes.strip()
    if name in TMUX_KEY_NAMES:
        return {"Enter": "\n", "C-c": "\n", "C-d": "\n", "C-z": "\n", "BSpace": "\x7f"}.get(name, "")
    return keystrokes


def _line(step: int, value: str, how: str, where: list[str]) -> str:
    shown = value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 1] + "…"
    form = f" ({how})" if how else ""
    places = " and ".join(where) if len(where) < 3 else ", ".join(where[:-1]) + " and " + where[-1]
    return f"step {step}: {shown!r}{form} is used before the run saw it; it is in {places}"


def deterministic_transfer(
    rewrite: Trajectory, runbook: Runbook, source: Trajectory, task: Task, min_len: int = 4
) -> list[str]:
    """Evidence lines, one per transferred value (empty when none)."""
    public = collapsed((task.instruction or "") + "\n" + (rewrite.instruction or ""))
    hidden = HiddenCorpus.of(runbook, source, task, public, min_len)
    seen: list[str] = [public]
    session, used, used_phrases = Session(), set[str](), set[str]()
    evidence: list[str] = []
    for step in rewrite.steps:
        if step.private_guidance:
            continue
        if step.source != "agent":
            seen.append(collapsed(step.message))  # the prompt shows the initial terminal state
            continue
        reading = session.add("".join(_typed(c.keystrokes) for c in step.commands))
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
            if places:
                flagged.append(low)
                tok, how = found[low]
                evidence.append(_line(step.index, tok, reading.label(low, how), places))
        seen += [collapsed(v) for v in observed_views(step.observation or "")]
    return evidence


class TransferAnswer(BaseModel):
    """The model's answer."""

    model_config = ConfigDict(extra="ignore")
    answer_transfer: bool
    evidence: list[str] = Field(default_factory=list)


def transfer_messages(task: Task, runbook: Runbook, rewrite: Trajectory) -> list[dict[str, str]]:
    """The model check's request."""
    user = prompts.render(
        prompts.load("transfer_user_v1.md"),
        instruction=task.instruction or "",
        runbook=runbook.text(),
        record=condense(rewrite),
    )
    return [{"role": "system", "content": prompts.load("transfer_v2.md")}, {"role": "user", "content": user}]


def check_transfer(
    llm: LLM | None,
    model: str | None,
    rewrite: Trajectory,
    runbook: Runbook,
    source: Trajectory,
    task: Task,
    min_literal_len: int = 4,
) -> TransferVerdict:
    """Both checks; transfer if either finds it, so a model saying "no transfer" never clears a rewrite the
    deterministic check flagged. Without a model only the deterministic check runs; a model that gives no valid
    verdict after the retries leaves the verdict to the deterministic check (and says so)."""
    det = deterministic_transfer(rewrite, runbook, source, task, min_literal_len)
    llm_verdict, llm_evidence = None, []
    if llm is not None and model:
        try:
            answer, _ = ask_json(llm, model, transfer_messages(task, runbook, rewrite), TransferAnswer)
            llm_verdict, llm_evidence = answer.answer_transfer, answer.evidence
        except ModelOutputError as exc:
            llm_evidence = [f"model check gave no verdict: {exc}"]
    return TransferVerdict(
        trajectory_id=rewrite.trajectory_id,
        answer_transfer=bool(det) or llm_verdict is True,
        deterministic_evidence=det,
        llm_verdict=llm_verdict,
        llm_evidence=llm_evidence,
    )
