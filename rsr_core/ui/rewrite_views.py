"""The Rewrite page's parts: what is missing, the endpoint (kept per database), the job form, and every job's
live progress with its failures, time, tokens and cost (Streamlit)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rsr_core.analysis.cost import job_costs
from rsr_core.llm.client import LLMError
from rsr_core.rewrite.units import RewriteParams
from rsr_core.sandbox.engine import DockerUnavailable, docker_client
from rsr_core.sandbox.images import base_is_current
from rsr_core.store import jobs as jobs_sql
from rsr_core.store.preferences import get_preferences, set_preferences
from rsr_core.ui.context import DEMO_MODELS, AppServices
from rsr_core.ui.data import Cursor, cached
from rsr_core.ui.grid import grid
from rsr_core.ui.keys import widget_key
from rsr_core.ui.widgets import md_escape, money_column, page_number
from rsr_core.vocabulary import JOB_STATUSES

SCRIPTED = "scripted-demo"  # the stored endpoint value that means "the project's scripted demo model"
PREFIX = "rewrite."
FORM_KEYS = (
    "endpoint",
    "model_planner",
    "model_critic",
    "model_executor",
    "k",
    "m",
    "rounds",
    "gate",
    "workers",
    "backend",
    "ray_address",
)


@st.cache_data(ttl=30, show_spinner=False)
def docker_status(base_image: str) -> tuple[bool, str]:
    """(ready, message) for the sandbox engine."""
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        return False, f"{exc}"
    if not base_is_current(client, base_image):
        return (
            False,
            f"the sandbox base image {base_image} is missing or stale: build it with `rsr sandbox build-base` "
            "(or `make base-image`)",
        )
    return True, f"Docker engine answers; base image {base_image} present"


@cached
def _preferences(cur: Cursor) -> dict[str, Any]:
    return get_preferences(cur, PREFIX)


def _save(ctx: AppServices, *names: str) -> None:
    values = {}
    for name in names:
        value = st.session_state.get(name)
        if name == "endpoint" and ctx.scripted is not None and value == ctx.scripted.url:
            value = SCRIPTED  # its port changes with every start: remember the choice, not the address
        values[PREFIX + name] = value
    with ctx.store.transaction() as cur:
        set_preferences(cur, values)


def load_form(ctx: AppServices) -> None:
    """Fill the form from what this database remembers (once per session), else from the settings."""
    if st.session_state.get("_rewrite_form_loaded"):
        return
    saved = _preferences(ctx)
    defaults: dict[str, Any] = {
        "endpoint": ctx.settings.llm_base_url or "",
        **{f"model_{role}": ctx.settings.role_model(role) for role in DEMO_MODELS},
        "k": 4,
        "m": 4,
        "rounds": 3,
        "gate": "critic",
        "workers": 2,
        "backend": ctx.settings.backend,
        "ray_address": ctx.settings.ray_address or "",
    }
    for name in FORM_KEYS:
        value = saved.get(PREFIX + name, defaults[name])
        if name == "endpoint" and value == SCRIPTED:
            value = ctx.start_scripted_demo()
        st.session_state.setdefault(name, value)
    st.session_state["_rewrite_form_loaded"] = True


def readiness(ctx: AppServices) -> bool:
    """Say what is missing and how to get it; True when Docker is ready."""
    ready, message = docker_status(ctx.settings.base_image)
    (st.success if ready else st.warning)(
        md_escape(("Sandboxes: " if ready else "Sandboxes unavailable: ") + message)
    )
    endpoint = st.session_state.get("endpoint") or ""
    if ctx.scripted is not None and endpoint == ctx.scripted.url:
        st.success("Model: the project's scripted demo model (answers are replayed, not sampled)")
    elif endpoint:
        st.success(md_escape(f"Model endpoint in use: {endpoint}"))
    else:
        st.info(
            "No model endpoint configured. Set RSR_LLM_BASE_URL (and OPENAI_API_KEY if it needs one) before "
            "starting the app, enter one under 'model endpoint' below, or use the project's scripted demo "
            "model: it replays recorded answers for the demo tasks, and runs made with it are labelled as "
            "scripted."
        )
        if st.button("use the scripted demo model", key="use_scripted"):
            st.session_state["endpoint"] = ctx.start_scripted_demo()
            for role, model in DEMO_MODELS.items():
                st.session_state[f"model_{role}"] = model
            _save(ctx, "endpoint", *(f"model_{role}" for role in DEMO_MODELS))
            st.rerun()
    return ready


def endpoint_label() -> str:
    """What the endpoint popover holds, as its label (read before its fields are drawn in this run)."""
    state = st.session_state
    models = " / ".join(str(state.get(f"model_{role}") or "?") for role in DEMO_MODELS)
    return md_escape(
        f"model endpoint: {state.get('endpoint') or 'none set'} · planner / critic / executor: {models}"
    )


def settings_label() -> str:
    """The job settings popover's label: the values of its fields."""
    state = st.session_state
    backend = state.get("backend") or "threads"
    where = f"ray {state.get('ray_address') or '(local)'}" if backend == "ray" else "threads"
    return md_escape(
        f"job settings: K {state.get('k')} · M {state.get('m')} · {state.get('rounds')} critic round(s) · "
        f"gate {state.get('gate')} · {state.get('workers')} worker(s) on {where}"
    )


def endpoint_form(ctx: AppServices) -> tuple[str, str, dict[str, str]]:
    """Endpoint URL, key (never shown, never stored) and the three role models; kept per database."""
    # Each row of fields is one horizontal container (columns are an element per column and one for the row).
    with st.container(horizontal=True):
        url = st.text_input(
            "endpoint (OpenAI-compatible base URL)", key="endpoint", on_change=_save, args=(ctx, "endpoint")
        )
        key = st.text_input("API key (blank: OPENAI_API_KEY; never stored)", type="password", key="api_key")
    if ctx.scripted is not None and url == ctx.scripted.url:
        st.caption("scripted demo model: answers are replayed, not sampled")
    with st.container(horizontal=True):
        models = {
            role: st.text_input(
                f"{role} model", key=f"model_{role}", on_change=_save, args=(ctx, f"model_{role}")
            )
            for role in DEMO_MODELS
        }
    if st.button("check the endpoint", key="check_endpoint"):
        try:
            offered = ctx.llm_for(url, key).list_models()
            missing = [mm for mm in models.values() if offered and mm not in offered]
            st.success(
                md_escape(f"endpoint answers; models offered: {', '.join(offered) or '(none listed)'}")
            )
            if missing:
                st.warning(md_escape(f"not offered by this endpoint: {', '.join(missing)}"))
        except (LLMError, ValueError) as exc:
            st.error(md_escape(str(exc)))
    return url, key, models


def job_params(
    ctx: AppServices, sources: list[str], tasks: list[str], models: dict[str, str]
) -> RewriteParams | None:
    """K, M, rounds, gate (kept per database) -> parameters (None until something is selected)."""
    with st.container(horizontal=True):
        k = st.number_input("K runbooks per source", 1, 16, key="k", on_change=_save, args=(ctx, "k"))
        m = st.number_input("M executions per runbook", 1, 16, key="m", on_change=_save, args=(ctx, "m"))
        rounds = st.number_input("critic rounds", 1, 6, key="rounds", on_change=_save, args=(ctx, "rounds"))
        gate = st.radio(
            "gate", ["critic", "human"], key="gate", horizontal=True, on_change=_save, args=(ctx, "gate")
        )
        st.number_input("workers", 1, 8, key="workers", on_change=_save, args=(ctx, "workers"))
    if not sources and not tasks:
        return None
    return RewriteParams.from_settings(
        ctx.settings,
        sources=sources,
        tasks=tasks,
        k=k,
        m=m,
        rounds=rounds,
        gate=gate,
        planner_model=models["planner"],
        critic_model=models["critic"],
        executor_model=models["executor"],
    )


JOB_ROWS = 25  # jobs drawn per page of the jobs table
UNIT_ROWS = 50  # units drawn per page of a job's units (a job of the paper's size has tens of thousands)


def _jobs_frame(ctx: AppServices, rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["progress"] = [
        f"{r['done']}/{r['units']} done, {r['failed']} failed, {r['running']} running" for r in rows
    ]
    costs = job_costs(_job_usage(ctx), ctx.settings.prices)
    frame["cost_usd"] = money_column(pd.Series([costs.get(r["job_id"], 0.0) for r in rows], dtype="float64"))
    return frame[
        ["job_id", "status", "progress", "started_at", "finished_at", "seconds", "prompt_tokens",
         "completion_tokens", "cost_usd", "scripted", "owner_pid", "owner_host"]
    ]  # fmt: skip


@cached
def job_rows(cur: Cursor) -> list[dict[str, Any]]:
    """Every job of the database (`rsr jobs list`), cached until the data changes."""
    return jobs_sql.list_jobs(cur)


@cached
def _job_usage(cur: Cursor) -> list[dict[str, Any]]:
    return jobs_sql.usage_by_job(cur)


@cached
def _job_detail(cur: Cursor, job_id: str) -> dict[str, Any]:
    return {"counts": jobs_sql.unit_counts(cur, job_id), "failures": jobs_sql.failed_units(cur, job_id)}


@cached
def _units_page(cur: Cursor, job_id: str, page: int) -> list[dict[str, Any]]:
    return jobs_sql.units_of(cur, job_id, (page - 1) * UNIT_ROWS, UNIT_ROWS)


def job_view(ctx: AppServices, job_id: str) -> None:
    """One job: progress by unit kind (failed counted), failures grouped by error, where each unit ran."""
    d = _job_detail(ctx, job_id)
    counts = d["counts"]
    units = sum(sum(v.values()) for v in counts.values())
    total = units or 1
    done = sum(v.get("done", 0) for v in counts.values())
    failed = sum(v.get("failed", 0) for v in counts.values())
    st.progress(
        done / total,
        text=md_escape(
            f"{job_id}: {done}/{total} units done, {failed} failed · "
            + " · ".join(f"{k} {v.get('done', 0)}/{sum(v.values())}" for k, v in counts.items() if v)
        ),
    )
    for f in d["failures"]:
        st.error(md_escape(f"{f['units']} failed unit(s) ({', '.join(f['kinds'])}): {f['error'][:600]}"))
        st.caption(md_escape("first: " + ", ".join(f["first"])))
    if units:
        with st.expander(f"units of {job_id} ({units:,}): where and when each ran"):
            page = page_number(
                st,
                "units page",
                units,
                UNIT_ROWS,
                f"{units:,}",
                widget_key("units_page", job_id),
                one_page_hidden=True,
            )
            shown = pd.DataFrame(_units_page(ctx, job_id, page))
            grid(shown, key=widget_key("units", job_id), height=400 if len(shown) > 12 else None)


LIVE_S = 1.5  # how often the jobs are read again while one runs
# Jobs the view opens first: one that runs, or stopped and waits for someone (a failure, runbooks to review).
WATCHED = ("running", "failed", "waiting_review")
assert set(WATCHED) <= set(JOB_STATUSES)
# How often, while none runs, whether one started is read (a job started from a terminal shows within it).
IDLE_S = 5.0


def _live(ctx: AppServices) -> bool:
    """Whether some job runs: in this process, or in another one (its status in the database)."""
    return bool(ctx.jobs.active()) or any(r["status"] == "running" for r in job_rows(ctx))


def _jobs_state(ctx: AppServices) -> tuple[tuple[str, str], ...]:
    return tuple((r["job_id"], r["status"]) for r in job_rows(ctx))


def progress(ctx: AppServices) -> None:
    """Progress of every job in the database (started here or from a terminal), read again every LIVE_S while
    one runs. While none does, only whether one started or changed is read, every IDLE_S (a part of the page
    with nothing in it), and the jobs are drawn again when one has: every refresh of the jobs' part of the page
    marks each of its elements stale and fresh again in the browser, and a refresh that lands in a click's run
    makes it wait."""
    live = _live(ctx)
    st.fragment(_progress, run_every=LIVE_S if live else None)(ctx, live)
    if not live:
        st.fragment(_watch, run_every=IDLE_S)(ctx, _jobs_state(ctx))


def _watch(ctx: AppServices, drawn: tuple[tuple[str, str], ...]) -> None:
    if _jobs_state(ctx) != drawn or _live(ctx):  # a job started (here or from a terminal) or changed
        st.rerun()


def _progress(ctx: AppServices, live: bool) -> None:
    if _live(ctx) != live:  # a job started or the last one ended: the whole page runs, at the other pace
        st.rerun()
    for job in ctx.jobs.jobs.values():
        if job.error:
            st.error(md_escape(f"{job.job_id}: {job.error}"))
        if job.alive and st.button(f"cancel {job.job_id}", key=widget_key("cancel", job.job_id)):
            ctx.jobs.cancel(job.job_id)
    rows = job_rows(ctx)
    if not rows:
        st.caption("no jobs yet")
        return
    page = page_number(
        st, "jobs page", len(rows), JOB_ROWS, f"{len(rows):,}", "jobs_page", one_page_hidden=True
    )
    shown_rows = rows[(page - 1) * JOB_ROWS : page * JOB_ROWS]
    grid(_jobs_frame(ctx, shown_rows), key="jobs_table", labels={"cost_usd": "cost (USD)"})
    ids = [r["job_id"] for r in rows]
    active = [r["job_id"] for r in rows if r["status"] in WATCHED]
    seen = st.session_state.get("jobs_seen")
    started = [j for j in active if seen is not None and j not in seen]
    if started:  # a job started since the last refresh (here or from a terminal) is the one shown
        st.session_state["job_shown"] = started[0]
    elif st.session_state.get("job_shown") not in ids:
        st.session_state["job_shown"] = active[0] if active else ids[0]
    st.session_state["jobs_seen"] = set(ids)
    shown = st.selectbox("job", ids, key="job_shown")
    if shown:
        job_view(ctx, shown)


def backend_form(ctx: AppServices) -> tuple[str, str]:
    """Where the job's units run: threads of the app process, or a Ray cluster (kept per database)."""
    with st.container(horizontal=True):
        backend = st.radio(
            "run units on",
            ["threads", "ray"],
            key="backend",
            horizontal=True,
            on_change=_save,
            args=(ctx, "backend"),
        )
        address = st.text_input(
            "Ray cluster address (blank: a local Ray instance)",
            key="ray_address",
            disabled=backend != "ray",
            on_change=_save,
            args=(ctx, "ray_address"),
        )
    if backend == "ray":
        st.caption(
            "sandbox units run on nodes that advertise `sandbox` (`rsr worker start --sandboxes N`); the job view "
            "shows the node each unit ran on"
        )
    return backend, address


def make_backend(ctx: AppServices, backend: str, address: str, url: str, key: str, workers: int) -> Any:
    """None for the app's own threads, else a Ray backend on the chosen cluster."""
    if backend != "ray":
        return None
    from rsr_core.jobs.ray_backend import RayBackend

    return RayBackend(address or None, ctx.settings, url, key or ctx.settings.api_key, slots=workers)
