"""Typed models of everything that crosses a boundary (store, CLI JSON, harness output, work units).

Stored models carry `schema_version`; every field has a docstring line (surfaced as its description).
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsr_core.vocabulary import KINDS as KINDS

SCHEMA_VERSION = 1

Kind = Literal["discovery", "rewrite", "eval"]
StepSource = Literal["system", "user", "agent"]
FlagKind = Literal["verifier_leak", "solution_leak", "harness_syntax", "schema"]
Decision = Literal["approve", "reject"]
RUNBOOK_PARTS: tuple[str, ...] = (
    "target_end_state",
    "key_milestones",
    "useful_checks",
    "recovery_strategies",
    "pitfalls",
)


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


class Command(_Model):
    """One keystroke batch an agent sent to the terminal (a Terminus `commands[]` entry or a tool call)."""

    keystrokes: str
    """Raw keystrokes, newlines included, exactly as the model wrote them."""
    duration: float = 1.0
    """Seconds the harness waited after sending them (Terminus default 1, capped at 60)."""
    function_name: str = "bash_command"
    """Tool name in ATIF (`bash_command` for Terminus; other agents' tools keep their names)."""


class Step(_Model):
    """One ATIF step (or one Terminal-Bench 1 episode)."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    index: int
    """Position in the trajectory, 1..n (ATIF `step_id`)."""
    source: StepSource
    """Who produced the step: system prompt, user/harness message, or agent turn."""
    message: str = ""
    """The step's text: prompt, harness message, or the agent's raw response."""
    analysis: str | None = None
    """Terminus `analysis` of an agent turn, when it could be read."""
    plan: str | None = None
    """Terminus `plan` of an agent turn, when it could be read."""
    reasoning: str | None = None
    """ATIF `reasoning_content`, the model's explicit reasoning if logged."""
    commands: list[Command] = Field(default_factory=list)
    """Keystroke batches the agent sent in this turn, in order."""
    observation: str | None = None
    """Terminal output the agent saw after this turn (ATIF observation results joined)."""
    task_complete: bool = False
    """The agent claimed completion in this turn."""
    harness_control: bool = False
    """Injected by a harness (state bookkeeping, verifier feedback, confirmations), not part of the task dialogue."""
    private_guidance: bool = False
    """Carries a runbook given to the Executor as private guidance; export always removes it."""
    copied_context: bool = False
    """ATIF `is_copied_context`: the step repeats context copied from an earlier trajectory; never trains."""
    model_name: str | None = None
    """Model that produced an agent step, if it differs from the trajectory's."""
    timestamp: str | None = None
    """ISO 8601 time of the step, as recorded."""
    prompt_tokens: int | None = None
    """Prompt tokens of the model call behind this step."""
    completion_tokens: int | None = None
    """Completion tokens of the model call behind this step."""
    cost_usd: float | None = None
    """Cost of the model call behind this step, in USD."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Step-level fields this model does not name (ATIF `extra`, unknown keys)."""


ChangeKind = Literal["added", "changed", "deleted"]


def as_kind(value: str) -> Kind:
    """A trajectory kind checked (ValueError naming the kinds otherwise)."""
    if value == "discovery":
        return "discovery"
    if value == "rewrite":
        return "rewrite"
    if value == "eval":
        return "eval"
    raise ValueError(f"kind {value!r}: expected one of {', '.join(KINDS)}")


class ChangedPath(_Model):
    """One path a run changed in its sandbox, as the engine's filesystem diff of the container reports it."""

    path: str
    """Absolute path inside the sandbox."""
    change: ChangeKind
    """added, changed or deleted (Docker's container diff kinds)."""
    verifier_ground: bool = False
    """The path is part of what the verifier relies on (its test runner, interpreters, /tests, /logs/verifier)."""


class Trajectory(_Model):
    """A run of an agent on a task, with provenance."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    trajectory_id: str
    """Stable identity (ATIF `trajectory_id`, else `session_id`, else the trial name)."""
    session_id: str | None = None
    """ATIF `session_id` as written."""
    task_id: str | None = None
    """Task name with any `org/` prefix removed; None when the source does not say."""
    kind: Kind = "discovery"
    """discovery (a harness solving a task), rewrite (an Executor run) or eval."""
    harness: str = "unknown"
    """Harness name: terminus-2, rsrt, statem, or another agent's name as written."""
    agent_name: str | None = None
    """Agent name as written by the source."""
    agent_version: str | None = None
    """Agent version as written by the source."""
    model: str | None = None
    """Model name of the run."""
    reward: float | None = None
    """Verifier reward as measured (1.0 passed); None when never verified."""
    verifier_tampered: bool = False
    """The run changed the verifier's own ground; it never counts as solved or verified, whatever its reward."""
    changed_paths: list[ChangedPath] = Field(default_factory=list)
    """What the run changed on disk before the verifier ran (the engine's diff of the container)."""
    source_trajectory_id: str | None = None
    """For rewrites: the discovery trajectory the runbook was derived from."""
    runbook_id: str | None = None
    """For rewrites: the runbook given as private guidance."""
    job_id: str | None = None
    """The rewrite job that produced this trajectory, if any."""
    instruction: str | None = None
    """Task instruction as the agent received it, when the source records it."""
    started_at: str | None = None
    """Start time (ISO 8601)."""
    finished_at: str | None = None
    """End time (ISO 8601)."""
    exception: str | None = None
    """Failure the run ended with (harbor `exception_info`, harness error)."""
    verifier_output: str | None = None
    """Test output of the verifier run."""
    scripted: bool = False
    """The model responses were replayed by the scripted server, not sampled from a model."""
    origin: str | None = None
    """File or directory the trajectory was read from."""
    content_hash: str = ""
    """SHA-256 of the canonical step content; with trajectory_id it makes ingest idempotent."""
    steps: list[Step] = Field(default_factory=list)
    """The steps in order."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Root-level fields this model does not name (ATIF `extra`, `notes`, `final_metrics`)."""


class TaskFile(_Model):
    """A file of a task directory kept for later checks (hidden tests, solution, environment)."""

    role: Literal["test", "solution", "environment"]
    """What the file is: hidden test, reference solution, or environment (Dockerfile and context)."""
    path: str
    """Path relative to the task directory."""
    content: str
    """Text content (binary files are kept as a placeholder)."""


class Task(_Model):
    """A terminal task: public instruction, environment, hidden tests and optional solution."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    task_id: str
    """Name with any `org/` prefix removed."""
    name: str | None = None
    """Full name as written (may include an `org/` prefix)."""
    instruction: str | None = None
    """Public instruction given to the agent."""
    category: str | None = None
    """Category from the task metadata."""
    difficulty: str | None = None
    """Difficulty from the task metadata."""
    tags: list[str] = Field(default_factory=list)
    """Tags from the task metadata."""
    source_format: Literal["harbor", "terminal-bench-1", "trajectory-only"] = "trajectory-only"
    """Where the task was read from; trajectory-only when only trajectories named it."""
    path: str | None = None
    """Task directory on disk when ingested from one."""
    docker_image: str | None = None
    """Prebuilt image named by the task, if any."""
    cpus: float | None = None
    """CPU limit for the sandbox."""
    memory_mb: int | None = None
    """Memory limit for the sandbox in MiB."""
    allow_internet: bool = False
    """The task allows network access (used only when the user opts in)."""
    storage_mb: int | None = None
    """Writable-space budget of the sandbox in MiB (`[environment] storage_mb`); None: the default budget."""
    max_files: int | None = None
    """Budget on files and directories written in the sandbox (`[environment] max_files`); None: the default."""
    pids_limit: int | None = None
    """Process limit of the sandbox (`[environment] pids_limit`); None: the default limit."""
    cap_add: list[str] = Field(default_factory=list)
    """Linux capabilities the task needs beyond the sandbox's default set (`[environment] cap_add`)."""
    agent_timeout_sec: float | None = None
    """Agent wall-clock budget."""
    verifier_timeout_sec: float | None = None
    """Verifier wall-clock budget."""
    verifier_allow_changes: list[str] = Field(default_factory=list)
    """Paths (or directory prefixes) of the verifier's ground a run may change without counting as tampering
    (`[verifier] allow_changes` in task.toml), for tasks whose goal is to change them."""
    files: list[TaskFile] = Field(default_factory=list)
    """Hidden tests, solution and environment files; never shown as public."""


class Runbook(_Model):
    """Guidance derived from one successful source trajectory; never contains the answer."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    runbook_id: str
    """Identity of this runbook round."""
    lineage_id: str
    """Identity shared by all rounds of one runbook (round 1 and its replans)."""
    source_trajectory_id: str
    """Successful discovery trajectory it was derived from."""
    task_id: str
    """Task of the source trajectory."""
    job_id: str | None = None
    """Rewrite job that made it."""
    variant: int = 0
    """Which of the K runbooks per source (0..K-1)."""
    round: int = 1
    """Critic round: 1 for the first plan, +1 for each replan after a rejection."""
    parent_runbook_id: str | None = None
    """The rejected runbook this one replans."""
    target_end_state: str
    """What the environment must look like when the task is done."""
    key_milestones: list[str]
    """Ordered intermediate states worth reaching."""
    useful_checks: list[str]
    """Ways to check progress from the terminal."""
    recovery_strategies: list[str]
    """What to do when a milestone fails."""
    pitfalls: list[str]
    """Mistakes to avoid."""
    prompt_version: str
    """Version of the planner prompt template."""
    model: str | None = None
    """Planner model."""
    critic_verdict: Literal["pass", "reject", "pending"] = "pending"
    """Outcome of the critic for this round."""
    created_at: datetime | None = None
    """When it was planned."""

    def text(self) -> str:
        """The runbook rendered as the text the critic scans and the Executor reads."""
        return render_runbook(self)


def render_runbook(rb: Runbook | dict[str, Any]) -> str:
    """Render the five parts as Markdown-ish text; spans of critic flags refer to this text."""
    get = rb.get if isinstance(rb, dict) else lambda k: getattr(rb, k)
    lines = ["Target end state:", str(get("target_end_state")), ""]
    titles = {
        "key_milestones": "Key milestones:",
        "useful_checks": "Useful checks:",
        "recovery_strategies": "Recovery strategies:",
        "pitfalls": "Pitfalls:",
    }
    for part, title in titles.items():
        lines.append(title)
        lines.extend(f"- {item}" for item in get(part) or [])
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


class CriticFlag(_Model):
    """One problem the Critic found in a runbook, with evidence."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    runbook_id: str
    """Runbook round the flag belongs to."""
    stage: Literal["deterministic", "llm"]
    """Which critic stage raised it."""
    kind: FlagKind
    """verifier_leak, solution_leak, harness_syntax or schema."""
    severity: Literal["low", "medium", "high"] = "high"
    """How much it matters; high flags reject the runbook."""
    score: float = 1.0
    """Match strength 0..1 (fuzzy score / 100 for text matches)."""
    span_start: int | None = None
    """Start offset of the evidence in the rendered runbook text."""
    span_end: int | None = None
    """End offset of the evidence in the rendered runbook text."""
    evidence: str
    """The offending runbook text."""
    matched_text: str | None = None
    """The hidden test / solution text it matches, where deterministic."""
    matched_path: str | None = None
    """Hidden file the match came from."""
    reason: str = ""
    """Why it was flagged."""


MAX_REVIEWER, MAX_REASON = 200, 2000
"""Characters of a reviewer's name and of a review's reason."""


def review_problem(reviewer: str, reason: str = "") -> str | None:
    """What is wrong with a review's reviewer and reason (None: nothing): a name needs a visible character (not
    only blanks, controls or invisible format characters), and both have a length limit."""
    if not any(ch.isprintable() and not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in reviewer):
        return "a reviewer name is required (with at least one visible character)"
    if len(reviewer) > MAX_REVIEWER:
        return f"a reviewer name is at most {MAX_REVIEWER} characters"
    if len(reason) > MAX_REASON:
        return f"a reason is at most {MAX_REASON} characters"
    return None


class Review(_Model):
    """A human decision on a runbook; reviews are append-only and the latest decides."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    runbook_id: str
    """Runbook reviewed."""
    decision: Decision
    """approve or reject."""
    reviewer: str
    """Who decided."""
    reason: str = ""
    """Why."""
    created_at: datetime | None = None
    """When (set by the store)."""


class TransferVerdict(_Model):
    """Answer-transfer check of one rewrite trajectory."""

    schema_version: int = SCHEMA_VERSION
    """Version of this stored model."""
    trajectory_id: str
    """The rewrite trajectory checked."""
    answer_transfer: bool
    """A value was used that the run could not have derived itself."""
    deterministic_evidence: list[str] = Field(default_factory=list)
    """Evidence lines of the deterministic check, one per transferred value (the static reading's, or the
    replay's, each starting `replay: `)."""
    llm_verdict: bool | None = None
    """The LLM stage's verdict, None when it did not run."""
    llm_evidence: list[str] = Field(default_factory=list)
    """Evidence the LLM stage gave."""


class IngestRefusal(_Model):
    """A record (not an exception) of one file or directory the ingest refused, and why; nothing of it stored."""

    path: str
    """The file (or directory) that failed."""
    error: str
    """What was wrong: field or line, and what was expected."""


class IngestReport(_Model):
    """Result of `rsr ingest`."""

    files: int = 0
    """Files (trajectory files, trial dirs, task dirs) examined."""
    trajectories_added: int = 0
    """New trajectories stored."""
    duplicates: int = 0
    """Trajectories already present (same id and content)."""
    tasks_added: int = 0
    """Task ids that were not known before."""
    errors: list[IngestRefusal] = Field(default_factory=list)
    """Files that failed; nothing of them was stored."""
