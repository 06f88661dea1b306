"""StateM: an explicit workflow state machine around Terminus 2 turns.

Phases explore -> plan -> implement -> verify -> done (verify -> implement also allowed). The model asks for a
transition in its JSON; a transition not allowed from the current phase is refused with a message naming the
allowed ones; `task_complete` is accepted only in verify. Each phase starts a fresh context (the instruction,
the notes carried from earlier phases and the current screen). A state record written after every turn lets
an interrupted run resume in a new sandbox: the commands run so far are replayed, then the loop continues.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from rsr_core import prompts
from rsr_core.formats.terminus import TerminusResponse, parse_terminus
from rsr_core.harness.terminus2 import RunState, Terminus2Harness, Turn
from rsr_core.harness.tmux import TmuxSession
from rsr_core.models import Command, Task
from rsr_core.protocols import Sandbox

PHASES = ("explore", "plan", "implement", "verify", "done")
ALLOWED = {
    "explore": ("plan",),
    "plan": ("implement",),
    "implement": ("verify",),
    "verify": ("done", "implement"),
    "done": (),
}


@dataclass
class StateMState(RunState):
    """Run state plus the machine's phase, carried notes and replayable command log."""

    phase: str = "explore"
    notes: list[dict[str, str]] = field(default_factory=list)
    keystrokes: list[tuple[str, float]] = field(default_factory=list)
    phase_prompt: str | None = None
    turn: int = 0

    def record(self) -> dict:
        """The state record (JSON) that makes the run resumable."""
        return {
            "task_id": self.task.task_id,
            "phase": self.phase,
            "turn": self.turn,
            "notes": self.notes,
            "keystrokes": self.keystrokes,
            "updated_at": time.time(),
        }


def _own(state: RunState) -> StateMState:
    """The run's state as StateM made it (new_state); the hooks receive it typed as the base harness's."""
    if not isinstance(state, StateMState):
        raise TypeError(f"StateM hooks need the state StateM made, got {type(state).__name__}")
    return state


class StateMHarness(Terminus2Harness):
    """Workflow state-machine discovery harness."""

    name = "statem"
    prompt_file = "statem_v1.md"

    def __init__(self, *args, state_path: Path | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.state_path = state_path
        self.goals = prompts.load_json("statem_phases_v1.json")

    def new_state(self, task: Task, sandbox: Sandbox, tmux: TmuxSession) -> StateMState:
        """Fresh state, or the saved record of an interrupted run (its commands replayed into this sandbox)."""
        state = StateMState(task, sandbox, tmux)
        saved = self._load_record(task)
        if saved:
            state.phase, state.notes, state.turn = saved["phase"], saved["notes"], saved["turn"]
            state.keystrokes = [tuple(k) for k in saved["keystrokes"]]
            tmux.run([Command(keystrokes=k, duration=min(d, 5.0)) for k, d in state.keystrokes])
        return state

    def _load_record(self, task: Task) -> dict | None:
        if self.state_path is None or not self.state_path.is_file():
            return None
        saved = json.loads(self.state_path.read_text())
        if saved.get("task_id") != task.task_id or saved.get("phase") == "done":
            return None
        return saved

    def _save(self, state: StateMState) -> None:
        if self.state_path is not None:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state.record(), indent=1))
            tmp.replace(self.state_path)

    def first_prompt(self, state: RunState, screen: str) -> str:
        """The phase-local prompt: instruction, phase and its goal, notes carried over, the screen."""
        state = _own(state)
        notes = "".join(
            f"Notes from the {n['phase']} phase: {n['analysis']} {n['plan']}\n" for n in state.notes
        )
        return prompts.render(
            prompts.load(self.prompt_file),
            instruction=state.task.instruction or "",
            phase=state.phase,
            allowed=", ".join(ALLOWED[state.phase]) or "none",
            phase_goal=self.goals.get(state.phase, ""),
            notes=notes + ("\n" if notes else ""),
            terminal=screen,
        )

    def parse(self, text: str) -> TerminusResponse:
        """Terminus 2 answer plus an optional `transition`."""
        return parse_terminus(text, allow_transition=True)

    def on_turn(self, state: RunState, turn: Turn) -> tuple[bool, list[str]]:
        """Check the requested transition / completion claim and announce the new phase."""
        state = _own(state)
        parsed = turn.parsed
        state.turn = turn.number
        state.keystrokes += [(c.keystrokes, c.duration) for c in parsed.commands]
        notes: list[str] = []
        done = False
        target = parsed.transition
        if parsed.task_complete and target is None:
            target = "done"
        if target is not None:
            if target in ALLOWED[state.phase]:
                state.notes.append({"phase": state.phase, "analysis": parsed.analysis, "plan": parsed.plan})
                state.phase = target
                done = target == "done"
                allowed = ", ".join(ALLOWED[target]) or "none"
                notes.append(f"[statem] phase: {target}. Allowed transitions: {allowed}.")
                if not done:  # the new phase starts from a fresh, phase-local context
                    state.phase_prompt = self.first_prompt(state, state.tmux.screen())
                    notes.append(state.phase_prompt)
            elif target == "done":
                notes.append(
                    f"[statem] task_complete is accepted only in the verify phase; current phase: "
                    f"{state.phase}. Allowed transitions: {', '.join(ALLOWED[state.phase])}."
                )
            else:
                notes.append(
                    f"[statem] transition to {target!r} refused: from {state.phase} the allowed "
                    f"transitions are {', '.join(ALLOWED[state.phase]) or 'none'}."
                )
        self._save(state)
        return done, notes

    def next_messages(
        self, state: RunState, messages: list[dict[str, str]], user_text: str
    ) -> list[dict[str, str]]:
        """After a transition the context starts afresh for the new phase."""
        state = _own(state)
        if state.phase_prompt is None:
            return super().next_messages(state, messages, user_text)
        prompt, state.phase_prompt = state.phase_prompt, None
        system = [m for m in messages if m["role"] == "system"]
        return [*system, {"role": "user", "content": prompt}]
