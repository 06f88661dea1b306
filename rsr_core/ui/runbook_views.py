"""Runbook review: the five parts with flagged spans, every critic round, reviews and the provenance chain."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rsr_core.models import Review, Runbook
from rsr_core.store import app_queries, pipeline
from rsr_core.ui.context import AppServices
from rsr_core.ui.widgets import highlighted_runbook, md_escape, page_link

STATUSES = ["pending_review", "approved", "critic_rejected", "human_rejected", "critic_pending"]


def record_reviews(
    ctx: AppServices, runbook_ids: list[str], decision: str, reviewer: str, reason: str
) -> None:
    """Append one review per runbook (one transaction)."""
    with ctx.store.transaction() as cur:
        for rid in runbook_ids:
            pipeline.insert_review(
                cur, Review(runbook_id=rid, decision=decision, reviewer=reviewer, reason=reason)
            )


def review_form(ctx: AppServices, runbook_ids: list[str], key: str) -> None:
    """Approve / reject with reviewer name and reason (for one runbook or a selection)."""
    with st.form(key=f"review_{key}", clear_on_submit=True):
        c = st.columns([1, 2])
        reviewer = c[0].text_input("reviewer", key=f"reviewer_{key}")
        reason = c[1].text_input("reason", key=f"reason_{key}")
        a, r = st.columns(2)
        approve = a.form_submit_button(f"approve ({len(runbook_ids)})", disabled=not runbook_ids)
        reject = r.form_submit_button(f"reject ({len(runbook_ids)})", disabled=not runbook_ids)
    if approve or reject:
        if not reviewer.strip():
            st.error("a reviewer name is required")
            return
        record_reviews(ctx, runbook_ids, "approve" if approve else "reject", reviewer.strip(), reason.strip())
        st.success(
            md_escape(
                f"{'approved' if approve else 'rejected'} {len(runbook_ids)} runbook(s) as {reviewer.strip()}"
            )
        )


def _flags_frame(flags) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "stage": f.stage,
                "kind": f.kind,
                "score": f.score,
                "runbook text": f.evidence,
                "matched hidden text": f.matched_text,
                "from": f.matched_path,
                "why": f.reason,
            }
            for f in flags
        ]
    )


def critic_round(ctx: AppServices, rb: Runbook) -> None:
    """One round: verdict, the runbook with flagged spans highlighted, the flags beside the hidden text."""
    flags = pipeline.flags_of(ctx.store.cursor(), rb.runbook_id)
    st.markdown(
        f"**round {rb.round}** · critic verdict **{rb.critic_verdict}** · {len(flags)} flag(s) · "
        + md_escape(f"prompt {rb.prompt_version} · model {rb.model}")
    )
    left, right = st.columns([3, 2])
    with left, st.container(border=True):
        st.markdown(highlighted_runbook(rb.text(), flags))
    with right:
        if flags:
            st.dataframe(_flags_frame(flags), hide_index=True, key=f"flags_{rb.runbook_id}")
        else:
            st.caption("no flags")


def provenance(ctx: AppServices, rb: Runbook) -> None:
    """Source -> runbook rounds -> executions -> kept."""
    cur = ctx.store.cursor()
    st.markdown("**provenance**")
    page_link(f"source: {rb.source_trajectory_id}", "trajectories", trajectory=rb.source_trajectory_id)
    rounds = pipeline.runbooks_where(cur, "lineage_id", rb.lineage_id)
    st.caption(md_escape(" → ".join(f"round {r.round}: {r.critic_verdict}" for r in rounds)))
    executions = pd.concat(
        [app_queries.rewrites_with_status(cur, "runbook_id", r.runbook_id) for r in rounds]
    )
    if executions.empty:
        st.caption("no executions of this runbook (in any round)")
        return
    st.dataframe(
        executions[
            ["runbook_id", "trajectory_id", "reward", "verified", "answer_transfer", "human_rejected", "kept"]
        ],
        hide_index=True,
        key=f"execs_{rb.runbook_id}",
    )
    for tid in executions["trajectory_id"]:
        page_link(f"open {tid}", "trajectories", trajectory=tid)


def runbook_detail(ctx: AppServices, runbook_id: str) -> None:
    """Everything about one runbook lineage, with the review form for the selected round."""
    cur = ctx.store.cursor()
    rb = pipeline.get_runbook(cur, runbook_id)
    if rb is None:
        st.error(md_escape(f"no runbook {runbook_id!r}"))
        return
    st.subheader(md_escape(f"{rb.task_id} · runbook {rb.variant + 1} · {runbook_id}"))
    for r in pipeline.runbooks_where(cur, "lineage_id", rb.lineage_id):
        critic_round(ctx, r)
    review_form(ctx, [runbook_id], key=runbook_id)
    history = pipeline.reviews_of(cur, runbook_id)
    st.markdown("**review history** (append-only; the latest decides)")
    if history:
        st.dataframe(
            pd.DataFrame(
                [h.model_dump(include={"created_at", "reviewer", "decision", "reason"}) for h in history]
            ),
            hide_index=True,
            key=f"history_{runbook_id}",
        )
    else:
        st.caption("not reviewed")
    provenance(ctx, rb)
