"""Hostile corpora beyond links and task dirs: memory bombs in JSON, files swapped during the walk, names that
would break the refusal line, and the values JSON allows but Python and DuckDB treat specially.

Every probe runs `rsr ingest` as a real process on a real DuckDB file, measuring what it costs where the
cost is the point (peak memory of that one process, from the kernel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rsr_core.formats.atif_read import MAX_STEPS
from rsr_core.formats.reading import DEPTH_LIMIT_TEXT, MAX_JSON_VALUES, FormatError
from rsr_core.ingest.fs import read_input
from rsr_core.ingest.runner import ingest_paths
from rsr_core.store import Store
from tests.ingest.hostile import ROOT, atif, errors_by_name, rsr, write_json

HEAD = '{"schema_version":"ATIF-v1.4","session_id":"%s","agent":{"name":"terminus-2","version":"1"},'


# The kernel counts a child's peak memory from before its exec too, so `rsr` is started by a small fresh
# interpreter rather than by this (large) test process; it reports the peak of `rsr` alone.
_MEASURE = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = proc.stdout.read(), proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "out": out.decode(errors="replace"),
                  "err": err.decode(errors="replace"), "peak_kb": usage.ru_maxrss}))
"""


def _rsr_measured(*args: str, timeout: float = 300) -> tuple[int, dict | None, str, int]:
    """`rsr ARGS --json` as a real process: (status, report, stderr, peak RSS in MB of that process or of the
    largest parser process it waited for, as the kernel counted it)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "rsr_core.cli", *args, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
    result = json.loads(done.stdout)
    try:
        report = json.loads(result["out"])
    except ValueError:
        report = None
    return result["status"], report, result["err"], result["peak_kb"] // 1024


def _steps_file(path: Path, session: str, n: int) -> Path:
    """A valid ATIF file of `n` user steps, as small as a step can be (about 45 bytes each)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        handle.write(HEAD % session + '"steps":[')
        handle.write(",".join(f'{{"step_id":{i},"source":"user","message":""}}' for i in range(1, n + 1)))
        handle.write("]}")
    return path


def test_millions_of_tiny_values_are_refused_before_they_are_parsed(tmp_path):
    # 6 million empty arrays are an 18 MB file and, parsed, about 400 MB (240 MB of them took 8.8 GB).
    bomb = tmp_path / "bomb.json"
    bomb.write_text(
        HEAD % "bomb"
        + '"steps":[{"step_id":1,"source":"user","message":"x"}],"extra":{"x":['
        + ",".join(["[]"] * 6_000_000)
        + "]}}"
    )
    started = time.monotonic()
    status, report, stderr, peak_mb = _rsr_measured("ingest", str(bomb), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert report["errors"] == [
        {
            "path": str(bomb),
            "error": f"ATIF JSON holds more than {MAX_JSON_VALUES:,} values (objects, arrays and "
            "their items), the limit for one file; not read",
        }
    ]
    assert time.monotonic() - started < 30 and peak_mb < 350, peak_mb


def test_commas_and_brackets_inside_strings_are_not_values(store, tmp_path):
    doc = atif("text")
    doc["steps"][1]["observation"] = {"results": [{"content": "[{," * 2_000_000}]}
    path = write_json(tmp_path / "t.json", doc)
    assert path.stat().st_size > 6_000_000
    status, report, stderr = rsr("ingest", str(path), "--db", str(tmp_path / "x.duckdb"))
    assert status == 0 and report["trajectories_added"] == 1, stderr


def test_more_steps_than_a_trajectory_may_have_is_refused(tmp_path):
    path = _steps_file(tmp_path / "long.json", "long", MAX_STEPS + 1)
    status, report, stderr, peak_mb = _rsr_measured("ingest", str(path), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert errors_by_name(report["errors"]) == {
        "long.json": f"steps: {MAX_STEPS + 1:,} steps, more than the limit of {MAX_STEPS:,} for one "
        "trajectory; not read"
    }
    assert peak_mb < 500, peak_mb  # parsed, the steps alone took 350 MB more


def test_a_terminal_bench_trial_of_more_episodes_than_steps_allowed_is_refused(store, tmp_path):
    trial = tmp_path / "trial"
    write_json(trial / "results.json", {"task_id": "t", "trial_name": "trial-1", "is_resolved": True})
    logs = trial / "agent-logs"
    logs.mkdir()
    for n in range(MAX_STEPS + 1):
        os.mkdir(logs / f"episode-{n}")
    status, report, stderr = rsr("ingest", str(trial), "--db", str(tmp_path / "x.duckdb"), timeout=300)
    assert status == 1 and "Traceback" not in stderr
    assert errors_by_name(report["errors"]) == {
        "trial": f"agent-logs: more than {MAX_STEPS:,} episodes, the limit for one trajectory; not read"
    }


def test_many_large_files_are_not_all_in_memory_at_once(tmp_path):
    # Ten files of 99,000 small steps (4.4 MB each) were parsed as one chunk: 3.5 GB; one at a time, 0.5 GB.
    corpus = tmp_path / "corpus"
    first = _steps_file(corpus / "t0.json", "t0", 99_000)
    body = first.read_text()
    for k in range(1, 10):
        (corpus / f"t{k}.json").write_text(body.replace('"session_id":"t0"', f'"session_id":"t{k}"', 1))
    status, report, stderr, peak_mb = _rsr_measured(
        "ingest", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--workers", "1"
    )
    assert status == 0 and report["trajectories_added"] == 10, stderr
    assert peak_mb < 1200, peak_mb


def test_a_directory_swapped_for_a_link_while_files_are_read_never_leads_outside(tmp_path):
    """A tree changing under the ingest (a corpus on a shared disk): `sub` flips between a real directory
    and a link to a directory outside the root, between the check of a path and its open."""
    root = tmp_path / "tree"
    (root / "real").mkdir(parents=True)
    (root / "real" / "t.json").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "t.json").write_text("HOST-SECRET")
    os.symlink(tmp_path / "outside", root / "link")
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            for name in ("real", "link"):
                try:
                    os.rename(root / name, root / "sub")
                    os.rename(root / "sub", root / name)
                except OSError:
                    pass

    flipper = threading.Thread(target=flip)
    flipper.start()
    seen: set[bytes] = set()
    refused = 0
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (len(seen) < 1 or refused < 50):
            for _ in range(2000):
                try:
                    seen.add(read_input(root / "sub" / "t.json", root, "sub/t.json"))
                except FormatError:
                    refused += 1
    finally:
        stop.set()
        flipper.join()
    assert b"HOST-SECRET" not in seen
    assert seen == {b"inside"} and refused


@pytest.mark.parametrize(
    "name",
    [
        b"new\nline.json",
        b"esc\x1b[2J\x1b[31mred\x07.json",
        b"bytes\xff\xfe.json",
        b"sep\xe2\x80\xa8rtl\xe2\x80\xae.json",
    ],
    ids=["newline", "escape-sequences", "not-utf8", "unicode-separators"],
)
def test_a_hostile_file_name_stays_on_its_refusal_line(tmp_path, name):
    tree = tmp_path / "tree"
    tree.mkdir()
    with open(os.fsencode(tree) + b"/" + name, "wb") as handle:
        handle.write(b"{not json")
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "ingest", str(tree), "--db", str(tmp_path / "x.duckdb")],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1
    err = done.stderr.decode()
    (line,) = err.splitlines()
    assert all(ch.isprintable() for ch in line) and "Traceback" not in err
    shown = name.decode(errors="surrogateescape").encode("unicode_escape").decode()
    shown = shown.replace("\\udcff", "\\xff").replace("\\udcfe", "\\xfe")
    assert line == (
        f"error: {tree}/{shown}: invalid JSON at line 1 column 2: Expecting property name enclosed in "
        "double quotes"
    )


def test_a_link_whose_target_text_is_hostile_stays_on_one_line(tmp_path):
    tree = tmp_path / "tree"
    write_json(tree / "ok.json", atif("ok"))
    os.symlink("gone\n\x1b[31mred", tree / "dangling.json")
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "ingest", str(tree), "--db", str(tmp_path / "x.duckdb")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line == f"error: {tree}/dangling.json: dangling symlink to gone\\n\\x1b[31mred; skipped"
    assert Store(tmp_path / "x.duckdb").get_trajectory("ok") is not None


def test_trials_sharing_one_big_file_through_hard_links_read_it_once(tmp_path):
    # Seen: 40 trials whose verifier/test-stdout.txt were hard links to one 100 MB file (no disk used) took
    # 22 GB: each trial read it again, 32 of them in one parser chunk.
    jobs = tmp_path / "job"
    big = tmp_path / "stdout.txt"
    big.write_text(("y" * 99 + "\n") * 500_000)
    for n in range(20):
        trial = jobs / f"trial{n:02}"
        write_json(trial / "result.json", {"task_name": "t", "trial_name": f"tr{n}"})
        write_json(trial / "agent" / "trajectory.json", atif(f"s{n}"))
        (trial / "verifier").mkdir()
        os.link(big, trial / "verifier" / "test-stdout.txt")
    status, report, stderr, peak_mb = _rsr_measured("ingest", str(jobs), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert report["trajectories_added"] == 1 and peak_mb < 800, peak_mb
    errors = errors_by_name(report["errors"])
    assert sorted(errors) == [f"trial{n:02}" for n in range(1, 20)]
    assert set(errors.values()) == {
        "verifier/test-stdout.txt: the same file as one already read for another run (a hard link or a link "
        "to it); not read again"
    }


def test_terminal_bench_trials_sharing_a_prompt_through_hard_links_read_it_once(store, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Task Description:\nsay hi\n\nCurrent terminal state:\n$ ")
    run = tmp_path / "run"
    for n in range(3):
        trial = run / f"t{n}"
        write_json(trial / "results.json", {"task_id": "t", "trial_name": f"t{n}", "is_resolved": True})
        episode = trial / "agent-logs" / "episode-0"
        episode.mkdir(parents=True)
        (episode / "response.txt").write_text(f'{{"analysis": "{n}", "plan": "", "commands": []}}')
        os.link(prompt, episode / "prompt.txt")
    report = ingest_paths(store, [run])
    assert report.trajectories_added == 1
    assert errors_by_name(report.errors) == {
        f"t{n}": "agent-logs/episode-0/prompt.txt: the same file as one already read for another run (a hard "
        "link or a link to it); not read again"
        for n in (1, 2)
    }


def test_large_trajectories_are_written_a_few_at_a_time(tmp_path):
    # Seen: twenty files of one 50 MB observation each were all held for one batch: 5 GB.
    corpus = tmp_path / "corpus"
    for k in range(8):
        doc = atif(f"fat{k}")
        doc["steps"][1]["observation"] = {"results": [{"content": chr(97 + k) * 40_000_000}]}
        write_json(corpus / f"f{k}.json", doc)
    status, report, stderr, peak_mb = _rsr_measured(
        "ingest", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--workers", "1"
    )
    assert status == 0 and report["trajectories_added"] == 8, stderr
    assert peak_mb < 1000, peak_mb


def _with(doc: dict, raw: str) -> str:
    """`doc` as JSON with `raw` (any JSON text) as the value of extra.x."""
    return json.dumps(doc)[:-1] + ', "x": ' + raw + "}"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (_with(atif("n"), "[" * 100_000 + "]" * 100_000), f"ATIF JSON: {DEPTH_LIMIT_TEXT}"),
        (_with(atif("o"), '{"a":' * 100_000 + "1" + "}" * 100_000), f"ATIF JSON: {DEPTH_LIMIT_TEXT}"),
        (
            json.dumps(atif("r")).replace('"task_id": "t"', '"task_id": "t", "reward": 1e400'),
            "extra.rsr.reward: expected a finite number in [0, 1], got Infinity",
        ),
        (
            _with(atif("i"), "9" * 5000),
            "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
            "use sys.set_int_max_str_digits() to increase the limit",
        ),
        (
            json.dumps(atif("s")).replace("do s", "do \\ud800 s"),
            "could not be stored: 'utf-8' codec can't encode character '\\ud800' in position 3: surrogates not "
            "allowed",
        ),
    ],
    ids=["nested-arrays", "nested-objects", "reward-1e400", "5000-digit-integer", "lone-surrogate"],
)
def test_json_values_python_or_the_store_cannot_take_refuse_the_file_alone(tmp_path, text, error):
    corpus = tmp_path / "corpus"
    write_json(corpus / "ok.json", atif("ok"))
    (corpus / "bad.json").write_text(text)
    status, report, stderr = rsr("ingest", str(corpus), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr
    assert errors_by_name(report["errors"]) == {"bad.json": error}
    assert report["trajectories_added"] == 1


def test_gzip_and_sparse_files_are_refused_by_what_they_hold(tmp_path):
    import gzip

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "trajectory.json").write_bytes(gzip.compress(json.dumps(atif("gz")).encode()))
    with (corpus / "sparse.json").open("wb") as handle:
        handle.truncate(200 * 2**20)  # under the size limit: read, and refused at its first byte
    started = time.monotonic()
    status, report, stderr = rsr("ingest", str(corpus), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr and time.monotonic() - started < 60
    errors = errors_by_name(report["errors"])
    assert errors["trajectory.json"] == "binary data (NUL byte at offset 3, line 1); expected UTF-8 ATIF JSON"
    assert errors["sparse.json"] == "binary data (NUL byte at offset 0, line 1); expected UTF-8 ATIF JSON"


def test_roots_named_twice_nested_or_through_a_link_read_each_file_once(tmp_path):
    a = tmp_path / "a"
    write_json(a / "x.json", atif("x"))
    write_json(a / "b" / "y.json", atif("y"))
    os.link(a / "x.json", a / "b" / "hard.json")
    os.symlink("a", tmp_path / "link")
    for roots in (["a", "a"], ["a", "a/b"], ["a/b", "a"], ["link", "a"], ["a/x.json", "link"]):
        db = tmp_path / f"{'-'.join(r.replace('/', '_') for r in roots)}.duckdb"
        status, report, stderr = rsr("ingest", *[str(tmp_path / r) for r in roots], "--db", str(db))
        assert (status, report) == (
            0,
            {"files": 2, "trajectories_added": 2, "duplicates": 0, "tasks_added": 1, "errors": []},
        ), (roots, stderr)


def test_paths_named_inside_the_files_are_never_opened(tmp_path):
    """A trial's result.json and an ATIF image part may name any host path: they are kept as text."""
    trial = tmp_path / "job" / "trial"
    write_json(
        trial / "result.json",
        {"task_name": "t", "trial_name": "tr1", "trial_uri": "file:///etc/shadow", "task_path": "/etc"},
    )
    doc = atif("img")
    doc["steps"][0]["message"] = [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"media_type": "image/png", "path": "file:///etc/shadow"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "../../../../etc/passwd"}},
    ]
    write_json(trial / "agent" / "trajectory.json", doc)
    db = tmp_path / "x.duckdb"
    status, report, stderr = rsr("ingest", str(tmp_path / "job"), "--db", str(db))
    assert status == 0 and report["trajectories_added"] == 1, stderr
    stored = db.read_bytes()
    for host_file in ("/etc/passwd", "/etc/hostname"):
        line = Path(host_file).read_bytes().splitlines()[0]
        assert line not in stored
    assert b"root:" not in stored


def test_escape_sequences_in_a_trajectory_never_reach_the_terminal(tmp_path):
    # Seen: `rsr list` and `rsr show` printed them raw: a title change, a cleared screen, a clipboard write
    # (OSC 52) from a stranger's trajectory.
    session = "esc\x1b]0;pwned\x07id"
    doc = atif(session, task="t\x1b[31mred")
    doc["steps"][1]["message"] = "Analysis: \x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07 cleared\u202e\nPlan: p"
    doc["steps"][1]["observation"] = {"results": [{"content": "line 1\n\tout\x1b[31mRED\x1b[0m\x9b2J"}]}
    write_json(tmp_path / "c" / "e.json", doc)
    db = str(tmp_path / "x.duckdb")
    assert rsr("ingest", str(tmp_path / "c"), "--db", db)[0] == 0
    shown = {}
    for command in (["list"], ["show", session], ["stats", "coverage"]):
        done = subprocess.run(
            [sys.executable, "-m", "rsr_core.cli", *command, "--db", db],
            capture_output=True,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        text = done.stdout.decode()
        assert all(ch.isprintable() or ch in "\n\t" for ch in text), command
        shown[command[0]] = text
    assert "esc\\x1b]0;pwned\\x07id" in shown["list"] and "t\\x1b[31mred" in shown["list"]
    assert "analysis: \\x1b[2J\\x1b]52;c;ZWNobyBoaQ==\\x07 cleared\\u202e\n" in shown["show"]
    assert "line 1\n\tout\\x1b[31mRED\\x1b[0m\\x9b2J" in shown["show"]


TIME = "an ISO 8601 time string, epoch seconds (0 to 253402300799) or null"


@pytest.mark.parametrize("value", [-5, 10**30, 1e308, True, {"a": 1}, [1, 2]], ids=repr)
def test_trial_fields_of_the_wrong_type_refuse_the_trial_alone(tmp_path, value):
    # Seen: a number as result.json started_at ended the whole ingest with a traceback.
    corpus = tmp_path / "corpus"
    harbor = corpus / "harbor"
    write_json(
        harbor / "result.json",
        {
            "task_name": "t",
            "trial_name": "h",
            "started_at": value,
            "agent_info": {"model_info": {"name": value}},
        },
    )
    (harbor / "agent").mkdir()
    model_only = corpus / "model-only"
    write_json(
        model_only / "result.json",
        {"task_name": "t", "trial_name": "m", "agent_info": {"model_info": {"name": value}}},
    )
    (model_only / "agent").mkdir()
    tb = corpus / "tb"
    write_json(tb / "results.json", {"task_id": "t", "trial_name": "tb", "trial_ended_at": value})
    (tb / "agent-logs").mkdir()
    write_json(corpus / "ok.json", atif("ok"))
    status, report, stderr = rsr("ingest", str(corpus), "--db", str(tmp_path / "x.duckdb"))
    assert status == 1 and "Traceback" not in stderr, stderr
    shown = json.dumps(value) if not isinstance(value, float) else "1e+308"
    assert errors_by_name(report["errors"]) == {
        "harbor": f"result.json started_at: expected {TIME}, got {shown}",
        "tb": f"results.json trial_ended_at: expected {TIME}, got {shown}",
    }
    assert report["trajectories_added"] == 2  # ok.json, and the trial whose model name was not a string
