"""Terminal-Bench 1 runs carry their instruction: a first user step with the first prompt, and
`trajectory.instruction` from results.json, else the known task, else the prompt's template."""

from __future__ import annotations

import json
import shutil

from rsr_core.formats.reading import sha256
from rsr_core.ingest.runner import ingest_paths
from rsr_core.ingest.tb1 import instruction_from_prompt
from tests.data.make_fixtures import terminus1_prompt
from tests.export.chat_rules import chat_problems, sft_messages

TRIAL = "hello-world.1-of-1.2025-02-01__10-00-00"
FROM_TASK = "Create hello.txt containing Hello, world!"  # tests/data/tasks/tb1/hello-world


def _run(tmp_path, data_dir, instruction: str | None = None, first_prompt: str | None = None):
    """A copy of the fixture run; results.json's instruction replaced (None: removed)."""
    runs = tmp_path / "runs"
    shutil.copytree(data_dir / "tb1_runs", runs)
    trial = next(runs.rglob(TRIAL))
    doc = json.loads((trial / "results.json").read_text())
    doc.pop("instruction")
    if instruction is not None:
        doc["instruction"] = instruction
    (trial / "results.json").write_text(json.dumps(doc))
    if first_prompt is not None:
        (trial / "agent-logs" / "episode-0" / "prompt.txt").write_text(first_prompt)
    return runs, trial


def test_the_first_step_is_the_first_prompt_and_rows_start_with_it(store, data_dir):
    ingest_paths(store, [data_dir / "tb1_runs"])
    traj = store.get_trajectory(TRIAL)
    prompt = (next(data_dir.rglob(TRIAL)) / "agent-logs" / "episode-0" / "prompt.txt").read_text()
    assert traj.steps[0].source == "user" and traj.steps[0].message == prompt
    assert [s.index for s in traj.steps] == [1, 2, 3, 4]
    messages = sft_messages(traj)
    assert messages[0] == {"role": "user", "content": prompt} and chat_problems(messages) == []


def test_the_content_hash_is_over_the_files_as_before(store, data_dir):
    trial = next(data_dir.rglob(TRIAL))
    parts: list[bytes | str] = [(trial / "results.json").read_bytes()]
    for n in range(3):
        episode = trial / "agent-logs" / f"episode-{n}"
        parts += [(episode / "response.txt").read_text(), (episode / "prompt.txt").read_text()]
    ingest_paths(store, [data_dir / "tb1_runs"])
    assert store.get_trajectory(TRIAL).content_hash == sha256(*parts)


def test_without_results_instruction_the_prompt_template_gives_it(store, data_dir, tmp_path):
    runs, _ = _run(tmp_path, data_dir, first_prompt=terminus1_prompt("Sort the numbers in a.txt.", "$ "))
    assert ingest_paths(store, [runs]).errors == []
    traj = store.get_trajectory(TRIAL)
    assert traj.instruction == "Sort the numbers in a.txt."
    assert traj.extra["instruction_source"] == "prompt"


def test_a_known_task_gives_it_before_the_prompt(file_store, data_dir, tmp_path):
    runs, _ = _run(tmp_path, data_dir, first_prompt=terminus1_prompt("What the prompt says.", "$ "))
    # The task directory comes later in the walk than the run; tasks are stored first all the same.
    shutil.copytree(data_dir / "tasks" / "tb1" / "hello-world", tmp_path / "zz-tasks" / "hello-world")
    report = ingest_paths(file_store, [runs, tmp_path / "zz-tasks"])
    assert report.errors == [] and report.trajectories_added == 1 and report.tasks_added == 1
    traj = file_store.get_trajectory(TRIAL)
    assert traj.instruction == FROM_TASK and traj.extra["instruction_source"] == "task"
    assert traj.steps[0].message.startswith("You are an AI assistant")  # the prompt stays the first step
    again = ingest_paths(file_store, [runs, tmp_path / "zz-tasks"])
    assert again.trajectories_added == 0 and again.duplicates == 1


def test_a_task_stored_earlier_gives_it_too(store, data_dir, tmp_path):
    ingest_paths(store, [data_dir / "tasks" / "tb1"])
    runs, _ = _run(tmp_path, data_dir, first_prompt="$ ls\n")
    assert ingest_paths(store, [runs]).errors == []
    assert store.get_trajectory(TRIAL).instruction == FROM_TASK


def test_a_run_with_no_recoverable_instruction_still_ingests(store, data_dir, tmp_path):
    runs, trial = _run(tmp_path, data_dir)
    for prompt in (trial / "agent-logs").rglob("prompt.txt"):
        prompt.unlink()
    report = ingest_paths(store, [runs])
    assert report.errors == [] and report.trajectories_added == 1
    traj = store.get_trajectory(TRIAL)
    assert traj.instruction is None and "instruction_source" not in traj.extra
    assert [s.source for s in traj.steps] == ["agent", "agent", "agent"]
    assert sft_messages(traj) == []  # export leaves it out


def test_instructions_are_taken_from_prompts_only_when_unambiguous():
    assert instruction_from_prompt(terminus1_prompt("Do X.", "$ ")) == "Do X."
    terminus2 = "You are an AI assistant.\n\nTask Description:\nDo Y.\n\nCurrent terminal state:\n$ "
    assert instruction_from_prompt(terminus2) == "Do Y."
    twice = terminus1_prompt("Print the lines after\nInstruction:\nin notes.txt.", "$ ")
    assert instruction_from_prompt(twice) is None
    assert instruction_from_prompt("Task: Create hello.txt ...") is None
