"""Task directories from strangers: links leaving the task, missing verifiers, YAML bombs, bounded messages."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from rsr_core.formats.reading import FormatError, expect, preview
from rsr_core.ingest.runner import ingest_paths
from rsr_core.ingest.tasks import MAX_TASK_BYTES, MAX_TASK_ENTRIES, content_hash, read_task_dir, read_tb1_task
from rsr_core.store import Store
from tests.ingest.hostile import errors_by_name, harbor_task, rsr

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
instruction: *i
"""


def _tb1_task(directory, task_yaml: str, run_tests: bool = True):
    directory.mkdir(parents=True)
    (directory / "task.yaml").write_text(task_yaml)
    (directory / "Dockerfile").write_text("FROM rsr-base:bookworm\n")
    if run_tests:
        (directory / "run-tests.sh").write_text("#!/bin/bash\npytest /tests -rA\n")
    return directory


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("environment/shadow_link", "/etc/shadow"),  # seen: host secrets in the store and the image
        ("tests/passwd", "/etc/passwd"),
        ("solution/up", "../../outside"),
        ("notes", "../outside/secret.txt"),
    ],
)
def test_a_link_leaving_the_task_refuses_the_task(file_store, tmp_path, link, target):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("HOST-SECRET\n")
    task = harbor_task(tmp_path / "tasks" / "leaky")
    os.symlink(target, task / link)
    report = ingest_paths(file_store, [tmp_path / "tasks"])
    where = os.path.realpath(task / link)
    assert errors_by_name(report.errors) == {
        "leaky": f"{link}: symlink to {target} resolves to {where}, outside the task directory; task refused"
    }
    assert report.tasks_added == 0 and file_store.get_task("t1") is None
    with pytest.raises(FormatError, match="outside the task directory"):
        read_task_dir(task)  # `rsr discover --task DIR` reads the directory the same way
    with pytest.raises(FormatError, match="outside the task directory"):
        content_hash(task)


def test_links_inside_the_task_are_kept(store, tmp_path):
    task = harbor_task(tmp_path / "ok")
    os.symlink("data.csv", task / "environment" / "alias.csv")
    os.symlink("../tests", task / "environment" / "tests_link")  # a directory link: listed where it really is
    report = ingest_paths(store, [task])
    assert report.errors == [] and report.tasks_added == 1
    files = {f.path: (f.role, f.content) for f in store.get_task("t1", with_hidden=True).files}
    assert files["environment/alias.csv"] == ("environment", "name,value\na,1\n")
    assert "environment/tests_link/test.sh" not in files and "tests/test.sh" in files


def test_dangling_links_and_special_files_refuse_the_task(store, tmp_path):
    dangling = harbor_task(tmp_path / "tasks" / "dangling", name="d1")
    os.symlink("missing.csv", dangling / "environment" / "gone.csv")
    fifo = harbor_task(tmp_path / "tasks" / "fifo", name="f1")
    os.mkfifo(fifo / "environment" / "pipe")
    report = ingest_paths(store, [tmp_path / "tasks"])
    assert errors_by_name(report.errors) == {
        "dangling": "environment/gone.csv: dangling symlink to missing.csv; task refused",
        "fifo": "environment/pipe: a FIFO; a task holds only files, directories and links inside it",
    }
    assert report.tasks_added == 0


def test_a_harbor_task_without_tests_test_sh_is_refused(store, tmp_path):
    harbor_task(tmp_path / "no-verifier", test_sh=False)
    report = ingest_paths(store, [tmp_path / "no-verifier"])
    assert errors_by_name(report.errors) == {
        "no-verifier": "tests/test.sh: missing; a harbor task needs its verifier script (it writes the reward)"
    }
    assert store.get_task("t1") is None


def test_a_terminal_bench_task_without_run_tests_sh_is_refused(store, tmp_path):
    _tb1_task(tmp_path / "no-runner", "instruction: do it\n", run_tests=False)
    report = ingest_paths(store, [tmp_path / "no-runner"])
    assert errors_by_name(report.errors) == {
        "no-runner": "run-tests.sh: missing; a Terminal-Bench task needs its test runner"
    }
    assert store.get_task("no-runner") is None


@pytest.mark.timeout(120)
def test_a_yaml_alias_bomb_is_refused_at_once_in_little_memory(tmp_path):
    task = _tb1_task(tmp_path / "lol", BOMB)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(FormatError) as refused:
            read_tb1_task(task)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"alias bomb refused in {time.perf_counter() - started:.4f} s, peak {peak / 2**20:.2f} MB")
    assert str(refused.value) == (
        "task.yaml: line 2: YAML alias *a is not accepted in a task file "
        "(expected plain values, no anchors and aliases)"
    )
    assert peak < 50 * 2**20  # the value written out in full would be billions of characters


@pytest.mark.timeout(300)
def test_rsr_ingest_refuses_the_bomb_in_one_line(tmp_path):
    _tb1_task(tmp_path / "tasks" / "lol", BOMB)
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert "YAML alias *a is not accepted" in errors_by_name(report["errors"])["lol"]


@pytest.mark.timeout(60)
def test_error_messages_quote_a_bounded_part_of_the_value():
    # Nested shared lists, as an alias bomb loads: 10**30 leaves once written out.
    value: list = ["lol"] * 10
    for _ in range(30):
        value = [value] * 10
    shown = preview(value)
    assert len(shown) <= 200 and shown.endswith("...") and shown.startswith("[[[[")
    with pytest.raises(FormatError) as refused:
        expect(False, "task.yaml instruction", "a string", value)
    assert len(str(refused.value)) < 300
    assert preview(10**5000).startswith("<an integer of")  # str() of it would raise


def test_huge_values_give_short_one_line_errors(store, tmp_path):
    text = "x" * 1_000_000
    _tb1_task(tmp_path / "long", f"instruction: [{text}]\n")
    tdir = harbor_task(tmp_path / "toml")
    (tdir / "task.toml").write_text(f'[task]\nname = "t"\n[environment]\nmemory = "{text}"\n')
    big_int = _tb1_task(tmp_path / "int", "instruction: do\nmax_agent_timeout_sec: " + "9" * 5000 + "\n")
    report = ingest_paths(store, [tmp_path / "long", tdir, big_int])
    errors = errors_by_name(report.errors)
    assert set(errors) == {"long", "toml", "int"}
    for error in errors.values():
        assert len(error) < 400 and "\n" not in error
    assert errors["long"].startswith('task.yaml instruction: expected a string, got ["xxxx')
    assert errors["toml"].startswith("[environment] memory: expected a size like '2G' or '512M', got \"xxx")
    assert errors["int"].startswith("task.yaml: invalid YAML: Exceeds the limit")


def test_a_task_dir_given_through_a_link_is_read(store, tmp_path):
    task = harbor_task(tmp_path / "real")
    os.symlink(task, tmp_path / "alias")
    assert ingest_paths(store, [tmp_path / "alias"]).tasks_added == 1


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        # seen: a traceback (an integer too large for the store ended the whole ingest)
        (
            'memory = "99999999999999999999T"',
            '[environment] memory: expected a size up to 1024 TiB, got "99999999999999999999T"',
        ),
        (
            "memory_mb = 1e308",
            "[environment] memory_mb: expected a positive number up to 1.07374e+09, got 1e+308",
        ),
        # seen: stored, then a run without a time budget or a sandbox Docker refuses
        ("cpus = 1e400", "[environment] cpus: expected a positive number up to 1,024, got Infinity"),
        ("cpus = nan", "[environment] cpus: expected a positive number up to 1,024, got NaN"),
        ("cpus = -3", "[environment] cpus: expected a positive number up to 1,024, got -3"),
        (
            "pids_limit = 99999999999999999999",
            "[environment] pids_limit: expected a positive integer up to 2,147,483,647, got 99999999999999999999",
        ),
        (
            "[agent]\ntimeout_sec = inf",
            "[agent] timeout_sec: expected a positive number up to 604,800, got Infinity",
        ),
        (
            "[verifier]\ntimeout_sec = 0",
            "[verifier] timeout_sec: expected a positive number up to 604,800, got 0",
        ),
    ],
    ids=[
        "memory-huge",
        "memory_mb-huge",
        "cpus-inf",
        "cpus-nan",
        "cpus-negative",
        "pids-huge",
        "timeout-inf",
        "timeout-zero",
    ],
)
def test_task_toml_values_out_of_range_refuse_the_task_in_one_line(tmp_path, toml, error):
    task = harbor_task(tmp_path / "tasks" / "odd")
    section = "" if toml.startswith("[") else "[environment]\n"
    (task / "task.toml").write_text(f'[task]\nname = "odd"\n{section}{toml}\n')
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr, stderr
    assert errors_by_name(report["errors"]) == {"odd": error}
    assert report["tasks_added"] == 0


@pytest.mark.parametrize(
    ("yaml_text", "error"),
    [
        (
            "max_agent_timeout_sec: .inf",
            "task.yaml max_agent_timeout_sec: expected a positive number up to 604,800, got Infinity",
        ),
        (
            "max_test_timeout_sec: .nan",
            "task.yaml max_test_timeout_sec: expected a positive number up to 604,800, got NaN",
        ),
        (
            "max_test_timeout_sec: -1",
            "task.yaml max_test_timeout_sec: expected a positive number up to 604,800, got -1",
        ),
    ],
    ids=["agent-inf", "test-nan", "test-negative"],
)
def test_task_yaml_timeouts_that_are_no_budget_refuse_the_task(tmp_path, yaml_text, error):
    _tb1_task(tmp_path / "tasks" / "odd", f"instruction: do it\n{yaml_text}\n")
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr, stderr
    assert errors_by_name(report["errors"]) == {"odd": error}


def test_yaml_tags_that_would_run_code_are_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    _tb1_task(
        tmp_path / "tasks" / "tagged",
        f"instruction: !!python/object/apply:os.system ['touch {marker}']\n",
    )
    _tb1_task(tmp_path / "tasks" / "deep", "instruction: do\ntags: " + "[" * 50_000 + "]" * 50_000 + "\n")
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    errors = errors_by_name(report["errors"])
    assert errors["tagged"].startswith(
        "task.yaml: invalid YAML at line 1 column 14: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'"
    )
    assert errors["deep"] == "task.yaml: invalid YAML: nested too deeply"
    assert not marker.exists()


def test_a_task_the_store_cannot_take_is_refused_alone(tmp_path):
    # Seen: a lone surrogate escape in task.yaml ended the whole ingest with a traceback.
    _tb1_task(tmp_path / "tasks" / "surrogate", 'instruction: "a \\ud800 b"\n')
    _tb1_task(tmp_path / "tasks" / "fine", "instruction: do it\n")
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr, stderr
    assert errors_by_name(report["errors"]) == {
        "surrogate": "could not be stored: 'utf-8' codec can't encode character '\\ud800' in position 2: "
        "surrogates not allowed"
    }
    assert report["tasks_added"] == 1


def test_hard_links_to_one_big_file_keep_a_bounded_text_and_the_tests_whole(tmp_path):
    # Seen: 1,500 hard links to one 1.9 MB file (no disk used) took 17 GB to ingest.
    from tests.ingest.test_hostile_corpus import _rsr_measured

    task = harbor_task(tmp_path / "tasks" / "links", name="links")
    big = task / "environment" / "big.txt"
    big.write_text(("x" * 99 + "\n") * 19_000)
    for n in range(1500):
        os.link(big, task / "environment" / f"l{n:04}.txt")
    db = tmp_path / "x.duckdb"
    status, report, stderr, peak_mb = _rsr_measured("ingest", str(tmp_path / "tasks"), "--db", str(db))
    assert status == 0 and report["tasks_added"] == 1, stderr
    assert peak_mb < 1500, peak_mb
    files = {f.path: f.content for f in Store(db).get_task("links", with_hidden=True).files}
    assert files["tests/test_outputs.py"] == "def test_x():\n    assert True\n"  # read before the environment
    assert files["solution/solve.sh"].startswith("#!/bin/bash")
    noted = [
        c for c in files.values() if c.startswith("[file of 1900000 bytes not kept: the task's kept files")
    ]
    assert len(noted) > 1400 and len(files) == 1501 + 5


def test_a_sparse_file_in_a_task_refuses_the_task_without_reading_it(tmp_path):
    task = harbor_task(tmp_path / "tasks" / "sparse", name="sparse")
    with (task / "environment" / "disk.img").open("wb") as handle:
        handle.truncate(64 * 2**30)  # hashed whole, it took minutes
    started = time.monotonic()
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert time.monotonic() - started < 30
    assert status == 1 and "Traceback" not in stderr
    assert errors_by_name(report["errors"]) == {
        "sparse": f"environment/disk.img: the task's files total more than 4.0 GB ({MAX_TASK_BYTES:,} bytes), "
        "the limit for a task (a sparse file, or links to one big file?); task refused"
    }


def test_a_task_of_too_many_entries_is_refused(tmp_path):
    task = harbor_task(tmp_path / "tasks" / "crowd", name="crowd")
    crowd = task / "environment" / "crowd"
    crowd.mkdir()
    for n in range(MAX_TASK_ENTRIES + 1):
        (crowd / str(n)).touch()
    status, report, stderr = rsr("ingest", str(tmp_path / "tasks"), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert errors_by_name(report["errors"]) == {
        "crowd": f"environment/crowd/: more than {MAX_TASK_ENTRIES:,} files, directories and links; not read"
    }
