"""The general harness, Terminus 2: JSON turns, tmux keystrokes, double confirmation of completion.

RSRT and StateM extend it through the hooks `on_turn` and `next_messages`.

Every run ends with a stored trajectory and a reason, whatever the agent did to its sandbox: a limit the
sandbox reports (pids, memory, disk) ends it with `resource_limit` (no verification: the run broke its
budget), a sandbox that stops answering (a wedged shell or terminal) with `sandbox_error`; the wall-clock
budget also bounds the waits inside a turn. Verification freezes the sandbox, records its filesystem diff
and runs the hidden tests in a fresh container (rsr_core/sandbox/verification.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rsr_core import prompts
from rsr_core.errors import SandboxFailure
from rsr_core.formats.terminus import (
    ProtocolError,
    TerminusResponse,
    cut_observation,
    parse_terminus,
)
from rsr_core.harness.context import MIN_ANSWER, ContextBudget, estimate_tokens
from rsr_core.harness.recorder import TrajectoryRecorder
from rsr_core.harness.tmux import SLACK_S, TmuxSession
from rsr_core.llm.client import ContextLengthExceeded, LLMError
from rsr_core.models import Task, Trajectory
from rsr_core.protocols import LLM, RunVerification, Sandbox, SandboxProvider

RESOURCE_LIMIT = "resource_limit"
SANDBOX_ERROR = "sandbox_error"
CONTEXT_LENGTH = "context_length"
MODEL_ERROR = "model_error"


@dataclass
class RunResult:
    """A finished harness run."""

    trajectory: Trajectory
    turns: int
    reward: float | None
    """The verifier's reward; None when the tests did not run or named no reward."""
    claimed: bool
    stop_reason: str
    """completed, passed, max_turns, wall_clock_budget, claim_budget, resource_limit, sandbox_error,
    context_length (the conversation outgrew the model's context and could not be handed off) or model_error (a
    model call failed for good after the first turn)."""


@dataclass
class Turn:
    """What the loop tells the harness hooks about the current turn."""

    parsed: TerminusResponse
    observation: str
    number: int


@dataclass
class RunState:
    """Per-run state the hooks read and change (harness objects hold no run state, so runs can overlap)."""

    task: Task
    sandbox: Sandbox
    tmux: TmuxSession
    pending_confirmation: bool = False
    claims: int = 0
    done_reason: str = "completed"
    turns: int = 0
    claimed: bool = False
    extra: dict = field(default_factory=dict)
    """Facts the harness adds to the trajectory's `extra` (RSRT's claim verifications)."""


class Terminus2Harness:
    """Terminus 2 exactly per the protocol: a parse error is fed back as the next observation; completion needs
    two consecutive `task_complete: true`; max turns and a wall-clock budget bound the run."""

    name = "terminus-2"
    prompt_file = "terminus2_v1.md"

    def __init__(
        self,
        llm: LLM,
        sandboxes: SandboxProvider,
        model: str,
        max_turns: int = 30,
        wall_clock_s: float = 1800.0,
        temperature: float = 0.0,
        seed: int | None = None,
        terminal_slack_s: float = SLACK_S,
    ):
        self.llm = llm
        self.terminal_slack_s = terminal_slack_s
        self.sandboxes = sandboxes
        self.model = model
        self.max_turns = max_turns
        self.wall_clock_s = wall_clock_s
        self.temperature = temperature
        self.seed = seed
        self.msgs = prompts.load_json("terminus2_messages_v1.json")
        self.context_msgs = prompts.load_json("terminus2_context_v1.json")

    # -- hooks ----------------------------------------------------------------------------------
    def first_prompt(self, state: RunState, screen: str) -> str:
        """The first user message: instruction and initial terminal state."""
        return prompts.render(
            prompts.load(self.prompt_file), instruction=state.task.instruction or "", terminal=screen
        )

    def parse(self, text: str) -> TerminusResponse:
        """Parse one answer (StateM also accepts `transition`)."""
        return parse_terminus(text)

    def new_state(self, task: Task, sandbox: Sandbox, tmux: TmuxSession) -> RunState:
        """Fresh per-run state."""
        return RunState(task, sandbox, tmux)

    def on_turn(self, state: RunState, turn: Turn) -> tuple[bool, list[str]]:
        """(done, harness messages to append) after a parsed turn. Terminus 2: double confirmation."""
        if not turn.parsed.task_complete:
            state.pending_confirmation = False
            return False, []
        if state.pending_confirmation:
            return True, []
        state.pending_confirmation = True
        return False, [self.msgs["confirm"]]

    def on_parse_error(self, state: RunState) -> None:
        """A malformed answer breaks a pending confirmation."""
        state.pending_confirmation = False

    def next_messages(
        self, state: RunState, messages: list[dict[str, str]], user_text: str
    ) -> list[dict[str, str]]:
        """The conversation for the next call (Terminus 2 keeps the whole history)."""
        return [*messages, {"role": "user", "content": user_text}]

    # -- loop -----------------------------------------------------------------------------------
    def run(
        self,
        task: Task,
        guidance: str | None = None,
        kind: str = "discovery",
        labels: dict | None = None,
        **provenance,
    ) -> RunResult:
        """Run the task in a fresh sandbox, verify, and return the trajectory (not stored)."""
        rec = TrajectoryRecorder(
            task, self.name, self.model, kind, scripted=self.model.startswith("scripted")
        )
        verification: RunVerification | None = None
        with self.sandboxes.open(task, labels) as sandbox:
            tmux = TmuxSession(sandbox, slack_s=self.terminal_slack_s)
            state = RunState(task, sandbox, tmux)  # replaced by the harness's own once the terminal runs
            try:
                tmux.start()
                state = self.new_state(task, sandbox, tmux)
                reason, detail = self._loop(state, rec, guidance)
            except SandboxFailure as exc:
                reason, detail = self._failure(sandbox, exc)
            try:
                verification = sandbox.verify(task, run_tests=reason != RESOURCE_LIMIT)
            except SandboxFailure as exc:
                if reason not in (RESOURCE_LIMIT, SANDBOX_ERROR):
                    reason, detail = SANDBOX_ERROR, f"the run could not be verified: {exc}"
        exception = None if reason in ("completed", "passed") else f"{reason}: {detail}" if detail else reason
        reward = verification.reward if verification else None
        traj = rec.finish(
            reward,
            verification.output if verification else None,
            exception,
            tampered=bool(verification and verification.tampered),
            changed_paths=verification.changed_paths if verification else [],
            extra={**(verification.extra() if verification else {}), **state.extra},
            **provenance,
        )
        return RunResult(traj, state.turns, reward, state.claimed, reason)

    def _failure(self, sandbox: Sandbox, exc: SandboxFailure) -> tuple[str, str]:
        """(reason, detail) of a sandbox that stopped working: a limit it hit, else the failure itself."""
        limit = sandbox.check_limits()
        return (RESOURCE_LIMIT, limit) if limit else (SANDBOX_ERROR, str(exc))

    def _loop(self, state: RunState, rec: TrajectoryRecorder, guidance: str | None) -> tuple[str, str | None]:
        """Turns until done or a bound; returns (stop reason, detail). SandboxFailure propagates; a failed model
        call after the first turn ends the run (`model_error`) with every step it took."""
        task, sandbox, tmux = state.task, state.sandbox, state.tmux
        start = time.monotonic()
        budget = min(self.wall_clock_s, task.agent_timeout_sec or self.wall_clock_s)
        context = ContextBudget(self.llm.limits(self.model))
        head: list[dict[str, str]] = []  # what every conversation of the run starts with
        if guidance:
            rec.system(guidance, private_guidance=True)
            head.append({"role": "system", "content": guidance})
        prompt = self.first_prompt(state, tmux.last_read)
        rec.user(prompt)
        messages = [*head, {"role": "user", "content": prompt}]
        too_long = False  # the endpoint refused this conversation for length
        while state.turns < self.max_turns:
            if time.monotonic() - start > budget:
                return "wall_clock_budget", None
            max_tokens = context.answer_budget(messages)
            try:
                if max_tokens is None or too_long:
                    handed = self._hand_off(state, rec, messages, head, context)
                    if handed is None:
                        return (
                            CONTEXT_LENGTH,
                            "the conversation outgrew the model's context and could not be handed off",
                        )
                    messages, too_long = handed, False
                    continue
                completion = self.llm.complete(messages, self.model, self.temperature, self.seed, max_tokens)
            except ContextLengthExceeded as exc:
                if len(messages) <= len(head) + 1:  # a fresh conversation: nothing left to summarise
                    return CONTEXT_LENGTH, str(exc)
                too_long = True
                continue
            except LLMError as exc:
                if state.turns == 0:
                    raise  # nothing done yet: the unit fails and is run again on resume
                return MODEL_ERROR, str(exc)
            state.turns += 1
            messages.append({"role": "assistant", "content": completion.text})
            context.measured(messages, completion)
            cut = {"cut_at_tokens": max_tokens} if completion.finish_reason == "length" else {}
            try:
                parsed = self.parse(completion.text)
            except ProtocolError as exc:
                feedback = (
                    prompts.render(self.context_msgs["cut"], tokens=max_tokens)
                    if cut
                    else prompts.render(self.msgs["parse_error"], error=str(exc))
                )
                rec.agent(completion, None, feedback, **cut)
                self.on_parse_error(state)
                messages = self.next_messages(state, messages, feedback)
                continue
            try:
                observation = self._act(tmux, parsed, budget - (time.monotonic() - start))
            except SandboxFailure as exc:
                rec.agent(completion, parsed, f"[the sandbox stopped answering: {exc}]", sandbox_failure=True)
                raise
            rec.agent(completion, parsed, observation, **cut)
            state.claimed = state.claimed or parsed.task_complete
            if sandbox.limit_reason:
                return RESOURCE_LIMIT, sandbox.limit_reason
            done, notes = self.on_turn(state, Turn(parsed, observation, state.turns))
            for note in notes:
                rec.control(note)
            if done:
                return state.done_reason, None
            messages = self.next_messages(state, messages, "\n\n".join([observation, *notes]))
        return "max_turns", None

    def _hand_off(
        self,
        state: RunState,
        rec: TrajectoryRecorder,
        messages: list[dict[str, str]],
        head: list[dict[str, str]],
        context: ContextBudget,
    ) -> list[dict[str, str]] | None:
        """The conversation is full: the model summarises the work so far (from as many of the latest turns as
        fit beside the first prompt), and a fresh conversation starts with the task, the summary and the
        current screen. None when there is nothing to summarise or no summary request fits."""
        first = len(head) + 1
        if len(messages) <= first:
            return None
        ask = {"role": "user", "content": self.context_msgs["summarize"]}
        kept = list(messages)
        limits = context.limits
        for _ in range(8):
            while True:
                room = (
                    limits.max_tokens
                    if limits.context_length is None
                    else limits.context_length - estimate_tokens([*kept, ask])
                )
                if room >= min(limits.max_tokens, MIN_ANSWER) or len(kept) <= first:
                    break
                del kept[first : first + 2]  # the oldest turn: an answer and what followed it
            if room < min(limits.max_tokens, MIN_ANSWER):
                return None
            try:
                summary = self.llm.complete(
                    [*kept, ask], self.model, self.temperature, self.seed, min(limits.max_tokens, room)
                )
                break
            except ContextLengthExceeded:
                if len(kept) <= first:
                    return None
                del kept[first : first + max(2, (len(kept) - first) // 2)]
        else:
            return None
        screen = state.tmux.screen()
        handoff = prompts.render(
            self.context_msgs["handoff"], first=self.first_prompt(state, screen), summary=summary.text
        )
        rec.handoff(summary, [*kept, ask], dropped=len(messages) - len(kept))
        rec.user(handoff, conversation_start=True)
        context.forget()
        state.pending_confirmation = False
        return [*head, {"role": "user", "content": handoff}]

    def _act(self, tmux: TmuxSession, parsed: TerminusResponse, budget_s: float) -> str:
        output, incremental = tmux.run(parsed.commands, budget_s=budget_s)
        key = "new_output" if incremental else "screen"
        text = prompts.render(self.msgs[key], output=cut_observation(output))
        if parsed.warnings:
            text = prompts.render(self.msgs["warnings"], warnings=" ".join(parsed.warnings)) + "\n\n" + text
        return text
