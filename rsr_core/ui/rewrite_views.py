"""The Rewrite page's parts: what is missing, the endpoint, the job form and live progress (Streamlit)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rsr_core.llm.client import LLMError
from rsr_core.rewrite.units import RewriteParams
from rsr_core.sandbox.engine import DockerUnavailable, docker_client
from rsr_core.sandbox.images import image_exists
from rsr_core.store import jobs as jobs_sql
from rsr_core.ui.context import DEMO_MODELS, AppServices
from rsr_core.ui.widgets import md_escape


@st.cache_data(ttl=30, show_spinner=False)
def docker_status(base_image: str) -> tuple[bool, str]:
    """(ready, message) for the sandbox engine."""
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        return False, f"{exc}"
    if not image_exists(client, base_image):
        return (
            False,
            f"the sandbox base image {base_image} is missing: build it with `rsr sandbox build-base` "
            "(or `make base-image`)",
        )
    return True, f"Docker engine answers; base image {base_image} present"


def readiness(ctx: AppServices) -> bool:
    """Say what is missing and how to get it; True when Docker is ready."""
    ready, message = docker_status(ctx.settings.base_image)
    (st.success if ready else st.warning)(
        md_escape(("Sandboxes: " if ready else "Sandboxes unavailable: ") + message)
    )
    if ctx.settings.llm_base_url:
        st.success(md_escape(f"Model endpoint configured: {ctx.settings.llm_base_url} (RSR_LLM_BASE_URL)"))
    else:
        st.info(
            "No model endpoint configured. Set RSR_LLM_BASE_URL (and OPENAI_API_KEY if it needs one) before "
            "starting the app, enter one below, or use the project's scripted demo model: it replays recorded "
            "answers for the demo tasks, and runs made with it are labelled as scripted."
        )
        if st.button("use the scripted demo model", key="use_scripted"):
            st.session_state["endpoint"] = ctx.start_scripted_demo()
            for role, model in DEMO_MODELS.items():
                st.session_state[f"model_{role}"] = model
            st.rerun()
    return ready


def endpoint_form(ctx: AppServices) -> tuple[str, str, dict[str, str]]:
    """Endpoint URL, key (never shown) and the three role models."""
    st.session_state.setdefault("endpoint", ctx.settings.llm_base_url or "")
    for role in DEMO_MODELS:
        st.session_state.setdefault(f"model_{role}", ctx.settings.role_model(role))
    c = st.columns([3, 2])
    url = c[0].text_input("endpoint (OpenAI-compatible base URL)", key="endpoint")
    key = c[1].text_input("API key (blank: OPENAI_API_KEY)", type="password", key="api_key")
    if ctx.scripted is not None and url == ctx.scripted.url:
        st.caption("scripted demo model: answers are replayed, not sampled")
    m = st.columns(3)
    models = {
        role: m[i].text_input(f"{role} model", key=f"model_{role}") for i, role in enumerate(DEMO_MODELS)
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
    """K, M, rounds, gate -> parameters (None until something is selected)."""
    c = st.columns(5)
    k = c[0].number_input("K runbooks per source", 1, 16, 4, key="k")
    m = c[1].number_input("M executions per runbook", 1, 16, 4, key="m")
    rounds = c[2].number_input("critic rounds", 1, 6, 3, key="rounds")
    gate = c[3].radio("gate", ["critic", "human"], key="gate", horizontal=True)
    st.session_state["workers_value"] = c[4].number_input("workers", 1, 8, 2, key="workers")
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


@st.fragment(run_every=1.5)
def progress(ctx: AppServices) -> None:
    """Live progress of the jobs this app runs, and every job in the database."""
    for job in ctx.jobs.jobs.values():
        counts = job.counts
        total = sum(sum(v.values()) for v in counts.values()) or 1
        done = sum(v.get("done", 0) for v in counts.values())
        state = "running" if job.alive else job.status
        st.progress(
            done / total,
            text=md_escape(
                f"{job.job_id}: {state} · {done}/{total} units · "
                + " · ".join(f"{k} {v.get('done', 0)}/{sum(v.values())}" for k, v in counts.items() if v)
            ),
        )
        if job.error:
            st.error(md_escape(job.error))
        if job.alive and st.button("cancel", key=f"cancel_{job.job_id}"):
            ctx.jobs.cancel(job.job_id)
    rows = jobs_sql.list_jobs(ctx.store.cursor())
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="jobs_table")
