"""The demo model's answers as data: the files under `data/demo/script/`, their models and their loading.

The scripted demo model is not sampled from anything: its answers are written by hand in YAML files and turned
into the rules of the project's scripted server by rsr_core/demo/rules.py (`data/scripted/demo_model.json`):

- `common.yaml`: the model names of every role and harness, the request markers that tell the critic's two
  kinds of request apart, turns shared by every task, how the M executions of one runbook differ (by run
  index, the request seed), the default answers of the critic and of the transfer check, and what
  `rsr demo record` records.
- `<task>.yaml`, one per demo task: a regular expression found in the task's instruction (every rule of the
  task is keyed on it), its discovery turns per harness (StateM's per phase), one runbook per planner variant
  (the request seed; a variant may have a first draft the critic rejects, the replan then answers the clean
  runbook), the critic model's verdicts, the executor's turns per runbook route, and answer-transfer verdicts.

A turn is a Terminus 2 answer written as `analysis`, `plan`, `keys` (each typed and followed by Enter: a
newline is added when the text does not end with one; `{keystrokes, duration}` for a longer wait), `done` and,
for StateM, `transition`; `{use: NAME}` is a named turn (the task's own `turns`, else the common ones) and
`{text: ...}` an answer sent as it is (a reply that is not JSON, to show how a harness copes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rsr_core.errors import RsrError

COMMON_FILE = "common.yaml"
KEY_DURATION = 0.3
ROUTE_PREFIX = "Route {route}: "
"""Put before a runbook's first milestone: the executor's rules find their route by it."""


class Strict(BaseModel):
    """A model of the script files: unknown keys are errors (a typo must not drop an answer silently)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class KeyPress(Strict):
    """Keystrokes with their own wait."""

    keystrokes: str
    """What is typed (a newline is added when missing)."""
    duration: float = KEY_DURATION
    """Seconds to wait after typing."""


class TurnSpec(Strict):
    """One scripted answer: a Terminus 2 turn, a named turn, or raw text."""

    analysis: str | None = None
    """The turn's analysis."""
    plan: str | None = None
    """The turn's plan."""
    keys: list[str | KeyPress] = Field(default_factory=list)
    """Commands typed, each followed by Enter."""
    done: bool = False
    """task_complete."""
    transition: str | None = None
    """StateM: the phase asked for."""
    use: str | None = None
    """The name of a turn defined elsewhere (the task's `turns`, else the common ones)."""
    text: str | None = None
    """An answer sent as it is (not a Terminus 2 object)."""

    @model_validator(mode="after")
    def _one_form(self) -> TurnSpec:
        forms = [self.use is not None, self.text is not None, self.analysis is not None]
        if sum(forms) != 1 or (not forms[2] and (self.plan or self.keys or self.done or self.transition)):
            raise ValueError("a turn is either {use: NAME}, {text: ...} or {analysis, plan, keys, ...}")
        return self


class RunbookParts(Strict):
    """The five parts of a runbook, all optional (a first draft names only the parts it changes)."""

    target_end_state: str | None = None
    """Target end state."""
    key_milestones: list[str] | None = None
    """Key milestones."""
    useful_checks: list[str] | None = None
    """Useful checks."""
    recovery_strategies: list[str] | None = None
    """Recovery strategies."""
    pitfalls: list[str] | None = None
    """Pitfalls."""


class RunbookSpec(RunbookParts):
    """The planner's answer for one variant."""

    route: str = Field(pattern=r"^[A-Z]$")
    """The route's letter; the executor follows the route it finds in the runbook."""
    first_draft: RunbookParts | None = None
    """Round 1's answer where it differs (the critic rejects it); a replan answers the clean runbook."""

    @model_validator(mode="after")
    def _complete(self) -> RunbookSpec:
        missing = [name for name in RunbookParts.model_fields if not getattr(self, name)]
        if missing:
            raise ValueError(f"runbook route {self.route} lacks {', '.join(missing)}")
        return self

    def answer(self, draft: bool = False) -> dict[str, Any]:
        """The planner's JSON answer (the first draft's when `draft`)."""
        parts = {name: getattr(self, name) for name in RunbookParts.model_fields}
        if draft and self.first_draft is not None:
            parts.update(self.first_draft.model_dump(exclude_none=True))
        milestones = list(parts["key_milestones"])
        milestones[0] = ROUTE_PREFIX.format(route=self.route) + milestones[0]
        return {**parts, "key_milestones": milestones}


class ModelFlag(Strict):
    """A flag as the critic model returns it."""

    kind: Literal["verifier_leak", "solution_leak", "harness_syntax"]
    """What kind of leak."""
    evidence: str
    """The runbook's text, quoted."""
    reason: str
    """Why."""


class CriticVerdict(Strict):
    """The critic model's verdict on runbooks whose text matches `when`."""

    when: str = ""
    """A regular expression on the critic's request (instruction and runbook); unused in the default."""
    verdict: Literal["pass", "reject"]
    """The verdict."""
    flags: list[ModelFlag] = Field(default_factory=list)
    """Its flags."""


class TransferVerdictSpec(Strict):
    """The critic model's answer-transfer verdict on runs whose record matches `when`."""

    when: str = ""
    """A regular expression on the check's request (instruction, runbook and the run's record); unused in the
    default."""
    answer_transfer: bool
    """The verdict."""
    evidence: list[str] = Field(default_factory=list)
    """What it saw."""


class Discovery(Strict):
    """Discovery turns per harness."""

    terminus_2: list[TurnSpec] = Field(alias="terminus-2")
    """Terminus 2's turns, by the number of answers so far."""
    rsrt: list[TurnSpec]
    """RSRT's turns."""
    statem: dict[str, list[TurnSpec]]
    """StateM's turns per phase (each phase starts a fresh conversation)."""


class ExecutionOverride(Strict):
    """One execution (route and run index) whose turns differ from the route's."""

    route: str
    """The route's letter."""
    run: int = Field(ge=0)
    """The run index (the request seed)."""
    turns: list[TurnSpec]
    """Its turns (the common finishing turns follow)."""


class ExecutorSpec(Strict):
    """The executor's turns."""

    routes: dict[str, list[TurnSpec]]
    """Each route's turns (the common finishing turns follow)."""
    overrides: list[ExecutionOverride] = Field(default_factory=list)
    """Executions that go their own way."""


class TaskScript(Strict):
    """One demo task's answers."""

    task: str
    """The task id."""
    marker: str
    """A regular expression found in the task's instruction and in no other's."""
    turns: dict[str, TurnSpec] = Field(default_factory=dict)
    """Named turns of this task (`check` closes some executions; see common.yaml `runs`)."""
    discovery: Discovery
    """The discovery harnesses' turns."""
    planner: list[RunbookSpec] = Field(min_length=1)
    """One runbook per planner variant."""
    critic: list[CriticVerdict] = Field(default_factory=list)
    """The critic model's verdicts other than the default."""
    executor: ExecutorSpec
    """The executor's turns."""
    transfer: list[TransferVerdictSpec] = Field(default_factory=list)
    """Answer-transfer verdicts other than the default."""

    @model_validator(mode="after")
    def _routes_exist(self) -> TaskScript:
        wanted = {rb.route for rb in self.planner} | {o.route for o in self.executor.overrides}
        missing = sorted(wanted - set(self.executor.routes))
        if missing:
            raise ValueError(f"{self.task}: no executor turns for route(s) {', '.join(missing)}")
        return self


class Models(Strict):
    """Model names of the demo (each starts with `scripted-demo`, so every run made with them is labelled)."""

    terminus_2: str = Field(alias="terminus-2", pattern="^scripted-demo")
    """Discovery under Terminus 2."""
    statem: str = Field(pattern="^scripted-demo")
    """Discovery under StateM."""
    rsrt: str = Field(pattern="^scripted-demo")
    """Discovery under RSRT."""
    planner: str = Field(pattern="^scripted-demo")
    """The Planner."""
    critic: str = Field(pattern="^scripted-demo")
    """The Critic and the answer-transfer check."""
    executor: str = Field(pattern="^scripted-demo")
    """The Executor."""

    def harness(self, name: str) -> str:
        """The discovery model of a harness."""
        return {"terminus-2": self.terminus_2, "statem": self.statem, "rsrt": self.rsrt}[name]


class Requests(Strict):
    """Regular expressions that tell requests apart (they follow the prompt templates' wording)."""

    critic: str
    """In the critic's system prompt."""
    transfer: str
    """In the answer-transfer check's system prompt."""
    replan: str
    """In a planner request that carries a critique."""
    statem_phase: str
    """In a StateM prompt, with `{phase}` standing for the phase."""


class Review(Strict):
    """A human review the recording adds."""

    task: str
    """The task whose runbook is reviewed."""
    variant: int = Field(ge=0)
    """The runbook's variant (its last critic-passed round is reviewed)."""
    decision: Literal["approve", "reject"]
    """The decision."""
    reviewer: str
    """Who (labelled as the scripted demo's)."""
    reason: str
    """Why."""


class RecordedJob(Strict):
    """A rewrite job the recording runs."""

    sources: dict[str, str]
    """task -> the harness whose successful discovery run is rewritten."""
    k: int = Field(ge=1)
    """Runbooks per source."""
    m: int = Field(ge=1)
    """Executions per approved runbook."""
    rounds: int = Field(3, ge=1)
    """Critic rounds per runbook."""
    gate: Literal["critic", "human"] = "critic"
    """The gate."""
    reviews: list[Review] = Field(default_factory=list)
    """Reviews added once the job has run (a job waiting for review then runs on)."""


class Recording(Strict):
    """What `rsr demo record` runs."""

    discovery_max_turns: int = Field(ge=1)
    """Turns per discovery run."""
    sandbox_budget_s: float = Field(gt=0)
    """Wall-clock budget of a sandbox."""
    workers: int = Field(ge=1)
    """Units of a rewrite job run at once."""
    jobs: list[RecordedJob]
    """The rewrite jobs, in order."""


class CommonScript(Strict):
    """What every task shares."""

    description: str
    """Written into the generated script."""
    models: Models
    """Model names."""
    requests: Requests
    """Request markers."""
    turns: dict[str, TurnSpec]
    """Named turns."""
    runs: list[list[str]] = Field(min_length=1)
    """By run index: the named turns around `route` (the route's own turns)."""
    finish: list[str]
    """Named turns that close every execution."""
    critic_default: CriticVerdict
    """The critic model's verdict when no task rule matches (`when` is not used)."""
    transfer_default: TransferVerdictSpec
    """The transfer check's verdict when no task rule matches (`when` is not used)."""
    recording: Recording
    """What the recording runs."""


class DemoScript(BaseModel):
    """The whole demo script."""

    common: CommonScript
    """Shared parts."""
    tasks: list[TaskScript]
    """Per-task parts, in task order."""

    def task(self, task_id: str) -> TaskScript:
        """One task's script."""
        for t in self.tasks:
            if t.task == task_id:
                return t
        raise KeyError(task_id)


class ScriptFileError(RsrError):
    """A demo script file is missing or invalid (the message names the file)."""


M = TypeVar("M", bound=BaseModel)


def _read(path: Path, model: type[M]) -> M:
    try:
        return model.model_validate(yaml.safe_load(path.read_text()))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'root'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise ScriptFileError(f"{path}: {problems}") from None
    except (OSError, yaml.YAMLError) as exc:
        raise ScriptFileError(f"{path}: {' '.join(str(exc).split())}") from None


def load_demo_script(script_dir: Path) -> DemoScript:
    """Read and validate common.yaml and every task file of a script directory."""
    tasks = [_read(p, TaskScript) for p in sorted(script_dir.glob("*.yaml")) if p.name != COMMON_FILE]
    return DemoScript(common=_read(script_dir / COMMON_FILE, CommonScript), tasks=tasks)
