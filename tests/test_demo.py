"""The demo corpus: builds without Docker or a model, is labelled as scripted, and is regenerable."""

from __future__ import annotations

import json

from rsr_core.demo import DEMO_SCRIPT, DEMO_SCRIPT_DIR, build_demo, is_empty
from rsr_core.demo.rules import model_script
from rsr_core.demo.script import load_demo_script
from rsr_core.store import pipeline


def test_demo_builds_into_an_empty_store(store):
    assert is_empty(store)
    report = build_demo(store)
    assert report.errors == [] and not is_empty(store)
    summary = store.summary()
    assert summary["tasks"] == 8 and summary["trajectories"]["discovery"] == 24
    assert summary["trajectories"]["rewrite"] > 24
    cov = store.coverage()
    assert cov["union_solved"] > cov["best_single"]["solved_tasks"] and cov["union_solved"] < 8
    funnel = pipeline.funnel(store.cursor())
    assert funnel["critic_rejected"] >= 2 and funnel["answer_transfer"] >= 1 and funnel["pending_review"] >= 1
    assert (
        funnel["kept"] == funnel["verified"] - funnel["answer_transfer"] - 3
    )  # 3 runs of a human-rejected runbook
    again = build_demo(store)
    assert again.trajectories_added == 0 and pipeline.funnel(store.cursor()) == funnel


def test_every_demo_run_is_labelled_scripted(store):
    build_demo(store)
    rows = store.list_trajectories(limit=1000)
    assert rows and all(r["scripted"] for r in rows)
    assert all(store.get_trajectory(r["trajectory_id"]).model.startswith("scripted-demo") for r in rows[:20])


def test_the_script_file_is_what_the_recorder_builds_from_the_answers():
    assert json.loads(DEMO_SCRIPT.read_text()) == model_script(load_demo_script(DEMO_SCRIPT_DIR))
