"""The trajectory list, one trajectory step by step, and two side by side, turn by turn (Streamlit).

Everything shown is bounded: the list 50 rows a page, a trajectory 25 steps a page, the side-by-side view a
page of turns; only the rows of the page are read from the store.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from rsr_core.analysis.cost import cost_usd
from rsr_core.models import Trajectory
from rsr_core.store import app_queries, pipeline, queries
from rsr_core.store.columns import parse_time
from rsr_core.transfer.stages import evidence_stage
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached
from rsr_core.ui.grid import clear, grid
from rsr_core.ui.keys import widget_key
from rsr_core.ui.steps import show_steps
from rsr_core.ui.text import shown
from rsr_core.ui.views import turn_spans
from rsr_core.ui.widgets import md_escape, money_column, page_number, select_in_popover

STEPS_PER_PAGE = 25
TURNS_PER_PAGE = 8
ROWS_PER_PAGE = 50
ALWAYS = ["trajectory_id", "task_id", "kind", "harness"]
OPTIONAL = {
    "reward": "reward",
    "tampered": "verifier tampered",
    "steps": "steps",
    "prompt_tokens": "prompt tokens",
    "completion_tokens": "completion tokens",
    "cost_usd": "cost (USD)",
    "duration_s": "duration (s)",
    "started_at": "started",
    "model": "model",
    "commands": "commands",
    "runbook_id": "runbook",
    "source_trajectory_id": "source",
    "scripted": "scripted",
}
MORE_FILTERS = ("f_reward", "f_flags", "f_review", "f_kept", "f_tampered")
DEFAULT_COLUMNS = [
    "reward",
    "steps",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "duration_s",
    "started_at",
]


@cached
def _facets(cur: Cursor) -> dict[str, list[str]]:
    return app_queries.facet_values(cur)


@cached
def _page(cur: Cursor, f, limit, offset, sort, descending, prices) -> pd.DataFrame:
    return app_queries.list_page(cur, f, limit, offset, sort, descending, prices)


@cached
def _count(cur: Cursor, f) -> int:
    return app_queries.list_count(cur, f)


@cached
def _trajectory(cur: Cursor, trajectory_id: str, lo: int, hi: int) -> Trajectory | None:
    return queries.get_trajectory(cur, trajectory_id, lo, hi)


@cached
def _step_sources(cur: Cursor, trajectory_id: str) -> list[str]:
    return app_queries.step_sources(cur, trajectory_id)


@cached
def _rewrite_status(cur: Cursor, trajectory_id: str) -> dict | None:
    status = app_queries.rewrite_status_of(cur, trajectory_id)
    if status is None:
        return None
    verdict = pipeline.transfer_of(cur, trajectory_id)
    status["evidence"] = (verdict.deterministic_evidence + verdict.llm_evidence) if verdict else []
    return status


def _any(value: str | None) -> str:
    return "any" if value is None else value


FACET_KEYS = {"task_id": "f_task", "category": "f_category", "harness": "f_harness", "kind": "f_kind"}


def list_filters(ctx: AppServices) -> app_queries.ListFilter:
    """Filter widgets (stable keys) -> the list filter."""
    facets = _facets(ctx)
    with st.container(border=True):
        c = st.columns([2, 1, 1, 1, 1], vertical_alignment="bottom")
        search = c[0].text_input("search commands, messages and observations", key="f_search")
        task, category, harness, kind = (
            select_in_popover(col, name.removesuffix("_id"), [None, *facets[name]], key, format_func=_any)
            for col, (name, key) in zip(c[1:], FACET_KEYS.items(), strict=True)
        )
        more = [k for k in MORE_FILTERS if st.session_state.get(k, "any") != "any"]
        # In a popover: the browser mounts its widgets only when it is opened (each is costly to draw).
        with st.popover(f"more filters ({len(more)} set)" if more else "more filters"):
            reward = st.selectbox("reward", ["any", "solved (>= 1)", "not solved"], key="f_reward")
            flags = st.selectbox("critic / transfer flags", ["any", "has flags", "no flags"], key="f_flags")
            review = st.selectbox(
                "runbook review", ["any", "approved", "rejected", "unreviewed"], key="f_review"
            )
            kept = st.selectbox("kept for training", ["any", "kept", "not kept"], key="f_kept")
            tampered = st.selectbox("verifier", ["any", "tampered", "not tampered"], key="f_tampered")
    core = queries.TrajectoryFilter(
        task_id=task,
        category=category,
        harness=harness,
        kind=kind,
        search=search or None,
        min_reward=1.0 if reward.startswith("solved") else None,
        max_reward=0.999999 if reward == "not solved" else None,
        tampered=None if tampered == "any" else tampered == "tampered",
    )
    return app_queries.ListFilter(
        core,
        has_flags=None if flags == "any" else flags == "has flags",
        review_status=None if review == "any" else app_queries.as_review_status(review),
        kept=None if kept == "any" else kept == "kept",
    )


def _sort_name(column: str | None) -> str:
    """A sort choice as the list names it (None: its default order)."""
    return "task, kind, harness" if column is None else OPTIONAL.get(column, column)


def trajectory_list(ctx: AppServices) -> None:
    """The filtered list, sorted by any column, with the columns the reader chose; select to open or compare."""
    f = list_filters(ctx)
    c = st.columns([1, 2, 2], vertical_alignment="bottom")
    with c[0].popover("columns"):
        columns = st.multiselect(
            "columns",
            list(OPTIONAL),
            DEFAULT_COLUMNS,
            key="list_columns",
            format_func=lambda c: OPTIONAL.get(c, c),
        )
    order = st.session_state.get("list_sort")
    arrow = " (descending)" if order is not None and st.session_state.get("list_desc") else ""
    with c[1].popover(
        md_escape(f"sort by: {_sort_name(order)}{arrow}"), width="stretch", key="list_sort_pop"
    ):
        sort = st.selectbox("sort by", [None, *ALWAYS, *OPTIONAL], key="list_sort", format_func=_sort_name)
        descending = st.toggle("descending", key="list_desc", disabled=sort is None)
    total = _count(ctx, f)
    page = page_number(c[2], "page", total, ROWS_PER_PAGE, f"{total:,} trajectories", "list_page")
    prices = tuple(sorted(ctx.settings.prices.items()))
    frame = _page(ctx, f, ROWS_PER_PAGE, (page - 1) * ROWS_PER_PAGE, sort, descending, prices)
    shown = frame[[*ALWAYS, *columns]] if not frame.empty else frame
    if "cost_usd" in shown:
        shown = shown.assign(cost_usd=money_column(shown["cost_usd"]))
    chosen = grid(
        shown,
        key="list_table",
        row_key="trajectory_id",
        select="multi",
        labels=OPTIONAL,
        formats={"duration_s": _tenths},
    )
    if "cost_usd" in columns and not frame.empty and frame["cost_usd"].isna().any():
        st.caption("cost is unknown where the run recorded none and its model has no price in RSR_PRICES")
    b = st.columns([1, 1.4, 1, 3])
    if b[0].button("open", disabled=len(chosen) != 1, key="open_one"):
        st.query_params.from_dict({"trajectory": chosen[0]})
        st.rerun()
    if b[1].button("compare side by side", disabled=len(chosen) != 2, key="compare_two"):
        st.query_params.from_dict({"compare": chosen})
        st.rerun()
    b[2].button(
        "clear selection", disabled=not chosen, key="clear_chosen", on_click=clear, args=("list_table",)
    )
    b[3].caption(
        f"{len(chosen)} selected (kept across pages and filters): one to open it, two to compare them"
        if chosen
        else "select one row to open it, two to compare them (selections are kept across pages)"
    )


def step_number(raw: str) -> int | None:
    """A `?step=` value as a step number: one to nine ASCII digits (`str.isdigit` takes "²" and other digits
    `int` refuses); None for anything else."""
    return int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) else None


def compared_ids(values: list[str]) -> tuple[str, str] | None:
    """The two ids of `?compare=`: two values (`?compare=A&compare=B`, which takes ids of any characters), or
    one holding two ids split by a comma; None otherwise."""
    if len(values) == 1:
        values = [x for x in values[0].split(",") if x]
    return (values[0], values[1]) if len(values) == 2 and all(values) else None


def _tenths(value) -> str:
    return "" if value is None or pd.isna(value) else f"{value:.1f}"


def _money(ctx: AppServices, traj: Trajectory, prompt: int | None, completion: int | None, recorded) -> str:
    value = cost_usd(traj.model, prompt, completion, recorded, ctx.settings.prices)
    return "cost unknown" if value is None else f"${value:.4f}"


def header(ctx: AppServices, traj: Trajectory, totals: dict | None = None) -> None:
    """Provenance, verdicts, time and cost of a run."""
    reward = "not verified" if traj.reward is None else f"{traj.reward:g}"
    st.subheader(md_escape(traj.trajectory_id))
    st.caption(
        md_escape(
            f"task {traj.task_id} · {traj.kind} · harness {traj.harness} · model {traj.model or 'unknown'} · reward {reward}"
            + (" · scripted model (not sampled)" if traj.scripted else "")
        )
    )
    if totals:
        start, end = parse_time(traj.started_at), parse_time(traj.finished_at)
        took = (
            f"{(end - start).total_seconds():.1f} s" if start and end and end >= start else "duration unknown"
        )
        tokens = (
            f"{totals['prompt'] or 0:,} prompt + {totals['completion'] or 0:,} completion tokens"
            if totals["prompt"] is not None or totals["completion"] is not None
            else "tokens unknown"
        )
        money = _money(ctx, traj, totals["prompt"], totals["completion"], totals["cost"])
        st.caption(md_escape(f"started {traj.started_at or '?'} · {took} · {tokens} · {money}"))
    if traj.verifier_tampered:
        ground = [c.path for c in traj.changed_paths if c.verifier_ground]
        st.error(
            md_escape(
                "verifier tampered: this run changed the verifier's own ground ("
                + ", ".join(ground[:5])
                + (" …" if len(ground) > 5 else "")
                + "); its reward is kept as measured but it never counts as solved, verified or trainable"
            )
        )
    inconsistent = traj.extra.get("verifier_inconsistent")
    if inconsistent:
        st.error(
            md_escape(
                f"verifier inconsistent: the tests wrote reward 1 but {inconsistent}; scored 0, so it never "
                "counts as solved, verified or trainable"
            )
        )
    if traj.kind == "rewrite":
        st.caption(md_escape(f"source {traj.source_trajectory_id} · runbook {traj.runbook_id}"))
        status = _rewrite_status(ctx, traj.trajectory_id)
        if status is not None and not status["kept"]:
            st.warning(md_escape("not kept: " + "; ".join(not_kept_reasons(status))))
        elif status is not None:
            st.success("kept for training")
    if traj.exception:
        st.caption(md_escape(f"ended with: {traj.exception[:500]}"))


def not_kept_reasons(status: dict) -> list[str]:
    """Why a rewrite is not kept, from its `rewrite_status` row (and transfer evidence)."""
    reasons = []
    if status["verifier_tampered"]:
        reasons.append("it tampered with the verifier")
    elif not status["verified"]:
        reasons.append(f"not verified (reward {status['reward']})")
    if status["answer_transfer"]:
        lines = status.get("evidence") or []
        stages = ", ".join(sorted({evidence_stage(e) for e in lines}))  # which stage of the check found it
        evidence = "; ".join(lines)[:600]
        reasons.append(
            "answer transfer" + (f" ({stages})" if stages else "") + (f": {evidence}" if evidence else "")
        )
    if status["human_rejected"]:
        reasons.append("its runbook was rejected by a reviewer")
    return reasons or ["unknown"]


@cached
def _totals(cur: Cursor, trajectory_id: str) -> dict:
    return app_queries.trajectory_totals(cur, trajectory_id)


def changed_files(traj: Trajectory) -> None:
    """What the run changed on disk before the verifier ran (the engine's diff of the sandbox)."""
    if not traj.changed_paths:
        return
    total = traj.extra.get("changed_paths_total", len(traj.changed_paths))
    ground = sum(1 for c in traj.changed_paths if c.verifier_ground)
    label = (
        f"files this run changed ({total:,}"
        + (f"; {ground} on the verifier's own ground" if ground else "")
        + ")"
    )
    with st.expander(label, expanded=bool(ground)):
        frame = pd.DataFrame([c.model_dump() for c in traj.changed_paths])
        frame = frame.sort_values(["verifier_ground", "path"], ascending=[False, True])
        grid(frame, key=widget_key("changed", traj.trajectory_id), height=400 if len(frame) > 12 else None)
        if total > len(traj.changed_paths):
            st.caption(f"{total - len(traj.changed_paths):,} more changes were not stored")


def _seconds(steps, following) -> dict[int, float]:
    out: dict[int, float] = {}
    for step, nxt in zip(steps, [*steps[1:], following][: len(steps)], strict=True):
        a, b = parse_time(step.timestamp), parse_time(nxt.timestamp if nxt else None)
        if a and b and b >= a:
            out[step.index] = (b - a).total_seconds()
    return out


def trajectory_detail(ctx: AppServices, trajectory_id: str, step: int | None) -> None:
    """One trajectory, STEPS_PER_PAGE steps at a time (the page holding `step` first, scrolled to it)."""
    head = _trajectory(ctx, trajectory_id, 1, 0)
    if head is None:
        st.error(md_escape(f"no trajectory {trajectory_id!r}"))
        return
    header(ctx, head, _totals(ctx, trajectory_id))
    changed_files(head)
    n_steps = len(_step_sources(ctx, trajectory_id))
    if n_steps == 0:
        st.info(
            "This trajectory has no steps: its source recorded no agent log (a trial without a trajectory file "
            "or episodes). Its provenance and verdict are above."
        )
        _verifier_output(head)
        return
    if step is not None and not 1 <= step <= n_steps:
        st.error(md_escape(f"{trajectory_id} has no step {step}: it has {n_steps} steps (1–{n_steps})"))
        return
    first = ((step - 1) // STEPS_PER_PAGE + 1) if step else 1
    page = page_number(
        st,
        "steps page",
        n_steps,
        STEPS_PER_PAGE,
        f"{n_steps} steps",
        widget_key("steps_page", trajectory_id),
        first,
    )
    lo = (page - 1) * STEPS_PER_PAGE + 1
    traj = _trajectory(ctx, trajectory_id, lo, lo + STEPS_PER_PAGE)
    if traj is None:  # deleted since the header was read
        st.error(md_escape(f"no trajectory {trajectory_id!r}"))
        return
    steps = traj.steps[:STEPS_PER_PAGE]
    following = traj.steps[STEPS_PER_PAGE] if len(traj.steps) > STEPS_PER_PAGE else None
    seconds = _seconds(steps, following)
    linked = step if step is not None and lo <= step < lo + STEPS_PER_PAGE else None
    show_steps(
        widget_key("steps", trajectory_id),
        lambda cards: [
            {
                "label": "",
                "cells": [
                    [
                        cards.card(s, f"{trajectory_id}_{s.index}", s.index == step, seconds.get(s.index))
                        for s in steps
                    ]
                ],
            }
        ],
        scroll=linked,
    )
    if page * STEPS_PER_PAGE >= n_steps:  # the last page
        _verifier_output(traj)


def _verifier_output(traj: Trajectory) -> None:
    if traj.verifier_output:
        with st.expander("verifier output"):
            st.code(shown(traj.verifier_output), language="text")


def side_by_side(ctx: AppServices, a_id: str, b_id: str) -> None:
    """Two trajectories, turn k of one beside turn k of the other, TURNS_PER_PAGE turns a page (only those steps
    are read and drawn, however long the runs are)."""
    found = [_trajectory(ctx, tid, 1, 0) for tid in (a_id, b_id)]
    heads = [h for h in found if h is not None]
    if len(heads) < 2:
        missing = [tid for tid, h in zip((a_id, b_id), found, strict=True) if h is None]
        st.error(md_escape(f"no trajectory {missing[0]!r}"))
        return
    cols = st.columns(2)
    for col, h, tid in zip(cols, heads, (a_id, b_id), strict=True):
        with col:
            header(ctx, h, _totals(ctx, tid))
    spans = [turn_spans(_step_sources(ctx, tid)) for tid in (a_id, b_id)]
    n_turns = max(len(spans[0]), len(spans[1]))
    page = page_number(
        st, "turns page", n_turns, TURNS_PER_PAGE, f"{n_turns} turns", widget_key("turns_page", a_id, b_id)
    )
    first, last = (page - 1) * TURNS_PER_PAGE, min(page * TURNS_PER_PAGE, n_turns)
    sides = []
    for tid, turns in zip((a_id, b_id), spans, strict=True):
        shown = turns[first:last]
        part = _trajectory(ctx, tid, shown[0][0], shown[-1][1]) if shown else None
        by_index = {s.index: s for s in part.steps} if part is not None else {}
        sides.append([[by_index[i] for i in range(lo, hi + 1) if i in by_index] for lo, hi in shown])
    show_steps(
        widget_key("pair", a_id, b_id),
        lambda cards: [
            {
                "label": f"turn {first + k + 1}",
                "cells": [
                    [
                        cards.card(s, f"{prefix}{first + k}_{s.index}", anchor=False)
                        for s in (side[k] if k < len(side) else [])
                    ]
                    for side, prefix in ((sides[0], "A"), (sides[1], "B"))
                ],
            }
            for k in range(last - first)
        ],
    )
