"""Typed datasets: every row export has the one declared schema whatever its rows (rsr_core/export/schema.py; an
export without a tool call types `tool_calls` as JSON loads it), the card is a Hugging Face dataset card declaring it, `--format hf` writes a directory `datasets` loads as declared;
and the trainers' libraries load each export as it is (the `trainer` side venv, see conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from rsr_core.export import export, schema
from rsr_core.export.models import CardMeta
from rsr_core.export.writers import HF_DATA_FILE
from rsr_core.models import Trajectory
from rsr_core.store import Store
from tests.export.corpus import add_rewrite, add_task, trajectory

PARQUET_SCHEMA = schema.arrow_schema(calls=False)  # the corpus below holds no tool call
_SCRIPT = Path(sys.executable).with_name("rsr")
RSR = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "rsr_core.cli"]
SUMMARY_KEYS = {
    "format", "out", "card", "created_at", "tool_version", "atif_version", "filters", "selected", "exported",
    "duplicates", "left_out", "by_task", "by_category", "by_harness", "by_kind",
}  # fmt: skip


def rsr(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real `rsr` in a subprocess."""
    return subprocess.run([*RSR, *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """Two kept rewrites (one with non-ASCII output), a terminus-2 discovery success, a never-verified eval run."""
    path = tmp_path_factory.mktemp("typed") / "s.duckdb"
    store = Store(path)
    add_task(store, "sales-report", "data-processing")
    add_rewrite(store, "rw-a", 1.0, False, [], variant="a")
    add_rewrite(store, "rw-c", 1.0, None, ["approve"], variant="café — 東京 ✓")
    store.write_trajectories(
        [
            trajectory("d-ok", task="log-parse", kind="discovery", reward=1.0, variant="d"),
            trajectory("e-never", task="log-parse", kind="eval", reward=None, variant="e"),
        ]
    )
    store.close()
    return path


@pytest.fixture(scope="module")
def exports(db, tmp_path_factory) -> dict[str, Path]:
    """Each export, written by the CLI: every format, and the rewrite-less and rewrite-only halves apart."""
    out = tmp_path_factory.mktemp("exports")
    made = {
        "sft": ("sft-jsonl", out / "sft.jsonl", []),
        "sharegpt": ("sharegpt", out / "sharegpt.jsonl", []),
        "parquet": ("parquet", out / "rows.parquet", []),
        "hf": ("hf", out / "hf", ["--license", "apache-2.0", "--tag", "agents", "sft"]),
        "sft-discovery": ("sft-jsonl", out / "discovery.jsonl", ["--kind", "discovery"]),
        "sft-rewrite": ("sft-jsonl", out / "rewrite.jsonl", ["--kind", "rewrite"]),
        "sharegpt-discovery": ("sharegpt", out / "sg-discovery.jsonl", ["--kind", "discovery"]),
        "sharegpt-rewrite": ("sharegpt", out / "sg-rewrite.jsonl", ["--kind", "rewrite"]),
        "parquet-discovery": ("parquet", out / "p-discovery.parquet", ["--kind", "discovery"]),
        "parquet-rewrite": ("parquet", out / "p-rewrite.parquet", ["--kind", "rewrite"]),
        "sft-all": ("sft-jsonl", out / "all.jsonl", ["--all"]),
        "parquet-all": ("parquet", out / "p-all.parquet", ["--all"]),
        "hf-eval": ("hf", out / "hf-eval", ["--all", "--kind", "eval"]),
    }
    for fmt, path, extra in made.values():
        done = rsr("export", "--format", fmt, "--out", path, "--db", db, *extra)
        assert done.returncode == 0, done.stderr
    return {name: path for name, (_, path, _) in made.items()}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _card(path: Path) -> tuple[dict, str]:
    """(front matter, body) of a dataset card."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), text[:200]
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body


def _types(t: pa.DataType) -> set[str]:
    """Every type inside `t`, by name."""
    found = {str(t)}
    if isinstance(t, pa.ListType):
        found |= _types(t.value_type)
    if isinstance(t, pa.StructType):
        for field in t:
            found |= _types(field.type)
    return found


def test_one_schema_in_every_format(exports):
    table = pq.read_table(exports["parquet"])
    assert table.schema.equals(PARQUET_SCHEMA)
    assert PARQUET_SCHEMA.field("messages").type.value_type.field("tool_calls").type == pa.list_(pa.null())
    assert not any("large" in t for field in table.schema for t in _types(field.type))  # text is `string`
    rows = _lines(exports["sft"])
    assert [list(r) for r in rows] == [PARQUET_SCHEMA.names] * 3  # every column, in the schema's order
    assert table.to_pylist() == rows  # the same data, value for value
    sharegpt = _lines(exports["sharegpt"])
    assert [list(r) for r in sharegpt] == [schema.arrow_schema("conversations").names] * 3
    assert [r["conversations"][1]["value"] for r in sharegpt] == [r["messages"][1]["content"] for r in rows]
    hf = pq.read_table(exports["hf"] / HF_DATA_FILE)
    assert hf.schema.equals(PARQUET_SCHEMA) and hf.to_pylist() == rows


def test_an_absent_id_keeps_its_column_typed(exports):
    """A discovery-only export has no runbook: its id columns are empty strings (JSON keeps their type), never a
    column that is null in every row; reward, never verified in an `--all` export, is a typed null."""
    for name in ("sft-discovery", "sharegpt-discovery"):
        (row,) = _lines(exports[name])
        assert (row["source_trajectory_id"], row["runbook_id"], row["kind"]) == ("", "", "discovery")
    discovery = pq.read_table(exports["parquet-discovery"])
    assert discovery.schema.equals(PARQUET_SCHEMA)
    assert discovery.column("runbook_id").to_pylist() == [""]
    rewrites = pq.read_table(exports["parquet-rewrite"])
    assert rewrites.column("runbook_id").to_pylist() == ["rb-rw-a", "rb-rw-c"]
    every = pq.read_table(exports["parquet-all"])
    assert every.schema.equals(PARQUET_SCHEMA)
    assert (
        dict(zip(every.column("trajectory_id").to_pylist(), every.column("reward").to_pylist(), strict=True))[
            "e-never"
        ]
        is None
    )
    assert {r["trajectory_id"]: r["reward"] for r in _lines(exports["sft-all"])}["e-never"] is None
    never = pq.read_table(exports["hf-eval"] / HF_DATA_FILE)
    assert (
        never.column("reward").type == pa.float64()
        and never.column("reward").null_count == never.num_rows == 1
    )


def _declared(columns: list[dict]) -> dict[str, object]:
    """A card's features as {name: dtype, or {field: ...} for a list of structs or a struct}."""
    out: dict[str, object] = {}
    for c in columns:
        nested = c.get("list", c.get("struct"))
        if isinstance(nested, str):  # a list of one dtype
            out[c["name"]] = f"list<{nested}>"
        else:
            out[c["name"]] = _declared(nested) if nested is not None else c["dtype"]
    return out


CHAT = {"role": "string", "content": "string", "tool_calls": "list<null>", "tool_call_id": "string"}
"""A turn as the card declares it for rows without a tool call (with one, tool_calls is a list of OpenAI's calls:
tests/export/test_tool_call_rows.py)."""


@pytest.mark.parametrize(
    ("name", "card", "data", "conversation"),
    [
        ("sft", "sft.card.md", "sft.jsonl", CHAT),
        ("sharegpt", "sharegpt.card.md", "sharegpt.jsonl", {"from": "string", "value": "string"}),
        ("parquet", "rows.card.md", "rows.parquet", CHAT),
        ("hf", "hf/README.md", HF_DATA_FILE, CHAT),
    ],
)
def test_card_is_a_hub_card_declaring_the_schema(exports, name, card, data, conversation):
    root = exports["sft"].parent
    meta, body = _card(root / card)
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "train", "path": data}]}]
    features = _declared(meta["dataset_info"]["features"])
    first = "conversations" if name == "sharegpt" else "messages"
    assert list(features) == [first, *(c.name for c in schema.COLUMNS)]
    assert features[first] == conversation
    assert {k: v for k, v in features.items() if k != first} == {c.name: c.dtype for c in schema.COLUMNS}
    assert meta["task_categories"] == ["text-generation"]
    if name == "hf":  # --license and --tag given
        assert (meta["license"], meta["tags"]) == ("apache-2.0", ["agents", "sft"])
    else:  # the defaults: no license unless one is given
        assert "license" not in meta and meta["tags"] == CardMeta().tags
    for c in schema.COLUMNS:  # the body's column table is the same declaration
        assert f"| `{c.name}` | {c.dtype} | {c.description} |" in body


def test_atif_card_has_no_row_schema(db, tmp_path):
    done = rsr("export", "--format", "atif", "--out", tmp_path / "atif", "--db", db)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "atif" / "README.md").read_text().startswith("---")


def test_hf_directory_from_the_cli(db, tmp_path):
    out = tmp_path / "ds"
    done = rsr("export", "--format", "hf", "--out", out, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) == SUMMARY_KEYS
    assert (summary["format"], summary["out"], summary["card"]) == ("hf", str(out), str(out / "README.md"))
    assert summary["exported"] == 3 and summary["atif_version"] is None
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["README.md", "data", HF_DATA_FILE]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # nothing beside it, no temporary left
    again = rsr("export", "--format", "hf", "--out", out, "--db", db)
    assert again.returncode == 1 and again.stderr.strip().splitlines() == [
        f"rsr: {out}: exists and is not empty; pass --force to replace an earlier output"
    ]
    forced = rsr("export", "--format", "hf", "--out", out, "--db", db, "--force", "--kind", "discovery")
    assert forced.returncode == 0, forced.stderr
    assert pq.read_table(out / HF_DATA_FILE).column("trajectory_id").to_pylist() == ["d-ok"]
    atif = rsr("export", "--format", "atif", "--out", tmp_path / "atif", "--db", db)
    assert atif.returncode == 0
    # --force replaces only an earlier hf export: not an atif export, nor someone else's directory
    other = rsr("export", "--format", "hf", "--out", tmp_path / "atif", "--db", db, "--force")
    assert other.returncode == 1 and "not an earlier output of this kind" in other.stderr
    assert (tmp_path / "atif" / "README.md").read_text().count("- Format: `atif`") == 1


def test_force_knows_an_hf_export_whatever_its_front_matter(db, tmp_path):
    store = Store(db, read_only=True)
    try:
        many = CardMeta(
            tags=[f"tag-{i}" for i in range(1000)]
        )  # front matter far longer than the card's head
        export(store, "hf", tmp_path / "ds", meta=many)
        summary = export(store, "hf", tmp_path / "ds", force=True)
    finally:
        store.close()
    meta, _ = _card(tmp_path / "ds" / "README.md")
    assert summary.exported == 3 and meta["tags"] == CardMeta().tags


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--license", "Apache 2.0", "expected a Hub license id such as apache-2.0"),
        ("--tag", "two words", "expected letters, digits and . _ + -"),
        ("--task-category", "Text_Generation", "expected lower-case words joined by '-'"),
    ],
)
def test_bad_card_options_are_one_line(db, tmp_path, flag, value, expected):
    done = rsr("export", "--format", "hf", "--out", tmp_path / "x", "--db", db, flag, value)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert (
        last.startswith(f"rsr export: error: argument {flag}:") and expected in last and repr(value) in last
    )
    assert not (tmp_path / "x").exists()


def test_help_names_the_card_defaults():
    done = rsr("export", "--help")
    text = "".join(done.stdout.split())  # argparse wraps lines, even inside a hyphenated word
    assert f"(default:{''.join(CardMeta().tags)})" in text
    assert f"(default:{''.join(CardMeta().task_categories)})" in text


def test_a_message_outside_the_schema_is_refused():
    traj = Trajectory(trajectory_id="t")
    with pytest.raises(schema.SchemaError, match="name not in the export schema"):
        schema.row(traj, [{"role": "assistant", "content": "x", "name": "f"}])


# ---- the trainers' own libraries, in the side venv ----


@pytest.mark.formats
def test_datasets_loads_every_export_as_declared(exports, trainer_check, tmp_path):
    e = {k: str(v) for k, v in exports.items()}
    cards = {k: str(Path(v).with_name(f"{Path(v).stem}.card.md")) for k, v in exports.items()}
    spec = {
        "loads": {
            # as they are, no features given: JSON and Parquet of the same rows load alike
            "sft": {"builder": "json", "data_files": [e["sft"]]},
            "sft-card": {"builder": "json", "data_files": [e["sft"]], "features_card": cards["sft"]},
            "sharegpt": {"builder": "json", "data_files": [e["sharegpt"]]},
            "parquet": {"builder": "parquet", "data_files": [e["parquet"]]},
            "hf": {"dir": e["hf"]},
            # the export without rewrites first: its types decide, and the rewrites' ids must fit them
            "sft-mixed": {
                "builder": "json",
                "data_files": [e["sft-discovery"], e["sft-rewrite"]],
            },
            "sharegpt-mixed": {
                "builder": "json",
                "data_files": [e["sharegpt-discovery"], e["sharegpt-rewrite"]],
            },
            "parquet-mixed": {
                "builder": "parquet",
                "data_files": [e["parquet-discovery"], e["parquet-rewrite"]],
            },
            "hf-eval": {"dir": e["hf-eval"]},
        },
        "concatenate": {
            "parquet+jsonl": ["parquet", "sft"],
            "hf+mixed": ["hf", "sft-mixed", "parquet-mixed"],
        },
        "cards": {"hf": str(exports["hf"] / "README.md"), "hf-eval": str(exports["hf-eval"] / "README.md")},
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    found = trainer_check("load", str(tmp_path / "spec.json"), str(tmp_path / "cache"))
    loads = found["loads"]
    chat = loads["sft"]["features"]
    assert chat["messages"] == (
        "List({'role': Value('string'), 'content': Value('string'), 'tool_calls': List(Value('null')), "
        "'tool_call_id': Value('string')})"
    )
    assert {k: v for k, v in chat.items() if k != "messages"} == {
        c.name: f"Value('{c.dtype}')" for c in schema.COLUMNS
    }
    for name in ("sft-card", "parquet", "hf", "sft-mixed", "parquet-mixed", "hf-eval"):
        assert loads[name]["features"] == chat, name
    assert loads["sharegpt-mixed"]["features"] == loads["sharegpt"]["features"]
    assert loads["sharegpt"]["features"]["conversations"] == (
        "List({'from': Value('string'), 'value': Value('string')})"
    )
    assert loads["sft-mixed"]["trajectory_ids"] == ["d-ok", "rw-a", "rw-c"]
    assert loads["parquet-mixed"]["trajectory_ids"] == ["d-ok", "rw-a", "rw-c"]
    assert loads["hf"]["first"] == _lines(exports["sft"])[0]  # the directory holds the same rows
    assert found["concatenate"]["parquet+jsonl"]["rows"] == 6
    assert found["concatenate"]["hf+mixed"]["features"] == chat
    for card in found["cards"].values():  # load_dataset(dir) read the features the card declares
        assert card["declared_equals_loaded"] and card["declared"] == chat


@pytest.mark.formats
@pytest.mark.parametrize("name", ["sft", "sharegpt"])
def test_assistant_mask_covers_exactly_the_assistant_turns(exports, trainer_check, name):
    """transformers' `apply_chat_template(return_assistant_tokens_mask=True)` with a ChatML template whose
    assistant parts are `{% generation %}` blocks, on a tokenizer trained locally on the rows (ShareGPT rows
    mapped human→user, gpt→assistant as the README tells Axolotl and LLaMA-Factory)."""
    found = trainer_check("mask", str(exports[name]))
    rows = {r["trajectory_id"]: r for r in found["rows"]}
    assert sorted(rows) == ["d-ok", "rw-a", "rw-c"]
    sft = {r["trajectory_id"]: r["messages"] for r in _lines(exports["sft"])}
    for tid, row in rows.items():
        assert row["roles"] == [m["role"] for m in sft[tid]]
        assert (
            row["spans"]
            == row["assistant"]
            == [m["content"] + "<|im_end|>" for m in sft[tid] if m["role"] == "assistant"]
        )
        assert row["whole"] and 0 < row["masked"] < row["tokens"]
