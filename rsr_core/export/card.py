"""The dataset card written with an export (`<stem>.card.md` beside a file, README.md inside a directory): what
is in it, how it was filtered, by whom and when; for row exports a Hugging Face dataset card, whose YAML front
matter names the data files (`configs`) and declares the features of the schema (rsr_core/export/schema.py)."""

from __future__ import annotations

import json
from pathlib import Path

from rsr_core.export.models import CardMeta, ExportSummary
from rsr_core.export.schema import COLUMNS, Conversation, features_yaml
from rsr_core.export.writers import CARD_MARKER, HF_DATA_FILE
from rsr_core.vocabulary import LEFT_OUT, export_format


def card_path(out: Path, fmt: str) -> Path:
    """Where the dataset card goes: inside the output directory for atif and hf, else `<stem>.card.md` beside
    the file (the only file written beside an output)."""
    if export_format(fmt).directory:
        return out / "README.md"
    return out.with_name(f"{out.stem}.card.md")


def data_file(summary: ExportSummary) -> str | None:
    """The data file the card's `configs` names, relative to the card; None for atif (no rows)."""
    if export_format(summary.format).rows is None:
        return None
    return HF_DATA_FILE if summary.format == "hf" else Path(summary.out).name


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def front_matter(summary: ExportSummary, meta: CardMeta, calls: bool = True) -> list[str]:
    """The Hugging Face card metadata: license (when given), task categories, tags, `configs` (the train
    split's data file) and `dataset_info.features` (`calls`: the rows hold a tool call, rsr_core/export/schema.py)."""
    path = data_file(summary)
    if path is None:
        return []
    conversation: Conversation = "conversations" if summary.format == "sharegpt" else "messages"
    lines = ["---"]
    if meta.license:
        lines.append(f"license: {_quoted(meta.license)}")
    for key, values in (("task_categories", meta.task_categories), ("tags", meta.tags)):
        if values:
            lines += [f"{key}:", *(f"- {_quoted(v)}" for v in values)]
    lines += [
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        f"    path: {_quoted(path)}",
        "dataset_info:",
        *features_yaml(conversation, calls),
        "---",
    ]
    return lines


def _data_line(name: str) -> str:
    return f"- Data: `{name}`"


def _table(title: str, counts: dict[str, int], label: str) -> list[str]:
    lines = [f"### {title}", "", f"| {label} | rows |", "| --- | ---: |"]
    lines += [
        f"| {name or '(none)'} | {n} |" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return [*lines, ""]


def render_card(summary: ExportSummary, meta: CardMeta | None = None, calls: bool = True) -> str:
    """The card's Markdown, with Hugging Face front matter for a row export (`calls`: its rows hold a tool call)."""
    s, f = summary, summary.filters
    lines = front_matter(summary, meta or CardMeta(), calls)
    lines += [CARD_MARKER, "", "# RSR Studio export", ""]
    lines += [
        _data_line(f"{Path(s.out).name}/{HF_DATA_FILE}" if s.format == "hf" else Path(s.out).name),
        f"- Format: `{s.format}`" + (f" ({s.atif_version})" if s.atif_version else ""),
        f"- Written: {s.created_at.isoformat(timespec='seconds')} by rsr-studio {s.tool_version}",
        f"- Rows: {s.exported} exported of {s.selected} selected; {s.duplicates} exact duplicates dropped; "
        f"{s.left_out.total} left out",
        "",
        "## Filters",
        "",
        f"- Kinds: {', '.join(f.selected_kinds())}",
        f"- Tasks: {', '.join(f.task_ids) if f.task_ids else 'all'}",
        f"- terminus-2 discovery successes included unchanged: {'yes' if f.include_direct_terminus else 'no'}",
    ]
    if f.all_trajectories:
        lines.append(
            "- Training filters: **off** (`--all`): every selected trajectory, whatever its verdicts"
        )
    else:
        lines += [
            "- Training filters: on. Rewrites that passed the verifier without tampering with it, show no answer",
            "  transfer and whose runbook no human rejected; terminus-2 discovery runs that solved their task.",
            "  Never other harnesses' runs.",
            f"- Scripted runs (model answers replayed, not sampled): {'included' if f.include_scripted else 'left out'}"
            + (f" ({s.left_out.scripted} left out)" if s.left_out.scripted else ""),
        ]
    lines += ["", "### Left out", "", "| reason | trajectories |", "| --- | ---: |"]
    lines += [f"| {r.card} | {getattr(s.left_out, r.name)} |" for r in LEFT_OUT]
    lines += [f"| exact duplicate of an exported row | {s.duplicates} |", "", "## Counts", ""]
    lines += _table("By kind", s.by_kind, "kind")
    lines += _table("By harness", s.by_harness, "harness")
    lines += _table("By category", s.by_category, "category")
    lines += _table("By task", s.by_task, "task")
    lines += ["## Contents", ""]
    rows = export_format(s.format).rows
    if rows is None:
        lines += [
            "One ATIF trajectory file per trajectory under `<task>/`, with RSR provenance in root `extra.rsr`",
            "(task_id, harness, kind, reward, source_trajectory_id, runbook_id, job_id, …). "
            + (
                "Every step is kept and answer-transfer verdicts and runbook reviews travel in `extra.rsr`: "
                "`rsr ingest` of this directory restores the trajectories as they were stored."
                if f.all_trajectories
                else "Only the steps that train are kept (no private guidance, no harness-control steps)."
            ),
            "",
        ]
    else:
        lines += [
            f"Each row: {rows}, and outside the messages:",
            "",
            "| column | type | what |",
            "| --- | --- | --- |",
            *(f"| `{c.name}` | {c.dtype} | {c.description} |" for c in COLUMNS),
            "",
            "Messages are the Terminus 2 conversation a model sees at inference: the prompt (instruction and",
            "initial terminal state), assistant turns as Terminus 2 JSON, user turns as terminal observations.",
            "Runbooks, critic dialogue, harness-control steps and RSR provenance never appear in messages.",
            "",
        ]
    return "\n".join(lines) + "\n"
