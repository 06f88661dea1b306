"""The training key each trajectory's row keeps from when it was written: it is the key of the row the export
builds from the trajectory read back, whatever the steps hold; rows that depend on their task's instruction
(or were stored before the key existed) are built when counted, and a count follows the task when it changes."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsr_core.cli import main
from rsr_core.export import ExportFilters, export, preview
from rsr_core.export.training_keys import store_training_keys
from rsr_core.formats.training import TRAINING_RULE, messages_key, stored_training, training_row
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step, Task, Trajectory
from rsr_core.store import Store, arrow_rows
from rsr_core.store.export_queries import read_trajectories
from rsr_core.store.migrations import MIGRATIONS
from tests.export.corpus import trajectory

STORED = "trajectory_id, training_rule, training_key, training_why, agent_steps"
NEW_IN_5 = ["training_rule", "training_key", "training_why", "agent_steps"]

text = st.one_of(st.just(""), st.just("  "), st.text(alphabet=list('ab \n\t{}"\\é\u2028\x00'), max_size=12))
duration = st.one_of(st.integers(0, 3), st.floats(0, 5, allow_nan=False), st.just(0.1))
rarely = st.sampled_from([False] * 6 + [True])  # a step that never trains (most steps do)
command = st.builds(Command, keystrokes=text, duration=duration)
step = st.builds(
    Step,
    index=st.just(0),
    source=st.sampled_from(["system", "user", "agent", "agent"]),
    message=text,
    analysis=st.one_of(st.none(), text),
    plan=st.one_of(st.none(), text),
    observation=st.one_of(st.none(), text),
    commands=st.lists(command, max_size=2),
    task_complete=st.booleans(),
    harness_control=rarely,
    private_guidance=rarely,
    copied_context=rarely,
)


def _stored(store: Store, ids: list[str] | None = None) -> dict[str, tuple]:
    rows = store.cursor().execute(f"SELECT {STORED} FROM trajectories").fetchall()
    return {r[0]: r[1:] for r in rows if ids is None or r[0] in ids}


def _assert_stored_matches_read_back(store: Store, ids: list[str]) -> None:
    stored = _stored(store, set(ids))
    for traj in read_trajectories(store.cursor(), ids):
        rule, key, why, agents = stored[traj.trajectory_id]
        assert (rule, key, why) == (TRAINING_RULE, *stored_training(traj)), traj.trajectory_id
        assert agents == sum(s.source == "agent" for s in traj.steps)
        if key is not None:  # the export's own key of the row it builds from the stored trajectory
            messages, reason = training_row(traj, "any instruction: not used")
            assert reason is None and messages_key(messages) == key


_COUNTER = iter(range(10**9))


@pytest.fixture(scope="module")
def shared_store():
    store = Store(":memory:")
    yield store
    store.close()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.booleans(), st.lists(step, max_size=8)), min_size=1, max_size=4),
    st.one_of(st.none(), text),
)
def test_the_stored_key_is_the_key_of_the_row_built_from_the_stored_trajectory(
    shared_store, runs, instruction
):
    trajectories = []
    for prompted, drawn in runs:
        tid = f"p{next(_COUNTER)}"
        # Most runs open with the task's prompt (their key is stored); the others take their task's instruction.
        steps = [Step(index=0, source="user", message="the task"), *drawn] if prompted else drawn
        for i, s in enumerate(steps, 1):
            s.index = i
        trajectories.append(
            Trajectory(
                trajectory_id=tid,
                task_id="t",
                harness="terminus-2",
                content_hash=tid,
                steps=steps,
                instruction=instruction,
            )
        )
    shared_store.write_trajectories(trajectories)
    _assert_stored_matches_read_back(shared_store, [t.trajectory_id for t in trajectories])


def test_trajectories_of_every_real_format_store_the_key_of_their_row(data_dir):
    store = Store(":memory:")
    sources = [data_dir / d for d in ("atif", "harbor_job", "harbor_real", "tb1_real", "tb1_runs", "tasks")]
    report = ingest_paths(store, sources, workers=0)
    assert report.trajectories_added >= 10
    ids = list(_stored(store))
    _assert_stored_matches_read_back(store, ids)
    assert sum(v[1] is not None for v in _stored(store).values()) >= 10


def _agent_only(tid: str, task: str, instruction: str | None) -> Trajectory:
    steps = [
        Step(index=1, source="agent", message="m", analysis="look", plan="p",
             commands=[Command(keystrokes="ls\n", duration=0.1)], observation="a b\n"),
        Step(index=2, source="agent", message="m", analysis="done", plan="p", task_complete=True),
    ]  # fmt: skip
    return Trajectory(trajectory_id=tid, task_id=task, kind="discovery", harness="terminus-2", reward=1.0,
                      content_hash=tid, steps=steps, instruction=instruction)  # fmt: skip


def test_a_row_that_takes_its_tasks_instruction_is_counted_with_the_task_as_it_is_now(tmp_path):
    store = Store(tmp_path / "i.duckdb")
    own = _agent_only("own", "t-own", "Write the report.")  # no user message: its task's instruction leads
    same = _agent_only("with-user", "t-user", None)
    same.steps = [Step(index=1, source="user", message="List the files."), *same.steps]
    for i, s in enumerate(same.steps, 1):
        s.index = i
    store.write_trajectories([own, same])
    assert _stored(store)["own"][1:3] == (None, None)  # nothing stored: built when counted
    p = preview(store)
    assert (p.exported, p.duplicates) == (2, 0)
    # The task directory arrives with the instruction the other run was given: the rows are now the same.
    store.write_task(Task(task_id="t-own", instruction="List the files.", source_format="harbor"), "h1")
    p = preview(store)
    summary = export(store, "sft-jsonl", tmp_path / "o.jsonl")
    assert (p.exported, p.duplicates) == (summary.exported, summary.duplicates) == (1, 1)
    first = json.loads((tmp_path / "o.jsonl").read_text().splitlines()[0])
    assert first["messages"][0] == {
        "role": "user",
        "content": "List the files.",
        "tool_calls": [],
        "tool_call_id": "",
    }


def _v4_database(path: Path, trajectories: list[Trajectory]) -> None:
    """A database as the release before stored training keys wrote it (migrations 1-4)."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)"
    )
    for version, name, sql in MIGRATIONS[:4]:
        con.execute(sql)
        con.execute("INSERT INTO schema_migrations VALUES (?, ?, current_timestamp)", [version, name])
    for name, table in arrow_rows.trajectory_tables(trajectories).items():
        if name == "trajectories":
            table = table.drop_columns(NEW_IN_5)
        con.register("rows_v4", table)
        con.execute(f"INSERT INTO {name} ({', '.join(table.column_names)}) SELECT * FROM rows_v4")
        con.unregister("rows_v4")
    con.close()


def test_a_database_from_before_the_stored_keys_counts_the_same_as_its_export(tmp_path, data_dir):
    runs = [trajectory(f"d{i}", task="log-parse", kind="discovery", variant=str(i % 3)) for i in range(6)]
    no_steps = _agent_only("no-agent", "log-parse", "x")
    no_steps.steps = [Step(index=1, source="user", message="hello")]
    _v4_database(tmp_path / "v4.duckdb", [*runs, no_steps])
    store = Store(tmp_path / "v4.duckdb")  # migrated on opening
    stored = _stored(store)
    assert {v[0] for v in stored.values()} == {None}  # no key: every row is built when counted
    assert stored["no-agent"][3] == 0 and stored["d0"][3] == 3  # agent steps filled in by the migration
    calls = []
    p = preview(store, between=lambda: calls.append(1))
    summary = export(store, "sft-jsonl", tmp_path / "o.jsonl")
    assert (p.exported, p.duplicates, p.left_out) == (summary.exported, summary.duplicates, summary.left_out)
    assert (p.exported, p.duplicates, p.left_out.no_steps, len(calls)) == (3, 3, 1, 7)
    everything = ExportFilters(all_trajectories=True)
    archive = export(store, "atif", tmp_path / "arch", everything)
    assert preview(store, everything).exported == archive.exported == 6
    store.close()
    # The next `rsr ingest` (of anything, here task directories) keys every stored row.
    assert main(["ingest", str(data_dir / "tasks"), "--db", str(tmp_path / "v4.duckdb"), "--json"]) == 0
    store = Store(tmp_path / "v4.duckdb")
    _assert_stored_matches_read_back(store, list(_stored(store)))
    calls.clear()
    assert preview(store, between=lambda: calls.append(1)) == p and calls == []
    assert store_training_keys(store) == 0  # nothing left to key
