"""The scripted server's rules of the demo model, built from its answers (rsr_core/demo/script.py).

Every rule is keyed on the model name and the task's instruction pattern; planner rules on the variant (the
request seed), executor rules on the runbook's route (which the executor reads in its private guidance) and the
run index (the seed); the critic's and the transfer check's on their system prompts. Order matters (the first
match answers): a task's own verdicts come before the defaults, a replan before the first draft.
"""

from __future__ import annotations

import re
from typing import Any

from rsr_core.demo.script import (
    ROUTE_PREFIX,
    CommonScript,
    DemoScript,
    KeyPress,
    ScriptFileError,
    TaskScript,
    TurnSpec,
)


class _Turns:
    """Expands turn specs of one task into answers (named turns resolved)."""

    def __init__(self, common: CommonScript, task: TaskScript):
        self.named = {**common.turns, **task.turns}
        self.task = task.task

    def answer(self, spec: TurnSpec) -> dict[str, Any] | str:
        if spec.use is not None:
            if spec.use not in self.named:
                raise ScriptFileError(f"{self.task}: no turn named {spec.use!r}")
            return self.answer(self.named[spec.use])
        if spec.text is not None:
            return spec.text
        keys = [k if isinstance(k, KeyPress) else KeyPress(keystrokes=k) for k in spec.keys]
        answer: dict[str, Any] = {
            "analysis": spec.analysis,
            "plan": spec.plan or "",
            "commands": [
                {
                    "keystrokes": k.keystrokes if k.keystrokes.endswith("\n") else k.keystrokes + "\n",
                    "duration": k.duration,
                }
                for k in keys
            ],
            "task_complete": spec.done,
        }
        if spec.transition:
            answer["transition"] = spec.transition
        return answer

    def answers(self, specs: list[TurnSpec]) -> list[dict[str, Any] | str]:
        return [self.answer(s) for s in specs]

    def names(self, names: list[str]) -> list[dict[str, Any] | str]:
        return [self.answer(TurnSpec(use=n)) for n in names]


def discovery_rules(common: CommonScript, task: TaskScript) -> list[dict[str, Any]]:
    """Terminus 2 and RSRT keyed on the task; StateM on the task and the phase its prompt names."""
    turns, models, d = _Turns(common, task), common.models, task.discovery
    rules = [
        {
            "model": models.terminus_2,
            "when": {"conversation": task.marker},
            "turns": turns.answers(d.terminus_2),
        },
        {"model": models.rsrt, "when": {"conversation": task.marker}, "turns": turns.answers(d.rsrt)},
    ]
    for phase, specs in d.statem.items():
        phase_re = common.requests.statem_phase.format(phase=re.escape(phase))
        rules.append(
            {
                "model": models.statem,
                "when": {"conversation": f"(?s){task.marker}.*{phase_re}"},
                "turns": turns.answers(specs),
            }
        )
    return rules


def planner_rules(common: CommonScript, task: TaskScript) -> list[dict[str, Any]]:
    """One rule per variant (the seed); a variant with a first draft answers it in round 1 and the clean
    runbook when the request carries a critique. A request without a seed gets variant 0."""
    model, rules = common.models.planner, []
    for variant, rb in enumerate(task.planner):
        when = {"seed": variant, "conversation": task.marker}
        if rb.first_draft is not None:
            rules.append(
                {
                    "model": model,
                    "when": {**when, "last_user": common.requests.replan},
                    "response": rb.answer(),
                }
            )
        rules.append({"model": model, "when": when, "response": rb.answer(draft=True)})
    rules.append(
        {"model": model, "when": {"conversation": task.marker}, "response": task.planner[0].answer()}
    )
    return rules


def critic_rules(common: CommonScript, tasks: list[TaskScript]) -> list[dict[str, Any]]:
    """The transfer check's and the critic's verdicts: the tasks' own first, then the defaults."""
    model, req = common.models.critic, common.requests
    rules = [
        {
            "model": model,
            "when": {"system": req.transfer, "conversation": task.marker, "last_user": v.when},
            "response": v.model_dump(exclude={"when"}),
        }
        for task in tasks
        for v in task.transfer
    ]
    rules.append(
        {
            "model": model,
            "when": {"system": req.transfer},
            "response": common.transfer_default.model_dump(exclude={"when"}),
        }
    )
    rules += [
        {
            "model": model,
            "when": {"system": req.critic, "conversation": task.marker, "last_user": v.when},
            "response": v.model_dump(exclude={"when"}),
        }
        for task in tasks
        for v in task.critic
    ]
    rules.append(
        {
            "model": model,
            "when": {"system": req.critic},
            "response": common.critic_default.model_dump(exclude={"when"}),
        }
    )
    return rules


def execution_turns(
    common: CommonScript, task: TaskScript, route: str, run: int
) -> list[dict[str, Any] | str]:
    """The answers of one execution: the route's turns placed as `runs` says for the run index (an override
    replaces them), then the finishing turns."""
    turns = _Turns(common, task)
    override = next((o for o in task.executor.overrides if o.route == route and o.run == run), None)
    if override is not None:
        body = turns.answers(override.turns)
    else:
        body = []
        for name in common.runs[run]:
            body += turns.answers(task.executor.routes[route]) if name == "route" else turns.names([name])
    return body + turns.names(common.finish)


def executor_rules(common: CommonScript, task: TaskScript) -> list[dict[str, Any]]:
    """Per route (found in the runbook, which the executor sees as private guidance before the instruction)
    and run index; run 0's rule has no seed, so it also answers a request without one or past the runs listed."""
    model, rules = common.models.executor, []
    for route in sorted(task.executor.routes):
        where = f"(?s){re.escape(ROUTE_PREFIX.format(route=route))}.*{task.marker}"
        rules += [
            {
                "model": model,
                "when": {"seed": run, "conversation": where},
                "turns": execution_turns(common, task, route, run),
            }
            for run in range(1, len(common.runs))
        ]
        rules.append(
            {
                "model": model,
                "when": {"conversation": where},
                "turns": execution_turns(common, task, route, 0),
            }
        )
    return rules


def build_rules(script: DemoScript) -> list[dict[str, Any]]:
    """Every rule of the demo model."""
    rules: list[dict[str, Any]] = []
    for task in script.tasks:
        rules += discovery_rules(script.common, task)
    for task in script.tasks:
        rules += planner_rules(script.common, task)
    rules += critic_rules(script.common, script.tasks)
    for task in script.tasks:
        rules += executor_rules(script.common, task)
    return rules


def model_script(script: DemoScript) -> dict[str, Any]:
    """The scripted server's script of the demo (what data/scripted/demo_model.json holds)."""
    return {"description": script.common.description, "rules": build_rules(script)}
