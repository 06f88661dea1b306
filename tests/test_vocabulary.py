"""Every list of names in rsr_core/vocabulary.py is covered by every user: left-out reasons (the SQL, `LeftOut`,
the card, the studio, `rsr export`'s summary), export formats (the Literal, the writers, the card, the studio,
argparse), harnesses (the classes, ingest's spellings, argparse, the demo script) and similarity metrics (the
kernels, the table's columns, argparse, the studio). A name added in one place and missed in another fails
here, naming what is missing."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import get_args

import pandas as pd
import pytest

from rsr_core import vocabulary as v
from rsr_core.cli import build_parser
from rsr_core.commands.export import describe
from rsr_core.export import export
from rsr_core.export.card import card_path, render_card
from rsr_core.export.models import ExportFilters, ExportFormat, ExportPreview, ExportSummary, LeftOut
from rsr_core.export.writers import WRITERS
from rsr_core.store import Store
from rsr_core.store import export_queries as eq
from tests.export.corpus import add_task, trajectory


def _choices(command: str, option: str) -> tuple[str, ...]:
    # argparse has no public way to list a parser's subcommands and options.
    actions = build_parser()._actions  # noqa: SLF001
    sub = next(a for a in actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    parser = sub.choices[command]
    action = next(a for a in parser._actions if option in a.option_strings)  # noqa: SLF001
    assert action.choices is not None, f"rsr {command} {option} has no choices"
    return tuple(action.choices)


# -- left-out reasons ---------------------------------------------------------------------------------------


def test_reasons_are_named_once_with_every_text():
    assert len(set(v.LEFT_OUT_REASONS)) == len(v.LEFT_OUT_REASONS)
    for r in v.LEFT_OUT:
        assert r.words and r.card and r.studio, f"{r.name}: a text is missing"


def test_left_out_has_a_field_per_reason_in_order():
    assert tuple(LeftOut.model_fields) == v.LEFT_OUT_REASONS
    counts = LeftOut(**{name: i + 1 for i, name in enumerate(v.LEFT_OUT_REASONS)})
    assert counts.total == sum(range(1, len(v.LEFT_OUT_REASONS) + 1))
    assert list(counts.model_dump(mode="json")) == list(v.LEFT_OUT_REASONS)  # the `--json` keys


def test_every_reason_the_sql_finds_has_its_condition_in_order():
    in_sql = [r.name for r in v.LEFT_OUT if r.in_sql]
    assert list(eq.CONDITIONS) == in_sql, "export_queries.CONDITIONS must follow LEFT_OUT"
    named = [line.rsplit("THEN ", 1)[1] for line in eq.SELECTED_SQL.splitlines() if " THEN '" in line]
    assert named == [f"'{name}'" for name in in_sql]
    # The reasons that hold with the training filters off come first: the CASE stops after them then.
    assert in_sql[: len(eq.ALL_EXPORTS)] == sorted(eq.ALL_EXPORTS, key=in_sql.index)


def test_the_rest_are_the_training_rows_reasons():
    from rsr_core.formats.tool_calls import MULTIMODAL

    row_reasons = {r.name for r in v.LEFT_OUT if not r.in_sql}
    assert row_reasons == {"no_steps", "no_instruction", MULTIMODAL}  # rsr_core/formats/training.py's `why`


def test_the_replay_stage_is_recognised_by_its_mark():
    from rsr_core.transfer.stages import REPLAY_MARK

    assert eq.REPLAY_EVIDENCE_PREFIX == REPLAY_MARK


def _summary(fmt: str = "sft-jsonl") -> ExportSummary:
    left = LeftOut(**{name: 101 + i for i, name in enumerate(v.LEFT_OUT_REASONS)})
    return ExportSummary(
        format=fmt,  # type: ignore[arg-type]
        out=f"/x/rows.{fmt}",
        card="/x/rows.card.md",
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        tool_version="0",
        filters=ExportFilters(),
        selected=2000,
        exported=0,
        duplicates=0,
        left_out=left,
    )


def test_the_card_the_cli_and_the_studio_tell_every_reason():
    from rsr_core.ui.export_views import left_out_frame

    summary = _summary()
    card, told = render_card(summary), describe(summary)
    preview = ExportPreview(selected=2000, eligible=0, left_out=summary.left_out)
    frame = left_out_frame(preview)
    assert list(frame["reason"]) == list(v.LEFT_OUT_REASONS)
    for i, r in enumerate(v.LEFT_OUT):
        assert f"| {r.card} | {101 + i} |" in card, f"the card misses {r.name}"
        assert f"{r.words} {101 + i}" in told, f"rsr export's summary misses {r.name}"
        row = frame[frame["reason"] == r.name].iloc[0]
        assert (row["why"], row["trajectories"]) == (r.studio, 101 + i)


# -- export formats -----------------------------------------------------------------------------------------


def test_formats_literal_writers_and_argparse_cover_every_format():
    assert get_args(ExportFormat) == v.EXPORT_FORMATS
    assert set(WRITERS) == set(v.EXPORT_FORMATS)
    assert _choices("export", "--format") == v.EXPORT_FORMATS
    assert len({f.file_name for f in v.EXPORT_FORMAT_INFO}) == len(v.EXPORT_FORMAT_INFO)


def test_the_studio_has_a_default_output_per_format():
    from rsr_core.ui.export_views import default_out

    for f in v.EXPORT_FORMAT_INFO:
        assert default_out(f.name) == str(Path("exports") / f"rsr-{f.file_name}")


@pytest.fixture(scope="module")
def one_run():
    store = Store(":memory:")
    add_task(store, "sales-report", "data-processing")
    store.write_trajectories([trajectory("disc-1", kind="discovery")])
    yield store
    store.close()


@pytest.mark.parametrize("fmt", v.EXPORT_FORMATS)
def test_every_format_writes_with_its_card(one_run, tmp_path, fmt):
    info = v.export_format(fmt)
    out = tmp_path / f"rows-{info.file_name}"
    summary = export(one_run, fmt, out)  # type: ignore[arg-type]
    assert summary.exported == 1
    assert out.is_dir() == info.directory and (out.is_file() != info.directory)
    card = card_path(out, fmt)
    text = card.read_text()
    assert card.is_file() and f"- Format: `{fmt}`" in text
    if info.rows is not None:
        assert f"Each row: {info.rows}" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({out.name, card.name} - {"README.md"})


# -- harnesses ----------------------------------------------------------------------------------------------


def test_every_harness_has_its_class_and_prompt():
    from rsr_core import prompts
    from rsr_core.harness import HARNESSES

    assert tuple(HARNESSES) == v.HARNESS_NAMES
    assert v.GENERAL_HARNESS in v.HARNESS_NAMES
    for name, cls in HARNESSES.items():
        assert cls.name == name
        assert prompts.load(cls.prompt_file), f"{name}: no system prompt"


def test_every_spelling_of_a_harness_is_read_as_its_name():
    from rsr_core.formats.control import canonical_harness

    for h in v.HARNESS_INFO:
        for spelling in (h.name, *h.spellings, h.name.upper(), f" {h.name} "):
            assert canonical_harness(spelling) == h.name
    assert canonical_harness("Some-Agent") == "Some-Agent"


def test_argparse_and_the_demo_script_cover_every_harness():
    from rsr_core.demo.script import Discovery, Models

    assert _choices("discover", "--harness") == v.HARNESS_NAMES
    for model in (Discovery, Models):
        fields = {f.alias or name for name, f in model.model_fields.items()}
        assert set(v.HARNESS_NAMES) <= fields, f"demo script {model.__name__} misses a harness"


# -- similarity metrics -------------------------------------------------------------------------------------


def test_every_metric_has_a_kernel_a_label_and_a_choice():
    from rsr_core.analysis import pair_metrics
    from rsr_core.analysis.pair_metrics import KERNELS
    from rsr_core.store.similarity_store import METRIC_COLUMNS
    from rsr_core.ui.plots import METRIC_LABELS

    assert tuple(KERNELS) == v.SIMILARITY_METRICS
    assert pair_metrics.METRICS == METRIC_COLUMNS == v.SIMILARITY_METRICS
    assert set(METRIC_LABELS) == set(v.SIMILARITY_METRICS)
    assert _choices("similarity", "--metric") == v.SIMILARITY_METRICS


def test_the_similarity_table_has_a_column_per_metric():
    store = Store(":memory:")
    try:
        columns = dict(
            store.cursor()
            .execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'similarity_pairs'"
            )
            .fetchall()
        )
    finally:
        store.close()
    missing = [m for m in v.SIMILARITY_METRICS if columns.get(m) != "DOUBLE"]
    assert not missing, f"similarity_pairs needs a DOUBLE column for {missing} (a migration adds it)"


def test_every_metric_is_scored_stored_and_read_back():
    from rsr_core.analysis.similarity import score_pairs
    from rsr_core.store import similarity_store

    rewrites = pd.DataFrame(
        {"trajectory_id": ["a", "b", "c"], "task_id": ["t"] * 3, "runbook_id": ["r1", "r1", "r2"]}
    )
    commands = pd.DataFrame(
        {
            "trajectory_id": ["a", "a", "b", "b", "c"],
            "seq": [0, 1, 0, 1, 0],
            "command": ["ls -la", "cat x", "ls -la", "cat y", "make"],
        }
    )
    pairs = score_pairs(rewrites, commands, v.SIMILARITY_METRICS)
    assert len(pairs) == 3 and all(m in pairs for m in v.SIMILARITY_METRICS)
    store = Store(":memory:")
    try:
        cur = store.cursor()
        similarity_store.replace_tasks(cur, {"t": ("f", 3)}, pairs)
        back = similarity_store.pairs(cur)
    finally:
        store.close()
    for m in v.SIMILARITY_METRICS:
        assert json.dumps(back[m].round(12).tolist()) == json.dumps(pairs[m].round(12).tolist()), m
