"""Runbook review: the queue with progress, the five parts with flagged spans, every critic round, readable
flags, the review form (the reviewer's name kept for the session), the history and the provenance chain."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rsr_core.models import CriticFlag, Review, Runbook
from rsr_core.store import app_queries, pipeline
from rsr_core.store.pipeline import RUNBOOK_STATUSES
from rsr_core.store.sql import scalar
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached
from rsr_core.ui.grid import table
from rsr_core.ui.widgets import highlighted_runbook, md_escape, page_link

STATUSES = ["pending_review", "approved", "critic_rejected", "human_rejected", "critic_pending"]
assert set(STATUSES) == set(RUNBOOK_STATUSES)
REVIEWER = "reviewer_name"


@cached
def queue(cur: Cursor, status: str | None = None, task_id: str | None = None) -> pd.DataFrame:
    """Runbook rounds with their status (`runbook_status`), pending review first."""
    return app_queries.runbook_queue(cur, status, task_id)


@cached
def reviewers(cur: Cursor) -> dict[str, Any]:
    """Runbooks reviewed, in total and per reviewer (runbooks each has decided on, approvals, rejections)."""
    reviewed = int(scalar(cur, "SELECT count(DISTINCT runbook_id) FROM reviews"))
    by = cur.execute(
        "SELECT reviewer, count(DISTINCT runbook_id), count(*) FILTER (WHERE decision = 'approve'), "
        "count(*) FILTER (WHERE decision = 'reject') FROM reviews GROUP BY reviewer ORDER BY 2 DESC, 1"
    ).fetchall()
    return {
        "reviewed": reviewed,
        "by": [{"reviewer": r[0], "runbooks": r[1], "approvals": r[2], "rejections": r[3]} for r in by],
    }


def review_progress(ctx: AppServices, all_rounds: pd.DataFrame) -> dict[str, Any]:
    """Reviewed vs pending runbook rounds, in total and per reviewer; pending counted in the queue the page
    has already read (`queue(ctx)`, every round with its status), not read again."""
    return {"pending": int((all_rounds["status"] == "pending_review").sum()), **reviewers(ctx)}


@cached
def dossier(cur: Cursor, runbook_id: str) -> dict[str, Any] | None:
    """A runbook's rounds, flags, reviews and executions (as `rsr runbooks show`)."""
    rb = pipeline.get_runbook(cur, runbook_id)
    if rb is None:
        return None
    rounds = pipeline.runbooks_where(cur, "lineage_id", rb.lineage_id)
    return {
        "runbook": rb,
        "status": pipeline.runbook_status_of(cur, runbook_id),
        "rounds": [(r, pipeline.flags_of(cur, r.runbook_id)) for r in rounds],
        "reviews": pipeline.reviews_of(cur, runbook_id),
        "executions": app_queries.rewrites_of_runbooks(cur, [r.runbook_id for r in rounds]),
    }


def progress_bars(ctx: AppServices, all_rounds: pd.DataFrame) -> None:
    """Reviewed / pending in total and per reviewer (`all_rounds`: the whole queue)."""
    p = review_progress(ctx, all_rounds)
    total = p["reviewed"] + p["pending"]
    st.progress(
        p["reviewed"] / total if total else 1.0,
        text=f"reviewed {p['reviewed']} of {total} runbook rounds that need or had a human decision; "
        f"{p['pending']} waiting for review",
    )
    if p["by"]:
        cols = st.columns(min(4, len(p["by"])))
        for i, r in enumerate(p["by"]):
            cols[i % len(cols)].progress(
                r["runbooks"] / total if total else 1.0,
                text=md_escape(
                    f"{r['reviewer']}: {r['runbooks']} runbooks ({r['approvals']} approvals, "
                    f"{r['rejections']} rejections)"
                ),
            )


def record_reviews(
    ctx: AppServices, runbook_ids: list[str], decision: str, reviewer: str, reason: str
) -> None:
    """Append one review per runbook (one transaction); reviews are never replaced, the latest decides."""
    with ctx.store.transaction() as cur:
        for rid in runbook_ids:
            pipeline.insert_review(
                cur, Review(runbook_id=rid, decision=decision, reviewer=reviewer, reason=reason)
            )


def _submit(ctx: AppServices, runbook_ids: list[str], key: str, decision: str) -> None:
    """The form's callback: it runs before the page's next run, so the queue that run draws already holds the
    review (no second run of the page)."""
    reviewer = (st.session_state.get(f"reviewer_{key}") or "").strip()
    reason = (st.session_state.get(f"reason_{key}") or "").strip()
    if not reviewer:
        st.session_state[f"review_error_{key}"] = "a reviewer name is required"
        return
    st.session_state[REVIEWER] = reviewer
    record_reviews(ctx, runbook_ids, decision, reviewer, reason)
    st.session_state[f"reason_{key}"] = ""  # the reason was this decision's; the reviewer stays
    verb = "approved" if decision == "approve" else "rejected"
    st.session_state["review_done"] = f"{verb} {len(runbook_ids)} runbook(s) as {reviewer}"


def review_form(ctx: AppServices, runbook_ids: list[str], key: str) -> None:
    """Approve / reject with reviewer name (remembered for the session) and reason; the queue shows it at once."""
    with st.form(key=f"review_{key}"):
        c = st.columns([1, 2])
        c[0].text_input("reviewer", st.session_state.get(REVIEWER, ""), key=f"reviewer_{key}")
        c[1].text_input("reason", key=f"reason_{key}")
        a, r = st.columns(2)
        for col, decision in ((a, "approve"), (r, "reject")):
            col.form_submit_button(
                f"{decision} ({len(runbook_ids)})",
                disabled=not runbook_ids,
                on_click=_submit,
                args=(ctx, list(runbook_ids), key, decision),
            )
    if error := st.session_state.pop(f"review_error_{key}", None):
        st.error(error)


def flag_cards(flags: list[CriticFlag], key: str) -> None:
    """Each flag readable at a normal width: kind, stage and score, the runbook text, the hidden text it matched
    and where that comes from, and why."""
    for i, f in enumerate(flags):
        with st.container(border=True, key=f"flag_{key}_{i}"):
            where = "" if f.span_start is None else f" · characters {f.span_start}–{f.span_end}"
            st.markdown(md_escape(f"{f.kind} · {f.stage} stage · score {f.score:.2f}{where}"))
            st.text(f"runbook text: {f.evidence}")
            if f.matched_text:
                st.text(f"matches {f.matched_path or 'hidden text'}: {f.matched_text}")
            if f.reason:
                st.caption(md_escape(f.reason))


def critic_round(rb: Runbook, flags: list[CriticFlag]) -> None:
    """One round: verdict, the runbook with every flagged span highlighted, then its flags."""
    st.markdown(
        f"**round {rb.round}** · critic verdict **{rb.critic_verdict}** · {len(flags)} flag(s) · "
        + md_escape(f"prompt {rb.prompt_version} · model {rb.model}")
    )
    with st.container(border=True):
        st.markdown(highlighted_runbook(rb.text(), flags))
    if flags:
        with st.expander(f"the {len(flags)} flag(s) of round {rb.round}", expanded=True):
            flag_cards(flags, rb.runbook_id)
    else:
        st.caption("no flags")


def provenance(rb: Runbook, executions: pd.DataFrame, rounds: list[Runbook]) -> None:
    """Source -> runbook rounds -> executions -> kept."""
    st.markdown("**provenance**")
    page_link(f"source: {rb.source_trajectory_id}", "trajectories", trajectory=rb.source_trajectory_id)
    st.caption(md_escape(" → ".join(f"round {r.round}: {r.critic_verdict}" for r in rounds)))
    if executions.empty:
        st.caption("no executions of this runbook (in any round)")
        return
    table(
        executions[
            ["runbook_id", "trajectory_id", "reward", "verified", "answer_transfer", "human_rejected", "kept"]
        ],
        key=f"executions_{rb.runbook_id}",
    )
    for tid in executions["trajectory_id"]:
        page_link(f"open {tid}", "trajectories", trajectory=tid)


def runbook_detail(ctx: AppServices, runbook_id: str) -> None:
    """Everything about one runbook lineage, with the review form for the selected round."""
    d = dossier(ctx, runbook_id)
    if d is None:
        st.error(md_escape(f"no runbook {runbook_id!r}"))
        return
    rb = d["runbook"]
    st.subheader(md_escape(f"{rb.task_id} · runbook {rb.variant + 1} · {runbook_id} · {d['status']}"))
    for r, flags in d["rounds"]:
        critic_round(r, flags)
    review_form(ctx, [runbook_id], key=runbook_id)
    st.markdown("**review history** (append-only; the latest decides)")
    if d["reviews"]:
        table(
            pd.DataFrame(
                [h.model_dump(include={"created_at", "reviewer", "decision", "reason"}) for h in d["reviews"]]
            ),
            key=f"reviews_{runbook_id}",
            wrap=("reason",),
        )
    else:
        st.caption("not reviewed")
    provenance(rb, d["executions"], [r for r, _ in d["rounds"]])
