"""The Critic. Stage 1 is deterministic, with evidence (schema, harness-only syntax, verifier and solution
leakage matched with rapidfuzz); stage 2 asks a model that sees only the public instruction and the runbook."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from rsr_core import prompts
from rsr_core.models import RUNBOOK_PARTS, CriticFlag, Runbook, Task, Trajectory
from rsr_core.protocols import LLM
from rsr_core.rewrite.llm_json import ask_json
from rsr_core.transfer.literals import Hidden, final_contents, hidden_texts

HARNESS_VOCABULARY = "harness_vocabulary_v1.json"


@dataclass(frozen=True)
class HarnessRule:
    """One rule of the harness vocabulary: what it flags, why, and the contexts that make it ordinary."""

    reason: str
    patterns: tuple[re.Pattern[str], ...]
    unless: tuple[re.Pattern[str], ...]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every match not inside an `unless` match."""
        ordinary = [(m.start(), m.end()) for u in self.unless for m in u.finditer(text)]
        return [
            (m.start(), m.end())
            for p in self.patterns
            for m in p.finditer(text)
            if m.end() > m.start() and not any(s <= m.start() and m.end() <= e for s, e in ordinary)
        ]


@cache
def harness_rules() -> tuple[HarnessRule, ...]:
    """The harness-only vocabulary of the versioned data file, compiled on first use."""
    data = prompts.load_json(HARNESS_VOCABULARY)
    fills = {
        name: "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"
        for name, words in data["lists"].items()
    }

    def compile_(pattern: str) -> re.Pattern[str]:
        for name, alternation in fills.items():
            pattern = pattern.replace("{" + name + "}", alternation)
        return re.compile(pattern, re.I | re.M)

    return tuple(
        HarnessRule(
            rule["reason"],
            tuple(compile_(p) for p in rule["patterns"]),
            tuple(compile_(p) for p in rule.get("unless", [])),
        )
        for rule in data["rules"]
    )


_WORD_EDGE = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"
GENERIC = {
    "/app",
    "utf-8",
    "utf8",
    "python3",
    "pytest",
    "bash",
    "test",
    "tests",
    "assert",
    "import",
    "print",
    "true",
    "false",
    "none",
    "null",
    "/tests",
    "/logs/verifier/reward.txt",
    "-rA",
    "-q",
}


@dataclass(frozen=True)
class CriticSettings:
    """Thresholds (from Settings)."""

    fuzzy_threshold: float = 88.0
    min_literal_len: int = 4


def _flag(
    rb: Runbook,
    stage: str,
    kind: str,
    start: int,
    end: int,
    text: str,
    score: float,
    reason: str,
    matched: str | None = None,
    path: str | None = None,
) -> CriticFlag:
    return CriticFlag(
        runbook_id=rb.runbook_id,
        stage=stage,
        kind=kind,
        severity="high",
        score=round(score, 4),
        span_start=start,
        span_end=end,
        evidence=text[start:end],
        matched_text=matched,
        matched_path=path,
        reason=reason,
    )


def schema_flags(rb: Runbook, text: str) -> list[CriticFlag]:
    """Empty or missing parts."""
    flags = []
    for part in RUNBOOK_PARTS:
        value = getattr(rb, part)
        items = [value] if isinstance(value, str) else value
        if not items or not all(isinstance(i, str) and i.strip() for i in items):
            flags.append(
                CriticFlag(
                    runbook_id=rb.runbook_id,
                    stage="deterministic",
                    kind="schema",
                    severity="high",
                    score=1.0,
                    evidence=part,
                    reason=f"part '{part}' is empty",
                )
            )
    return flags


def harness_flags(rb: Runbook, text: str) -> list[CriticFlag]:
    """Vocabulary and tools that only discovery harnesses have (harness_vocabulary_v1.json): one flag per
    phrase, overlapping matches merged into one span (named by the longest match's reason)."""
    found = sorted(
        ((start, end, rule.reason) for rule in harness_rules() for start, end in rule.spans(text)),
        key=lambda f: (f[0], -f[1]),
    )
    merged: list[tuple[int, int, str, int]] = []  # start, end, reason, length of the match naming it
    for start, end, why in found:
        if merged and start < merged[-1][1]:
            s0, e0, why0, len0 = merged[-1]
            merged[-1] = (s0, max(e0, end), why if end - start > len0 else why0, max(len0, end - start))
        else:
            merged.append((start, end, why, end - start))
    return [_flag(rb, "deterministic", "harness_syntax", s, e, text, 1.0, why) for s, e, why, _ in merged]


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


def _match(hidden: Hidden, text: str, lowered: str, threshold: float) -> tuple[int, int, float] | None:
    needle = hidden.text.strip()
    if hidden.what == "number" or len(needle) < 8:
        m = re.search(_WORD_EDGE.format(re.escape(needle.lower())), lowered)
        return (m.start(), m.end(), 1.0) if m else None
    res = fuzz.partial_ratio_alignment(needle.lower(), lowered, score_cutoff=threshold)
    if res is None:
        return None
    start, end = _widen(text, res.dest_start, res.dest_end)
    return start, end, res.score / 100.0


def leak_flags(
    rb: Runbook, text: str, task: Task, source: Trajectory | None, cfg: CriticSettings
) -> list[CriticFlag]:
    """Hidden-test and solution text (and the source run's final file contents) found in the runbook."""
    public = (task.instruction or "").lower()
    lowered = text.lower()
    hidden = hidden_texts(task) + (final_contents(source) if source is not None else [])
    flags: list[CriticFlag] = []
    seen: set[tuple[str, int]] = set()
    for h in hidden:
        needle = h.text.strip()
        low = needle.lower()
        short_number = h.what == "number" and len(needle) < 2
        if short_number or (h.what != "number" and len(needle) < cfg.min_literal_len) or low in GENERIC:
            continue
        if low in public:  # the instruction says it: not a leak
            continue
        found = _match(h, text, lowered, cfg.fuzzy_threshold)
        if found is None or (h.kind, found[0]) in seen:
            continue
        seen.add((h.kind, found[0]))
        start, end, score = found
        flags.append(
            _flag(
                rb,
                "deterministic",
                h.kind,
                start,
                end,
                text,
                score,
                f"{h.what} from {h.path} appears in the runbook",
                needle,
                h.path,
            )
        )
    return flags


def deterministic_flags(
    rb: Runbook, task: Task, source: Trajectory | None, cfg: CriticSettings = CriticSettings()
) -> list[CriticFlag]:
    """Stage 1."""
    text = rb.text()
    return schema_flags(rb, text) + harness_flags(rb, text) + leak_flags(rb, text, task, source, cfg)


class LLMFlag(BaseModel):
    """A flag as the critic model returns it."""

    model_config = ConfigDict(extra="ignore")
    kind: Literal["verifier_leak", "solution_leak", "harness_syntax"]
    evidence: str
    reason: str = ""


class CriticAnswer(BaseModel):
    """The critic model's answer."""

    model_config = ConfigDict(extra="ignore")
    verdict: Literal["pass", "reject"]
    flags: list[LLMFlag] = Field(default_factory=list)


def critic_messages(instruction: str, rb: Runbook) -> list[dict[str, str]]:
    """Stage 2's request: only the public instruction and the runbook (never hidden tests or solutions)."""
    user = prompts.render(prompts.load("critic_user_v1.md"), instruction=instruction, runbook=rb.text())
    return [{"role": "system", "content": prompts.load("critic_v1.md")}, {"role": "user", "content": user}]


def llm_flags(llm: LLM, model: str, instruction: str, rb: Runbook) -> tuple[str, list[CriticFlag]]:
    """Stage 2: verdict and flags, each located in the runbook text where it can be."""
    answer, _ = ask_json(llm, model, critic_messages(instruction, rb), CriticAnswer)
    text = rb.text()
    flags = []
    for f in answer.flags:
        found = text.find(f.evidence) if f.evidence else -1
        start: int | None = found if found >= 0 else None
        end: int | None = found + len(f.evidence) if found >= 0 else None
        if found < 0 and f.evidence:
            res = fuzz.partial_ratio_alignment(f.evidence.lower(), text.lower(), score_cutoff=70)
            start, end = (res.dest_start, res.dest_end) if res else (None, None)
        flags.append(
            CriticFlag(
                runbook_id=rb.runbook_id,
                stage="llm",
                kind=f.kind,
                severity="high",
                score=1.0,
                span_start=start,
                span_end=end,
                evidence=f.evidence,
                reason=f.reason,
            )
        )
    verdict = answer.verdict if not (answer.verdict == "pass" and flags) else "reject"
    return verdict, flags


_WHY = {
    "verifier_leak": "reveals what the grader checks or expects",
    "solution_leak": "gives away part of the answer instead of a way to find it",
}


def critique_text(flags: list[CriticFlag]) -> str:
    """What the Planner is told when its runbook is rejected: its own offending text and why, never the hidden
    text or where it came from."""
    lines = [f'- {f.kind}: "{f.evidence[:200]}" {_WHY.get(f.kind, f.reason)}' for f in flags]
    return "\n".join(lines) or "- the runbook was rejected"
