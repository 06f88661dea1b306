"""Scripted planner, critic and executor answers for the demo's rewrite pipeline, and its recording.

Five discovery successes are rewritten (K=3 runbooks, M=3 executions): one leaky runbook is caught by the
deterministic critic and replanned, one with StateM/RSRT vocabulary likewise, one with a paraphrased hint is
caught only by the critic model; one execution copies the answer instead of computing it and is dropped for
answer transfer; the executions of one regex runbook fail the verifier. A second job uses the human gate: one runbook is
approved (and executed), one waits in the review queue; a reviewer rejects one runbook of the first job.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from rsr_core.harness.trial_dir import write_job_result, write_trial
from rsr_core.ingest.runner import ingest_paths
from rsr_core.jobs.runner import JobRunner
from rsr_core.models import Review
from rsr_core.rewrite.units import RewriteParams
from rsr_core.store import Store
from rsr_core.store import pipeline as pipeline_sql
from rsr_core.store.dump import dump_pipeline
from scripts.demo_discovery import (
    ENV_GOOD,
    FIX_BOTH,
    LOG_AWK,
    MARKERS,
    RE_CHECK,
    RE_CLASS,
    RE_GOOD,
    SQL_GT,
    SQL_SCHEMA,
    t,
)

PLANNER, CRITIC, EXECUTOR = "scripted-demo-planner", "scripted-demo-critic", "scripted-demo-executor"
ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "data" / "demo" / "jobs"
PIPELINE = ROOT / "data" / "demo_pipeline"
# task -> the harness whose success is rewritten
SOURCES = {
    "log-summary": "statem",
    "fix-python-script": "rsrt",
    "sqlite-extract": "terminus-2",
    "regex-file": "rsrt",
    "json-to-env": "terminus-2",
}


def rb(
    route: str,
    target: str,
    milestones: list[str],
    checks: list[str],
    recovery: list[str],
    pitfalls: list[str],
) -> dict[str, Any]:
    """A runbook answer; the route name lets the scripted executor follow it."""
    return {
        "target_end_state": target,
        "key_milestones": [f"Route {route}: {milestones[0]}", *milestones[1:]],
        "useful_checks": checks,
        "recovery_strategies": recovery,
        "pitfalls": pitfalls,
    }


RUNBOOKS: dict[str, list[dict]] = {
    "log-summary": [
        rb(
            "A",
            "status_counts.csv has the header and one line per status code with its request count, in "
            "ascending order of status.",
            [
                "Look at a few log lines to find which field is the status code.",
                "Count requests per status with awk, sort and uniq.",
                "Write the header, then the counts.",
            ],
            ["head the log", "cat the CSV and compare with a quick count"],
            ["If counts look off, check the field number on a line with spaces in the path."],
            ["sort numerically, not as text"],
        ),
        rb(
            "B",
            "A sorted CSV of request counts per HTTP status.",
            ["Extract the status column with cut.", "Tally it and reformat as status,count."],
            ["wc -l the log and the sum of counts should agree"],
            ["Recount from scratch if the sum differs."],
            ["Do not include the header in the counts."],
        ),
        rb(
            "C",
            "status_counts.csv exists with correct counts.",
            ["Use awk to build a map status -> count.", "Print it sorted."],
            ["cat the result"],
            ["Rerun the awk program."],
            ["An extra blank line at the end."],
        ),
    ],
    "fix-python-script": [
        rb(
            "A",
            "stats.py prints mean=<two decimals> for any file of numbers.",
            ["Run the script to see the error.", "Read the parsing code.", "Fix the parsing and the mean."],
            ["run it on numbers.txt and on a small file you compute by hand"],
            ["Re-read the traceback."],
            ["Blank lines must be skipped."],
        ),
        rb(
            "B",
            "The script handles floats and blank lines and divides by the count.",
            ["Read stats.py.", "Patch it with sed.", "Test it."],
            ["a hand-made file with a known mean"],
            ["Restore from the original text if a sed edit goes wrong."],
            ["int() does not parse floats."],
        ),
        rb(
            "C",
            "stats.py computes the mean correctly.",
            ["Read the code.", "Fix both bugs.", "Check."],
            ["run it"],
            ["print intermediate values"],
            ["the denominator"],
        ),
    ],
    "sqlite-extract": [
        rb(
            "A",
            "expensive.txt lists the qualifying product names, sorted.",
            [
                "Check the schema with python3's sqlite3 module.",
                "Query with a price filter.",
                "Write the names.",
            ],
            ["cat the file"],
            ["If empty, print all rows to see the prices."],
            ["Strictly more than, not at least."],
        ),
        rb(
            "B",
            "One product name per line for prices over the threshold.",
            ["List the rows.", "Filter and sort in SQL."],
            ["count the lines"],
            ["Query again."],
            ["Sort by name, not by price."],
        ),
        rb(
            "C",
            "The file is written from a SQL query.",
            ["Inspect the table.", "Write the query result."],
            ["cat it"],
            ["retry"],
            ["no sqlite3 CLI: use python3"],
        ),
    ],
    "regex-file": [
        rb(
            "A",
            "date_regex.txt holds one pattern that accepts valid YYYY-MM-DD dates only.",
            [
                "Look at the samples.",
                "Write a pattern with alternations for month and day.",
                "Test it with re.fullmatch.",
            ],
            ["test valid and invalid samples"],
            ["Tighten the month or day part that accepts a bad sample."],
            ["Plain \\d{2} accepts month 13."],
        ),
        rb(
            "B",
            "A strict ISO date pattern in the file.",
            ["Write the pattern.", "Check samples."],
            ["python3 re.fullmatch over the samples"],
            ["Fix the failing part."],
            ["Day 00 and 32 are invalid."],
        ),
        rb(
            "C",
            "The regex file exists.",
            ["Write a pattern.", "Check."],
            ["samples"],
            ["adjust"],
            ["character classes alone are too loose"],
        ),
    ],
    "json-to-env": [
        rb(
            "A",
            "app.env has one upper-cased KEY=VALUE line per entry, sorted by key.",
            ["Read the JSON.", "Generate the lines with python3."],
            ["cat app.env"],
            ["Regenerate the file."],
            ["Python prints booleans as True/False."],
        ),
        rb(
            "B",
            "app.env mirrors config.json as sorted KEY=VALUE lines.",
            ["Inspect config.json.", "Write the lines."],
            ["compare the line count with the number of keys"],
            ["Rewrite."],
            ["keys must be upper case"],
        ),
        rb("C", "The env file is written.", ["Convert.", "Check."], ["cat"], ["retry"], ["sorting"]),
    ],
}
LEAKY = {  # round-1 answers the critic rejects; round 2 uses the clean answer above
    ("log-summary", 0): rb(
        "A",
        "status_counts.csv reads status,count then 200,19 and 404,6 as test_counts_per_status expects.",
        ["Count the status field."],
        ["cat it"],
        ["recount"],
        ["none"],
    ),
    ("fix-python-script", 1): rb(
        "B",
        "stats.py works.",
        ["Read stats.py.", "In the implement phase patch it, then transition to verify."],
        ["If the verifier feedback says not passed, reflect."],
        ["retry"],
        ["floats"],
    ),
    ("fix-python-script", 2): rb(
        "C",
        "stats.py computes the mean correctly; on the given file it comes out a little above five.",
        ["Read the code.", "Fix both bugs."],
        ["run it"],
        ["print values"],
        ["the denominator"],
    ),
}

REPORT_CAT = "cat status_counts.csv\n"
EXECUTIONS: dict[str, list[list[dict]]] = {
    "log-summary": [
        [
            t("Check the log format.", "head", "head -n 3 /app/access.log\n"),
            t("Status is field 9.", "Count and write.", "cd /app\n", LOG_AWK, REPORT_CAT),
        ],
        [
            t("Find the status column.", "cut", "cut -d' ' -f9 /app/access.log | head -n 5\n"),
            t("Tally.", "sort | uniq -c", "cd /app\n", "cut -d' ' -f9 access.log | sort -n | uniq -c\n"),
            t(
                "Write the CSV.",
                "awk",
                "{ echo status,count; cut -d' ' -f9 access.log | sort -n | uniq -c | "
                "awk '{print $2\",\"$1}'; } > status_counts.csv\n",
                REPORT_CAT,
            ),
        ],
        [
            t(
                "Build the map in awk.",
                "awk",
                "cd /app\n",
                "awk '{n[$9]++} END {for (s in n) print s\",\"n[s]}' access.log | sort -n\n",
            ),
            t(
                "Write it with a header.",
                "awk",
                "{ echo status,count; awk '{n[$9]++} END {for (s in n) "
                'print s","n[s]}\' access.log | sort -n; } > status_counts.csv\n',
                REPORT_CAT,
            ),
        ],
    ],
    "fix-python-script": [
        [
            t("Run it.", "See the error.", "cd /app\n", "python3 stats.py numbers.txt\n"),
            t("Read the code.", "cat", "cat stats.py\n"),
            t("Two bugs.", "Fix both.", FIX_BOTH, "python3 stats.py numbers.txt\n"),
        ],
        [
            t("Read the code first.", "cat", "cd /app\n", "cat stats.py\n"),
            t("Patch.", "sed", FIX_BOTH, "printf '1\\n2\\n' > /tmp/t.txt\n", "python3 stats.py /tmp/t.txt\n"),
        ],
        [
            t("Read and fix.", "sed", "cd /app\n", "cat stats.py\n", FIX_BOTH),
            t("Check.", "run", "python3 stats.py numbers.txt\n"),
        ],
    ],
    "sqlite-extract": [
        [
            t("Schema first.", "sqlite_master", SQL_SCHEMA),
            t("Query.", "price > 20", SQL_GT, "cat /app/expensive.txt\n"),
        ],
        [
            t(
                "List the rows.",
                "SELECT *",
                'python3 -c "import sqlite3; [print(r) for r in sqlite3.connect('
                "'/app/shop.db').execute('SELECT * FROM products')]\"\n",
            ),
            t("Filter in SQL.", "write", SQL_GT, "wc -l /app/expensive.txt\n"),
        ],
        [
            t("Inspect and write.", "python3", SQL_SCHEMA, SQL_GT),
            t("Check.", "cat", "cat /app/expensive.txt\n"),
        ],
    ],
    "regex-file": [
        [t("Samples.", "cat", "cat /app/samples.txt\n"), t("Strict pattern.", "echo", RE_GOOD, RE_CHECK)],
        [t("Write and test.", "echo", RE_GOOD, RE_CHECK)],
        [t("Write a class-based pattern.", "echo", RE_CLASS, RE_CHECK)],
    ],
    "json-to-env": [
        [t("Read.", "cat", "cat /app/config.json\n"), t("Write.", "python3", ENV_GOOD, "cat /app/app.env\n")],
        [
            t("Inspect.", "cat", "cat /app/config.json\n"),
            t("Write.", "python3", ENV_GOOD, "wc -l /app/app.env\n"),
        ],
        [
            t("Convert.", "python3", "cat /app/config.json\n", ENV_GOOD),
            t("Check.", "cat", "cat /app/app.env\n"),
        ],
    ],
}
# log-summary route C, run 3: writes counts it never computed (copied from what the source run showed)
TRANSFER = [
    t(
        "I know the counts.",
        "Write them.",
        "cd /app\n",
        "printf 'status,count\\n200,19\\n301,2\\n403,1\\n404,6\\n500,3\\n' > status_counts.csv\n",
    )
]
FINISH = [
    t("The result is written and checked.", "Mark complete.", done=True),
    t("Checked.", "Confirm.", done=True),
]
ROUTES = "ABC"
# Runs of one runbook differ a little by seed: run 1 looks around first, run 2 double-checks at the end.
LOOK_FIRST = t("Start by looking at the working directory.", "ls", "ls -la /app\n")
CHECK_LAST = {
    "log-summary": "wc -l /app/status_counts.csv\n",
    "fix-python-script": "python3 /app/stats.py /app/numbers.txt\n",
    "sqlite-extract": "wc -l /app/expensive.txt\n",
    "regex-file": "cat /app/date_regex.txt\n",
    "json-to-env": "wc -l /app/app.env\n",
}


def run_variant(task: str, turns: list[dict], seed: int) -> list[dict]:
    """The turns of one execution: the route's turns, varied by the run's seed."""
    if seed == 1:
        return [LOOK_FIRST, *turns]
    if seed == 2:
        return [*turns, t("Double-check the result.", "one more look", CHECK_LAST[task])]
    return turns


def rewrite_rules() -> list[dict[str, Any]]:
    """Scripted-server rules for the planner, critic, executor models, and the critic model's answer-transfer check."""
    rules: list[dict[str, Any]] = [
        {
            "model": CRITIC,
            "when": {"last_user": "a little above five"},
            "response": {
                "verdict": "reject",
                "flags": [
                    {
                        "kind": "verifier_leak",
                        "evidence": "a little above five",
                        "reason": "hints at the expected output instead of a way to check it",
                    }
                ],
            },
        },
        {
            "model": CRITIC,
            "when": {"system": "audit"},
            "response": {"answer_transfer": False, "evidence": []},
        },
        {"model": CRITIC, "response": {"verdict": "pass", "flags": []}},
        {
            "model": EXECUTOR,
            "when": {"seed": 2, "conversation": f"(?s)Route C.*{MARKERS['log-summary']}"},
            "turns": TRANSFER + FINISH,
        },
    ]
    for task, answers in RUNBOOKS.items():
        marker = MARKERS[task]
        for variant, answer in enumerate(answers):
            leaky = LEAKY.get((task, variant))
            if leaky is not None:
                rules.append(
                    {
                        "model": PLANNER,
                        "when": {"seed": variant, "conversation": marker, "last_user": "rejected"},
                        "response": answer,
                    }
                )
            rules.append(
                {
                    "model": PLANNER,
                    "when": {"seed": variant, "conversation": marker},
                    "response": leaky or answer,
                }
            )
            rules += [
                {
                    "model": EXECUTOR,
                    "when": {"seed": seed, "conversation": f"(?s)Route {ROUTES[variant]}.*{marker}"},
                    "turns": run_variant(task, EXECUTIONS[task][variant], seed) + FINISH,
                }
                for seed in range(3)
            ]
    return rules


def _params(**kw) -> RewriteParams:
    return RewriteParams(planner_model=PLANNER, critic_model=CRITIC, executor_model=EXECUTOR, **kw)


def record(llm, sandboxes, server) -> None:
    """Run the demo jobs in a scratch database built from data/demo, then write the rewrites as harbor job
    dirs and the pipeline rows as JSON lines."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "demo.duckdb")
        ingest_paths(store, [ROOT / "data" / "demo" / "tasks", *sorted(JOBS.glob("discovery-*"))])
        sources = [
            r["trajectory_id"]
            for task, harness in SOURCES.items()
            for r in store.list_trajectories()
            if r["task_id"] == task
            and r["harness"] == harness
            and (r["reward"] or 0) >= 1.0
            and r["kind"] == "discovery"
        ]
        runner = JobRunner(
            store,
            llm,
            sandboxes,
            workers=2,
            on_progress=lambda j, c: print(j, {k: v for k, v in c.items() if v}, flush=True),
        )
        main_job = runner.create(_params(sources=sources, k=3, m=3))
        print("main job", runner.run(main_job))
        json_source = next(s for s in sources if "json-to-env" in s)
        gated = runner.create(_params(sources=[json_source], k=2, m=2, gate="human"))
        runner.run(gated)
        pending = [
            r
            for r in pipeline_sql.runbooks_where(store.cursor(), "job_id", gated)
            if r.critic_verdict == "pass"
        ]
        with store.transaction() as cur:
            pipeline_sql.insert_review(
                cur,
                Review(
                    runbook_id=pending[0].runbook_id,
                    decision="approve",
                    reviewer="alice (scripted demo review)",
                    reason="generic guidance",
                ),
            )
            main_rbs = pipeline_sql.runbooks_where(cur, "job_id", main_job)
            target = next(r for r in main_rbs if r.task_id == "sqlite-extract" and r.variant == 1)
            pipeline_sql.insert_review(
                cur,
                Review(
                    runbook_id=target.runbook_id,
                    decision="reject",
                    reviewer="bob (scripted demo review)",
                    reason="names the threshold comparison too precisely",
                ),
            )
        print("gated job", runner.run(gated))
        for job in (main_job, gated):
            out = JOBS / f"rewrite-{job}"
            shutil.rmtree(out, ignore_errors=True)
            trajs = [
                store.get_trajectory(r["trajectory_id"])
                for r in store.list_trajectories(limit=10_000)
                if r["kind"] == "rewrite" and store.get_trajectory(r["trajectory_id"]).job_id == job
            ]
            for i, traj in enumerate(trajs):
                write_trial(out, traj, f"rsr-demo/{traj.task_id}", f"{traj.task_id}__rewrite{i:02d}")
            write_job_result(out, trajs)
        for old in JOBS.glob("rewrite-*"):
            if old.name not in (f"rewrite-{main_job}", f"rewrite-{gated}"):
                shutil.rmtree(old)
        shutil.rmtree(PIPELINE, ignore_errors=True)
        print(dump_pipeline(store.cursor(), PIPELINE, [main_job, gated]))
        print(pipeline_sql.funnel(store.cursor()))
        store.close()
