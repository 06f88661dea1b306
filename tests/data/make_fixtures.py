"""Writes the small real-format fixtures under tests/data/ (run once; the outputs are committed).

Counts the tests rely on are noted beside each fixture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).parent


def write(path: Path, content: str | dict | list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
    path.write_text(text)


def bash(call_id: str, keys: str, duration: float = 1.0) -> dict:
    return {"tool_call_id": call_id, "function_name": "bash_command",
            "arguments": {"keystrokes": keys, "duration": duration}}


def obs(call_id: str, text: str) -> dict:
    return {"results": [{"source_call_id": call_id, "content": text}]}


def agent(step_id: int, analysis: str, plan: str, calls: list[dict], observation: dict | None, **kw) -> dict:
    step = {"step_id": step_id, "timestamp": f"2025-10-01T12:00:{step_id:02d}Z", "source": "agent",
            "model_name": "model-a", "message": f"Analysis: {analysis}\nPlan: {plan}", "tool_calls": calls,
            "metrics": {"prompt_tokens": 100 * step_id, "completion_tokens": 20, "cost_usd": 0.001}}
    if observation is not None:
        step["observation"] = observation
    step.update(kw)
    return step


def atif(version: str, session: str, agent_name: str, steps: list[dict], rsr: dict | None = None, **root) -> dict:
    doc = {"schema_version": version, "session_id": session,
           "agent": {"name": agent_name, "version": "1.0", "model_name": "model-a"}, "steps": steps}
    if rsr is not None:
        doc["extra"] = {"rsr": rsr}
    doc.update(root)
    return doc


# --- bare ATIF files: 3 trajectories -------------------------------------------------------------------
T2_STEPS = [
    {"step_id": 1, "source": "system", "message": "You are an agent in a Linux terminal."},
    {"step_id": 2, "source": "user", "message": "Write a CSV report of data.csv into out.txt."},
    agent(3, "Nothing known yet.", "Look around.", [bash("c1", "ls -la\ncat data.csv\n", 0.5)],
          obs("c1", "total 8\ndata.csv\nname,value\na,1\n")),
    agent(4, "Data is small.", "Run the report.", [bash("c2", "python3   report.py  > out.txt\nC-c\n\n")],
          obs("c2", "$ ")),
    agent(5, "Done.", "Finish.", [{"tool_call_id": "c3", "function_name": "mark_task_complete", "arguments": {}}],
          None),
    {"step_id": 6, "source": "user",
     "message": "Are you sure you want to mark the task as complete? Reply with task_complete again."},
    agent(7, "Yes.", "Confirm.", [{"tool_call_id": "c4", "function_name": "mark_task_complete", "arguments": {}}],
          None),
]
# commands: "ls -la", "cat data.csv", "python3 report.py > out.txt" -> 3; steps 7; step 6 is harness control


def bare_atif() -> None:
    write(HERE / "atif" / "t2_solved.json", atif(
        "ATIF-v1.5", "atif-s1", "terminus-2", T2_STEPS,
        rsr={"task_id": "acme/csv-report", "harness": "terminus-2", "kind": "discovery", "reward": 1.0}))
    write(HERE / "atif" / "v10_minimal.json", atif(
        "ATIF-v1.0", "atif-s2", "my-agent",
        [{"step_id": 1, "source": "user", "message": "say hi"},
         {"step_id": 2, "source": "agent", "message": "running",
          "tool_calls": [{"tool_call_id": "x", "function_name": "shell", "arguments": {"command": "echo   hi"}}],
          "observation": obs("x", "hi")}]))
    # commands: "echo hi" -> 1; steps 2; no task id
    write(HERE / "atif" / "v18_rewrite.json", atif(
        "ATIF-v1.8", "atif-s3", "terminus-2",
        [{"step_id": 1, "source": "user", "message": [{"type": "text", "text": "Write a CSV report."}]},
         agent(2, "Look first.", "List.", [bash("r1", "ls\n"), bash("r2", "head -n 3 data.csv\n")],
               {"results": [{"source_call_id": "r1", "content": [{"type": "text", "text": "data.csv"}]},
                            {"source_call_id": "r2", "content": "name,value"}]}),
         agent(3, "ok", "done", [{"tool_call_id": "r3", "function_name": "mark_task_complete",
                                  "arguments": {}}], None)],
        rsr={"task_id": "csv-report", "harness": "terminus-2", "kind": "rewrite", "reward": 1.0,
             "source_trajectory_id": "atif-s1", "runbook_id": "rb-1"},
        trajectory_id="atif-traj-3"))
    # commands: "ls", "head -n 3 data.csv" -> 2; steps 3


# --- a harbor job: 4 trials --------------------------------------------------------------------------
def trial_result(task: str, trial: str, agent_name: str, reward: float | None, **kw) -> dict:
    res = {"id": trial, "task_name": task, "trial_name": trial,
           "agent_info": {"name": agent_name, "version": "0.3", "model_info": {"name": "model-b", "provider": "x"}},
           "agent_result": {"n_input_tokens": 1000, "n_output_tokens": 100, "cost_usd": 0.01},
           "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
           "exception_info": None, "started_at": "2025-10-02T10:00:00Z", "finished_at": "2025-10-02T10:05:00Z"}
    res.update(kw)
    return res


def harbor_job() -> None:
    job = HERE / "harbor_job" / "2025-10-02__10-00-00"
    write(job / "result.json", {"id": "job-1", "started_at": "2025-10-02T10:00:00Z", "n_total_trials": 4,
                                "stats": {"n_trials": 4, "n_errors": 1}})
    write(job / "config.json", {"job_name": "2025-10-02__10-00-00", "agents": [{"name": "terminus-2"}]})
    write(job / "job.log", "job started\n")
    # 1: terminus-2 solves csv-report (reward in result.json). 4 steps, 2 commands.
    t1 = job / "csv-report__aaa"
    write(t1 / "result.json", trial_result("acme/csv-report", "csv-report__aaa", "terminus-2", 1.0))
    write(t1 / "config.json", {"trial_name": "csv-report__aaa"})
    write(t1 / "agent" / "trajectory.json", atif("ATIF-v1.4", "h-s1", "terminus-2", [
        {"step_id": 1, "source": "user", "message": "Write a CSV report of data.csv into out.txt."},
        agent(2, "a", "b", [bash("k1", "cd /app\n"), bash("k2", "python3 report.py\n", 2)], obs("k1", "ok")),
        agent(3, "c", "d", [{"tool_call_id": "k3", "function_name": "mark_task_complete", "arguments": {}}], None),
        agent(4, "e", "f", [{"tool_call_id": "k4", "function_name": "mark_task_complete", "arguments": {}}], None),
    ]))
    write(t1 / "verifier" / "test-stdout.txt", "1 passed\n")
    # 2: StateM fails csv-report. 5 steps (step 3 bookkeeping), 2 commands.
    t2 = job / "csv-report__bbb"
    write(t2 / "result.json", trial_result("acme/csv-report", "csv-report__bbb", "StateM", 0.0))
    write(t2 / "agent" / "trajectory.json", atif("ATIF-v1.6", "h-s2", "StateM", [
        {"step_id": 1, "source": "user", "message": "Write a CSV report of data.csv into out.txt."},
        agent(2, "explore", "look", [bash("s1", "ls\n")], obs("s1", "data.csv")),
        {"step_id": 3, "source": "user", "message": "[statem] phase: implement. Allowed transitions: verify."},
        agent(4, "impl", "write", [bash("s2", "echo a,1 > out.txt\n")], obs("s2", "")),
        agent(5, "v", "stop", [], None),
    ]))
    # 3: RSRT solves log-parse; reward only in verifier/reward.txt. 5 steps (step 4 feedback), 2 commands.
    t3 = job / "log-parse__ccc"
    write(t3 / "result.json", trial_result("log-parse", "log-parse__ccc", "rsrt", None))
    write(t3 / "agent" / "trajectory.json", atif("ATIF-v1.2", "h-s3", "rsrt", [
        {"step_id": 1, "source": "user", "message": "Count ERROR lines of app.log into count.txt."},
        agent(2, "a", "b", [bash("r1", "grep ERROR app.log | wc -l > count.txt\n")], obs("r1", "")),
        agent(3, "c", "claim", [{"tool_call_id": "r2", "function_name": "mark_task_complete", "arguments": {}}],
              None),
        {"step_id": 4, "source": "user", "message": "Not passed. Reflect on what might be wrong and continue."},
        agent(5, "d", "fix", [bash("r3", "grep -c ERROR app.log > count.txt\n")], obs("r3", "")),
    ]))
    write(t3 / "verifier" / "reward.txt", "1\n")
    # 4: terminus-2 crashed on log-parse before writing a trajectory: 0 steps, reward from reward.json.
    t4 = job / "log-parse__ddd"
    write(t4 / "result.json", trial_result("log-parse", "log-parse__ddd", "terminus-2", None,
                                           exception_info={"exception_type": "AgentTimeoutError"}))
    write(t4 / "verifier" / "reward.json", {"reward": 0.0})


# --- a Terminal-Bench 1 run: 1 trial, 3 episodes ------------------------------------------------------
def tb1_run() -> None:
    run = HERE / "tb1_runs" / "2025-02-01__10-00-00"
    write(run / "run_metadata.json", {"run_id": "2025-02-01__10-00-00", "agent_name": "terminus",
                                      "model_name": "model-c"})
    write(run / "results.json", {"id": "run", "results": [], "n_resolved": 1})
    trial = run / "hello-world" / "hello-world.1-of-1.2025-02-01__10-00-00"
    write(trial / "results.json", {
        "id": "r1", "trial_name": "hello-world.1-of-1.2025-02-01__10-00-00", "task_id": "hello-world",
        "instruction": "Create hello.txt containing Hello, world!", "is_resolved": True, "failure_mode": "unset",
        "parser_results": {"test_hello_file_exists": "passed", "test_hello_file_content": "passed"},
        "total_input_tokens": 900, "total_output_tokens": 120,
        "trial_started_at": "2025-02-01T10:00:00Z", "trial_ended_at": "2025-02-01T10:01:00Z"})
    write(trial / "commands.txt", "echo 'Hello, world!' > hello.txt\n")
    eps = [
        ({"state_analysis": "empty dir", "explanation": "write the file",
          "commands": [{"keystrokes": "echo 'Hello, world!' > hello.txt\n", "is_blocking": True,
                        "timeout_sec": 5}], "is_task_complete": False},
         terminus1_prompt("Create hello.txt containing Hello, world!", "root@c0ffee:/app# ")),
        ({"analysis": "check", "plan": "cat it", "commands": [{"keystrokes": "cat hello.txt\n", "duration": 0.1}],
          "task_complete": False}, "$ echo 'Hello, world!' > hello.txt\n$ "),
        ({"analysis": "done", "plan": "finish", "commands": [], "task_complete": True},
         "$ cat hello.txt\nHello, world!\n$ "),
    ]
    for i, (resp, prompt) in enumerate(eps):
        write(trial / "agent-logs" / f"episode-{i}" / "response.txt", json.dumps(resp, indent=1))
        write(trial / "agent-logs" / f"episode-{i}" / "prompt.txt", prompt)
    # steps 4 (a user step with episode-0's prompt, then one agent step per episode), commands 2


def terminus1_prompt(instruction: str, terminal: str) -> str:
    """The first prompt Terminal-Bench's Terminus 1 sends (terminus.txt, the JSON schema abridged)."""
    schema = json.dumps({"title": "CommandBatchResponse", "type": "object",
                         "required": ["state_analysis", "explanation", "commands", "is_task_complete"]}, indent=2)
    return (
        "You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given "
        "a task instruction and the output from previously executed commands. Your goal is to solve the task by "
        "providing batches of shell commands.\n\nFor each response:\n1. Analyze the current state based on any "
        "terminal output provided\n2. Determine the next set of commands needed to make progress\n3. Decide if "
        "you need to see the output of these commands before proceeding\n\n"
        f"Instruction:\n{instruction}\n\nYour response must be a JSON object that matches this schema:\n\n"
        f"{schema}\n\nDon't include markdown formatting.\n\nNote that you operate directly on the terminal from "
        "inside a tmux session. Use tmux keystrokes like `C-x` or `Escape` to interactively navigate the terminal."
        f"\n\nThe current terminal state is:\n{terminal}"
    )


# --- task directories -------------------------------------------------------------------------------
def tasks() -> None:
    h = HERE / "tasks" / "harbor" / "csv-report"
    write(h / "task.toml", '[task]\nname = "acme/csv-report"\n\n[metadata]\ndifficulty = "easy"\n'
          'category = "data-processing"\ntags = ["csv", "python"]\n\n[verifier]\ntimeout_sec = 60\n\n'
          '[agent]\ntimeout_sec = 300\n\n[environment]\ncpus = 1\nmemory_mb = 512\nallow_internet = false\n')
    write(h / "instruction.md", "Write a CSV report of data.csv into out.txt.\n")
    write(h / "environment" / "Dockerfile", "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY data.csv /app/\n")
    write(h / "environment" / "data.csv", "name,value\na,1\n")
    write(h / "tests" / "test.sh", "#!/bin/bash\npytest /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt"
          " || echo 0 > /logs/verifier/reward.txt\n")
    write(h / "tests" / "test_outputs.py", "def test_report():\n    assert open('/app/out.txt').read() == "
          "'a,1\\n'\n")
    write(h / "solution" / "solve.sh", "#!/bin/bash\nprintf 'a,1\\n' > /app/out.txt\n")
    t = HERE / "tasks" / "tb1" / "hello-world"
    write(t / "task.yaml", "instruction: |-\n  Create hello.txt containing Hello, world!\n"
          "difficulty: easy\ncategory: file-operations\ntags:\n  - file-operations\nparser_name: pytest\n"
          "max_agent_timeout_sec: 360.0\nmax_test_timeout_sec: 60.0\n")
    write(t / "Dockerfile", "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\nWORKDIR /app\n")
    write(t / "docker-compose.yaml", "services:\n  client:\n    build: .\n")
    write(t / "run-tests.sh", "#!/bin/bash\npytest $TEST_DIR/test_outputs.py -rA\n")
    write(t / "tests" / "test_outputs.py", "from pathlib import Path\n\n\ndef test_hello_file_exists():\n"
          "    assert Path('/app/hello.txt').exists()\n\n\ndef test_hello_file_content():\n"
          "    assert Path('/app/hello.txt').read_text().strip() == 'Hello, world!'\n")
    write(t / "solution.sh", "#!/bin/bash\necho 'Hello, world!' > hello.txt\n")


if __name__ == "__main__":
    for sub in ("atif", "harbor_job", "tb1_runs", "tasks"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    bare_atif()
    harbor_job()
    tb1_run()
    tasks()
