"""Each real format, read from the committed fixtures into a real DuckDB."""

from __future__ import annotations

from rsr_core.ingest.runner import ingest_paths
from rsr_core.store import TrajectoryFilter


def test_whole_fixture_tree_counts(store, data_dir):
    report = ingest_paths(store, [data_dir])
    assert report.errors == []
    # harbor_real (harbor's own output) adds 4 trials (3 oracle, 1 terminus-2 with 4 steps, 2 commands), 3 tasks;
    # tb1_real (Terminal-Bench's own output) 5 trials (3 oracle, terminus-1 with 3 steps and terminus-2 with 4,
    # 2 commands each), 3 tasks
    assert report.trajectories_added == 17
    assert report.tasks_added == 9
    assert store.summary() == {
        "tasks": 9,
        "trajectories": {"discovery": 16, "rewrite": 1, "eval": 0},
        "steps": 41,
        "commands": 20,
    }


def test_second_ingest_adds_nothing(file_store, data_dir):
    first = ingest_paths(file_store, [data_dir])
    second = ingest_paths(file_store, [data_dir])
    assert first.trajectories_added == 17
    assert second.trajectories_added == 0 and second.duplicates == 17 and second.tasks_added == 0
    assert file_store.summary()["steps"] == 41


def test_atif_steps_commands_and_harness_control(store, data_dir):
    ingest_paths(store, [data_dir / "atif" / "t2_solved.json"])
    traj = store.get_trajectory("atif-s1")
    assert traj.task_id == "csv-report"  # org/ prefix removed
    assert (traj.kind, traj.harness, traj.reward) == ("discovery", "terminus-2", 1.0)
    assert [s.source for s in traj.steps] == ["system", "user", "agent", "agent", "agent", "user", "agent"]
    assert [s.index for s in traj.steps if s.harness_control] == [6]
    step3 = traj.steps[2]
    assert step3.analysis == "Nothing known yet." and step3.plan == "Look around."
    assert step3.commands[0].keystrokes == "ls -la\ncat data.csv\n" and step3.commands[0].duration == 0.5
    assert "name,value" in step3.observation
    assert step3.prompt_tokens == 300 and step3.completion_tokens == 20
    assert traj.steps[4].task_complete and traj.steps[6].task_complete
    assert store.commands("atif-s1") == ["ls -la", "cat data.csv", "python3 report.py > out.txt"]


def test_atif_provenance_and_content_parts(store, data_dir):
    ingest_paths(store, [data_dir / "atif" / "v18_rewrite.json"])
    traj = store.get_trajectory("atif-traj-3")
    assert traj.kind == "rewrite"
    assert (traj.source_trajectory_id, traj.runbook_id) == ("atif-s1", "rb-1")
    assert traj.steps[0].message == "Write a CSV report."
    assert traj.steps[1].observation == "data.csv\nname,value"


def test_flags_override_extra_rsr(store, data_dir):
    ingest_paths(store, [data_dir / "atif" / "t2_solved.json"], harness="statem", kind="eval")
    traj = store.get_trajectory("atif-s1")
    assert (traj.harness, traj.kind) == ("statem", "eval")


def test_harbor_job_trials(store, data_dir):
    report = ingest_paths(store, [data_dir / "harbor_job"])
    assert report.errors == [] and report.files == 4 and report.trajectories_added == 4
    statem = store.get_trajectory("h-s2")
    assert statem.harness == "statem" and statem.reward == 0.0 and statem.model == "model-a"
    assert [s.index for s in statem.steps if s.harness_control] == [3]
    rsrt = store.get_trajectory("h-s3")
    assert rsrt.harness == "rsrt" and rsrt.reward == 1.0  # from verifier/reward.txt
    assert [s.index for s in rsrt.steps if s.harness_control] == [4]
    crashed = store.get_trajectory("log-parse__ddd")
    assert crashed.steps == [] and crashed.reward == 0.0 and "AgentTimeoutError" in crashed.exception
    solved = store.get_trajectory("h-s1")
    assert solved.verifier_output == "1 passed\n" and solved.task_id == "csv-report"


def test_terminal_bench_run(store, data_dir):
    ingest_paths(store, [data_dir / "tb1_runs"])
    (row,) = store.list_trajectories(TrajectoryFilter(task_id="hello-world"))
    traj = store.get_trajectory(row["trajectory_id"])
    assert traj.harness == "terminus" and traj.model == "model-c" and traj.reward == 1.0
    assert [s.source for s in traj.steps] == ["user", "agent", "agent", "agent"]
    # The first step is what the model saw first: episode-0's prompt, instruction and terminal state.
    assert "Instruction:\nCreate hello.txt" in traj.steps[0].message
    assert traj.steps[0].message.endswith("root@c0ffee:/app# ")
    assert traj.instruction == "Create hello.txt containing Hello, world!"
    assert traj.extra["instruction_source"] == "results.json"
    assert traj.steps[1].analysis == "empty dir" and traj.steps[1].commands[0].duration == 5
    assert traj.steps[1].observation.startswith("$ echo")  # the next episode's prompt
    assert traj.steps[3].task_complete and traj.steps[3].observation is None
    assert store.commands(traj.trajectory_id) == ["echo 'Hello, world!' > hello.txt", "cat hello.txt"]


def test_task_dirs_keep_hidden_files_apart(store, data_dir):
    report = ingest_paths(store, [data_dir / "tasks"])
    assert report.errors == [] and report.tasks_added == 2
    harbor = store.get_task("csv-report", with_hidden=True)
    assert harbor.name == "acme/csv-report" and harbor.category == "data-processing"
    assert harbor.memory_mb == 512 and harbor.verifier_timeout_sec == 60 and harbor.tags == ["csv", "python"]
    roles = {f.path: f.role for f in harbor.files}
    assert roles["tests/test_outputs.py"] == "test" and roles["solution/solve.sh"] == "solution"
    assert roles["environment/Dockerfile"] == "environment"
    assert store.get_task("csv-report").files == []  # public view has no hidden files
    tb1 = store.get_task("hello-world", with_hidden=True)
    assert tb1.source_format == "terminal-bench-1" and tb1.agent_timeout_sec == 360
    roles = {f.path: f.role for f in tb1.files}
    assert (
        roles["run-tests.sh"] == "test"
        and roles["solution.sh"] == "solution"
        and roles["Dockerfile"] == "environment"
    )


def test_task_dir_fills_in_a_task_known_from_trajectories(store, data_dir):
    ingest_paths(store, [data_dir / "atif" / "t2_solved.json"])
    assert store.get_task("csv-report").source_format == "trajectory-only"
    report = ingest_paths(store, [data_dir / "tasks" / "harbor" / "csv-report"])
    assert report.tasks_added == 0
    assert store.get_task("csv-report").source_format == "harbor"


def test_coverage(store, data_dir):
    ingest_paths(store, [data_dir])
    cov = store.coverage()
    # with harbor_real: harbor's terminus-2 and oracle both solve hello-file; with tb1_real: TB's oracle,
    # terminus-1 and terminus-2 all solve write-greeting, its oracle alone sleepy-solution
    assert cov["harnesses"]["terminus-2"] == {"attempted_tasks": 4, "solved_tasks": 3, "unique_solved": 1}
    assert cov["harnesses"]["oracle"] == {"attempted_tasks": 6, "solved_tasks": 3, "unique_solved": 1}
    assert cov["harnesses"]["terminus-1"] == {"attempted_tasks": 1, "solved_tasks": 1, "unique_solved": 0}
    assert cov["harnesses"]["statem"] == {"attempted_tasks": 1, "solved_tasks": 0, "unique_solved": 0}
    assert cov["union_solved"] == 6 and cov["best_single"]["solved_tasks"] == 3
    assert cov["gain_over_best"] == 1.0


def test_search_and_filters(store, data_dir):
    ingest_paths(store, [data_dir])
    found = {r["trajectory_id"] for r in store.list_trajectories(TrajectoryFilter(search="report.py"))}
    assert found == {"atif-s1", "h-s1"}
    assert store.count_trajectories(TrajectoryFilter(search="grep ERROR")) == 1
    assert store.count_trajectories(TrajectoryFilter(harness="terminus-2", min_reward=1.0)) == 5
    assert store.count_trajectories(TrajectoryFilter(kind="rewrite")) == 1


def test_reward_on_verifier_result_and_response_json_episodes(store, data_dir, tmp_path):
    import json
    import shutil

    job = tmp_path / "job"
    shutil.copytree(data_dir / "harbor_job", job)
    result = next(job.rglob("log-parse__ddd")) / "result.json"
    doc = json.loads(result.read_text())
    doc["verifier_result"] = {"reward": 1}
    result.write_text(json.dumps(doc))
    runs = tmp_path / "runs"
    shutil.copytree(data_dir / "tb1_runs", runs)
    for response in runs.rglob("response.txt"):
        response.rename(response.with_name("response.json"))
    report = ingest_paths(store, [job, runs])
    assert report.errors == []
    assert store.get_trajectory("log-parse__ddd").reward == 1.0
    (row,) = store.list_trajectories(TrajectoryFilter(task_id="hello-world"))
    assert len(store.commands(row["trajectory_id"])) == 2
