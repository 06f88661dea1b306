"""Rewrite: choose sources, K/M/rounds/gate and models (kept per database), check the endpoint, start a job and
follow every job live."""

import streamlit as st

from rsr_core.jobs.runner import JobError
from rsr_core.llm.client import LLMError
from rsr_core.store import app_queries
from rsr_core.ui.data import cached
from rsr_core.ui.grid import clear, grid
from rsr_core.ui.rewrite_views import (
    backend_form,
    endpoint_form,
    endpoint_label,
    job_params,
    job_rows,
    load_form,
    make_backend,
    progress,
    readiness,
    settings_label,
)
from rsr_core.ui.widgets import app_services, md_escape, page_number, require_data, scripted_banner
from rsr_core.vocabulary import JOB_RESUMABLE


@cached
def candidates(cur):
    """Successful discovery runs that can be rewritten."""
    return app_queries.rewrite_candidates(cur)


SOURCE_ROWS = 50  # successes drawn per page (a paper-scale database has thousands)

st.title("Rewrite")
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    load_form(ctx)
    docker_ready = readiness(ctx)
    # The forms sit in popovers labelled with their values: each text or number field costs a page load its
    # drawing, and a popover's fields are drawn only when it is opened.
    with st.popover(endpoint_label(), key="rw_endpoint"):
        url, key, models = endpoint_form(ctx)
    st.subheader("Sources")
    found = candidates(ctx)
    chosen_tasks = len(st.session_state.get("rw_tasks") or [])
    # Hundreds of task ids: in a popover, whose list the browser draws only when it is opened.
    with st.popover(f"rewrite every success of some tasks ({chosen_tasks} chosen)"):
        tasks = st.multiselect(
            "rewrite every success of these tasks", sorted(found["task_id"].unique()), key="rw_tasks"
        )
    page = page_number(st, "sources page", len(found), SOURCE_ROWS, f"{len(found):,} successes", "rw_page")
    shown = found.iloc[(page - 1) * SOURCE_ROWS : page * SOURCE_ROWS].reset_index(drop=True)
    sources = grid(shown, key="rw_sources", row_key="trajectory_id", select="multi")
    picked = st.empty()  # always there: what appears on ticking a row moves nothing below it
    if sources:
        c = picked.container().columns([4, 1])
        c[0].caption(f"{len(sources)} source(s) selected (kept across pages)")
        c[1].button("clear selection", key="rw_clear", on_click=clear, args=("rw_sources",))
    with st.popover(settings_label(), key="rw_settings"):
        params = job_params(ctx, sources, tasks, models)
        backend, address = backend_form(ctx)
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
            workers = st.session_state["workers"]
            job = ctx.jobs.start(
                params, llm, workers=workers, backend=make_backend(ctx, backend, address, url, key, workers)
            )
            st.success(md_escape(f"started {job.job_id}; the app stays usable while it runs"))
        except (JobError, LLMError, ValueError, ConnectionError, ImportError) as exc:
            st.error(md_escape(str(exc)))
    resumable = [
        r["job_id"]
        for r in job_rows(ctx)
        if r["status"] in JOB_RESUMABLE and r["job_id"] not in {j.job_id for j in ctx.jobs.active()}
    ]
    if resumable:
        with st.popover(f"resume a job ({len(resumable)} can be resumed)", key="rw_resume"):
            job_id = st.selectbox(
                "resume a job (after approving runbooks, or after a failure)", resumable, key="resume_job"
            )
            resume = st.button("resume", key="resume_btn", disabled=not docker_ready or not url)
        if resume:
            try:
                workers = st.session_state["workers"]
                ctx.jobs.resume(
                    job_id,
                    ctx.llm_for(url, key),
                    workers=workers,
                    backend=make_backend(ctx, backend, address, url, key, workers),
                )
            except (JobError, LLMError, ValueError) as exc:
                st.error(md_escape(str(exc)))
    st.subheader("Jobs")
    progress(ctx)
