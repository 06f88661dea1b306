"""Recording a review (`pipeline.review_runbook`, what `rsr review`, the studio and the demo recording call) and
building a model client (`LLMClient.from_settings`, what the CLI, a worker and the studio call)."""

from __future__ import annotations

import pytest

from rsr_core.llm.client import LLMClient, LLMError
from rsr_core.models import Review, Runbook
from rsr_core.settings import Settings
from rsr_core.store import jobs, pipeline
from rsr_core.ui.context import AppServices


def _round(store, verdict: str, gate: str) -> str:
    with store.transaction() as cur:
        jobs.create_job(cur, f"job-{gate}", {"gate": gate}, scripted=False)
        rb = Runbook(
            runbook_id=f"rb-{verdict}-{gate}",
            lineage_id=f"rb-{verdict}-{gate}",
            source_trajectory_id="src",
            task_id="t",
            job_id=f"job-{gate}",
            variant=0,
            round=0,
            target_end_state="done",
            key_milestones=[],
            useful_checks=[],
            recovery_strategies=[],
            pitfalls=[],
            prompt_version="v1",
            critic_verdict=verdict,
        )
        pipeline.insert_runbook(cur, rb)
    return rb.runbook_id


def test_a_review_is_recorded_and_the_status_read_back_from_the_view(store):
    rid = _round(store, "pass", "human")
    with store.transaction() as cur:
        assert pipeline.runbook_status_of(cur, rid) == "pending_review"
        done = pipeline.review_runbook(cur, Review(runbook_id=rid, decision="reject", reviewer="ana"))
        assert done is not None and done.runbook.runbook_id == rid and done.status == "human_rejected"
        assert done.review == pipeline.reviews_of(cur, rid)[-1]
        again = pipeline.review_runbook(cur, Review(runbook_id=rid, decision="approve", reviewer="bo"))
        assert again is not None and again.status == "approved"


def test_an_unknown_round_records_nothing_and_a_refused_one_says_why(store):
    rejected = _round(store, "reject", "critic")
    with store.transaction() as cur:
        assert (
            pipeline.review_runbook(cur, Review(runbook_id="nope", decision="approve", reviewer="a")) is None
        )
        with pytest.raises(pipeline.ReviewRefused, match="rejected by the critic"):
            pipeline.review_runbook(cur, Review(runbook_id=rejected, decision="approve", reviewer="a"))
        assert cur.execute("SELECT count(*) FROM reviews").fetchone() == (0,)


def test_the_studio_builds_its_model_client_as_the_cli_does(store):
    bare = Settings.model_validate({"llm_base_url": None})
    app = AppServices(bare, store)
    with pytest.raises(LLMError) as studio:
        app.llm_for(None, None)
    with pytest.raises(LLMError) as cli:
        LLMClient.from_settings(bare)
    assert str(studio.value) == str(cli.value)
    client = app.llm_for("http://127.0.0.1:9/v1", "k")
    assert isinstance(client, LLMClient) and client.max_tokens == bare.max_tokens
