"""Rewrite: choose sources, K/M/rounds/gate and models (kept per database), check the endpoint, start a job and
follow every job live."""

import streamlit as st

from rsr_core.jobs.runner import JobError
from rsr_core.llm.client import LLMError
from rsr_core.store import app_queries
from rsr_core.store import jobs as jobs_sql
from rsr_core.ui.data import cached, read
from rsr_core.ui.rewrite_views import endpoint_form, job_params, load_form, progress, readiness
from rsr_core.ui.widgets import app_services, md_escape, require_data


@cached
def candidates(cur):
    """Successful discovery runs that can be rewritten."""
    return app_queries.rewrite_candidates(cur)


st.title("Rewrite")
ctx = app_services()
if require_data(ctx):
    load_form(ctx)
    docker_ready = readiness(ctx)
    url, key, models = endpoint_form(ctx)
    st.subheader("Sources")
    found = candidates(ctx)
    tasks = st.multiselect(
        "rewrite every success of these tasks", sorted(found["task_id"].unique()), key="rw_tasks"
    )
    event = st.dataframe(
        found, hide_index=True, on_select="rerun", selection_mode="multi-row", key="rw_sources"
    )
    sources = [found.iloc[i]["trajectory_id"] for i in event.selection.rows] if event else []
    params = job_params(ctx, sources, tasks, models)
    start = st.button(
        "start the job",
        type="primary",
        key="start_job",
        disabled=params is None or not docker_ready or not url,
    )
    if start and params is not None:
        try:
            llm = ctx.llm_for(url, key)
            llm.list_models()  # the endpoint must answer before a job is started
            job = ctx.jobs.start(params, llm, workers=st.session_state["workers"])
            st.success(md_escape(f"started {job.job_id}; the app stays usable while it runs"))
        except (JobError, LLMError, ValueError) as exc:
            st.error(md_escape(str(exc)))
    resumable = [
        r["job_id"]
        for r in read(ctx, jobs_sql.list_jobs)
        if r["status"] in ("waiting_review", "failed", "cancelled", "running")
        and r["job_id"] not in {j.job_id for j in ctx.jobs.active()}
    ]
    if resumable:
        c = st.columns([3, 1])
        job_id = c[0].selectbox(
            "resume a job (after approving runbooks, or after a failure)", resumable, key="resume_job"
        )
        if c[1].button("resume", key="resume_btn", disabled=not docker_ready or not url):
            try:
                ctx.jobs.resume(job_id, ctx.llm_for(url, key), workers=st.session_state["workers"])
            except (JobError, ValueError) as exc:
                st.error(md_escape(str(exc)))
    st.subheader("Jobs")
    progress(ctx)
