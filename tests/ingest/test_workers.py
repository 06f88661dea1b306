"""Parser processes end with the ingest that started them, kill -9 included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsr_core.children import start_worker
from rsr_core.ingest.runner import CHUNK_UNITS, PARALLEL_MIN_UNITS
from tests.ingest.hostile import ROOT, atif
from tests.signals import sigint_default


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is `pid`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(predicate, timeout: float) -> bool:
    """Poll until `predicate()` holds or `timeout` seconds pass (a bound against hangs, not a measurement)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def _reap(ingest: subprocess.Popen, workers: list[int]) -> None:
    """After a test: the ingest and the parser processes it started are gone, whatever the test saw."""
    if ingest.poll() is None:
        ingest.kill()
        ingest.wait()
    for worker in workers:  # only the processes this test started
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.timeout(300)
def test_no_parser_process_survives_a_killed_ingest(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    n_files = max(PARALLEL_MIN_UNITS, 120 * CHUNK_UNITS)  # enough chunks to keep the workers busy a while
    for i in range(n_files):
        doc = atif(f"s{i}")
        doc["steps"] += [
            {"step_id": k, "source": "agent", "message": f"Analysis: step {k} of {i}\nPlan: go on"}
            for k in range(3, 60)
        ]
        (corpus / f"t{i:05d}.json").write_text(json.dumps(doc))
    ingest = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rsr_core.cli",
            "ingest",
            str(corpus),
            "--db",
            str(tmp_path / "x.duckdb"),
            "--workers",
            "2",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        assert _wait_for(lambda: len(_children(ingest.pid)) >= 2, timeout=120), "no parser processes started"
        os.kill(ingest.pid, signal.SIGSTOP)  # freeze it where it is: the workers are certainly up
        workers = _children(ingest.pid)
        os.kill(ingest.pid, signal.SIGKILL)
        ingest.wait(timeout=60)
        assert _wait_for(lambda: not any(_alive(w) for w in workers), timeout=30), (
            f"parser processes {[w for w in workers if _alive(w)]} outlived the killed ingest"
        )
    finally:
        _reap(ingest, workers)


def test_a_worker_whose_parent_already_ended_exits():
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's exit status is the result
        try:
            start_worker(parent_pid=1 if os.getppid() != 1 else 2)  # not this child's parent
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("sig", "code", "line"),
    [
        (signal.SIGINT, 130, "rsr: interrupted"),
        (signal.SIGTERM, 143, "rsr: terminated (SIGTERM)"),
        (signal.SIGHUP, 129, "rsr: terminated (SIGHUP)"),
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_signal_to_the_whole_group_ends_the_ingest_in_one_line(tmp_path, sig, code, line):
    """Ctrl-C, a closed terminal or `kill -TERM -PGID` reach every process of the group, the workers too.

    Seen: each worker printed the traceback of the parent's handler it had inherited."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(60 * CHUNK_UNITS):
        doc = atif(f"s{i}")
        doc["steps"] += [
            {"step_id": k, "source": "agent", "message": f"Analysis: step {k} of {i}\nPlan: go on"}
            for k in range(3, 60)
        ]
        (corpus / f"t{i:05d}.json").write_text(json.dumps(doc))
    db = tmp_path / "x.duckdb"
    ingest = subprocess.Popen(
        [sys.executable, "-m", "rsr_core.cli", "ingest", str(corpus), "--db", str(db), "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )
    workers: list[int] = []
    try:
        assert _wait_for(lambda: len(_children(ingest.pid)) >= 2, timeout=120), "no parser processes started"
        workers = _children(ingest.pid)
        time.sleep(0.5)
        os.killpg(ingest.pid, sig)
        assert ingest.wait(timeout=120) == code
        err = ingest.stderr.read()  # type: ignore[union-attr]
        assert err.splitlines() == [line], err
        assert _wait_for(lambda: not any(_alive(w) for w in workers), timeout=30)
    finally:
        _reap(ingest, workers)
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "stats", "summary", "--db", str(db), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr  # what was stored is whole and readable


def _parallel_corpus(tmp_path: Path) -> Path:
    """A directory of enough ATIF files (PARALLEL_MIN_UNITS + 8) to be parsed in parser processes."""
    corpus = tmp_path / "many"
    corpus.mkdir()
    for i in range(PARALLEL_MIN_UNITS + 8):
        (corpus / f"t{i}.json").write_text(json.dumps(atif(f"t{i}")))
    return corpus


def test_duckdb_writes_on_one_thread_while_the_parsers_run(tmp_path: Path) -> None:
    """Beside parser processes that take the cores, the store's engine runs one thread; after, what it had."""
    from rsr_core.ingest.runner import ingest_paths
    from rsr_core.store import Store
    from rsr_core.store.sql import scalar

    corpus = _parallel_corpus(tmp_path)
    store = Store(tmp_path / "threads.duckdb")
    seen: list[int] = []

    def threads() -> int:
        with store.reading() as cur:
            return int(scalar(cur, "SELECT current_setting('threads')"))

    try:
        with store.reading() as cur:
            cur.execute("SET threads = 3")  # not the default of any machine's core count in particular
        before = threads()
        assert before == 3
        report = ingest_paths(
            store, [corpus], workers=2, on_progress=lambda done, total: seen.append(threads())
        )
        assert report.trajectories_added == PARALLEL_MIN_UNITS + 8
        assert seen and set(seen) == {1}
        assert threads() == before
        ingest_paths(store, [corpus / "t0.json"], workers=2, on_progress=lambda d, t: seen.append(threads()))
        assert seen[-1] == before  # one file: parsed here, the engine keeps its threads
    finally:
        store.close()


def test_the_collector_is_paused_while_parsed_units_are_stored_and_on_again_after(tmp_path: Path) -> None:
    """The storing process receives as many objects as the parsers make: the cyclic collector is off while
    they arrive and are written, and as it was afterwards, on or off."""
    import gc

    from rsr_core.ingest.runner import ingest_paths
    from rsr_core.store import Store

    corpus = _parallel_corpus(tmp_path)
    store = Store(tmp_path / "gc.duckdb")
    seen: list[bool] = []
    try:
        assert gc.isenabled()
        report = ingest_paths(
            store, [corpus], workers=2, on_progress=lambda d, t: seen.append(gc.isenabled())
        )
        assert report.trajectories_added == PARALLEL_MIN_UNITS + 8
        assert seen and not any(seen)
        assert gc.isenabled()
        gc.disable()
        try:
            ingest_paths(store, [corpus], workers=2)
            assert not gc.isenabled()  # left as it was found
        finally:
            gc.enable()
    finally:
        store.close()


def test_a_worker_collects_cycles_though_its_parent_forked_it_with_the_collector_paused() -> None:
    import gc

    from rsr_core.children import child_pool

    gc.disable()
    try:
        pool = child_pool(1)
        try:
            assert pool.submit(gc.isenabled).result(timeout=60) is True
        finally:
            pool.shutdown(wait=True)
    finally:
        gc.enable()
