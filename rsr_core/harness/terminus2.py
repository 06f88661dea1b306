"""The general harness, Terminus 2: JSON turns, tmux keystrokes, double confirmation of completion.

RSRT and StateM extend it through the hooks `on_completion_claim` and `next_messages`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rsr_core import prompts
from rsr_core.harness.protocol import (
    ProtocolError,
    TerminusResponse,
    cut_observation,
    parse_terminus,
)
from rsr_core.harness.recorder import TrajectoryRecorder
from rsr_core.models import Task, Trajectory
from rsr_core.protocols import LLM, SandboxProvider
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.tmux import TmuxSession
from rsr_core.sandbox.verifier import run_verifier


@dataclass
class RunResult:
    """A finished harness run."""

    trajectory: Trajectory
    turns: int
    reward: float
    claimed: bool
    stop_reason: str


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
    sandbox: DockerSandbox
    tmux: TmuxSession
    pending_confirmation: bool = False
    claims: int = 0
    done_reason: str = "completed"


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
    ):
        self.llm = llm
        self.sandboxes = sandboxes
        self.model = model
        self.max_turns = max_turns
        self.wall_clock_s = wall_clock_s
        self.temperature = temperature
        self.seed = seed
        self.msgs = prompts.load_json("terminus2_messages_v1.json")

    # -- hooks ----------------------------------------------------------------------------------
    def first_prompt(self, state: RunState, screen: str) -> str:
        """The first user message: instruction and initial terminal state."""
        return prompts.render(
            prompts.load(self.prompt_file), instruction=state.task.instruction or "", terminal=screen
        )

    def parse(self, text: str) -> TerminusResponse:
        """Parse one answer (StateM also accepts `transition`)."""
        return parse_terminus(text)

    def new_state(self, task: Task, sandbox: DockerSandbox, tmux: TmuxSession) -> RunState:
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
        with self.sandboxes.open(task, labels) as sandbox:
            tmux = TmuxSession(sandbox)
            tmux.start()
            turns, claimed, reason = self._loop(task, sandbox, tmux, rec, guidance)
            result = run_verifier(sandbox, task)
        traj = rec.finish(
            result.reward, result.output, None if reason in ("completed", "passed") else reason, **provenance
        )
        return RunResult(traj, turns, result.reward, claimed, reason)

    def _loop(
        self,
        task: Task,
        sandbox: DockerSandbox,
        tmux: TmuxSession,
        rec: TrajectoryRecorder,
        guidance: str | None,
    ) -> tuple[int, bool, str]:
        state = self.new_state(task, sandbox, tmux)
        start = time.monotonic()
        messages: list[dict[str, str]] = []
        if guidance:
            rec.system(guidance, private_guidance=True)
            messages.append({"role": "system", "content": guidance})
        prompt = self.first_prompt(state, tmux.last_read)
        rec.user(prompt)
        messages.append({"role": "user", "content": prompt})
        turn, claimed = 0, False
        while turn < self.max_turns:
            if time.monotonic() - start > self.wall_clock_s:
                return turn, claimed, "wall_clock_budget"
            completion = self.llm.complete(messages, self.model, self.temperature, self.seed)
            turn += 1
            messages.append({"role": "assistant", "content": completion.text})
            try:
                parsed = self.parse(completion.text)
            except ProtocolError as exc:
                feedback = prompts.render(self.msgs["parse_error"], error=str(exc))
                rec.agent(completion, None, feedback)
                self.on_parse_error(state)
                messages = self.next_messages(state, messages, feedback)
                continue
            observation = self._act(tmux, parsed)
            rec.agent(completion, parsed, observation)
            claimed = claimed or parsed.task_complete
            done, notes = self.on_turn(state, Turn(parsed, observation, turn))
            for note in notes:
                rec.control(note)
            if done:
                return turn, claimed, state.done_reason
            messages = self.next_messages(state, messages, "\n\n".join([observation, *notes]))
        return turn, claimed, "max_turns"

    def _act(self, tmux: TmuxSession, parsed: TerminusResponse) -> str:
        output, incremental = tmux.run(parsed.commands)
        key = "new_output" if incremental else "screen"
        text = prompts.render(self.msgs[key], output=cut_observation(output))
        if parsed.warnings:
            text = prompts.render(self.msgs["warnings"], warnings=" ".join(parsed.warnings)) + "\n\n" + text
        return text
