"""Steps of trajectories drawn by one custom component (rsr_core/ui/assets/steps.js) as cards of plain text:
a page of 25 steps is one element for the browser to draw, not some 150 Streamlit elements. Long terminal
text is cut (head and tail) until the reader asks for all of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from rsr_core.formats.atif_write import safe_name
from rsr_core.models import Step
from rsr_core.ui.component import mount
from rsr_core.ui.keys import widget_key
from rsr_core.ui.text import shown

SHOW_HEAD, SHOW_TAIL = 3000, 1500
MAX_INLINE = 400_000


def step_caption(step: Step, seconds: float | None) -> str:
    """When a step happened, how long until the next one, and what its model call used."""
    parts = []
    if step.timestamp:
        parts.append(step.timestamp)
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    if step.prompt_tokens is not None or step.completion_tokens is not None:
        parts.append(f"{step.prompt_tokens or 0:,} + {step.completion_tokens or 0:,} tokens")
    if step.cost_usd is not None:
        parts.append(f"${step.cost_usd:.4f}")
    return " · ".join(parts)


def special_label(step: Step) -> str | None:
    """Why a step is folded: it is not part of the task dialogue a model trains on."""
    if step.harness_control:
        return "harness control (not part of the task dialogue)"
    if step.private_guidance:
        return "private guidance: the runbook (removed from training data)"
    if step.copied_context:
        return "copied context (never trains)"
    return None


class Cards:
    """Builds the cards of one component: which long blocks are shown whole, which need a download."""

    def __init__(self, full: set[str]):
        self.full = full
        self.downloads: list[tuple[str, str]] = []

    def block(self, raw: str, block_id: str) -> list[dict[str, str]]:
        """A long text block: cut (head and tail) unless the reader asked for all of it; past MAX_INLINE
        characters the whole raw text is offered as a download."""
        text = shown(raw)
        if len(text) <= SHOW_HEAD + SHOW_TAIL:
            return [{"kind": "code", "text": text}]
        if block_id not in self.full:
            omitted = len(text) - SHOW_HEAD - SHOW_TAIL
            cut = f"{text[:SHOW_HEAD]}\n[... {omitted:,} characters not shown ...]\n{text[-SHOW_TAIL:]}"
            return [
                {"kind": "code", "text": cut, "id": block_id, "cut": f"show all {len(text):,} characters"}
            ]
        if len(text) <= MAX_INLINE:
            return [{"kind": "code", "text": text}]
        self.downloads.append((block_id, raw))
        note = (
            f"the first {MAX_INLINE:,} of {len(text):,} characters; the whole text downloads below the steps"
        )
        return [{"kind": "code", "text": text[:MAX_INLINE]}, {"kind": "note", "text": note}]

    def thinking(self, reasoning: str) -> dict[str, str]:
        """A turn's thinking as a folded block (never the answer, never in training rows without asking)."""
        text = shown(reasoning)
        label = f"thinking ({len(reasoning):,} characters)"
        if len(text) > MAX_INLINE:
            text, label = text[:MAX_INLINE], f"{label}; the first {MAX_INLINE:,} shown"
        return {"kind": "thinking", "label": label, "text": text}

    def card(
        self, step: Step, key: str, highlight: bool = False, seconds: float | None = None, anchor: bool = True
    ) -> dict:
        """One step's card; `anchor`: it carries the page's `step-N` id (one trajectory on the page)."""
        label = special_label(step)
        blocks: list[dict[str, str]] = []
        if step.source == "agent":
            if step.reasoning:
                blocks.append(self.thinking(step.reasoning))
            if step.analysis is not None:
                blocks.append(
                    {"kind": "text", "text": shown(f"Analysis: {step.analysis}\nPlan: {step.plan or ''}")}
                )
            elif isinstance(handoff := step.extra.get("handoff"), dict):  # a summary: plain text by design
                dropped = handoff.get("dropped_messages")
                note = (
                    "the model's summary of the conversation, which outgrew its context; a fresh one follows"
                )
                if isinstance(dropped, int) and dropped:
                    note += f" ({dropped} earlier messages were left out of the request for it)"
                blocks.append({"kind": "note", "text": note})
                blocks += self.block(step.message, f"{key}_msg")
            elif step.extra.get("missing_response"):  # nothing was recorded, not an answer that failed
                recorded = step.extra.get("note")
                blocks.append({"kind": "note", "text": shown(str(recorded or "no response was recorded"))})
            else:
                blocks.append({"kind": "note", "text": "answer (not valid protocol JSON)"})
                blocks += self.block(step.message, f"{key}_msg")
            if step.commands:
                commands = "\n".join(
                    f"{c.keystrokes.rstrip()}    # wait {c.duration:g}s" for c in step.commands
                )
                blocks.append({"kind": "code", "text": shown(commands)})
            if step.task_complete:
                blocks.append({"kind": "note", "text": "claims the task is complete"})
            if step.observation:
                blocks += self.block(step.observation, f"{key}_obs")
        else:
            blocks += self.block(step.message, f"{key}_msg")
        return {
            "anchor": step.index if anchor else None,
            "title": f"step {step.index} · {step.source}"
            + (f" · {label}" if label else "")
            + (" · linked step" if highlight else ""),
            "label": label or "",
            "open": highlight,
            "highlight": highlight,
            "caption": shown(step_caption(step, seconds)),
            "blocks": blocks,
        }


def show_steps(
    key: str,
    build: Callable[[Cards], Sequence[dict]],
    scroll: int | None = None,
) -> None:
    """Mount the cards `build` makes (rows: {"label", "cells": [[card, ...], ...]}); scroll to step `scroll` once
    per session."""
    state = st.session_state.get(key) or {}
    full = {str(b) for b in state.get("full") or []}
    cards = Cards(full)
    rows = list(build(cards))
    if scroll is not None:
        done = st.session_state.setdefault("_scrolled", set())
        if (key, scroll) in done:
            scroll = None
        else:
            done.add((key, scroll))
    mount("rsr_core.steps", "steps")(
        key=key,
        data={"rows": rows, "full": sorted(full), "scroll": scroll},
        default={"full": sorted(full)},
        on_full_change=lambda: None,
    )
    for n, (block_id, text) in enumerate(cards.downloads, 1):
        name = safe_name(block_id)
        st.download_button(
            f"download the full text ({n})", text, file_name=f"{name}.txt", key=widget_key("dl", block_id)
        )
