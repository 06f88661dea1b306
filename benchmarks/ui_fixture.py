"""What the browser benchmark runs against: the paper-scale database (built or reused) with a review queue and
finished jobs with their work units added through the store's own functions, a minimal one-button Streamlit app
(the floor), a `streamlit run` server, and a process that keeps writing to the database."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REVIEWERS = ("alice", "bob", "carol")
FLAG_KINDS = ("verifier_leak", "solution_leak", "harness_syntax")
FLOOR_APP = """import streamlit as st

st.title("floor")
if st.button("press", key="press"):
    st.write("pressed")
if st.query_params.get("chart"):  # the chart floor: the studio's last figure drawn, and drawn again on a click
    from pathlib import Path

    import plotly.io as pio

    fig = pio.from_json(Path(__file__).with_name("floor_figure.json").read_text())
    if st.button("draw", key="draw"):  # changed by its title, so that it is sent and drawn again in place
        fig.update_layout(title_text=f"{fig.layout.title.text or ''} (again)")
    st.plotly_chart(fig, key="figure")
"""


def build_database(corpus: Path, out: Path) -> None:
    """`rsr ingest` of a generated corpus (benchmarks/generate.py). Task dirs from a generator that wrote no
    verifier script are copied with a stub `tests/test.sh`, since `rsr ingest` refuses a task without one."""
    tasks = corpus / "tasks"
    with tempfile.TemporaryDirectory() as tmp:
        if any(not (d / "tests" / "test.sh").exists() for d in tasks.iterdir() if d.is_dir()):
            copy = Path(tmp) / "tasks"
            shutil.copytree(tasks, copy)
            for d in copy.iterdir():
                (d / "tests").mkdir(exist_ok=True)
                script = d / "tests" / "test.sh"
                if not script.exists():
                    script.write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
            tasks = copy
        rsr = [str(Path(sys.executable).parent / "rsr")]
        subprocess.run(
            [*rsr, "ingest", str(corpus / "jobs"), "--db", str(out)], check=True, stdout=subprocess.DEVNULL
        )
        subprocess.run([*rsr, "ingest", str(tasks), "--db", str(out)], check=True, stdout=subprocess.DEVNULL)


def add_review_queue(db: Path, runbooks: int = 2000, seed: int = 0) -> dict[str, int]:
    """Runbook rounds of a human-gated job for solved discovery runs: critic verdicts (some rejected), one to
    three critic flags on about half of them with spans in the runbook text, and reviews on about a quarter."""
    import random

    from rsr_core.models import CriticFlag, Review, Runbook
    from rsr_core.store import Store, jobs, pipeline

    rng = random.Random(seed)
    store = Store(db)
    with store.reading() as cur:
        sources = cur.execute(
            "SELECT trajectory_id, task_id FROM trajectories WHERE kind = 'discovery' AND reward >= 1 "
            "ORDER BY trajectory_id LIMIT ?",
            [runbooks],
        ).fetchall()
        if cur.execute("SELECT count(*) FROM runbooks WHERE job_id = 'bench-review'").fetchone()[0]:
            return {"runbooks": 0, "flags": 0, "reviews": 0}
    counts = {"runbooks": 0, "flags": 0, "reviews": 0}
    with store.transaction() as cur:
        jobs.create_job(cur, "bench-review", {"gate": "human", "k": 4, "m": 4}, scripted=False)
        for i in range(runbooks):
            source, task = sources[i % len(sources)]
            rb = Runbook(
                runbook_id=f"rb-bench-{i:05d}",
                lineage_id=f"lin-bench-{i:05d}",
                source_trajectory_id=source,
                task_id=task,
                job_id="bench-review",
                variant=i % 4,
                target_end_state=f"The service in /app answers on port {8000 + i % 50} with the expected report.",
                key_milestones=[
                    f"inspect the inputs under /app/data/{i % 7}",
                    "write the transformation",
                    "run it",
                ],
                useful_checks=["ls -la /app", "python3 -m pytest -q tests/ (never available at inference)"],
                recovery_strategies=["if the parser fails, print the offending line and fix the format"],
                pitfalls=["do not hard-code the expected values", "phase: verify before claiming completion"],
                prompt_version="planner_v1",
                model="bench-planner",
                critic_verdict="reject" if i % 9 == 0 else "pass",
            )
            pipeline.insert_runbook(cur, rb)
            counts["runbooks"] += 1
            text = rb.text()
            flags = []
            for k in range(rng.choice((0, 0, 1, 2, 3))):
                start = rng.randrange(0, max(1, len(text) - 40))
                flags.append(
                    CriticFlag(
                        runbook_id=rb.runbook_id,
                        stage="deterministic",
                        kind=FLAG_KINDS[k % 3],
                        score=round(rng.uniform(0.88, 1.0), 2),
                        span_start=start,
                        span_end=start + 30,
                        evidence=text[start : start + 30],
                        matched_text=text[start : start + 30],
                        matched_path="tests/test_outputs.py",
                        reason="matches hidden test text",
                    )
                )
            pipeline.insert_flags(cur, flags)
            counts["flags"] += len(flags)
            if rb.critic_verdict == "pass" and rng.random() < 0.25:
                decision = "approve" if rng.random() < 0.7 else "reject"
                pipeline.insert_review(
                    cur, Review(runbook_id=rb.runbook_id, decision=decision, reviewer=rng.choice(REVIEWERS))
                )
                counts["reviews"] += 1
    return counts


def add_jobs(db: Path, small: int = 24, seed: int = 0) -> dict[str, int]:
    """Finished jobs with their work units, as a rewrite of the whole corpus leaves them: one job of paper
    size (a plan and a critic unit per runbook of 3,900, an execution per rewrite of 15,600, a few percent
    failed with a handful of errors) and `small` earlier jobs of 24 to 774 units; the review job gets a plan
    and a critic unit per runbook round. Units are added with `jobs.add_units` and finished in bulk."""
    import random

    from rsr_core.store import Store, jobs

    rng = random.Random(seed)
    store = Store(db)
    with store.reading() as cur:
        if cur.execute("SELECT count(*) FROM jobs WHERE job_id = 'bench-paper'").fetchone()[0]:
            return {"jobs": 0, "units": 0}
        sources = [r[0] for r in cur.execute(
            "SELECT trajectory_id FROM trajectories WHERE kind = 'discovery' AND reward >= 1 ORDER BY 1"
        ).fetchall()]  # fmt: skip
        review_rounds = [r[0] for r in cur.execute(
            "SELECT runbook_id FROM runbooks WHERE job_id = 'bench-review' ORDER BY 1"
        ).fetchall()]  # fmt: skip
    plans = {"bench-paper": 3900, **{f"bench-old-{i:02d}": rng.randrange(4, 130) for i in range(small)}}
    errors = ("model call failed: 429 Too Many Requests", "sandbox: container exited (137)",
              "executor: turn limit reached without a reward", "critic: malformed JSON in the model's answer")  # fmt: skip
    added = 0
    with store.transaction() as cur:
        for n, (job_id, n_plans) in enumerate(plans.items()):
            jobs.create_job(cur, job_id, {"gate": "auto", "k": 4, "m": 4}, scripted=False)
            units = []
            for i in range(n_plans):
                source = sources[(n * 131 + i) % len(sources)]
                rb = f"rb-{job_id}-{i:05d}"
                units.append(
                    (f"{job_id}-plan-{i:05d}", "plan", {"source_trajectory_id": source, "variant": i % 4})
                )
                units.append((f"{job_id}-critic-{i:05d}", "critic", {"runbook_id": rb}))
                for e in range(4):
                    units.append(
                        (f"{job_id}-execute-{i:05d}-{e}", "execute", {"runbook_id": rb, "attempt": e})
                    )
            added += jobs.add_units(cur, job_id, units)
            jobs.set_status(cur, job_id, "done")
        review = [(f"bench-review-{kind}-{rb}", kind, {"runbook_id": rb}) for rb in review_rounds
                  for kind in ("plan", "critic")]  # fmt: skip
        added += jobs.add_units(cur, "bench-review", review)
        # Finished in bulk: done with a model and its tokens, a few percent failed with one of a few errors.
        cur.execute(
            "UPDATE work_units SET attempts = 1, worker = 'thread-' || CAST(hash(unit_id) % 4 AS VARCHAR), "
            "started_at = TIMESTAMP '2026-11-20 08:00:00' + INTERVAL (hash(unit_id) % 86400) SECOND, "
            "model = CASE kind WHEN 'plan' THEN 'bench-planner' WHEN 'critic' THEN 'bench-critic' "
            "ELSE 'bench-executor' END, "
            "prompt_tokens = 800 + hash(unit_id) % 9000, completion_tokens = 50 + hash(unit_id) % 1500, "
            "status = CASE WHEN hash(unit_id) % 33 = 0 THEN 'failed' ELSE 'done' END, "
            "error = CASE WHEN hash(unit_id) % 33 = 0 THEN list_extract(?, CAST(1 + hash(unit_id) % 4 AS BIGINT)) "
            "END "
            "WHERE job_id LIKE 'bench-%'",
            [list(errors)],
        )
        cur.execute(
            "UPDATE work_units SET finished_at = started_at + INTERVAL (5 + hash(unit_id) % 300) SECOND "
            "WHERE job_id LIKE 'bench-%'"
        )
        jobs.set_status(cur, "bench-review", "waiting_review")
    return {"jobs": len(plans), "units": added}


def prepare(base: Path | None, corpus: Path | None, work: Path, runbooks: int) -> tuple[Path, dict[str, int]]:
    """A working copy of the paper-scale database (built from `corpus` when no `base` exists) with the queue."""
    db = work / "paper.duckdb"
    if base is None or not base.exists():
        if corpus is None:
            raise SystemExit("no database to reuse and no corpus to build one from (--db / --corpus)")
        base = work / "built.duckdb"
        build_database(corpus, base)
    shutil.copy(base, db)
    added = add_review_queue(db, runbooks)
    added.update(add_jobs(db))
    # What `rsr ingest` does at its end (a database built before stored similarity has none yet).
    from rsr_core.analysis.similarity_refresh import refresh
    from rsr_core.store import Store

    added["similarity_refresh_s"] = round(refresh(Store(db)).seconds, 1)
    return db, added


def free_port() -> int:
    """A TCP port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run SCRIPT` on a free port, stopped (its process group) on `stop()`."""

    def __init__(self, script: Path, env: dict[str, str] | None = None, port: int | None = None):
        self.script, self.env, self.port = script, env or {}, port
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> Server:
        port = self.port or free_port()
        env = {**os.environ, **self.env}
        env.pop("RSR_LLM_BASE_URL", None)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(self.script),
                "--server.port",
                str(port),
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2)
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"streamlit did not start: {self.script}")

    def stop(self) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, 15)
            self.proc.wait(20)
            self.proc = None


FLOOR_NAV_APP = """import streamlit as st


def one():
    st.title("floor")
    if st.button("go", key="go"):
        st.switch_page(two_page)


def two():
    st.write("arrived")


two_page = st.Page(two, title="two", url_path="two")
st.navigation([st.Page(one, title="one", default=True), two_page], position="hidden").run()
"""
"""The floor of a click that opens another page: Streamlit's own `st.switch_page` from a button."""


def floor_script(work: Path, nav: bool = False) -> Path:
    """The minimal app the studio is compared with (`nav`: the one whose button opens another page)."""
    path = work / ("floor_nav_app.py" if nav else "floor_app.py")
    path.write_text(FLOOR_NAV_APP if nav else FLOOR_APP)
    return path


class Writer:
    """Another process committing small transactions to the database (python -m benchmarks.ui_writer)."""

    def __init__(self, db: Path, pause_s: float):
        self.db, self.pause_s = db, pause_s
        self.proc: subprocess.Popen | None = None
        self.log = db.parent / "writer.log"

    def __enter__(self) -> Writer:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.ui_writer", str(self.db), "--pause", str(self.pause_s)],
            cwd=ROOT,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        time.sleep(2)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(30)

    def commits(self) -> str:
        lines = self.log.read_text().strip().splitlines()
        return lines[-1] if lines else ""
