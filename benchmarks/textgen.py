"""Text of the synthetic corpus: tasks, command pools, Terminus 2 ATIF trajectories."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

CATEGORIES = (
    "software-engineering", "data-processing", "system-administration", "security", "debugging",
    "scientific-computing", "file-operations", "machine-learning", "networking", "games",
)  # fmt: skip
WORDS = (
    "config", "report", "parser", "server", "cache", "index", "matrix", "ledger", "backup", "schema",
    "tokens", "metrics", "render", "invoice", "sensor", "graph", "queue", "archive", "stream", "model",
)  # fmt: skip
EXTS = ("py", "csv", "json", "txt", "md", "log", "yaml", "c", "sh", "sql")
TEMPLATES = (
    "cat {f}", "ls -la {d}", "head -n {n} {f}", "tail -n {n} {f}", "wc -l {f}", "grep -n '{w}' {f}",
    "grep -rn {w} {d}", "python3 {m}.py {f}", "python3 -m pytest -q tests/test_{m}.py", "sed -n '1,{n}p' {f}",
    "sed -i 's/{w}/{w2}/g' {f}", "cp {f} {f}.bak", "mkdir -p {d}/out", "find {d} -name '*.{e}'",
    "chmod +x {m}.sh", "./{m}.sh", "diff {f} {f}.bak", "python3 -c 'import {m}; print({m}.__file__)'",
    "jq '.{w}' {m}.json", "sort -k{k} {f} | uniq -c", "awk -F, '{{print ${k}}}' {f}", "cd {d}",
    "make {w}", "gcc -O2 -o {m} {m}.c", "pip install {w}", "tar czf {m}.tgz {d}", "cat > {f} << 'EOF'",
)  # fmt: skip
COMMON = ("ls -la", "pwd", "cd /app", "ls", "cat README.md", "python3 --version", "git status")
OUTPUTS = (
    "total 24\ndrwxr-xr-x 2 root root 4096 Oct  1 12:00 .\n-rw-r--r-- 1 root root  812 {f}\n"
    "-rw-r--r-- 1 root root 1204 {m}.py\n",
    "Traceback (most recent call last):\n  File \"/app/{m}.py\", line {n}, in <module>\n"
    "    main()\nKeyError: '{w}'\n",
    "============================= test session starts ==============================\ncollected {n} items\n\n"
    "tests/test_{m}.py ....F.                                                 [100%]\n"
    "FAILED tests/test_{m}.py::test_{w} - AssertionError\n",
    "{w},{w2},count\n{m},{n},{k}\n{w2},{k},{n}\n",
    "$ ",
    "{n} {f}\n",
    "Processing {f}... done ({n} rows, {k} skipped)\nwrote {d}/out/{m}.{e}\n",
)  # fmt: skip
SENTENCES = (
    "The {w} step has not run yet", "{f} holds the {w} data", "tests expect {w2} in {f}",
    "the {m} script fails on {w}", "output under {d} looks right", "the {w} column needs cleaning",
)  # fmt: skip


class TaskText:
    """One synthetic task: name, category, difficulty and its command vocabulary."""

    def __init__(self, index: int, rng: random.Random):
        self.index = index
        self.words = rng.sample(WORDS, 6)
        self.name = f"{self.words[0]}-{self.words[1]}-{index:04d}"
        self.category = CATEGORIES[index % len(CATEGORIES)]
        self.difficulty = rng.gauss(-0.6, 1.6)
        self.files = [f"/app/{w}.{rng.choice(EXTS)}" for w in self.words[:4]]
        self.dirs = ["/app", f"/app/{self.words[2]}", f"/data/{self.words[3]}"]
        self.instruction = (
            f"In /app, fix the {self.words[0]} {self.words[1]} pipeline so that {self.files[0]} is "
            f"processed into {self.dirs[1]}/out. Tests check the {self.words[4]} values."
        )
        self.pool = list(COMMON) + [self.fill(rng.choice(TEMPLATES), rng) for _ in range(36)]

    def fill(self, template: str, rng: random.Random) -> str:
        """A template with this task's files, dirs and words."""
        w, w2 = rng.sample(self.words, 2)
        return template.format(
            f=rng.choice(self.files), d=rng.choice(self.dirs), w=w, w2=w2, m=rng.choice(self.words[:3]),
            n=rng.choice((5, 10, 20, 50)), k=rng.randint(1, 4), e=rng.choice(EXTS),
        )  # fmt: skip

    def discovery_commands(self, rng: random.Random) -> str:
        """A discovery run's command: mostly the task pool, some one-off."""
        if rng.random() < 0.6:
            return rng.choice(self.pool)
        return self.one_off(rng)

    def one_off(self, rng: random.Random) -> str:
        """A command unlikely to repeat anywhere (line ranges, ad-hoc echo)."""
        a = rng.randint(1, 400)
        return rng.choice(
            (
                f"sed -n '{a},{a + rng.randint(1, 60)}p' {rng.choice(self.files)}",
                f"echo check-{rng.getrandbits(32):x}",
            )
        )

    def runbook_pool(self, rng: random.Random) -> list[str]:
        """Commands a runbook steers its executions towards: part of the task pool plus its own variants."""
        return rng.sample(self.pool, 8) + [self.fill(rng.choice(TEMPLATES), rng) for _ in range(10)]

    def rewrite_command(self, rng: random.Random, runbook_pool: list[str]) -> str:
        """An execution's command: the runbook's pool, the task's pool, or one-off."""
        x = rng.random()
        if x < 0.45:
            return rng.choice(runbook_pool)
        if x < 0.78:
            return rng.choice(self.pool)
        return self.one_off(rng)

    def fill_text(self, template: str, rng: random.Random) -> str:
        """Free text (observations, messages) about this task."""
        return self.fill(template, rng)


def write_task_dir(path: Path, task: TaskText) -> None:
    """A harbor task directory (task.toml + instruction.md) so tasks get their category."""
    path.mkdir(parents=True)
    (path / "task.toml").write_text(
        f'[task]\nname = "bench/{task.name}"\n\n[metadata]\ncategory = "{task.category}"\n'
        f'difficulty = "{"hard" if task.difficulty > 1 else "medium" if task.difficulty > -1 else "easy"}"\n'
    )
    (path / "instruction.md").write_text(task.instruction + "\n")


def _call(call_id: str, keystrokes: str, duration: float) -> dict:
    return {
        "tool_call_id": call_id,
        "function_name": "bash_command",
        "arguments": {"keystrokes": keystrokes, "duration": duration},
    }


def trajectory(
    tid: str,
    task: TaskText,
    harness: str,
    n_agent: int,
    rng: random.Random,
    draw: Callable[[random.Random], str],
) -> dict:
    """An ATIF-v1.6 Terminus 2 trajectory with `n_agent` command-bearing agent steps."""
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": task.instruction}]

    def add(step: dict) -> None:
        step["step_id"] = len(steps) + 1
        steps.append(step)

    for i in range(n_agent):
        calls = []
        for c in range(1 if rng.random() < 0.6 else 2):
            lines = [draw(rng) for _ in range(1 if rng.random() < 0.75 else 2)]
            keys = "\n".join(lines) + "\n" + ("C-c\n" if rng.random() < 0.03 else "")
            calls.append(_call(f"call_{i}_{c}", keys, rng.choice((0.1, 0.5, 1.0, 5.0))))
        analysis = task.fill_text(rng.choice(SENTENCES), rng)
        plan = task.fill_text(rng.choice(SENTENCES), rng)
        output = "".join(task.fill_text(rng.choice(OUTPUTS), rng) for _ in range(rng.randint(1, 2)))
        add(
            {
                "timestamp": f"2025-10-01T12:{i // 60 % 60:02d}:{i % 60:02d}Z",
                "source": "agent",
                "model_name": "bench-model-1",
                "message": f"Analysis: {analysis}.\nPlan: {plan}.",
                "tool_calls": calls,
                "observation": {"results": [{"source_call_id": calls[0]["tool_call_id"], "content": output}]},
                "metrics": {"prompt_tokens": 1500 + 40 * i, "completion_tokens": 120, "cost_usd": 0.0004},
            }
        )
        if harness == "statem" and rng.random() < 0.05:
            add(
                {
                    "source": "user",
                    "message": f"[statem] phase: {rng.choice(('plan', 'implement', 'verify'))}.",
                }
            )
        if harness == "rsrt" and rng.random() < 0.03:
            add({"source": "user", "message": "Not passed. Reflect on what might be wrong and continue."})
    done = {"tool_call_id": "done", "function_name": "mark_task_complete", "arguments": {}}
    add({"source": "agent", "message": "Analysis: finished.\nPlan: mark complete.", "tool_calls": [done]})
    add({"source": "user", "message": "Are you sure you want to mark the task as complete?"})
    add({"source": "agent", "message": "Analysis: yes.\nPlan: confirm.", "tool_calls": [done]})
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": tid,
        "agent": {"name": harness, "version": "1.0", "model_name": "bench-model-1"},
        "steps": steps,
    }
