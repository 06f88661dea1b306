"""Recording the demo: the real harnesses and the real rewrite pipeline, in real Docker sandboxes, against the
scripted demo model (data/demo/script). Every observation recorded is real terminal output; every model answer is
scripted, and every run is labelled so (its model name starts with `scripted-demo`).

What it writes under the demo data directory: `scripted/demo_model.json` (the scripted server's script),
`demo/jobs/discovery-<harness>/` (each harness once on every task), `demo/jobs/rewrite-<job>/` (the rewrite
jobs' executions) — harbor job directories with ATIF trajectories — and `demo_pipeline/` (the jobs' runbooks,
critic flags, reviews, transfer checks and work units as JSON lines).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rsr_core.demo.rules import model_script
from rsr_core.demo.script import DemoScript, RecordedJob, load_demo_script
from rsr_core.errors import RsrError
from rsr_core.models import Review, Trajectory
from rsr_core.protocols import LLM, SandboxProvider
from rsr_core.store import Store
from rsr_core.store.rules import solved

Say = Callable[[str], None]
Part = Literal["script", "discovery", "rewrite"]


class RecordingError(RsrError):
    """The recording cannot go on (a source the script names did not succeed, a job that failed)."""


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo's files live, under one data directory (the repository's data/)."""

    root: Path
    """The data directory."""

    @property
    def script_dir(self) -> Path:
        """The scripted model's answers (YAML)."""
        return self.root / "demo" / "script"

    @property
    def tasks(self) -> Path:
        """The demo tasks (harbor task directories)."""
        return self.root / "demo" / "tasks"

    @property
    def jobs(self) -> Path:
        """The recorded runs (harbor job directories)."""
        return self.root / "demo" / "jobs"

    @property
    def pipeline(self) -> Path:
        """The rewrite pipeline's rows."""
        return self.root / "demo_pipeline"

    @property
    def model_script(self) -> Path:
        """The scripted server's script built from the answers."""
        return self.root / "scripted" / "demo_model.json"


def reward_text(reward: float | None) -> str:
    """A run's reward for a progress line (`none` when the tests did not run)."""
    return "none" if reward is None else f"{reward:g}"


def write_model_script(script: DemoScript, paths: DemoPaths) -> dict[str, Any]:
    """Build the scripted server's script and write it (data/scripted/demo_model.json); returns it."""
    built = model_script(script)
    paths.model_script.parent.mkdir(parents=True, exist_ok=True)
    paths.model_script.write_text(json.dumps(built, indent=1) + "\n")
    return built


def _nonzero(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {k: v for k, v in counts.items() if v}


def _task_name(task_id: str | None) -> str:
    return f"rsr-demo/{task_id}"


def record_discovery(
    script: DemoScript, paths: DemoPaths, llm: LLM, sandboxes: SandboxProvider, say: Say
) -> list[Trajectory]:
    """Every harness once on every demo task; one harbor job directory per harness (replaced)."""
    from rsr_core.harness import HARNESSES
    from rsr_core.harness.trial_dir import write_job_result, write_trial
    from rsr_core.ingest.tasks import read_harbor_task

    tasks = [read_harbor_task(paths.tasks / t.task) for t in script.tasks]
    runs: list[Trajectory] = []
    for harness in HARNESSES:
        model = script.common.models.harness(harness)
        job = paths.jobs / f"discovery-{harness}"
        shutil.rmtree(job, ignore_errors=True)
        trajs = []
        for task in tasks:
            harness_obj = HARNESSES[harness](
                llm, sandboxes, model, max_turns=script.common.recording.discovery_max_turns
            )
            result = harness_obj.run(task)
            write_trial(job, result.trajectory, _task_name(task.task_id), f"{task.task_id}__{harness}")
            trajs.append(result.trajectory)
            say(
                f"{harness:<11} {task.task_id:<18} reward={reward_text(result.reward)} turns={result.turns} "
                f"{result.stop_reason}"
            )
        write_job_result(job, trajs)
        runs += trajs
    return runs


def _sources(store: Store, job: RecordedJob) -> list[str]:
    """The successful discovery run of each (task, harness) the job names."""
    rows = store.list_trajectories(limit=100_000)
    picked = []
    for task, harness in job.sources.items():
        found = [
            r["trajectory_id"]
            for r in rows
            if r["kind"] == "discovery"
            and r["task_id"] == task
            and r["harness"] == harness
            and solved(r["reward"])
        ]
        if not found:
            raise RecordingError(
                f"recording: no successful {harness} discovery run of {task} to rewrite; record discovery first"
            )
        picked.append(found[0])
    return picked


def _review(store: Store, job_id: str, job: RecordedJob) -> None:
    """The job's reviews, each on the last critic-passed round of its (task, variant), recorded as `rsr review`
    records one."""
    from rsr_core.store import pipeline as pipeline_sql

    with store.transaction() as cur:
        runbooks = pipeline_sql.runbooks_where(cur, "job_id", job_id)
        for r in job.reviews:
            passed = [
                rb
                for rb in runbooks
                if rb.task_id == r.task and rb.variant == r.variant and rb.critic_verdict == "pass"
            ]
            if not passed:
                raise RecordingError(f"recording: no critic-passed runbook of {r.task} variant {r.variant}")
            target = max(passed, key=lambda rb: rb.round)
            pipeline_sql.review_runbook(
                cur,
                Review(
                    runbook_id=target.runbook_id, decision=r.decision, reviewer=r.reviewer, reason=r.reason
                ),
            )


def _write_rewrites(store: Store, paths: DemoPaths, job_ids: list[str]) -> None:
    """Each job's executions as a harbor job directory; older recorded rewrite jobs are removed."""
    from rsr_core.harness.trial_dir import write_job_result, write_trial

    for old in paths.jobs.glob("rewrite-*"):
        shutil.rmtree(old)
    rows = [r for r in store.list_trajectories(limit=100_000) if r["kind"] == "rewrite"]
    for job_id in job_ids:
        out = paths.jobs / f"rewrite-{job_id}"
        trajs = [t for r in rows if (t := store.get_trajectory(r["trajectory_id"])) and t.job_id == job_id]
        for i, traj in enumerate(trajs):
            write_trial(out, traj, _task_name(traj.task_id), f"{traj.task_id}__rewrite{i:02d}")
        write_job_result(out, trajs)


def record_rewrites(
    script: DemoScript, paths: DemoPaths, llm: LLM, sandboxes: SandboxProvider, say: Say
) -> dict[str, Any]:
    """Run the recording's rewrite jobs on the recorded discovery runs in a scratch database, add their
    reviews (a job waiting for one runs on), then write the executions and the pipeline rows; returns the
    funnel."""
    from rsr_core.ingest.runner import ingest_paths
    from rsr_core.jobs.runner import JobRunner
    from rsr_core.rewrite.units import RewriteParams
    from rsr_core.store import pipeline as pipeline_sql
    from rsr_core.store.dump import dump_pipeline

    models = script.common.models
    with tempfile.TemporaryDirectory(prefix="rsr-demo-") as tmp:
        store = Store(Path(tmp) / "demo.duckdb")
        ingest_paths(store, [paths.tasks, *sorted(paths.jobs.glob("discovery-*"))], workers=1)
        runner = JobRunner(
            store,
            llm,
            sandboxes,
            workers=script.common.recording.workers,
            on_progress=lambda j, c: say(f"{j} {_nonzero(c)}"),
        )
        jobs: list[tuple[str, RecordedJob]] = []
        for spec in script.common.recording.jobs:
            params = RewriteParams(
                sources=_sources(store, spec),
                k=spec.k,
                m=spec.m,
                rounds=spec.rounds,
                gate=spec.gate,
                planner_model=models.planner,
                critic_model=models.critic,
                executor_model=models.executor,
            )
            job_id = runner.create(params)
            status = runner.run(job_id)
            say(f"{job_id}: {status}")
            if status not in ("done", "waiting_review"):
                raise RecordingError(f"recording: rewrite job {job_id} ended {status}")
            jobs.append((job_id, spec))
        for job_id, spec in jobs:
            _review(store, job_id, spec)
        for job_id, _ in jobs:
            status = runner.run(job_id)
            if status not in ("done", "waiting_review"):
                raise RecordingError(f"recording: rewrite job {job_id} ended {status} after its reviews")
        job_ids = [j for j, _ in jobs]
        _write_rewrites(store, paths, job_ids)
        shutil.rmtree(paths.pipeline, ignore_errors=True)
        counts = dump_pipeline(store.cursor(), paths.pipeline, job_ids)
        say(f"pipeline rows: {counts}")
        with store.reading() as cur:
            funnel = pipeline_sql.funnel(cur)
        store.close()
    return funnel


def record_demo(paths: DemoPaths, parts: tuple[Part, ...], say: Say = print) -> dict[str, Any]:
    """Regenerate the demo: the model script always, then the discovery runs and / or the rewrite jobs (real
    Docker sandboxes, the scripted model served over HTTP and called with the real client)."""
    script = load_demo_script(paths.script_dir)
    built = write_model_script(script, paths)
    summary: dict[str, Any] = {"script": str(paths.model_script), "rules": len(built["rules"])}
    if parts == ("script",):
        return summary
    from rsr_core.llm.client import LLMClient
    from rsr_core.llm.scripted_server import ScriptedServer
    from rsr_core.sandbox.engine import docker_client
    from rsr_core.sandbox.provider import DockerSandboxProvider
    from rsr_core.settings import Settings

    server = ScriptedServer(built).start()
    try:
        llm = LLMClient(server.url, max_retries=0)
        sandboxes = DockerSandboxProvider(
            docker_client(), Settings.from_env(), budget_s=script.common.recording.sandbox_budget_s
        )
        if "discovery" in parts:
            runs = record_discovery(script, paths, llm, sandboxes, say)
            summary["discovery"] = {
                "runs": len(runs),
                "solved": sum(solved(t.reward, t.verifier_tampered) for t in runs),
            }
        if "rewrite" in parts:
            summary["funnel"] = record_rewrites(script, paths, llm, sandboxes, say)
    finally:
        server.stop()
    return summary
