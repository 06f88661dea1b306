"""Typed inputs and outputs of export: the filters, the preview of what would be exported, the summary."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rsr_core.formats.atif_write import ATIF_VERSION as ATIF_VERSION
from rsr_core.vocabulary import EXPORT_FORMATS

# mypy needs the names spelled out: tests/test_vocabulary.py checks they are EXPORT_FORMATS, in its order.
ExportFormat = Literal["sft-jsonl", "sharegpt", "parquet", "atif", "hf"]
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
    """Selected trajectories that are not exported, by the first reason that applies (in this order). The fields
    are the reasons of rsr_core/vocabulary.py's LEFT_OUT, in its order (tests/test_vocabulary.py checks)."""

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
    """Verified rewrites flagged for answer transfer by the static reading of their commands or the model check."""
    answer_transfer_replay: int = 0
    """Verified rewrites flagged for answer transfer by the replay stage: replaying their commands printed or
    wrote a hidden value the run never saw."""
    human_rejected: int = 0
    """Verified rewrites without answer transfer whose runbook a human rejected (runbook_status)."""
    no_steps: int = 0
    """Runs with no agent turn to train on (and, with `--all`, runs with no agent step: ATIF needs one)."""
    no_instruction: int = 0
    """Runs whose task instruction cannot be recovered (no user message before the first agent turn, no
    instruction recorded and no ingested task)."""
    multimodal: int = 0
    """Runs holding media (an image, audio) that a text row cannot carry."""

    @property
    def total(self) -> int:
        """All left-out trajectories."""
        return sum(self.model_dump().values())


_LICENSE = re.compile(r"[a-z0-9][a-z0-9.+-]{0,63}")
_CATEGORY = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


def check_license(value: str) -> str:
    """A Hugging Face license id as the Hub spells them (apache-2.0, cc-by-4.0, other, …)."""
    if not _LICENSE.fullmatch(value):
        raise ValueError(f"license {value!r}: expected a Hub license id such as apache-2.0 or cc-by-4.0")
    return value


def check_category(value: str) -> str:
    """A Hugging Face task category (text-generation, question-answering, …)."""
    if not _CATEGORY.fullmatch(value):
        raise ValueError(
            f"task category {value!r}: expected lower-case words joined by '-', e.g. text-generation"
        )
    return value


def check_tag(value: str) -> str:
    """A Hub tag: letters, digits and . _ + - (no spaces, at most 64 characters)."""
    if not _TAG.fullmatch(value):
        raise ValueError(f"tag {value!r}: expected letters, digits and . _ + - (at most 64 characters)")
    return value


class CardMeta(_Model):
    """What the dataset card's Hugging Face metadata says beyond the data itself (`rsr export --license`,
    `--task-category`, `--tag`)."""

    license: str | None = None
    """License id; none is written unless given (the data's license is its owner's call)."""
    task_categories: list[str] = Field(default_factory=lambda: ["text-generation"])
    """Hub task categories."""
    tags: list[str] = Field(default_factory=lambda: ["rsr-studio", "agents", "terminal"])
    """Hub tags."""

    @field_validator("license")
    @classmethod
    def _license(cls, value: str | None) -> str | None:
        return None if value is None else check_license(value)

    @field_validator("task_categories")
    @classmethod
    def _categories(cls, value: list[str]) -> list[str]:
        return [check_category(v) for v in value]

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        return [check_tag(v) for v in value]


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
    """File (or, for atif and hf, directory) written."""
    card: str
    """Dataset card written with the output (`<stem>.card.md` beside a file, README.md inside a directory)."""
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
