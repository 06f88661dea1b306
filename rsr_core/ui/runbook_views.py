"""Runbook review: the queue with progress, the five parts with flagged spans, every critic round, readable
flags, the review form (the reviewer's name kept for the session), the history and the provenance chain."""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd
import streamlit as st

from rsr_core.models import MAX_REASON, MAX_REVIEWER, CriticFlag, Review, Runbook, review_problem
from rsr_core.store import StoreBusyError, app_queries, pipeline
from rsr_core.store.pipeline import RUNBOOK_STATUSES
from rsr_core.ui.component import mount
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached, write_in_run
from rsr_core.ui.grid import clear, table
from rsr_core.ui.text import shown
from rsr_core.ui.widgets import frame_reads, md_escape, page_link
from rsr_core.vocabulary import DECIDED

STATUSES = ["pending_review", "approved", "critic_rejected", "human_rejected", "critic_pending"]
assert set(STATUSES) == set(RUNBOOK_STATUSES)
REVIEWER = "reviewer_name"
SUBMITTED = "review_submitted"  # a decision of the review form, recorded by the next run
FOCUS = "rb_focus"  # the round shown below the queue (opened from it, by "next pending" or by a link)
QUEUE = "rb_queue"  # the queue's table (its ticked rounds are the bulk review's)
FOCUS_FORM = "focus"  # the key of the review form of the round shown (the bulk form's is "bulk")
FORM_FOR = "review_form_for"  # the round that form was last drawn for


@cached
def queue(cur: Cursor) -> pd.DataFrame:
    """Every runbook round with its status (`runbook_status`), pending review first."""
    return app_queries.runbook_queue(cur)


def queue_rows(rounds: pd.DataFrame, status: str | None, task_id: str | None) -> pd.DataFrame:
    """The rounds of the queue (`queue(ctx)`) with this status and task (None: any), in the queue's order."""
    if status is None and task_id is None:
        return rounds
    keep = pd.Series(True, index=rounds.index)
    if status is not None:
        keep &= rounds["status"] == status
    if task_id is not None:
        keep &= rounds["task_id"] == task_id
    return rounds[keep].reset_index(drop=True)


@cached
def reviewers(cur: Cursor) -> dict[str, Any]:
    """Runbooks reviewed, in total and per reviewer (runbooks each has decided on, approvals, rejections)."""
    return app_queries.review_progress(cur)


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
    """Reviewed / pending in total and per reviewer (`all_rounds`: the whole queue), drawn by one component
    (four Streamlit progress bars and their row are several elements for the browser to draw on every load)."""
    p = review_progress(ctx, all_rounds)
    total = p["reviewed"] + p["pending"]
    bars = [
        {
            "label": f"reviewed {p['reviewed']} of {total} runbook rounds that need or had a human decision; "
            f"{p['pending']} waiting for review",
            "share": p["reviewed"] / total if total else 1.0,
        },
        *(
            {
                "label": f"{r['reviewer']}: {r['runbooks']} runbooks ({r['approvals']} approvals, "
                f"{r['rejections']} rejections)",
                "share": r["runbooks"] / total if total else 1.0,
            }
            for r in p["by"]
        ),
    ]
    shown_bars = [{**b, "label": shown(str(b["label"]))} for b in bars]
    mount("rsr_core.bars", "bars")(key="rb_progress", data={"bars": shown_bars})


def _dossier_after_review(
    cur: Cursor, before: dict[str, Any], runbook_id: str, rounds: pd.DataFrame, stored: list[Review]
) -> dict[str, Any]:
    """`dossier(runbook_id)` after a review of that round (`before`: as it was; `rounds`: the queue after it;
    `stored`: the reviews written, as stored): the same rounds and flags, a new status, the history with this
    round's new reviews, and its executions read again when it has any (their human_rejected and kept follow
    the review)."""
    status = rounds.loc[rounds["runbook_id"] == runbook_id, "status"]
    executions = before["executions"]
    if not executions.empty:
        executions = app_queries.rewrites_of_runbooks(cur, [r.runbook_id for r, _ in before["rounds"]])
    return {
        **before,
        "status": status.iloc[0] if len(status) else pipeline.runbook_status_of(cur, runbook_id),
        "reviews": [*before["reviews"], *(r for r in stored if r.runbook_id == runbook_id)],
        "executions": executions,
    }


def record_reviews(
    ctx: AppServices,
    runbook_ids: list[str],
    decision: str,
    reviewer: str,
    reason: str,
    shown: str | None = None,
) -> None:
    """Append one review per runbook (one transaction, on the run's use of the database; `review_runbook`, as
    `rsr review` records one); reviews are never replaced, the latest decides. What the Runbooks page reads next
    is carried from the write: the queue with the reviewed rounds' rows read back, the progress read again, the
    round `shown` (its status and history); the counts of every page's frame do not change."""
    with write_in_run(ctx) as written:
        rounds = queue(ctx)  # as the form was drawn from (cached)
        seen = dossier(ctx, shown) if shown in runbook_ids else None
        for read in frame_reads():
            written.keep(read)
        with written.transaction() as cur:
            stored = []
            for rid in runbook_ids:
                done = pipeline.review_runbook(
                    cur, Review(runbook_id=rid, decision=decision, reviewer=reviewer, reason=reason)
                )
                stored += [done.review] if done is not None else []
            # The reviewed rounds read back (their status is the view's), the rest of the queue as it was.
            rounds = app_queries.queue_with_rows(rounds, app_queries.queue_rows(cur, runbook_ids))
            written.carry(queue, value=rounds)
            written.carry(reviewers, value=app_queries.review_progress(cur))
            if seen is not None and shown is not None:
                written.carry(dossier, shown, value=_dossier_after_review(cur, seen, shown, rounds, stored))


def _submit(runbook_ids: list[str], key: str) -> None:
    """The form's callback: it runs before the page's next run and leaves the decision sent (the state
    "decision" of the form `key`: decision, reviewer, reason and a nonce, new with every click) for that run to
    record (`record_submitted`) before it reads anything, so the queue it draws already holds the review and
    the write and the reads share one opening of the file (no second run of the page). What the browser sent
    is checked here. (A state, not a trigger: a component's trigger value is not in `st.session_state` within
    a callback on every Streamlit this package supports.)"""
    sent = (st.session_state.get(f"review_{key}") or {}).get("decision")
    if not isinstance(sent, dict) or sent.get("decision") not in ("approve", "reject"):
        return
    reviewer, reason = (sent.get(name) for name in ("reviewer", "reason"))
    reviewer = reviewer.strip() if isinstance(reviewer, str) else ""
    reason = reason.strip() if isinstance(reason, str) else ""
    error = review_problem(reviewer, reason)
    if error:
        st.session_state[f"review_error_{key}"] = error
        return
    st.session_state[REVIEWER] = reviewer
    st.session_state[SUBMITTED] = (list(runbook_ids), sent["decision"], reviewer, reason)
    clear_reason(key)  # the reason was this decision's; the reviewer stays
    if key == "bulk":
        clear(QUEUE)  # the ticks were for this decision


def clear_reason(key: str) -> None:
    """Empty the reason field of the review form `key` (from its next drawing on)."""
    epoch = f"review_epoch_{key}"
    st.session_state[epoch] = st.session_state.get(epoch, 0) + 1


def record_submitted(ctx: AppServices) -> None:
    """Record the decision the review form submitted for this run, if any (before the page reads the queue)."""
    submitted = st.session_state.pop(SUBMITTED, None)
    if submitted is None:
        return
    runbook_ids, decision, reviewer, reason = submitted
    try:
        record_reviews(ctx, runbook_ids, decision, reviewer, reason, shown=st.session_state.get(FOCUS))
    except StoreBusyError as exc:
        st.error(
            md_escape(f"the decision was not recorded (submit it again when the database is free): {exc}")
        )
        return
    except pipeline.ReviewRefused as exc:
        st.error(md_escape(f"the decision was not recorded: {exc}"))
        return
    st.session_state["review_done"] = f"{DECIDED[decision]} {len(runbook_ids)} runbook(s) as {reviewer}"


def open_round(runbook_id: str) -> None:
    """Show the round `runbook_id` below the queue (from this run on)."""
    st.session_state[FOCUS] = runbook_id


def next_pending(pending: list[str], current: str | None) -> str | None:
    """The round "next pending" opens: the first pending one after `current` (by id), else the first."""
    after = [r for r in pending if current is None or r > current]
    return next(iter(after or pending), None)


def review_form(runbook_ids: list[str], key: str) -> None:
    """Approve / reject with reviewer name (remembered for the session) and reason; the queue shows it at once.
    One component (rsr_core/ui/assets/review.js, its fields as long as MAX_REVIEWER / MAX_REASON): a Streamlit
    form of two text inputs and two buttons is several elements drawn on every load and every review."""
    mount("rsr_core.review", "review")(
        key=f"review_{key}",
        data={
            "reviewer": st.session_state.get(REVIEWER, ""),
            "count": len(runbook_ids),
            "epoch": st.session_state.get(f"review_epoch_{key}", 0),
            "error": st.session_state.pop(f"review_error_{key}", ""),
            "longest": {"reviewer": MAX_REVIEWER, "reason": MAX_REASON},
        },
        on_decision_change=functools.partial(_submit, list(runbook_ids), key),
    )


def flagged_segments(text: str, flags: list[CriticFlag]) -> list[tuple[str, bool]]:
    """The runbook text in pieces, each marked when some flag's evidence span covers it (overlapping spans
    merged); the pieces put together are the text."""
    spans = sorted(
        {(f.span_start, f.span_end) for f in flags if f.span_start is not None and f.span_end is not None}
    )
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[tuple[str, bool]] = []
    pos = 0

    def add(piece: str, marked: bool) -> None:
        if out and out[-1][1] == marked:  # an empty span between two pieces: one piece
            out[-1] = (out[-1][0] + piece, marked)
        else:
            out.append((piece, marked))

    for start, end in merged:  # spans come from the critic's output: clamped to the text
        start, end = min(max(start, pos), len(text)), min(end, len(text))
        if start > pos:
            add(text[pos:start], False)
            pos = start
        if end > pos:
            add(text[pos:end], True)
            pos = end
    if pos < len(text):
        add(text[pos:], False)
    return out


def round_card(rb: Runbook, flags: list[CriticFlag]) -> dict[str, Any]:
    """One critic round as the rounds component draws it: heading, the runbook with its flagged spans, the
    flags."""
    cards = []
    for f in flags:
        where = "" if f.span_start is None else f" · characters {f.span_start}–{f.span_end}"
        cards.append(
            {
                "head": shown(f"{f.kind} · {f.stage} stage · score {f.score:.2f}{where}"),
                "evidence": shown(f.evidence),
                "matched": shown(f"matches {f.matched_path or 'hidden text'}: {f.matched_text}")
                if f.matched_text
                else "",
                "reason": shown(f.reason or ""),
            }
        )
    return {
        "title": shown(
            f"round {rb.round} · critic verdict {rb.critic_verdict} · {len(flags)} flag(s) · "
            f"prompt {rb.prompt_version} · model {rb.model}"
        ),
        "segments": [(shown(piece), marked) for piece, marked in flagged_segments(rb.text(), flags)],
        "summary": f"the {len(flags)} flag(s) of round {rb.round}",
        "flags": cards,
    }


def critic_rounds(rounds: list[tuple[Runbook, list[CriticFlag]]], key: str) -> None:
    """Every round of a lineage (verdict, the runbook with each flagged span marked, its flags), drawn by one
    component as plain text: one element for the browser, where Streamlit's own would be several per round and
    flag."""
    mount("rsr_core.rounds", "rounds")(key=key, data={"rounds": [round_card(rb, f) for rb, f in rounds]})


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
        key="rb_executions",
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
    critic_rounds(d["rounds"], key="rb_rounds")  # one key: the component is redrawn, not mounted anew
    # One form for whichever round is shown (its widgets are redrawn, not mounted anew for every round); a
    # reason typed for one round is not carried to the next.
    if st.session_state.get(FORM_FOR) != runbook_id:
        st.session_state[FORM_FOR] = runbook_id
        clear_reason(FOCUS_FORM)
    review_form([runbook_id], key=FOCUS_FORM)
    st.markdown("**review history** (append-only; the latest decides)")
    if d["reviews"]:
        table(
            pd.DataFrame(
                [h.model_dump(include={"created_at", "reviewer", "decision", "reason"}) for h in d["reviews"]]
            ),
            key="rb_reviews",
            wrap=("reason",),
        )
    else:
        st.caption("not reviewed")
    provenance(rb, d["executions"], [r for r, _ in d["rounds"]])
