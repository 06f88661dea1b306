"""A synthetic corpus at paper scale, in the real formats, seeded and reproducible.

    python benchmarks/generate.py [--out benchmarks/out] [--seed 0] [--scale 1.0]

Writes `<out>/jobs/<job>/result.json` + `<trial>/result.json` + `<trial>/agent/trajectory.json` (ATIF with
Terminus 2 `bash_command` tool calls) and `<out>/tasks/<task>/task.toml` (harbor task dirs, for categories):

- 2,929 tasks; about 5,000 discovery trials over terminus-2, statem and rsrt (all three attempt the same
  ~47% of the tasks, 1 trial or 3), solved with a probability that falls with the task's difficulty, so
  that the union of solved tasks is about a third above the best single harness (paper: +34.3%);
- 975 solved tasks x 4 runbooks x 4 executions of rewrites (86% pass), whose ATIF carries
  `extra.rsr {task_id, harness, kind: "rewrite", reward, source_trajectory_id, runbook_id}`;
- agent steps per trajectory log-normal (mean ~50, about 1% over 300, at most 600).

Commands are drawn from a per-task pool, a per-runbook pool and one-off commands, tuned so that exact
command overlap of passed rewrite pairs is about 19% within a runbook and 12% across runbooks. Every task
draws from its own RNG (seed, task index), so the corpus does not depend on generation order.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import textgen

N_TASKS = 2929
HARNESSES = {"terminus-2": 0.0, "statem": -0.3, "rsrt": 0.3}  # skill offsets
ATTEMPT_RATE = 0.475  # tasks every harness attempts (the others appear only as task dirs)
THREE_TRIALS = 0.1  # share of (task, harness) attempted three times
FIT_SD = 1.5
REWRITE_TASKS, RUNBOOKS, EXECUTIONS, REWRITE_PASS = 975, 4, 4, 0.86
TRIALS_PER_JOB = 500
MODEL = "bench-model-1"


def step_count(rng: random.Random) -> int:
    """Agent steps: log-normal with mean ~50 (median ~30), between 3 and 600."""
    return max(3, min(600, round(rng.lognormvariate(math.log(50) - 0.5, 1.0))))


def trial_result(task: str, trial: str, harness: str, reward: float, index: int) -> dict:
    """A harbor trial result.json."""
    start = f"2025-10-{1 + index % 28:02d}T{index % 24:02d}:00:00Z"
    return {
        "id": trial,
        "task_name": f"bench/{task}",
        "trial_name": trial,
        "agent_info": {"name": harness, "version": "1.0", "model_info": {"name": MODEL, "provider": "bench"}},
        "agent_result": {"n_input_tokens": 1000 + index % 977, "n_output_tokens": 200, "cost_usd": 0.01},
        "verifier_result": {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": start,
        "finished_at": start.replace(":00:00Z", ":30:00Z"),
    }


class JobWriter:
    """Writes trials into harbor job directories of TRIALS_PER_JOB trials each."""

    def __init__(self, root: Path, prefix: str):
        self.root, self.prefix, self.count, self.job = root, prefix, 0, None

    def write(self, trial: str, result: dict, trajectory: dict) -> None:
        """One trial directory (and its job's result.json when the job starts)."""
        if self.count % TRIALS_PER_JOB == 0:
            self.job = self.root / f"{self.prefix}-{self.count // TRIALS_PER_JOB:03d}"
            self.job.mkdir(parents=True)
            (self.job / "result.json").write_text(json.dumps({"id": self.job.name, "n_total_trials": 0}))
        self.count += 1
        agent = self.job / trial / "agent"
        agent.mkdir(parents=True)
        (self.job / trial / "result.json").write_text(json.dumps(result))
        (agent / "trajectory.json").write_text(json.dumps(trajectory, separators=(",", ":")))


def generate(out: Path, seed: int = 0, scale: float = 1.0) -> dict:
    """Write the corpus under `out` (replacing it); returns counts."""
    if out.exists():
        shutil.rmtree(out)
    n_tasks = max(8, round(N_TASKS * scale))
    n_rewrite_tasks = max(2, round(REWRITE_TASKS * scale))
    discovery = JobWriter(out / "jobs", "discovery")
    rewrites = JobWriter(out / "jobs", "rewrite")
    solved_sources: list[tuple[int, str]] = []
    counts = {"tasks": n_tasks, "discovery": 0, "rewrite": 0, "steps": 0, "over_300": 0}
    for t in range(n_tasks):
        rng = random.Random(seed * 1_000_003 + t)
        task = textgen.TaskText(t, rng)
        textgen.write_task_dir(out / "tasks" / task.name, task)
        source = None
        if rng.random() >= ATTEMPT_RATE:
            continue
        for harness, skill in HARNESSES.items():
            # The task's difficulty is shared, the harness's fit to it is not: harnesses agree on most
            # tasks and each solves some the others miss.
            p_solve = 1 / (1 + math.exp(task.difficulty - skill + rng.gauss(0.0, FIT_SD)))
            for i in range(3 if rng.random() < THREE_TRIALS else 1):
                tid = f"disc-{t:04d}-{harness}-{i}"
                reward = 1.0 if rng.random() < p_solve else 0.0
                n = step_count(rng)
                doc = textgen.trajectory(tid, task, harness, n, rng, task.discovery_commands)
                trial = f"{task.name}__{harness}-{i}"
                discovery.write(trial, trial_result(task.name, trial, harness, reward, t), doc)
                counts["discovery"] += 1
                counts["steps"] += n
                counts["over_300"] += n > 300
                if reward >= 1.0 and source is None:
                    source = tid
        if source is not None:
            solved_sources.append((t, source))
    picker = random.Random(seed)
    chosen = sorted(picker.sample(solved_sources, min(n_rewrite_tasks, len(solved_sources))))
    for t, source in chosen:
        rng = random.Random(seed * 1_000_003 + t + 7_777_777)
        task = textgen.TaskText(t, random.Random(seed * 1_000_003 + t))
        for r in range(RUNBOOKS):
            runbook = f"rb-{t:04d}-{r}"
            pool = task.runbook_pool(rng)
            for e in range(EXECUTIONS):
                tid = f"rw-{t:04d}-{r}-{e}"
                reward = 1.0 if rng.random() < REWRITE_PASS else 0.0
                n = step_count(rng)

                def draw(rng: random.Random, pool: list[str] = pool, task: textgen.TaskText = task) -> str:
                    return task.rewrite_command(rng, pool)

                doc = textgen.trajectory(tid, task, "terminus-2", n, rng, draw)
                doc["extra"] = {
                    "rsr": {
                        "task_id": task.name,
                        "harness": "terminus-2",
                        "kind": "rewrite",
                        "reward": reward,
                        "source_trajectory_id": source,
                        "runbook_id": runbook,
                    }
                }
                trial = f"{task.name}__rw-{r}-{e}"
                rewrites.write(trial, trial_result(task.name, trial, "terminus-2", reward, t), doc)
                counts["rewrite"] += 1
                counts["steps"] += n
                counts["over_300"] += n > 300
    counts["rewrite_tasks"] = len(chosen)
    (out / "corpus.json").write_text(json.dumps({"seed": seed, "scale": scale, **counts}, indent=2))
    return counts


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the paper-scale task counts")
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.seed, args.scale)))


if __name__ == "__main__":
    main()
