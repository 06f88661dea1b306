"""Runs whose agent used tool calls (a `Bash` tool, a `delegate` tool) export in the chat convention trainers
expect: the assistant message carries OpenAI-shaped `tool_calls`, each result follows as a `tool` message, the
row's `tools` is the agent's tool list; ShareGPT writes LLaMA-Factory's `function_call` / `observation` turns.
A run holding an image is left out as `multimodal`, never written with placeholder text. Each file is ingested
and exported by the real `rsr` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rsr_core.export import preview, schema
from rsr_core.store import Store

_SCRIPT = Path(sys.executable).with_name("rsr")
RSR = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "rsr_core.cli"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Bash",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "delegate",
            "description": "Hand a sub-task to a helper agent.",
            "parameters": {
                "type": "object",
                "properties": {"task": {"type": "string"}},
                "required": ["task"],
            },
        },
    },
]


def tool_run(tid: str = "tool-run", tools: bool = True, image: bool = False) -> dict:
    """An ATIF run of an agent with a Bash and a delegate tool: a call of each (the Bash result tied to its call,
    the delegated one answered by a subagent reference), then a final answer; optionally an image in the task."""
    task: object = "Count the lines of data.csv into count.txt." + ("" if tools else " Again.")
    if image:
        task = [
            {"type": "text", "text": "Count the lines of the file in the picture."},
            {"type": "image", "source": {"media_type": "image/png", "path": "images/shot.png"}},
        ]
    agent: dict = {"name": "claude-code", "version": "2.0", "model_name": "m-1"}
    if tools:
        agent["tool_definitions"] = TOOLS
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": tid,
        "agent": agent,
        "extra": {
            "rsr": {"task_id": "count-lines", "reward": 1.0, "kind": "discovery", "harness": "terminus-2"}
        },
        "steps": [
            {"step_id": 1, "source": "user", "message": task},
            {
                "step_id": 2,
                "source": "agent",
                "message": "I will count the lines.",
                "reasoning_content": "wc is enough",
                "tool_calls": [
                    {
                        "tool_call_id": "toolu_01",
                        "function_name": "Bash",
                        "arguments": {"command": "wc -l data.csv"},
                    },
                    {"tool_call_id": "toolu_02", "function_name": "delegate", "arguments": {"task": "check"}},
                ],
                "observation": {
                    "results": [
                        {"source_call_id": "toolu_01", "content": "3 data.csv"},
                        {
                            "source_call_id": "toolu_02",
                            "subagent_trajectory_ref": [{"session_id": "sub-1"}],
                        },
                    ]
                },
            },
            {
                "step_id": 3,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {
                        "tool_call_id": "toolu_03",
                        "function_name": "Bash",
                        "arguments": json.dumps({"command": "echo 3 > count.txt"}),
                    }
                ],
                "observation": {"results": [{"source_call_id": "toolu_03", "content": ""}]},
            },
            {"step_id": 4, "source": "agent", "message": "count.txt holds 3."},
        ],
    }


def _rsr(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RSR, *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tools")
    runs = root / "runs"
    runs.mkdir()
    for name, doc in {
        "with-tools": tool_run(),
        "derived": tool_run("no-defs", tools=False),
        "image": tool_run("with-image", image=True),
    }.items():
        (runs / f"{name}.json").write_text(json.dumps(doc))
    path = root / "s.duckdb"
    done = _rsr("ingest", runs, "--db", path)
    assert done.returncode == 0, done.stderr
    return path


def _export(db: Path, out: Path, fmt: str, *extra: str) -> dict:
    done = _rsr("export", "--format", fmt, "--out", out, "--db", db, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tool_calls_are_chat_tool_calls(db, tmp_path):
    summary = _export(db, tmp_path / "rows.jsonl", "sft-jsonl")
    assert summary["exported"] == 2 and summary["left_out"]["multimodal"] == 1
    rows = {
        r["trajectory_id"]: r for r in map(json.loads, (tmp_path / "rows.jsonl").read_text().splitlines())
    }
    row = rows["tool-run"]
    assert list(row) == schema.arrow_schema().names
    assert [(m["role"], m["content"]) for m in row["messages"]] == [
        ("user", "Count the lines of data.csv into count.txt."),
        ("assistant", "I will count the lines."),
        ("tool", "3 data.csv"),
        ("tool", '{"subagent_trajectory_ref": [{"session_id": "sub-1"}]}'),
        ("assistant", ""),
        ("tool", "[no terminal output was recorded for this turn]"),
        ("assistant", "count.txt holds 3."),
    ]
    first, second = row["messages"][1]["tool_calls"], row["messages"][4]["tool_calls"]
    assert first == [
        {
            "id": "toolu_01",
            "type": "function",
            "function": {"name": "Bash", "arguments": '{"command": "wc -l data.csv"}'},
        },
        {
            "id": "toolu_02",
            "type": "function",
            "function": {"name": "delegate", "arguments": '{"task": "check"}'},
        },
    ]  # never Terminus keystrokes with an invented duration
    assert json.loads(second[0]["function"]["arguments"]) == {"command": "echo 3 > count.txt"}
    assert [m["tool_call_id"] for m in row["messages"]] == [
        "",
        "",
        "toolu_01",
        "toolu_02",
        "",
        "toolu_03",
        "",
    ]
    assert all(m["tool_calls"] == [] for m in row["messages"] if m["role"] != "assistant")
    assert json.loads(row["tools"]) == TOOLS
    derived = json.loads(rows["no-defs"]["tools"])  # no tool_definitions: one function per name called
    assert [t["function"]["name"] for t in derived] == ["Bash", "delegate"]
    assert "[image]" not in (tmp_path / "rows.jsonl").read_text()
    store = Store(db, read_only=True)
    try:  # the count from the keys stored at ingest agrees with the export's pass
        counted = preview(store)
    finally:
        store.close()
    assert (counted.exported, counted.left_out.multimodal) == (2, 1)


def test_parquet_and_card_carry_the_tool_calls(db, tmp_path):
    _export(db, tmp_path / "rows.parquet", "parquet")
    table = pq.read_table(tmp_path / "rows.parquet")
    assert table.schema.equals(schema.arrow_schema())
    jsonl = tmp_path / "same.jsonl"
    _export(db, jsonl, "sft-jsonl")
    assert table.to_pylist() == [json.loads(line) for line in jsonl.read_text().splitlines()]
    card = (tmp_path / "rows.card.md").read_text()
    assert "    - name: tool_calls\n      list:\n" in card
    assert "| holds media (images, audio) a text row cannot carry | 1 |" in card


def test_sharegpt_uses_llama_factorys_tool_roles(db, tmp_path):
    _export(db, tmp_path / "sg.jsonl", "sharegpt")
    rows = {r["trajectory_id"]: r for r in map(json.loads, (tmp_path / "sg.jsonl").read_text().splitlines())}
    turns = rows["tool-run"]["conversations"]
    assert [t["from"] for t in turns] == [
        "human",
        "function_call",
        "observation",
        "function_call",
        "observation",
        "gpt",
    ]
    assert json.loads(turns[1]["value"]) == [
        {"name": "Bash", "arguments": {"command": "wc -l data.csv"}},
        {"name": "delegate", "arguments": {"task": "check"}},
    ]
    assert turns[2]["value"].startswith("3 data.csv\n\n")
    assert json.loads(turns[3]["value"]) == {"name": "Bash", "arguments": {"command": "echo 3 > count.txt"}}
    assert json.loads(rows["tool-run"]["tools"]) == TOOLS


def test_a_terminus_run_has_no_tools(db, tmp_path, data_dir):
    """harbor's Terminus 2 (its `bash_command` calls) stays Terminus JSON, with no tool calls and no tools."""
    done = _rsr("ingest", data_dir / "harbor_real" / "jobs" / "terminus-2-run", "--db", tmp_path / "t.duckdb")
    assert done.returncode == 0, done.stderr
    _export(tmp_path / "t.duckdb", tmp_path / "t.jsonl", "sft-jsonl", "--all")
    (row,) = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert row["tools"] == "[]" and {m["role"] for m in row["messages"]} <= {"system", "user", "assistant"}
    assert all(m["tool_calls"] == [] for m in row["messages"])
    assert json.loads(row["messages"][-1]["content"])["task_complete"] is True


@pytest.mark.formats
def test_transformers_renders_the_tool_calls_with_tools(db, tmp_path, trainer_check):
    """transformers' `apply_chat_template(messages, tools=json.loads(row["tools"]))` with a tool-calling ChatML
    template (trainer side venv): the tool list, every call with its arguments and every result reach the
    text, and the assistant mask covers exactly the assistant turns, calls included."""
    out = tmp_path / "rows.jsonl"
    _export(db, out, "sft-jsonl")
    rows = {r["trajectory_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    found = {r["trajectory_id"]: r for r in trainer_check("tools", str(out))["rows"]}
    assert sorted(found) == ["no-defs", "tool-run"]
    text, spans = found["tool-run"]["text"], found["tool-run"]["spans"]
    assert '"description": "Hand a sub-task to a helper agent."' in text  # the agent's own definitions
    assert '<tool_call>Bash {"command": "wc -l data.csv"}</tool_call>' in text
    assert '<tool_call>delegate {"task": "check"}</tool_call>' in text
    assert "<tool_response id=toolu_01>3 data.csv</tool_response>" in text
    assert spans == [
        'I will count the lines.<tool_call>Bash {"command": "wc -l data.csv"}</tool_call>'
        '<tool_call>delegate {"task": "check"}</tool_call><|im_end|>',
        '<tool_call>Bash {"command": "echo 3 > count.txt"}</tool_call><|im_end|>',
        "count.txt holds 3.<|im_end|>",
    ]
    assert "3 data.csv" not in "".join(spans)  # results are not trained on
    assert json.loads(rows["tool-run"]["tools"]) == TOOLS
