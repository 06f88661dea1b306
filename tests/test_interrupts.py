"""Ctrl-C at any moment of a command: one line, "rsr: interrupted", exit status 130 (or the command's own result
when it finished first), no traceback, no temporary file left behind.

The commands run as real `rsr` processes on a database built by `rsr ingest`, and are interrupted after a range
of delays so that the signal lands in every phase: loading, opening the database, a DuckDB query (DuckDB raises
its own "Query interrupted" there), writing, moving the output into place, exiting. The first delay leaves
Python's own start (its `site` imports, before any code of ours runs) alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from rsr_core.outputs import AtomicFile, remove_leftovers, uninterrupted
from rsr_core.store import Store
from tests.ingest.hostile import bulk_atif_corpus
from tests.signals import sigint_default

_SCRIPT = Path(sys.executable).with_name("rsr")
RSR = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "rsr_core.cli"]
N_TRAJECTORIES = 1200
STEPS = 40


def _delays(n: int, first: float, last: float) -> list[float]:
    return [round(first + (last - first) * i / (n - 1), 3) for i in range(n)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return bulk_atif_corpus(tmp_path_factory.mktemp("corpus"), N_TRAJECTORIES, STEPS)


@pytest.fixture(scope="module")
def db(corpus, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("db") / "big.duckdb"
    done = subprocess.run([*RSR, "ingest", str(corpus), "--db", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return str(path)


def _past_python_start(pid: int, timeout_s: float = 30.0) -> None:
    """Wait until the child runs code of its own: Python's start (its `site` imports) runs before any of it,
    and a Ctrl-C there is Python's to report; on a busy machine the start alone can take longer than the
    shortest delay. The json accelerator is loaded by `rsr` itself, not by Python's start."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if "/_json." in Path(f"/proc/{pid}/maps").read_text():
                return
        except OSError:
            return  # it has ended already
        time.sleep(0.005)


def _interrupt(args: list[str], delay: float) -> tuple[int, str, int]:
    """Run `rsr ARGS`, send it SIGINT `delay` seconds after its own code started; (exit status, stderr, pid)."""
    proc = subprocess.Popen(
        [*RSR, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,  # a test run in the background has SIGINT ignored, and so would the child
    )
    _past_python_start(proc.pid)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(120)
    return code, proc.stderr.read(), proc.pid  # type: ignore[union-attr]


def _spill_dirs(pid: int) -> list[str]:
    return [
        n for n in os.listdir(tempfile.gettempdir()) if n.startswith("rsr-duckdb-") and n.endswith(f"-{pid}")
    ]


def _check(code: int, err: str, pid: int, delay: float) -> None:
    assert "Traceback" not in err, f"after {delay} s: {err}"
    assert (code, err) in ((130, "rsr: interrupted\n"), (0, "")), f"after {delay} s: {code} {err!r}"
    assert _spill_dirs(pid) == []


def test_an_export_interrupted_at_any_moment_leaves_the_old_output_or_the_new_one(db, tmp_path):
    # Seen: 6 of 74 interrupted exports printed `RuntimeError: Query interrupted` (exit status 3); one left a
    # hidden .partial file beside the output.
    out = tmp_path / "o.jsonl"
    outcomes = set()
    for delay in _delays(20, 0.08, 1.5):
        out.write_text("old\n")
        (tmp_path / "o.card.md").unlink(missing_ok=True)
        code, err, pid = _interrupt(
            ["export", "--format", "sft-jsonl", "--out", str(out), "--db", db, "--force"], delay
        )
        _check(code, err, pid, delay)
        outcomes.add(code)
        names = sorted(p.name for p in tmp_path.iterdir())
        if code == 130 and out.read_text() == "old\n":
            assert names == ["o.jsonl"], delay
        else:  # finished, or interrupted while moving the output and its card into place (they go together)
            assert len(out.read_text().splitlines()) == N_TRAJECTORIES
            assert names == ["o.card.md", "o.jsonl"], delay
    assert 130 in outcomes


def test_an_atif_export_interrupted_at_any_moment_leaves_no_temporary_directory(db, tmp_path):
    out = tmp_path / "atif"
    for delay in _delays(8, 0.08, 1.5):
        code, err, pid = _interrupt(
            ["export", "--format", "atif", "--all", "--out", str(out), "--db", db, "--force"], delay
        )
        _check(code, err, pid, delay)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names in ([], ["atif"]), (delay, names)
        if names:  # an earlier or this run's complete output
            assert len(list(out.rglob("*.atif.json"))) == N_TRAJECTORIES and (out / "README.md").is_file()


def test_an_ingest_interrupted_at_any_moment_stores_whole_trajectories_or_none(corpus, tmp_path):
    for delay in _delays(8, 0.08, 2.0):
        where = tmp_path / f"d{delay}"
        where.mkdir()
        code, err, pid = _interrupt(["ingest", str(corpus), "--db", str(where / "x.duckdb")], delay)
        _check(code, err, pid, delay)
        if not (where / "x.duckdb").exists():
            continue  # interrupted before the database was created
        assert sorted(p.name for p in where.iterdir()) == ["x.duckdb"], delay
        store = Store(where / "x.duckdb", read_only=True)
        if (
            store.schema_version() == 0
        ):  # interrupted while setting it up: an empty database, set up next time
            store.close()
            continue
        with store.reading() as cur:
            stored, partial = cur.execute(
                "SELECT count(*), count(*) FILTER (WHERE n_steps <> (SELECT count(*) FROM steps s "
                "WHERE s.trajectory_id = t.trajectory_id)) FROM trajectories t"
            ).fetchone()
        store.close()
        assert partial == 0 and (code == 130 or stored == N_TRAJECTORIES), (delay, stored, partial)


@pytest.mark.parametrize(
    "args",
    [["list", "--search", "echo"], ["stats", "coverage"], ["show", "b7"]],
    ids=["list", "stats", "show"],
)
def test_reading_commands_interrupted_at_any_moment(db, args):
    for delay in _delays(8, 0.08, 0.6):
        code, err, pid = _interrupt([*args, "--db", db], delay)
        _check(code, err, pid, delay)


def test_a_command_started_with_sigint_ignored_keeps_it_ignored(db):
    """A shell starts background jobs with SIGINT ignored, so that Ctrl-C at the terminal leaves them alone."""
    proc = subprocess.Popen(
        [*RSR, "stats", "coverage", "--db", db],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(120) == 0
    assert proc.stderr.read() == ""  # type: ignore[union-attr]


def test_ctrl_c_during_a_duckdb_query_is_a_keyboard_interrupt(tmp_path):
    """DuckDB cancels the query a signal lands in and raises RuntimeError "Query interrupted": code that reports
    failures one by one would take it for a failure of its work and go on."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    store = Store(tmp_path / "x.duckdb")
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        # about a second of work: DuckDB notices the signal at once on a new connection's first query, and on a
        # cursor only when the query ends (then still raising "Query interrupted")
        with pytest.raises(KeyboardInterrupt) as caught, store.reading() as cur:
            cur.execute("SELECT count(*) FROM range(400000000) t(x) WHERE x % 7 = 3").fetchall()
        assert isinstance(caught.value.__cause__, RuntimeError)
        assert str(caught.value.__cause__) == "Query interrupted"
        with store.reading() as cur:  # the database is usable afterwards
            assert cur.execute("SELECT count(*) FROM trajectories").fetchone() == (0,)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
        store.close()


def test_temporary_outputs_a_signal_left_unowned_are_removed(tmp_path):
    """A signal between creating a temporary file and taking charge of it: the CLI removes what is pending."""
    first = AtomicFile(tmp_path / "a.jsonl")
    second = AtomicFile(tmp_path / "b.jsonl")
    second.handle.write("done\n")
    second.commit()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")) == [first.temp.name]
    remove_leftovers()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl"]


def test_a_signal_inside_an_uninterrupted_block_waits_for_its_end():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt), uninterrupted():
            signal.raise_signal(signal.SIGINT)
            done.append("after the signal")
        assert done == ["after the signal"]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_an_import_is_raised_once_the_import_has_finished(tmp_path, monkeypatch):
    """An extension module's initialisation can swallow a KeyboardInterrupt raised inside it and print it as
    "Exception ignored"; rsr's handler raises it in the importing frame once the import is done."""
    from rsr_core import cli

    (tmp_path / "interrupted_module.py").write_text(
        "import signal\nsignal.raise_signal(signal.SIGINT)\nDONE = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    previous = signal.signal(signal.SIGINT, cli._signalled)  # noqa: SLF001 - the handler rsr installs
    reached = False
    try:
        with pytest.raises(KeyboardInterrupt):
            import interrupted_module  # noqa: F401

            reached = True
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.settrace(None)
        cli._SIGNALLED.clear()  # noqa: SLF001
    assert not reached and sys.modules["interrupted_module"].DONE == 1  # the import ran to its end first


def test_ctrl_c_inside_a_weakref_callback_is_raised_in_the_code_that_was_running(capsys):
    """A weakref callback (a WeakValueDictionary's removal, as multiprocessing's pool leaves behind) cannot
    let an exception unwind: Python prints it as ignored and drops it. rsr raises it again in the frame whose
    work set the callback off, at its next line."""
    import weakref

    from rsr_core import cli

    class Thing:
        pass

    def callback(_: object) -> None:
        signal.raise_signal(signal.SIGINT)
        for _ in range(3):  # Python code runs here: the handler is called inside the callback
            pass

    thing = Thing()
    watch = weakref.ref(thing, callback)
    previous = signal.signal(signal.SIGINT, cli._signalled)  # noqa: SLF001 - the handler rsr installs
    hook = sys.unraisablehook
    replaced = cli._on_signals()  # noqa: SLF001 - and its unraisable hook
    reached = False
    try:
        with pytest.raises(KeyboardInterrupt):
            del thing
            reached = True
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook
        sys.settrace(None)
        cli._SIGNALLED.clear()  # noqa: SLF001
    assert not reached and watch() is None
    assert "Exception ignored" not in capsys.readouterr().err


FORK_SCRIPT = """
import logging, multiprocessing, os, signal
from rsr_core import cli
cli._on_signals()

def ctrl_c_inside_the_hook():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(3):  # Python code runs here: the handler is called inside the hook
        pass

os.register_at_fork(after_in_parent=ctrl_c_inside_the_hook)
try:
    multiprocessing.get_context("fork").Process(target=os._exit, args=(0,)).start()
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted after the fork")
os.wait()
"""


def test_a_ctrl_c_inside_a_forks_hooks_is_raised_after_the_fork():
    """The parser pool forks its workers: a Ctrl-C that lands in an at-fork hook (logging has some) is raised
    once the fork is done, not printed as an ignored exception and dropped."""
    done = subprocess.run(
        [sys.executable, "-c", FORK_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[1],
        preexec_fn=sigint_default,
    )
    assert done.stdout.strip() == "interrupted after the fork", (done.stdout, done.stderr)
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
