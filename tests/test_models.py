"""Stored models are versioned and documented."""

from pydantic import BaseModel

from rsr_core import models


def test_every_model_field_is_documented_and_stored_models_are_versioned():
    stored = {"Step", "Trajectory", "Task", "Runbook", "CriticFlag", "Review", "TransferVerdict"}
    seen = set()
    for name in dir(models):
        obj = getattr(models, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == models.__name__:
            if name.startswith("_"):
                continue
            seen.add(name)
            for field_name, field in obj.model_fields.items():
                assert field.description, f"{name}.{field_name} has no docstring"
            if name in stored:
                assert "schema_version" in obj.model_fields, name
    assert stored <= seen


def test_runbook_renders_its_five_parts():
    rb = models.Runbook(
        runbook_id="r",
        lineage_id="r",
        source_trajectory_id="s",
        task_id="t",
        target_end_state="out.txt exists",
        key_milestones=["read input"],
        useful_checks=["cat"],
        recovery_strategies=["retry"],
        pitfalls=["typos"],
        prompt_version="planner-v1",
    )
    text = rb.text()
    for title in (
        "Target end state:",
        "Key milestones:",
        "Useful checks:",
        "Recovery strategies:",
        "Pitfalls:",
    ):
        assert title in text
    assert "- read input" in text
