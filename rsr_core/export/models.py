"""Typed inputs and outputs of export: the filters, the preview of what would be exported, the summary."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from rsr_core.formats.atif_write import ATIF_VERSION as ATIF_VERSION
from rsr_core.vocabulary import EXPORT_FORMATS

ExportFormat = Literal["sft-jsonl", "sharegpt", "parquet", "atif"]
FORMATS: tuple[str, ...] = EXPORT_FORMATS


def as_format(value: str) -> ExportFormat:
    """An export format name checked (ValueError naming the formats otherwise)."""
    if value not in get_args(ExportFormat):
        raise ValueError(f"format {value!r}: expected one of {', '.join(FORMATS)}")
    return cast(ExportFormat, value)


ExportKind = Literal["rewrite", "discovery", "eval"]


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


class ExportFilters(_Model):
    """What to export. By default only what should train (the training filters); `all_trajectories` turns
    those filters off, for archiving or moving data between machines."""

    kinds: list[ExportKind] | None = None
    """Trajectory kinds to select (`--kind`); None: rewrite and discovery, or every kind with `--all`."""
    task_ids: list[str] = Field(default_factory=list)
    """Only these tasks (`--task`); empty selects every task."""
    include_direct_terminus: bool = True
    """Include terminus-2 discovery successes unchanged, as in the paper (`--no-include-direct-terminus`)."""
    all_trajectories: bool = False
    """Training filters off (`--all`): every selected trajectory is exported, whatever its verdicts."""
    include_scripted: bool = False
    """Keep runs whose model answers were replayed by the scripted server (`--include-scripted`); training
    exports leave them out by default."""
    keep_reasoning: bool = False
    """Assistant turns carry the model's thinking before the answer as `<think>…</think>` (`--reasoning keep`);
    exact duplicates are still told apart by the turns without it."""

    def selected_kinds(self) -> list[str]:
        """The kinds actually selected."""
        if self.kinds is not None:
            return list(self.kinds)
        return ["rewrite", "discovery", "eval"] if self.all_trajectories else ["rewrite", "discovery"]


class LeftOut(_Model):
    """Selected trajectories that are not exported, by the first reason that applies (in this order)."""

    direct_terminus: int = 0
    """terminus-2 discovery runs left out by `--no-include-direct-terminus`."""
    eval: int = 0
    """eval runs (they never train)."""
    harness: int = 0
    """Discovery runs of another harness than terminus-2 (StateM, RSRT: they carry harness scaffolding)."""
    scripted: int = 0
    """Runs whose model answers were scripted, not sampled (the demo); kept with `--include-scripted`."""
    verifier_tampered: int = 0
    """Runs that changed the verifier's own ground (never verified, whatever their reward)."""
    not_verified: int = 0
    """Runs that did not pass the verifier (reward < 1.0 or never verified)."""
    answer_transfer: int = 0
    """Verified rewrites flagged for answer transfer (by either check)."""
    human_rejected: int = 0
    """Verified rewrites without answer transfer whose runbook a human rejected (runbook_status)."""
    no_steps: int = 0
    """Runs with no agent turn to train on (and, with `--all`, runs with no agent step: ATIF needs one)."""
    no_instruction: int = 0
    """Runs whose task instruction cannot be recovered (no user message before the first agent turn, no
    instruction recorded and no ingested task)."""

    @property
    def total(self) -> int:
        """All left-out trajectories."""
        return sum(self.model_dump().values())


class ExportPreview(_Model):
    """Exactly what an export with these filters would write (the same pass as the export, without writing)."""

    selected: int
    """Trajectories matching the kind and task selection."""
    eligible: int
    """Selected trajectories that pass the filters and make a row (exported, or dropped as duplicates)."""
    exported: int = 0
    """Rows the export would write (eligible minus duplicates)."""
    duplicates: int = 0
    """Eligible trajectories that would be dropped as exact duplicates of an earlier row."""
    left_out: LeftOut
    """Selected trajectories left out, by reason."""
    eligible_by_kind: dict[str, int] = Field(default_factory=dict)
    """Eligible trajectories per kind."""
    eligible_by_harness: dict[str, int] = Field(default_factory=dict)
    """Eligible trajectories per harness."""


class ExportSummary(_Model):
    """The result of one export (`rsr export --json` prints it)."""

    format: ExportFormat
    """Output format."""
    out: str
    """File (or, for ATIF, directory) written."""
    card: str
    """Dataset card (README.md) written beside the output."""
    created_at: datetime
    """When the export ran (UTC)."""
    tool_version: str
    """rsr-studio version that wrote it."""
    atif_version: str | None = None
    """ATIF schema_version of the files, for the atif format."""
    filters: ExportFilters
    """Filters used."""
    selected: int
    """Trajectories matching the kind and task selection."""
    exported: int
    """Rows (trajectories) written."""
    duplicates: int
    """Eligible trajectories dropped because an exported one had exactly the same training messages."""
    left_out: LeftOut
    """Selected trajectories left out, by reason."""
    by_task: dict[str, int] = Field(default_factory=dict)
    """Exported rows per task id ("" for trajectories without a task)."""
    by_category: dict[str, int] = Field(default_factory=dict)
    """Exported rows per task category ("" when the task has none)."""
    by_harness: dict[str, int] = Field(default_factory=dict)
    """Exported rows per harness."""
    by_kind: dict[str, int] = Field(default_factory=dict)
    """Exported rows per kind."""
