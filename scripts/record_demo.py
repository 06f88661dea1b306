"""Regenerate the demo corpus in data/demo by running the real harnesses in real Docker sandboxes against the
project's scripted model server. Every observation in the demo is real terminal output; every model answer is
scripted (model names start with "scripted-demo").

    .venv/bin/python scripts/record_demo.py            # discovery runs + rewrite pipeline
    .venv/bin/python scripts/record_demo.py --only discovery

Writes data/scripted/demo_model.json (the script the server replays), data/demo/jobs/ (harbor job dirs with
ATIF trajectories) and data/demo_pipeline/ (runbooks, critic flags, reviews, transfer checks, jobs).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rsr_core.harness import HARNESSES  # noqa: E402
from rsr_core.harness.trial_dir import write_job_result, write_trial  # noqa: E402
from rsr_core.ingest.tasks import read_harbor_task  # noqa: E402
from rsr_core.llm.client import LLMClient  # noqa: E402
from rsr_core.llm.scripted_server import ScriptedServer  # noqa: E402
from rsr_core.sandbox.engine import docker_client  # noqa: E402
from rsr_core.sandbox.provider import DockerSandboxProvider  # noqa: E402
from rsr_core.settings import Settings  # noqa: E402
from scripts import demo_discovery, demo_rewrite  # noqa: E402

DEMO = ROOT / "data" / "demo"
TASKS = DEMO / "tasks"
JOBS = DEMO / "jobs"
SCRIPT = ROOT / "data" / "scripted" / "demo_model.json"
MAX_TURNS = 12


def build_script() -> dict:
    """The scripted server's script for the whole demo."""
    rules = demo_discovery.discovery_rules() + demo_rewrite.rewrite_rules()
    return {
        "description": "Scripted answers of the RSR Studio demo (not sampled from any model).",
        "rules": rules,
    }


def record_discovery(llm: LLMClient, sandboxes: DockerSandboxProvider) -> None:
    """Run every harness on every demo task once; write one harbor job dir per harness."""
    tasks = [read_harbor_task(p) for p in sorted(TASKS.iterdir()) if (p / "task.toml").is_file()]
    for harness, model in demo_discovery.MODELS.items():
        job = JOBS / f"discovery-{harness}"
        shutil.rmtree(job, ignore_errors=True)
        trajs = []
        for task in tasks:
            result = HARNESSES[harness](llm, sandboxes, model, max_turns=MAX_TURNS).run(task)
            write_trial(job, result.trajectory, task.name or task.task_id, f"{task.task_id}__{harness}")
            trajs.append(result.trajectory)
            print(
                f"{harness:<11} {task.task_id:<18} reward={result.reward:g} turns={result.turns} "
                f"{result.stop_reason}",
                flush=True,
            )
        write_job_result(job, trajs)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["discovery", "rewrite"], help="record one part only")
    args = parser.parse_args()
    script = build_script()
    SCRIPT.write_text(json.dumps(script, indent=1) + "\n")
    server = ScriptedServer(script).start()
    try:
        llm = LLMClient(server.url, max_retries=0)
        sandboxes = DockerSandboxProvider(docker_client(), Settings.from_env(), budget_s=900)
        if args.only in (None, "discovery"):
            record_discovery(llm, sandboxes)
        if args.only in (None, "rewrite"):
            demo_rewrite.record(llm, sandboxes, server)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
