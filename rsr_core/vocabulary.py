"""Names shared across layers (kinds, formats, statuses, reasons, metrics), defined once and importable without any
engine. Everything else — argparse choices, SQL, the dataset card, the studio — derives from these;
tests/test_vocabulary.py checks that every user covers every name (see the README's "How to extend")."""

from __future__ import annotations

from dataclasses import dataclass

KINDS: tuple[str, ...] = ("discovery", "rewrite", "eval")
"""Trajectory kinds: a harness solving a task, an Executor run from a runbook, an evaluation run."""


@dataclass(frozen=True)
class ExportFormatInfo:
    """One format `rsr export` writes."""

    name: str
    """`--format` value, the card's `Format:` line, `ExportSummary.format`."""
    file_name: str
    """The studio's default output is `exports/rsr-<file_name>`."""
    directory: bool
    """Written as a directory (its card is README.md inside), not a file (card `<stem>.card.md` beside)."""
    rows: str | None
    """The dataset card's line on what each row holds; None for a format of files, not rows."""


EXPORT_FORMAT_INFO: tuple[ExportFormatInfo, ...] = (
    ExportFormatInfo(
        "sft-jsonl",
        "sft.jsonl",
        False,
        "`messages` [{role: system|user|assistant|tool, content, tool_calls, tool_call_id}]",
    ),
    ExportFormatInfo(
        "sharegpt",
        "sharegpt.jsonl",
        False,
        "`conversations` [{from: system|human|gpt|function_call|observation, value}]",
    ),
    ExportFormatInfo(
        "parquet", "parquet", False, "`messages` list<struct<role, content, tool_calls, tool_call_id>>"
    ),
    ExportFormatInfo("atif", "atif", True, None),
    ExportFormatInfo(
        "hf",
        "hf",
        True,
        "`messages` list<struct<role, content, tool_calls, tool_call_id>> (Parquet under `data/`)",
    ),
)
EXPORT_FORMATS: tuple[str, ...] = tuple(f.name for f in EXPORT_FORMAT_INFO)
"""What `rsr export` writes."""


def export_format(name: str) -> ExportFormatInfo:
    """The definition of an export format (KeyError for an unknown name)."""
    for info in EXPORT_FORMAT_INFO:
        if info.name == name:
            return info
    raise KeyError(name)


def spoken_list(names: tuple[str, ...] | list[str], last: str = "or") -> str:
    """'a, b or c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


@dataclass(frozen=True)
class LeftOutReason:
    """Why a selected trajectory is not exported (the first reason that applies, in LEFT_OUT order)."""

    name: str
    """The key in `rsr export --json`'s `left_out` (a field of `LeftOut`)."""
    words: str
    """The words `rsr export` prints before its count."""
    card: str
    """The dataset card's row."""
    studio: str
    """The studio's explanation on the Export page."""
    in_sql: bool = True
    """Found by the selection's SQL (rsr_core/store/export_queries.py); else while the training row is built
    (rsr_core/formats/training.py)."""


LEFT_OUT: tuple[LeftOutReason, ...] = (
    LeftOutReason(
        "direct_terminus",
        "terminus-2 discovery excluded",
        "terminus-2 discovery runs excluded by `--no-include-direct-terminus`",
        "terminus-2 discovery successes left out by choice",
    ),
    LeftOutReason("eval", "eval", "eval runs (never train)", "eval runs"),
    LeftOutReason(
        "harness",
        "harness",
        "discovery runs of another harness (StateM, RSRT, …: harness scaffolding)",
        "discovery under StateM/RSRT (harness scaffolding)",
    ),
    LeftOutReason(
        "scripted",
        "scripted",
        "model answers scripted, not sampled (the demo; `--include-scripted` keeps them)",
        "scripted demo model (replayed answers, not sampled)",
    ),
    LeftOutReason(
        "verifier_tampered",
        "verifier tampered",
        "changed the verifier's own ground (never verified, whatever the reward)",
        "changed the verifier's own ground",
    ),
    LeftOutReason("not_verified", "not verified", "did not pass the verifier", "did not pass the verifier"),
    LeftOutReason(
        "answer_transfer",
        "answer transfer",
        "answer transfer found by reading the commands (or by the model check)",
        "the commands spell a value the run could not derive, or the model check says so (answer transfer)",
    ),
    LeftOutReason(
        "answer_transfer_replay",
        "answer transfer (replay)",
        "answer transfer found by replaying the commands",
        "the commands' replay printed or wrote a value the run never saw (answer transfer)",
    ),
    LeftOutReason(
        "human_rejected",
        "human-rejected",
        "runbook rejected by a human reviewer",
        "its runbook was rejected by a reviewer",
    ),
    LeftOutReason(
        "no_steps", "no steps", "no agent turn to train on", "no agent turn to train on", in_sql=False
    ),
    LeftOutReason(
        "no_instruction",
        "no instruction",
        "task instruction not recoverable",
        "task instruction not recoverable",
        in_sql=False,
    ),
    LeftOutReason(
        "multimodal",
        "multimodal",
        "holds media (images, audio) a text row cannot carry",
        "holds media (images, audio) a text row cannot carry",
        in_sql=False,
    ),
)
LEFT_OUT_REASONS: tuple[str, ...] = tuple(r.name for r in LEFT_OUT)
"""The left-out reasons' names, in the order they are tested."""

RUNBOOK_STATUSES: tuple[str, ...] = (
    "critic_pending",
    "critic_rejected",
    "pending_review",
    "approved",
    "human_rejected",
)
"""A runbook round's status (the `runbook_status` view)."""
DECIDED: dict[str, str] = {"approve": "approved", "reject": "rejected"}
"""A reviewer's decisions, each with the word for a runbook that got it."""


@dataclass(frozen=True)
class HarnessInfo:
    """A harness this project runs."""

    name: str
    """As stored in `trajectories.harness`, `--harness`, `extra.rsr.harness`."""
    spellings: tuple[str, ...]
    """Other spellings an ingested run may give (lower-case), read as `name`."""


HARNESS_INFO: tuple[HarnessInfo, ...] = (
    HarnessInfo("terminus-2", ("terminus2", "terminus_2", "terminus 2")),
    HarnessInfo("rsrt", ()),
    HarnessInfo("statem", ("state-m", "state_m")),
)
HARNESS_NAMES: tuple[str, ...] = tuple(h.name for h in HARNESS_INFO)
"""The harnesses this project runs."""
GENERAL_HARNESS = HARNESS_NAMES[0]
"""terminus-2: the harness training data is written in; discovery runs of the others carry scaffolding and never train."""


@dataclass(frozen=True)
class SimilarityMetric:
    """A command-overlap metric of a pair of trajectories (README, Analysis)."""

    name: str
    """`rsr similarity --metric`, the column of `similarity_pairs`, the report's `metric`."""
    gloss: str
    """What `rsr similarity --help` says it is ("" when the name says it)."""
    label: str
    """The studio's axis and legend label."""


SIMILARITY_METRIC_INFO: tuple[SimilarityMetric, ...] = (
    SimilarityMetric("exact", "set Jaccard", "exact (set Jaccard)"),
    SimilarityMetric("multiset", "", "multiset"),
    SimilarityMetric("order", "Indel", "order-aware (Indel)"),
    SimilarityMetric("fuzzy", "rapidfuzz ratio", "fuzzy (ratio)"),
    SimilarityMetric("transition", "first-word pairs", "tool transitions"),
)
SIMILARITY_METRICS: tuple[str, ...] = tuple(m.name for m in SIMILARITY_METRIC_INFO)
"""Command-overlap metrics of a pair of trajectories."""
JOB_STATUSES: tuple[str, ...] = ("pending", "running", "waiting_review", "done", "failed", "cancelled")
"""A job's status (`jobs.status`): created, running, stopped with runbooks waiting for a human review (human
gate), finished, ended with a failed unit, cancelled."""
JOB_SUCCEEDED: tuple[str, ...] = ("done", "waiting_review")
"""Job statuses that ended without a failure or a cancel (a command that ran the job exits 0)."""
JOB_RESUMABLE: tuple[str, ...] = ("running", "waiting_review", "failed", "cancelled")
"""Job statuses `rsr jobs resume` and the studio's resume offer take up (running: its runner died)."""
UNIT_STATUSES: tuple[str, ...] = ("pending", "running", "done", "failed", "cancelled")
"""A work unit's status (`work_units.status`)."""
