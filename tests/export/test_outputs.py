"""Output files: duplicates dropped, dataset card, Parquet readable by pyarrow and `datasets`, ShareGPT, CLI."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest

from rsr_core.cli import main
from rsr_core.export import ExportError, export, schema
from rsr_core.outputs import OutputError
from rsr_core.store import Store
from tests.export.corpus import add_rewrite, add_task, trajectory


@pytest.fixture
def small(tmp_path):
    """Three kept rewrites of which two have identical training messages, a discovery success, a StateM run."""
    store = Store(tmp_path / "s.duckdb")
    add_task(store, "sales-report", "data-processing")
    add_rewrite(store, "rw-a", 1.0, False, [], variant="same")
    add_rewrite(store, "rw-b", 1.0, None, ["approve"], variant="same")  # other runbook, same conversation
    add_rewrite(store, "rw-c", 1.0, None, [], variant="other")
    store.write_trajectories(
        [
            trajectory("d-ok", task="log-parse", kind="discovery", reward=1.0, variant="d"),
            trajectory("d-statem", task="log-parse", kind="discovery", harness="statem", reward=1.0),
        ]
    )
    yield store
    store.close()


def test_exact_duplicates_are_dropped(small, tmp_path):
    summary = export(small, "sft-jsonl", tmp_path / "o.jsonl")
    ids = [json.loads(line)["trajectory_id"] for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert sorted(ids) == ["d-ok", "rw-a", "rw-c"]  # rw-b duplicates rw-a; the first in export order stays
    assert summary.duplicates == 1 and summary.exported == 3 and summary.left_out.harness == 1
    archive = export(
        small, "atif", tmp_path / "arch", summary.filters.model_copy(update={"all_trajectories": True})
    )
    assert archive.exported == 5 and archive.duplicates == 0  # an archive keeps every trajectory


def test_dataset_card_beside_the_output(small, tmp_path):
    summary = export(small, "sft-jsonl", tmp_path / "data" / "train.jsonl")
    card = (tmp_path / "data" / "train.card.md").read_text()
    assert summary.card == str(tmp_path / "data" / "train.card.md")
    assert 'path: "train.jsonl"' in card and "rsr-studio 0.1.0" in card
    assert summary.created_at.date().isoformat() in card
    for line in ("| sales-report | 2 |", "| log-parse | 1 |", "| data-processing | 2 |", "| (none) | 1 |"):
        assert line in card
    assert "| terminus-2 | 3 |" in card and "| exact duplicate of an exported row | 1 |" in card
    assert "harness scaffolding) | 1 |" in card and "Training filters: on" in card
    # nothing else is written beside the output; a second output with the same stem needs --force
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["train.card.md", "train.jsonl"]
    with pytest.raises(OutputError, match=re.escape("train.card.md: exists; pass --force")):
        export(small, "parquet", tmp_path / "data" / "train.parquet")
    assert not (tmp_path / "data" / "train.parquet").exists()
    export(small, "parquet", tmp_path / "data" / "train.parquet", force=True)
    assert 'path: "train.parquet"' in (tmp_path / "data" / "train.card.md").read_text()
    export(small, "atif", tmp_path / "atif")
    assert "ATIF-v1.7" in (tmp_path / "atif" / "README.md").read_text()


def test_parquet_reads_with_pyarrow_and_datasets(small, tmp_path, monkeypatch):
    out = tmp_path / "train.parquet"
    export(small, "parquet", out)
    table = pq.read_table(out)
    assert table.schema.equals(schema.arrow_schema(calls=False)) and table.num_rows == 3  # no tool call in it
    jsonl = tmp_path / "train.jsonl"
    export(small, "sft-jsonl", jsonl, force=True)
    assert table.to_pylist() == [json.loads(line) for line in jsonl.read_text().splitlines()]
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 3 and ds[0]["messages"][0]["role"] == "system"
    assert set(ds.column_names) == set(schema.arrow_schema().names)


def test_sharegpt_jsonl_and_json_array(small, tmp_path):
    export(small, "sharegpt", tmp_path / "s.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    export(small, "sharegpt", tmp_path / "s.json", force=True)  # same stem: the card is replaced
    assert json.loads((tmp_path / "s.json").read_text()) == rows
    assert [c["from"] for c in rows[0]["conversations"]][:3] == ["system", "human", "gpt"]
    assert set(rows[0]) >= {"conversations", "task_id", "trajectory_id", "runbook_id", "reward"}


def test_outputs_appear_only_when_complete(small, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("keep")
    with pytest.raises(OutputError, match="exists and is not empty"):
        export(small, "atif", tmp_path / "busy")
    with pytest.raises(OutputError, match="not an earlier output of this kind"):
        export(small, "atif", tmp_path / "busy", force=True)
    with pytest.raises(ExportError, match="is a directory"):
        export(small, "sft-jsonl", tmp_path / "busy")
    assert (tmp_path / "busy" / "x").read_text() == "keep"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") or "card" in p.name]


def test_cli_prints_left_out_reasons_and_json(small, tmp_path, capsys):
    db = small.path
    small.close()
    out = tmp_path / "cli.jsonl"
    assert main(["export", "--format", "sft-jsonl", "--out", str(out), "--db", db]) == 0
    text = capsys.readouterr().out
    assert "exported 3 of 5 selected" in text and "left out 1: harness 1" in text
    assert "exact duplicates dropped 1" in text
    args = ["export", "--format", "sharegpt", "--out", str(tmp_path / "c.jsonl"), "--db", db, "--json"]
    assert main([*args, "--kind", "discovery", "--no-include-direct-terminus"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (
        data["exported"] == 0
        and data["left_out"]["direct_terminus"] == 1
        and data["left_out"]["harness"] == 1
    )
    assert main([*args, "--task", "log-parse", "--all"]) == 1  # the output exists now
    assert "c.jsonl: exists; pass --force" in capsys.readouterr().err
    assert main([*args, "--task", "log-parse", "--all", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["exported"] == 2
    assert main(["export", "--format", "atif", "--out", str(tmp_path), "--db", db]) == 1
    err = capsys.readouterr().err
    assert "exists and is not empty" in err and len(err.strip().splitlines()) == 1
