"""The trajectory list, one trajectory step by step, and two side by side (Streamlit)."""

from __future__ import annotations

import math

import streamlit as st

from rsr_core.models import Trajectory
from rsr_core.store import app_queries, pipeline, queries
from rsr_core.ui.context import AppServices
from rsr_core.ui.views import align_turns
from rsr_core.ui.widgets import md_escape, render_step

STEPS_PER_PAGE = 25
ROWS_PER_PAGE = 50


def _any(value: str | None) -> str:
    return "any" if value is None else value


def list_filters(ctx: AppServices) -> app_queries.ListFilter:
    """Filter widgets (stable keys) -> the list filter."""
    facets = app_queries.facet_values(ctx.store.cursor())
    with st.container(border=True):
        c = st.columns([2, 1, 1, 1, 1])
        search = c[0].text_input("search commands, messages and observations", key="f_search")
        task = c[1].selectbox("task", [None, *facets["task_id"]], key="f_task", format_func=_any)
        category = c[2].selectbox("category", [None, *facets["category"]], key="f_category", format_func=_any)
        harness = c[3].selectbox("harness", [None, *facets["harness"]], key="f_harness", format_func=_any)
        kind = c[4].selectbox("kind", [None, *facets["kind"]], key="f_kind", format_func=_any)
        d = st.columns(4)
        reward = d[0].selectbox("reward", ["any", "solved (>= 1)", "not solved"], key="f_reward")
        flags = d[1].selectbox("critic / transfer flags", ["any", "has flags", "no flags"], key="f_flags")
        review = d[2].selectbox(
            "runbook review", ["any", "approved", "rejected", "unreviewed"], key="f_review"
        )
        kept = d[3].selectbox("kept for training", ["any", "kept", "not kept"], key="f_kept")
    core = queries.TrajectoryFilter(
        task_id=task,
        category=category,
        harness=harness,
        kind=kind,
        search=search or None,
        min_reward=1.0 if reward.startswith("solved") else None,
        max_reward=0.999999 if reward == "not solved" else None,
    )
    return app_queries.ListFilter(
        core,
        has_flags=None if flags == "any" else flags == "has flags",
        review_status=None if review == "any" else review,
        kept=None if kept == "any" else kept == "kept",
    )


def trajectory_list(ctx: AppServices) -> None:
    """The filtered, paginated list; selecting rows opens one or compares two."""
    f = list_filters(ctx)
    cur = ctx.store.cursor()
    total = app_queries.list_count(cur, f)
    pages = max(1, math.ceil(total / ROWS_PER_PAGE))
    page = st.number_input(f"page (of {pages}; {total:,} trajectories)", 1, pages, 1, key="list_page")
    frame = app_queries.list_page(cur, f, ROWS_PER_PAGE, (page - 1) * ROWS_PER_PAGE)
    event = st.dataframe(
        frame, hide_index=True, on_select="rerun", selection_mode="multi-row", key="list_table"
    )
    chosen = [frame.iloc[i]["trajectory_id"] for i in event.selection.rows] if event else []
    c = st.columns(3)
    if c[0].button("open", disabled=len(chosen) != 1, key="open_one"):
        st.query_params.from_dict({"trajectory": chosen[0]})
        st.rerun()
    if c[1].button("compare side by side", disabled=len(chosen) != 2, key="compare_two"):
        st.query_params.from_dict({"compare": ",".join(chosen)})
        st.rerun()
    c[2].caption("select one row to open it, two to compare them")


def _header(ctx: AppServices, traj: Trajectory) -> None:
    reward = "not verified" if traj.reward is None else f"{traj.reward:g}"
    st.subheader(md_escape(traj.trajectory_id))
    st.caption(
        md_escape(
            f"task {traj.task_id} · {traj.kind} · harness {traj.harness} · model {traj.model} · reward {reward}"
            + (" · scripted model (not sampled)" if traj.scripted else "")
        )
    )
    if traj.kind == "rewrite":
        st.caption(md_escape(f"source {traj.source_trajectory_id} · runbook {traj.runbook_id}"))
        verdict = pipeline.transfer_of(ctx.store.cursor(), traj.trajectory_id)
        if verdict is not None and verdict.answer_transfer:
            st.warning(
                md_escape(
                    "answer transfer: " + "; ".join(verdict.deterministic_evidence + verdict.llm_evidence)
                )
            )


def trajectory_detail(ctx: AppServices, trajectory_id: str, step: int | None) -> None:
    """One trajectory, STEPS_PER_PAGE steps at a time (the page holding `step` first)."""
    head = ctx.store.get_trajectory(trajectory_id, step_from=1, step_to=0)
    if head is None:
        st.error(md_escape(f"no trajectory {trajectory_id!r}"))
        return
    _header(ctx, head)
    n_steps = app_queries.step_count(ctx.store.cursor(), trajectory_id)
    pages = max(1, math.ceil(n_steps / STEPS_PER_PAGE))
    first = ((step - 1) // STEPS_PER_PAGE + 1) if step else 1
    page = st.number_input(
        f"steps page (of {pages}; {n_steps} steps)",
        1,
        pages,
        min(first, pages),
        key=f"steps_page_{trajectory_id}",
    )
    lo = (page - 1) * STEPS_PER_PAGE + 1
    traj = ctx.store.get_trajectory(trajectory_id, step_from=lo, step_to=lo + STEPS_PER_PAGE - 1)
    for s in traj.steps:
        render_step(s, key=f"{trajectory_id}_{s.index}", highlight=s.index == step)
    if traj.verifier_output and page == pages:
        with st.expander("verifier output"):
            st.code(traj.verifier_output, language="text")


def side_by_side(ctx: AppServices, a_id: str, b_id: str) -> None:
    """Two trajectories, turn k of one beside turn k of the other."""
    a, b = ctx.store.get_trajectory(a_id), ctx.store.get_trajectory(b_id)
    if a is None or b is None:
        st.error(md_escape(f"no trajectory {a_id if a is None else b_id!r}"))
        return
    left, right = st.columns(2)
    with left:
        _header(ctx, a)
    with right:
        _header(ctx, b)
    for k, (ta, tb) in enumerate(align_turns(a.steps, b.steps)):
        left, right = st.columns(2)
        with left:
            for s in ta:
                render_step(s, key=f"A{k}_{s.index}")
        with right:
            for s in tb:
                render_step(s, key=f"B{k}_{s.index}")
