"""Builds the Trajectory of a harness run step by step (stored directly; written as ATIF on demand)."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime

from rsr_core.formats.terminus import TerminusResponse, format_message
from rsr_core.formats.training import ANSWER, CONVERSATION_START, HANDOFF
from rsr_core.models import ChangedPath, Step, Task, Trajectory
from rsr_core.protocols import Completion


def now() -> str:
    """ISO 8601 UTC timestamp."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TrajectoryRecorder:
    """Collects steps; `harness_control` and `private_guidance` steps are marked as such."""

    def __init__(self, task: Task, harness: str, model: str, kind: str = "discovery", scripted: bool = False):
        self.task = task
        self.harness = harness
        self.model = model
        self.kind = kind
        self.scripted = scripted
        prefix = harness if kind == "discovery" else kind
        self.trajectory_id = f"{prefix}-{task.task_id}-{uuid.uuid4().hex[:10]}"
        self.steps: list[Step] = []
        self.started_at = now()

    def _add(self, **fields) -> Step:
        step = Step(index=len(self.steps) + 1, timestamp=now(), **fields)
        self.steps.append(step)
        return step

    def system(self, message: str, private_guidance: bool = False) -> Step:
        """A system message (private guidance is the Executor's runbook; export removes it)."""
        return self._add(source="system", message=message, private_guidance=private_guidance)

    def user(self, message: str, conversation_start: bool = False) -> Step:
        """A user message that is part of the task dialogue (`conversation_start`: the first of a fresh
        conversation after a hand-off)."""
        return self._add(
            source="user", message=message, extra={CONVERSATION_START: True} if conversation_start else {}
        )

    def handoff(self, summary: Completion, request: list[dict[str, str]], dropped: int) -> Step:
        """The model's summary of a conversation that outgrew its context (a harness step: never trains); the
        request that asked for it is kept with it."""
        return self._said(
            summary,
            message=summary.text,
            harness_control=True,
            extra={HANDOFF: {"request": request, "dropped_messages": dropped}},
        )

    def control(self, message: str, **extra) -> Step:
        """A message the harness injected (confirmation, verifier feedback, state bookkeeping)."""
        return self._add(source="user", message=message, harness_control=True, extra=extra)

    def agent(
        self, completion: Completion, parsed: TerminusResponse | None, observation: str | None, **extra
    ) -> Step:
        """An agent turn: the parsed answer (or the raw text when it could not be parsed) and what it saw next."""
        if parsed is None:
            return self._said(
                completion,
                message=completion.text,
                observation=observation,
                extra={"parse_error": True, **extra},
            )
        if parsed.transition:
            extra["transition"] = parsed.transition
        extra[ANSWER] = completion.text  # the message above is its parts; training rows use what was said
        return self._said(
            completion,
            message=format_message(parsed.analysis, parsed.plan),
            analysis=parsed.analysis,
            plan=parsed.plan,
            commands=parsed.commands,
            observation=observation,
            task_complete=parsed.task_complete,
            extra=extra,
        )

    def _said(self, completion: Completion, **fields) -> Step:
        """A step the model said: its thinking, model and token counts with the given fields."""
        return self._add(
            source="agent",
            reasoning=completion.reasoning,
            model_name=completion.model,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            **fields,
        )

    def finish(
        self,
        reward: float | None,
        verifier_output: str | None,
        exception: str | None = None,
        tampered: bool = False,
        changed_paths: list[ChangedPath] | None = None,
        extra: dict | None = None,
        **provenance,
    ) -> Trajectory:
        """The finished trajectory, with what the run changed on disk and whether that touched the verifier."""
        digest = hashlib.sha256(
            json.dumps([s.model_dump(mode="json", exclude={"timestamp"}) for s in self.steps]).encode()
        ).hexdigest()
        return Trajectory(
            trajectory_id=self.trajectory_id,
            session_id=self.trajectory_id,
            task_id=self.task.task_id,
            kind=self.kind,
            harness=self.harness,
            agent_name=self.harness,
            agent_version="rsr-studio",
            model=self.model,
            reward=reward,
            instruction=self.task.instruction,
            started_at=self.started_at,
            finished_at=now(),
            exception=exception,
            verifier_output=verifier_output,
            verifier_tampered=tampered,
            changed_paths=changed_paths or [],
            extra=extra or {},
            scripted=self.scripted,
            content_hash=digest,
            steps=self.steps,
            **provenance,
        )
