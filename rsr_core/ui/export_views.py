"""Export page helpers: the exact preview (cached until the data changes), the left-out table, default paths,
and a zip of the written export for download."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
import streamlit as st

from rsr_core.export.models import ExportFilters, ExportPreview
from rsr_core.export.service import preview
from rsr_core.store import app_queries
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached, db_signature
from rsr_core.ui.widgets import services_for

EXTENSIONS = {"sft-jsonl": "sft.jsonl", "sharegpt": "sharegpt.jsonl", "parquet": "parquet", "atif": "atif"}
WHY = {
    "direct_terminus": "terminus-2 discovery successes left out by choice",
    "eval": "eval runs",
    "harness": "discovery under StateM/RSRT (harness scaffolding)",
    "scripted": "scripted demo model (replayed answers, not sampled)",
    "verifier_tampered": "changed the verifier's own ground",
    "not_verified": "did not pass the verifier",
    "answer_transfer": "rewrite used a value it could not derive (answer transfer)",
    "human_rejected": "its runbook was rejected by a reviewer",
    "no_steps": "no agent turn to train on",
    "no_instruction": "task instruction not recoverable",
}


@cached
def _tasks(cur: Cursor) -> list[str]:
    return app_queries.facet_values(cur)["task_id"]


def task_ids(ctx: AppServices) -> list[str]:
    """Task ids for the filter."""
    return _tasks(ctx)


@st.cache_data(show_spinner=False, max_entries=64)
def _plan(db_path: str, signature: tuple, filters_json: str) -> ExportPreview:
    return preview(services_for(db_path).store, ExportFilters.model_validate_json(filters_json))


def plan_of(ctx: AppServices, filters: ExportFilters) -> ExportPreview:
    """The export's own dry run for these filters (what the write would produce), cached per database state."""
    path = ctx.settings.db_path
    return _plan(path, db_signature(path), filters.model_dump_json())


def left_out_frame(plan: ExportPreview) -> pd.DataFrame:
    """Reason, explanation, count."""
    counts = plan.left_out.model_dump()
    return pd.DataFrame([{"reason": k, "why": WHY.get(k, k), "trajectories": v} for k, v in counts.items()])


def default_out(fmt: str) -> str:
    """Where an export goes by default."""
    return str(Path("exports") / f"rsr-{EXTENSIONS[fmt]}")


def archive_bytes(out: str, card: str) -> tuple[str, bytes]:
    """A zip of the export (file or directory) and its dataset card."""
    path, card_path = Path(out), Path(card)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(path.parent))
        elif path.is_file():
            zf.write(path, path.name)
            if card_path.is_file():
                zf.write(card_path, card_path.name)
    return f"{path.name}.zip", buf.getvalue()
