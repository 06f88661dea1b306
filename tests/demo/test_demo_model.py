"""The scripted demo model answers every request a default rewrite job makes, for every demo task and source.

The shipped script (data/scripted/demo_model.json) is served by the project's scripted server and asked with the
real openai client through the pipeline's own units (plan, critic, filter); executions are played against a
terminal that only echoes (their real runs in sandboxes are tests/demo/test_default_job.py and the recording).
"""

from __future__ import annotations

import pytest

from rsr_core import prompts
from rsr_core.demo import DEMO_SCRIPT, DEMO_SCRIPT_DIR, DEMO_TASKS, build_demo
from rsr_core.demo.rules import model_script
from rsr_core.demo.script import load_demo_script
from rsr_core.formats.terminus import parse_terminus
from rsr_core.llm.client import LLMClient
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.models import CriticFlag, Runbook, Step, Task, Trajectory
from rsr_core.rewrite.critic import critique_text
from rsr_core.rewrite.executor import guidance_text
from rsr_core.rewrite.units import RewriteParams, run_unit
from rsr_core.store import Store

SCRIPT = load_demo_script(DEMO_SCRIPT_DIR)
TASKS = [t.task for t in SCRIPT.tasks]
MODELS = SCRIPT.common.models
PARAMS = RewriteParams(
    planner_model=MODELS.planner, critic_model=MODELS.critic, executor_model=MODELS.executor
)
VARIANTS, ROUNDS, RUNS = range(PARAMS.k), range(1, PARAMS.rounds + 1), range(PARAMS.m)


@pytest.fixture(scope="module")
def demo_store():
    store = Store(":memory:")
    assert build_demo(store).errors == []
    yield store
    store.close()


@pytest.fixture(scope="module")
def demo_model():
    server = ScriptedServer(DEMO_SCRIPT).start()
    yield server, LLMClient(server.url, max_retries=0)
    server.stop()


def unit(kind: str, llm: LLMClient, task: Task, **inputs) -> dict:
    """Run one of the pipeline's units (no sandbox needed for these kinds)."""
    payload = {"params": PARAMS.model_dump(), "task": task.model_dump(mode="json"), "job_id": "job-test"}
    for name, value in inputs.items():
        payload[name] = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    return run_unit(kind, payload, llm, None)  # type: ignore[arg-type]


def plan(llm: LLMClient, task: Task, source: Trajectory, variant: int, round_: int, critique: str | None):
    lineage = f"rb-{task.task_id}-{variant}"
    result = unit(
        "plan",
        llm,
        task,
        source=source,
        runbook_id=f"{lineage}-r{round_}",
        lineage_id=lineage,
        variant=variant,
        round=round_,
        critique=critique,
    )
    return Runbook(**result["runbook"])


def play_execution(llm: LLMClient, task: Task, rb: Runbook, run: int) -> Trajectory:
    """The executor's conversation as Terminus 2 holds it (guidance, prompt, answers, observations,
    confirmations), against a terminal that shows nothing; ends on a confirmed completion or the turn limit."""
    msgs = prompts.load_json("terminus2_messages_v1.json")
    guidance = guidance_text(rb)
    prompt = prompts.render(prompts.load("terminus2_v1.md"), instruction=task.instruction, terminal="# ")
    messages = [{"role": "system", "content": guidance}, {"role": "user", "content": prompt}]
    steps = [
        Step(index=1, source="system", message=guidance, private_guidance=True),
        Step(index=2, source="user", message=prompt),
    ]
    pending = False
    for _ in range(PARAMS.executor_max_turns):
        text = llm.complete(messages, MODELS.executor, PARAMS.temperature, run).text
        parsed = parse_terminus(text)  # raises on an answer that is not a Terminus 2 turn
        observation = prompts.render(msgs["new_output"], output="")
        steps.append(
            Step(
                index=len(steps) + 1,
                source="agent",
                analysis=parsed.analysis,
                plan=parsed.plan,
                commands=parsed.commands,
                task_complete=parsed.task_complete,
                observation=observation,
            )
        )
        if parsed.task_complete and pending:
            break
        pending = parsed.task_complete
        note = [msgs["confirm"]] if pending else []
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": "\n\n".join([observation, *note])},
        ]
    else:
        pytest.fail(f"{task.task_id} variant {rb.variant} run {run}: no confirmed completion")
    return Trajectory(
        trajectory_id=f"rewrite-{rb.runbook_id}-{run}",
        task_id=task.task_id,
        kind="rewrite",
        harness="terminus-2",
        model=MODELS.executor,
        reward=1.0,
        runbook_id=rb.runbook_id,
        source_trajectory_id=rb.source_trajectory_id,
        steps=steps,
    )


def sources_of(store: Store, task_id: str, solved_only: bool) -> list[Trajectory]:
    rows = store.list_trajectories(limit=1000)
    return [
        store.get_trajectory(r["trajectory_id"])
        for r in rows
        if r["kind"] == "discovery"
        and r["task_id"] == task_id
        and (not solved_only or (r["reward"] or 0) >= 1)
    ]


def test_every_demo_model_is_labelled_scripted_and_every_task_has_its_file():
    built = model_script(load_demo_script(DEMO_SCRIPT_DIR))
    assert {r["model"] for r in built["rules"]} == {getattr(MODELS, f) for f in type(MODELS).model_fields}
    assert all(r["model"].startswith("scripted-demo") for r in built["rules"])
    assert sorted(TASKS) == sorted(p.name for p in DEMO_TASKS.iterdir() if p.is_dir())


@pytest.mark.parametrize("task_id", TASKS)
def test_every_request_of_a_default_job_is_answered(task_id, demo_store, demo_model):
    """Variants 0..3 x rounds 1..3 for the planner (replans carry a critique), the critic on each answer,
    runs 0..3 of every runbook, and the transfer check on each run: none falls through to "no scripted
    response", and each answer has the shape its unit needs."""
    server, llm = demo_model
    task = demo_store.get_task(task_id, with_hidden=True)
    source = sources_of(demo_store, task_id, solved_only=False)[0]
    spec = SCRIPT.task(task_id)
    transfers = {}
    for variant in VARIANTS:
        route = spec.planner[variant].route
        for round_ in ROUNDS:
            critique = None if round_ == 1 else critique_text([])
            rb = plan(llm, task, source, variant, round_, critique)
            assert rb.key_milestones[0].startswith(f"Route {route}: ")
            verdict = unit("critic", llm, task, runbook=rb, source=source)
            assert verdict["verdict"] in ("pass", "reject")
        for run in RUNS:
            rewrite = play_execution(llm, task, rb, run)
            checked = unit("filter", llm, task, rewrite=rewrite, runbook=rb, source=source)["transfer"]
            assert checked["llm_verdict"] is not None, checked["llm_evidence"]
            transfers[(route, run)] = checked["llm_verdict"]
    assert not [
        r for r in server.requests if r["model"] not in {MODELS.planner, MODELS.critic, MODELS.executor}
    ]
    if task_id == "log-summary":  # the run that writes counts it never computed
        assert [k for k, v in transfers.items() if v] == [("C", 2)]


@pytest.mark.parametrize("task_id", TASKS)
def test_every_lineage_of_every_source_is_approved_within_the_rounds(task_id, demo_store, demo_model):
    """The runner's loop for each solved source: plan, critic (deterministic and model stages), replan with
    the critique; every lineage ends approved, and the variants with a first draft are rejected first."""
    _, llm = demo_model
    task = demo_store.get_task(task_id, with_hidden=True)
    spec = SCRIPT.task(task_id)
    for source in sources_of(demo_store, task_id, solved_only=True):
        for variant in VARIANTS:
            critique, verdicts = None, []
            for round_ in ROUNDS:
                rb = plan(llm, task, source, variant, round_, critique)
                result = unit("critic", llm, task, runbook=rb, source=source)
                verdicts.append(result["verdict"])
                if result["verdict"] == "pass":
                    break
                critique = critique_text([CriticFlag(**f) for f in result["flags"]])
            expected = ["reject", "pass"] if spec.planner[variant].first_draft else ["pass"]
            assert verdicts == expected, (source.trajectory_id, variant, result["flags"])
