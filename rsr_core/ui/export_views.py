"""Export page helpers: the left-out table, default paths, and a zip of the written export for download."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd

from rsr_core.export.models import ExportPreview

EXTENSIONS = {"sft-jsonl": "sft.jsonl", "sharegpt": "sharegpt.jsonl", "parquet": "parquet", "atif": "atif"}
WHY = {
    "not_verified": "rewrite not verified (reward < 1)",
    "answer_transfer": "rewrite used a value it could not derive (answer transfer)",
    "human_rejected": "its runbook was rejected by a reviewer",
    "harness": "discovery under StateM/RSRT (harness scaffolding)",
    "direct_terminus": "terminus-2 discovery successes left out by choice",
    "eval": "eval runs",
}


def left_out_frame(plan: ExportPreview) -> pd.DataFrame:
    """Reason, explanation, count."""
    counts = plan.left_out.model_dump()
    return pd.DataFrame([{"reason": k, "why": WHY.get(k, k), "trajectories": v} for k, v in counts.items()])


def default_out(fmt: str) -> str:
    """Where an export goes by default."""
    return str(Path("exports") / f"rsr-{EXTENSIONS[fmt]}")


def archive_bytes(out: str) -> tuple[str, bytes]:
    """A zip of the export (file or directory) and its dataset card(s)."""
    path = Path(out)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(path.parent))
        elif path.is_file():
            zf.write(path, path.name)
            for card in (path.parent / "README.md", path.parent / f"{path.stem}.README.md"):
                if card.is_file():
                    zf.write(card, card.name)
    return f"{path.name}.zip", buf.getvalue()
