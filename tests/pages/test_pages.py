"""Every page with AppTest, on the demo database and on an empty one, and the main interactions."""

from __future__ import annotations

import re

import pytest

from rsr_core.models import Step, Trajectory
from rsr_core.store import pipeline
from rsr_core.ui.keys import widget_key
from rsr_core.ui.widgets import md_escape
from tests.pages.conftest import (
    PAGES,
    chart_figures,
    chart_text,
    component_data,
    component_data_of,
    figure_values,
    grid_frame,
    open_services,
    page,
    send_state,
    step_cards,
    submit_review,
)


@pytest.mark.parametrize("name", PAGES)
def test_every_page_runs_on_the_demo_data(demo_db, name):
    at = page(name)
    assert not at.exception, at.exception
    assert at.title


@pytest.mark.parametrize("name", PAGES)
def test_every_page_guides_on_an_empty_database(empty_db, name):
    at = page(name)
    assert not at.exception, at.exception
    assert any("database is empty" in i.value for i in at.info)
    assert at.button(key="load_demo")


def test_loading_the_demo_from_an_empty_database(empty_db):
    at = page("overview")
    at.button(key="load_demo").click().run()
    assert not at.exception
    assert list(figure_values(at, "ov_counts").values())[:2] == ["8", "24"]


def test_overview_figures(demo_db):
    at = page("overview")
    counts = figure_values(at, "ov_counts")
    assert list(counts) == [
        "tasks",
        "discovery trajectories",
        "rewrite trajectories",
        "eval trajectories",
        "steps",
    ]
    assert list(counts.values())[:3] == ["8", "24", "47"]
    bars, upset, funnel = map(chart_text, chart_figures(at))  # plotly figures of server-side counts
    assert "Coverage per harness" in bars and "union solved" in bars
    assert "Overlap of solved tasks per harness" in upset
    assert "Rewrite funnel" in funnel and "kept for training" in funnel
    assert "gain over the best single harness: +40.0%" in at.caption[0].value


def test_filters_and_search_narrow_the_list(demo_db):
    at = page("trajectories")
    everything = grid_frame(at, "list_table")
    assert len(everything) == 50
    at.selectbox(key="f_kind").select("discovery").run()
    discovery = grid_frame(at, "list_table")
    assert len(discovery) == 24 and set(discovery["kind"]) == {"discovery"}
    at.selectbox(key="f_harness").select("statem").run()
    assert len(grid_frame(at, "list_table")) == 8
    at.text_input(key="f_search").input("sqlite_master").run()
    rows = grid_frame(at, "list_table")
    assert list(rows["task_id"]) == ["sqlite-extract"]
    at.selectbox(key="f_kind").select(None).run()
    at.selectbox(key="f_harness").select(None).run()
    at.selectbox(key="f_flags").select("has flags").run()
    at.text_input(key="f_search").input("").run()
    flagged = grid_frame(at, "list_table")
    assert 0 < len(flagged) < 47 and set(flagged["kind"]) == {"rewrite"}
    at.selectbox(key="f_flags").select("any").run()
    at.selectbox(key="f_kept").select("kept").run()
    assert len(grid_frame(at, "list_table")) == 40


def test_rows_chosen_on_two_pages_of_the_list_are_compared_side_by_side(demo_db):
    at = page("trajectories")
    first = grid_frame(at, "list_table")["trajectory_id"][3]
    at.session_state["list_table"] = {"selected": [first]}  # as a click on the row's checkbox sets it
    at.run()
    assert at.button(key="open_one").disabled is False and at.button(key="compare_two").disabled is True
    at.number_input(key="list_page").set_value(2).run()
    second = grid_frame(at, "list_table")["trajectory_id"][0]
    assert first not in set(grid_frame(at, "list_table")["trajectory_id"])
    at.session_state["list_table"] = {"selected": [first, second]}
    at.run()
    assert "2 selected" in at.caption[-1].value
    at.button(key="clear_chosen").click().run()
    assert (
        at.button(key="compare_two").disabled is True and "selected" not in at.caption[-1].value.split("(")[0]
    )
    at.session_state["list_table"] = {"selected": [first, second]}
    at.run()
    assert not at.button(key="compare_two").disabled
    # The browser sends the component's state with every run; AppTest (Streamlit 1.63) keeps only what it is
    # given for the run.
    at.session_state["list_table"] = {"selected": [first, second]}
    at.button(key="compare_two").click().run()
    assert not at.exception
    assert [s.value for s in at.subheader] == [md_escape(first), md_escape(second)]
    cards = step_cards(at)
    assert cards and all(c["anchor"] is None for c in cards)  # two runs' step 1: no id given twice


def test_deep_links_open_exactly_that_view(demo_db):
    store = open_services().store
    tid = store.list_trajectories(limit=1)[0]["trajectory_id"]
    at = page("trajectories", trajectory=tid, step="3")
    assert not at.exception and at.subheader[0].value == md_escape(tid)
    linked = [c for c in step_cards(at) if c["highlight"]]
    assert [c["title"] for c in linked] == [
        "step 3 · " + linked[0]["title"].split(" · ")[1] + " · linked step"
    ]
    a, b = (r["trajectory_id"] for r in store.list_trajectories(limit=2))
    at = page("trajectories", compare=f"{a},{b}")
    assert [s.value for s in at.subheader] == [md_escape(a), md_escape(b)]


def test_approving_a_runbook_writes_a_review_row(demo_db):
    at = page("runbooks")
    at.selectbox(key="rb_status").select("pending_review").run()
    (rid,) = grid_frame(at, "rb_queue")["runbook_id"]
    assert at.session_state["rb_focus"] == rid
    submit_review(at, "focus", "approve", "carol", "generic and safe")
    assert not at.exception
    reviews = pipeline.reviews_of(open_services().store.cursor(), rid)
    assert [(r.decision, r.reviewer, r.reason) for r in reviews] == [("approve", "carol", "generic and safe")]


def test_the_review_form_keeps_the_reviewer_and_empties_the_reason_after_a_decision(demo_db):
    at = page("runbooks")
    first = at.session_state["rb_focus"]
    form = component_data_of(at, "review_focus")
    assert (form["reviewer"], form["count"], form["error"]) == ("", 1, "")
    submit_review(at, "focus", "reject", " carol ", "leaks")
    after = component_data_of(at, "review_focus")
    assert after["reviewer"] == "carol"  # remembered for the session, trimmed
    assert after["epoch"] != form["epoch"]  # the reason field is emptied: it was that decision's
    reviews = pipeline.reviews_of(open_services().store.cursor(), first)
    assert [(r.decision, r.reviewer, r.reason) for r in reviews] == [("reject", "carol", "leaks")]
    at.run()
    assert component_data_of(at, "review_focus")["epoch"] == after["epoch"]  # a rerun keeps what is typed
    queue = grid_frame(at, "rb_queue")
    other = next(r for r in queue["runbook_id"] if r != first)
    at.session_state["rb_focus"] = other
    at.run()
    assert component_data_of(at, "review_focus")["epoch"] != after["epoch"]  # another round: no reason yet


@pytest.mark.parametrize(
    "sent",
    [
        "approve",
        ["approve"],
        {"decision": "delete", "reviewer": "mallory"},
        {"decision": "approve", "reviewer": ["mallory"], "reason": "x"},
        {"decision": "approve", "reviewer": {"$ne": ""}},
        {"decision": "approve"},
        {"decision": "approve", "reviewer": "m" * 201},
        {"decision": "approve", "reviewer": "mallory", "reason": "x" * 2001},
    ],
)
def test_a_review_form_payload_that_is_not_a_decision_records_nothing(demo_db, sent):
    at = page("runbooks")
    rid = at.session_state["rb_focus"]
    before = pipeline.reviews_of(open_services().store.cursor(), rid)
    send_state(at, "review_focus", "decision", sent)
    assert not at.exception, at.exception
    assert pipeline.reviews_of(open_services().store.cursor(), rid) == before
    assert not at.success


def test_bulk_review_of_rounds_ticked_in_the_queue(demo_db):
    at = page("runbooks")
    queue = grid_frame(at, "rb_queue")
    chosen = list(queue.loc[queue["critic_verdict"] == "pass", "runbook_id"][:3])  # a human decides these
    at.session_state["rb_queue"] = {"selected": chosen}  # as ticking their checkboxes sets it
    at.run()
    assert component_data_of(at, "review_bulk")["count"] == 3
    submit_review(at, "bulk", "reject", "dana")
    assert not at.exception
    cur = open_services().store.cursor()
    for rid in chosen:
        assert [(r.decision, r.reviewer) for r in pipeline.reviews_of(cur, rid)][-1] == ("reject", "dana")
    # The queue shows the decisions at once: every chosen round is human-rejected now.
    after = grid_frame(at, "rb_queue").set_index("runbook_id")
    assert {after.loc[rid, "status"] for rid in chosen} == {"human_rejected"}
    assert at.session_state["rb_queue"]["selected"] == []  # the ticks were for that decision
    # The progress bars count the reviewer's decisions (the reviewer's name is text, never markup).
    (bars,) = [data["bars"] for _, data in component_data(at, "rsr_core.bars")]
    reviewed, total = map(int, re.match(r"reviewed (\d+) of (\d+) ", bars[0]["label"]).groups())
    assert reviewed >= 3 and bars[0]["share"] == reviewed / total
    assert {"label": "dana: 3 runbooks (0 approvals, 3 rejections)", "share": bars[1]["share"]} in bars[1:]


def test_trajectory_content_is_text_never_html(demo_db):
    store = open_services().store
    evil = "<script>alert('x')</script> **bold** [link](http://example.com) <b>tag</b>"
    store.write_trajectories(
        [
            Trajectory(
                trajectory_id="evil",
                task_id="json-to-env",
                harness="terminus-2",
                content_hash="e",
                steps=[
                    Step(index=1, source="user", message=evil),
                    Step(index=2, source="agent", analysis=evil, plan="p", observation=evil),
                ],
            )
        ]
    )
    at = page("trajectories", trajectory="evil")
    assert not at.exception
    shown = [b["text"] for c in step_cards(at) for b in c["blocks"]]
    assert sum(evil in s for s in shown) == 3
    assert not any("<script>" in m.value for m in at.markdown)


def test_long_terminal_output_is_cut_until_the_reader_asks_for_all_of_it(demo_db):
    long, huge = "x" * 9_000 + "END", "y" * 500_000
    open_services().store.write_trajectories(
        [
            Trajectory(
                trajectory_id="long-output",
                task_id="json-to-env",
                harness="terminus-2",
                content_hash="l",
                steps=[
                    Step(index=1, source="user", message="go"),
                    Step(index=2, source="agent", analysis="a", plan="p", observation=long),
                    Step(index=3, source="agent", analysis="a", plan="p", observation=huge),
                ],
            )
        ]
    )
    at = page("trajectories", trajectory="long-output")
    blocks = [b for c in step_cards(at) for b in c["blocks"] if "cut" in b]
    assert [b["cut"] for b in blocks] == ["show all 9,003 characters", "show all 500,000 characters"]
    assert "characters not shown" in blocks[0]["text"] and len(blocks[0]["text"]) < 5_000
    # as the two buttons do
    at.session_state[widget_key("steps", "long-output")] = {"full": [b["id"] for b in blocks]}
    at.run()
    texts = [b["text"] for c in step_cards(at) for b in c["blocks"]]
    assert long in texts and not any("cut" in b for c in step_cards(at) for b in c["blocks"])
    assert "y" * 400_000 in texts and huge not in texts  # shown up to 400,000 characters, the rest downloads
    assert len(at.get("download_button")) == 1


def test_secrets_are_never_displayed(demo_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    at = page("rewrite")
    assert not at.exception
    everything = " ".join(
        str(e.value)
        for kind in ("text_input", "markdown", "caption", "success", "info")
        for e in at.get(kind)
        if getattr(e, "value", None) is not None
    )
    assert "sk-very-secret-value" not in everything


def test_a_job_does_not_start_against_an_endpoint_that_does_not_answer(demo_db, monkeypatch):
    monkeypatch.setenv("RSR_LLM_MAX_RETRIES", "0")
    at = page("rewrite")
    at.text_input(key="endpoint").input("http://127.0.0.1:9/v1").run()
    at.multiselect(key="rw_tasks").select("json-to-env").run()
    if at.button(key="start_job").disabled:  # no Docker here: the page says so and offers nothing to start
        assert any("Sandboxes unavailable" in w.value for w in at.warning)
        return
    at.button(key="start_job").click().run()
    assert not at.exception
    assert any("does not answer" in e.value for e in at.error)
    assert not open_services().jobs.jobs


def test_similarity_summaries_are_read_again_after_a_refresh_not_after_other_writes(demo_db, monkeypatch):
    from rsr_core.analysis.similarity_refresh import refresh
    from rsr_core.models import Review
    from rsr_core.store import similarity_store

    store = open_services().store
    refresh(store)
    reads: list[str] = []
    real = similarity_store.values
    monkeypatch.setattr(
        similarity_store, "values", lambda cur, metric, *a: reads.append(metric) or real(cur, metric, *a)
    )
    at = page("similarity")
    assert not at.exception and reads  # the first visit reads the stored scores
    first = chart_figures(at)
    reads.clear()
    with store.transaction() as cur:  # a review: the stored scores are as they were
        pipeline.insert_review(cur, Review(runbook_id="rb-x", decision="approve", reviewer="q"))
    at = page("similarity")
    assert not at.exception and reads == [] and chart_figures(at) == first
    with store.transaction() as cur:  # a passed rewrite fails now: its task is scored again
        cur.execute(
            "UPDATE trajectories SET reward = 0 WHERE trajectory_id = "
            "(SELECT min(trajectory_a) FROM similarity_pairs)"
        )
    assert refresh(store).scored_tasks == 1
    at = page("similarity")
    assert not at.exception and reads and chart_figures(at) != first


def test_similarity_scores_once_in_the_background_then_draws_stored_summaries(demo_db):
    from rsr_core.ui import analysis_data

    at = page("similarity")
    assert not at.exception
    assert any("scoring them now" in i.value for i in at.info)  # nothing stored yet for the demo database
    analysis_data.refresh_job(open_services()).thread.join(60)
    at = page("similarity")
    (chart,) = map(chart_text, chart_figures(at))  # the distributions: summaries only
    assert not at.exception and "Same- vs cross-runbook similarity" in chart and len(chart) < 200_000
    summary = grid_frame(at, "sim_summary")
    assert list(summary["metric"].unique()) == ["exact", "multiset", "order", "fuzzy", "transition"]
    for view in ("per task", "per category", "pairwise heatmap of one task"):
        at.radio(key="sim_view").set_value(view).run()
        at.selectbox(key="sim_metric").select("fuzzy").run()
        (chart,) = map(chart_text, chart_figures(at))
        assert not at.exception and "fuzzy (ratio)" in chart and len(chart) < 200_000
    at.radio(key="sim_shape").set_value("violin").run()
    at.radio(key="sim_view").set_value("per task").run()
    (figure,) = chart_figures(at)
    fills = [t for t in figure["data"] if t.get("fill") == "toself"]
    assert {t["name"] for t in fills} == {
        "same-runbook",
        "cross-runbook",
    }  # split violins: a half per relation


def _place(at, key: str) -> int:
    """Where on the page (index among the main area's top-level elements) the table `key` is drawn."""

    def holds(node) -> bool:
        proto = getattr(node, "proto", None)
        if proto is not None and str(getattr(proto, "id", "")).endswith(f"-{key}"):
            return True
        return any(holds(child) for child in getattr(node, "children", {}).values())

    return next(i for i, child in at.main.children.items() if holds(child))


def test_a_review_shows_in_the_queue_of_the_same_run(demo_db):
    at = page("runbooks")
    at.selectbox(key="rb_status").select("pending_review").run()
    (rid,) = grid_frame(at, "rb_queue")["runbook_id"]
    assert at.session_state["rb_focus"] == rid  # the form below is this round's
    pending = at.button(key="rb_next_btn").label
    place = _place(at, "rb_queue")
    submit_review(at, "focus", "approve", "dave")
    assert not at.exception
    assert any(s.value == md_escape("approved 1 runbook(s) as dave") for s in at.success)
    assert grid_frame(at, "rb_queue").empty  # no longer pending, without a second run of the page
    assert at.button(key="rb_next_btn").label != pending
    # The notice did not move the page down (the browser would draw everything below it anew).
    assert _place(at, "rb_queue") == place


def test_a_review_needs_a_reviewer(demo_db):
    at = page("runbooks")
    at.selectbox(key="rb_status").select("pending_review").run()
    (rid,) = grid_frame(at, "rb_queue")["runbook_id"]
    for blank in ["  ", "\u200b\u202e", "\t\x1b"]:
        submit_review(at, "focus", "reject", blank)
        error = component_data_of(at, "review_focus")["error"]
        assert error == "a reviewer name is required (with at least one visible character)"
    assert pipeline.reviews_of(open_services().store.cursor(), rid) == []


def test_a_critic_rejected_round_cannot_be_approved_and_says_why(demo_db):
    at = page("runbooks")
    at.selectbox(key="rb_status").select("critic_rejected").run()
    rid = grid_frame(at, "rb_queue")["runbook_id"].iloc[0]
    at.session_state["rb_focus"] = rid
    at.run()
    submit_review(at, "focus", "approve", "dave")
    assert not at.exception
    assert any("rejected by the critic" in e.value and "never executed" in e.value for e in at.error)
    assert pipeline.reviews_of(open_services().store.cursor(), rid) == []
    assert pipeline.runbook_status_of(open_services().store.cursor(), rid) == "critic_rejected"


def test_the_diff_shows_the_overlap_figures_of_the_pair_chosen(demo_db):
    from rsr_core.store import queries
    from rsr_core.ui.views import pair_figures

    at = page("diff")
    assert not at.exception, at.exception
    shown = []
    for source in at.selectbox(key="diff_source").options[:3]:
        at.selectbox(key="diff_source").set_value(source).run()
        assert not at.exception, at.exception
        source_id, rewrite_id = at.selectbox(key="diff_source").value, at.selectbox(key="diff_rewrite").value
        with open_services().store.reading() as cur:
            a = queries.commands_of_trajectory(cur, source_id)
            b = queries.commands_of_trajectory(cur, rewrite_id)
        expected = {f"{m} overlap": f"{v:.3f}" for m, v in pair_figures(a, b).items()}
        assert figure_values(at, "diff_figures") == expected
        shown.append(expected)
    assert len({tuple(f.values()) for f in shown}) > 1  # the figures follow the choice
