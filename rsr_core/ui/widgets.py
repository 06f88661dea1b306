"""Streamlit helpers shared by the pages. Content from trajectories and runbooks is always shown as text
(st.text / st.code, or markdown with every punctuation character escaped), never as HTML."""

from __future__ import annotations

import re

import streamlit as st

from rsr_core.models import CriticFlag, Step
from rsr_core.store import StoreBusyError
from rsr_core.ui.context import AppServices, build_app_services

SHOW_HEAD, SHOW_TAIL = 3000, 1500
MAX_INLINE = 400_000
_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&\"'=^%@/,;?])")


@st.cache_resource(show_spinner=False)
def _services(db_path: str | None) -> AppServices:
    return build_app_services(db_path)


def app_services() -> AppServices:
    """The process-wide services for RSR_DB; a busy database stops the page with a clear message."""
    from rsr_core.settings import Settings

    db = Settings.from_env().db_path
    try:
        return _services(db)
    except StoreBusyError as exc:
        st.error(md_escape(str(exc)))
        st.info(
            "Only one process can write the database. Stop the other process (or point RSR_DB at another "
            "file) and reload this page."
        )
        st.stop()


def md_escape(text: str) -> str:
    """Markdown-safe text: every ASCII punctuation character is escaped, so nothing is interpreted."""
    return _PUNCT.sub(r"\\\1", text)


def require_data(ctx: AppServices) -> bool:
    """Show guidance instead of empty tables when the database holds nothing; True when there is data."""
    summary = ctx.store.summary()
    if summary["tasks"] or sum(summary["trajectories"].values()):
        return True
    st.info(
        "This database is empty. Load the demo corpus (8 tasks with recorded discovery and rewrite runs) or "
        "ingest your own runs with `rsr ingest PATH` (ATIF trajectory.json, harbor job/trial/task dirs, "
        "Terminal-Bench runs and tasks)."
    )
    if st.button("Load the demo corpus", key="load_demo"):
        from rsr_core.demo import build_demo

        report = build_demo(ctx.store)
        st.success(f"Loaded {report.trajectories_added} trajectories and {report.tasks_added} tasks.")
        st.rerun()
    return False


def show_text_block(text: str, key: str, language: str = "text") -> None:
    """Terminal text; long blocks are cut (head and tail) with a way to see everything."""
    if len(text) <= SHOW_HEAD + SHOW_TAIL:
        st.code(text, language=language, wrap_lines=True)
        return
    omitted = len(text) - SHOW_HEAD - SHOW_TAIL
    if st.toggle(f"show all {len(text):,} characters", key=f"full_{key}"):
        if len(text) > MAX_INLINE:
            st.download_button("download the full text", text, file_name=f"{key}.txt", key=f"dl_{key}")
            st.code(text[:MAX_INLINE], language=language, wrap_lines=True)
        else:
            st.code(text, language=language, wrap_lines=True)
    else:
        st.code(
            f"{text[:SHOW_HEAD]}\n[... {omitted:,} characters not shown ...]\n{text[-SHOW_TAIL:]}",
            language=language,
            wrap_lines=True,
        )


def _step_body(step: Step, key: str) -> None:
    if step.source == "agent":
        if step.analysis is not None:
            st.text(f"Analysis: {step.analysis}\nPlan: {step.plan or ''}")
        else:
            st.caption("answer (not valid protocol JSON)")
            show_text_block(step.message, f"{key}_msg")
        if step.commands:
            st.code(
                "\n".join(f"{c.keystrokes.rstrip()}    # wait {c.duration:g}s" for c in step.commands),
                language="bash",
                wrap_lines=True,
            )
        if step.task_complete:
            st.caption("claims the task is complete")
        if step.observation:
            show_text_block(step.observation, f"{key}_obs")
    else:
        show_text_block(step.message, f"{key}_msg")


def render_step(step: Step, key: str, highlight: bool = False) -> None:
    """One step: harness-control and private-guidance steps are collapsed and labelled."""
    if step.harness_control or step.private_guidance:
        label = (
            "harness control (not part of the task dialogue)"
            if step.harness_control
            else "private guidance: the runbook (removed from training data)"
        )
        with st.expander(f"step {step.index} · {step.source} · {label}", expanded=highlight):
            _step_body(step, key)
        return
    with st.container(border=True):
        st.markdown(f"**step {step.index} · {step.source}**" + (" · *linked step*" if highlight else ""))
        _step_body(step, key)


def highlighted_runbook(text: str, flags: list[CriticFlag]) -> str:
    """The runbook as escaped markdown with each flag's evidence span on a coloured background."""
    spans = sorted({(f.span_start, f.span_end) for f in flags if f.span_start is not None and f.span_end})
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        out.append(md_escape(text[pos:start]))
        out.append(
            "\n".join(
                f":red-background[{md_escape(part)}]" if part.strip() else part
                for part in text[start:end].split("\n")
            )
        )
        pos = end
    out.append(md_escape(text[pos:]))
    return "  \n".join("".join(out).split("\n"))


def page_link(label: str, page: str, **params: str) -> None:
    """A link to another page with query parameters (works however the app is mounted)."""
    from urllib.parse import quote, urlencode

    url = f"./{page}?{urlencode(params, quote_via=quote)}" if params else f"./{page}"
    st.markdown(f"[{md_escape(label)}]({url})")
