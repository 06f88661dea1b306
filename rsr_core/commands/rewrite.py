"""`rsr rewrite`, `rsr jobs list|show|cancel|resume`, `rsr review approve|reject`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from rsr_core.commands.common import add_db, add_json, bounded_int, emit, finite_float, open_store
from rsr_core.commands.jobrun import add_backend_args, make_runner
from rsr_core.errors import printable
from rsr_core.vocabulary import DECIDED, JOB_SUCCEEDED

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    p = sub.add_parser(
        "rewrite",
        help="run the RSR pipeline: plan runbooks, critique, execute, filter",
        description="Rewrite successful discovery trajectories into the general harness: K "
        "runbooks per source (Planner), each checked by the Critic and replanned when rejected (up "
        "to --rounds), M Terminus 2 executions per approved runbook in fresh sandboxes (Executor), "
        "and the answer-transfer filter on every verified execution.",
    )
    p.add_argument("--task", action="append", default=[], metavar="ID", help="rewrite this task's successes")
    p.add_argument(
        "--source", action="append", default=[], metavar="TRAJECTORY_ID", help="rewrite this trajectory"
    )
    p.add_argument("--k", type=bounded_int(1, 100), default=4, help="runbooks per source (default 4)")
    p.add_argument(
        "--m", type=bounded_int(1, 100), default=4, help="executions per approved runbook (default 4)"
    )
    p.add_argument(
        "--rounds", type=bounded_int(1, 100), default=3, help="critic rounds per runbook (default 3)"
    )
    p.add_argument(
        "--gate",
        choices=["critic", "human"],
        default="critic",
        help="critic: approved runbooks run at once; human: they wait for `rsr review approve`",
    )
    add_backend_args(p)
    p.add_argument(
        "--temperature",
        type=finite_float(0, 2),
        default=0.7,
        help="Planner and Executor temperature (default 0.7)",
    )
    p.add_argument(
        "--max-turns", type=bounded_int(1, 10_000), default=30, help="model calls per execution (default 30)"
    )
    for role in ("planner", "critic", "executor"):
        p.add_argument(
            f"--{role}-model", help=f"{role} model (default: $RSR_{role.upper()}_MODEL, else $RSR_MODEL)"
        )
    add_db(p)
    add_json(p)
    p.set_defaults(handler=rewrite)

    j = sub.add_parser(
        "jobs",
        help="rewrite and discovery jobs: list, show, cancel, resume",
        description="Rewrite and discovery jobs.",
    )
    js = j.add_subparsers(dest="jobs_command", metavar="WHAT", required=True)
    for name, help_text in (
        ("list", "list jobs with their unit counts"),
        ("show", "a job's parameters and units"),
        ("cancel", "stop a job (its runner, wherever it runs, finishes the units in flight)"),
        ("resume", "finish a job: re-run units left unfinished, clean up its containers"),
    ):
        c = js.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name != "list":
            c.add_argument("job_id", metavar="JOB_ID", help="job id as printed by `rsr jobs list`")
        if name == "resume":
            add_backend_args(c)
        add_db(c)
        add_json(c)
        c.set_defaults(
            handler={"list": jobs_list, "show": jobs_show, "cancel": jobs_cancel, "resume": jobs_resume}[name]
        )

    r = sub.add_parser(
        "review",
        help="approve or reject runbooks (human gate)",
        description="Append a human review to a runbook; the latest review decides.",
    )
    rs = r.add_subparsers(dest="review_command", metavar="DECISION", required=True)
    for decision in ("approve", "reject"):
        c = rs.add_parser(
            decision,
            help=f"{decision} a runbook",
            description=f"Record that a reviewer {decision}s "
            "a runbook. Approved runbooks of a human-gated job run on `rsr jobs resume`.",
        )
        c.add_argument("runbook_id", metavar="RUNBOOK_ID", help="runbook id")
        c.add_argument("--by", required=True, metavar="NAME", help="reviewer name")
        c.add_argument("--reason", default="", help="why")
        add_db(c)
        add_json(c)
        c.set_defaults(handler=review, decision=decision)


def _report(
    args: argparse.Namespace, services, job_id: str, status: str, requeued: dict | None = None
) -> int:
    from rsr_core.store import jobs as jobs_sql
    from rsr_core.store import pipeline as pipeline_sql

    with services.store.reading() as cur:
        failures = jobs_sql.failed_units(cur, job_id)
        payload: dict[str, Any] = {
            "job_id": job_id,
            "status": status,
            "units": jobs_sql.unit_counts(cur, job_id),
            "failures": failures,
            "funnel": pipeline_sql.funnel(cur),
        }
    if requeued is not None:
        payload["requeued"] = requeued
    sys.stderr.write("\n")
    text = [f"job {job_id}: {status}", *_failure_lines(failures)]
    emit(args, payload, "\n".join(text))
    return 0 if status in JOB_SUCCEEDED else 1


def rewrite(args: argparse.Namespace, settings: Settings) -> int:
    """Create and run a job."""
    from rsr_core.jobs.runner import JobError
    from rsr_core.rewrite.units import RewriteParams

    services, runner = make_runner(args, settings)
    params = RewriteParams.from_settings(
        settings,
        tasks=args.task,
        sources=args.source,
        k=args.k,
        m=args.m,
        rounds=args.rounds,
        gate=args.gate,
        planner_model=args.planner_model,
        critic_model=args.critic_model,
        executor_model=args.executor_model,
        temperature=args.temperature,
        executor_max_turns=args.max_turns,
    )
    try:
        job_id = runner.create(params)
    except JobError as exc:
        print(f"rsr: {exc}", file=sys.stderr)
        return 1
    sys.stderr.write(f"job {job_id} started (pid {os.getpid()}; units on {runner.backend.where()})\n")
    status = runner.run(job_id)
    _refresh_derived(services)
    return _report(args, services, job_id, status)


def jobs_resume(args: argparse.Namespace, settings: Settings) -> int:
    """Resume a job in this process."""
    from rsr_core.jobs.runner import JobError

    services, runner = make_runner(args, settings)
    try:
        status = runner.resume(args.job_id, on_requeued=_say_requeued)
    except JobError as exc:
        print(f"rsr: {exc}", file=sys.stderr)
        return 1
    _refresh_derived(services)
    return _report(args, services, args.job_id, status, requeued=runner.requeued)


def _say_requeued(job_id: str, requeued: dict[str, dict[str, int]]) -> None:
    if not requeued:
        sys.stderr.write(f"job {job_id}: nothing to re-run; continuing with its pending units\n")
        return
    parts = [
        f"{sum(kinds.values())} {status} ({', '.join(f'{k} {n}' for k, n in kinds.items())})"
        for status, kinds in requeued.items()
    ]
    sys.stderr.write(f"job {job_id}: re-running " + "; ".join(parts) + "\n")


def jobs_list(args: argparse.Namespace, settings: Settings) -> int:
    """List jobs."""
    from rsr_core.store import jobs as jobs_sql

    with open_store(args, settings, read_only=True).reading() as cur:
        rows = jobs_sql.list_jobs(cur)
    lines = [
        f"{r['job_id']:<34} {r['status']:<15} units {r['done']}/{r['units']} failed {r['failed']}"
        + ("  [scripted]" if r["scripted"] else "")
        for r in rows
    ]
    emit(args, rows, "\n".join(lines) or "no jobs")
    return 0


def jobs_show(args: argparse.Namespace, settings: Settings) -> int:
    """Show a job."""
    from rsr_core.store import jobs as jobs_sql

    with open_store(args, settings, read_only=True).reading() as cur:
        job = jobs_sql.get_job(cur, args.job_id)
        if job is None:
            print(f"rsr: no job {args.job_id!r}", file=sys.stderr)
            return 1
        job["units"] = jobs_sql.unit_counts(cur, args.job_id)
        job["failures"] = jobs_sql.failed_units(cur, args.job_id)
        job["unit_list"] = jobs_sql.units_of(cur, args.job_id)
    shown = {k: v for k, v in job.items() if k not in ("unit_list", "failures")}
    emit(args, job, "\n".join([json.dumps(shown, indent=2, default=str), *_failure_lines(job["failures"])]))
    return 0


def _failure_lines(failures: list[dict]) -> list[str]:
    """Failed units grouped by error: count, kinds, the first units."""
    if not failures:
        return []
    lines = [f"failed units: {sum(f['units'] for f in failures)}, by error:"]
    for f in failures:
        lines.append(f"  {f['units']} x ({', '.join(f['kinds'])}) {f['error'][:300]}")
        lines += [f"      {u}" for u in f["first"]]
    return lines


def jobs_cancel(args: argparse.Namespace, settings: Settings) -> int:
    """Cancel a job: its runner, wherever it runs, sees the request and stops after the units in flight; a job
    nobody runs is marked cancelled at once. No process is signalled."""
    from rsr_core.jobs.control import CANCEL_REQUESTED, FINAL, cancel_job

    with open_store(args, settings).transaction() as cur:
        done = cancel_job(cur, args.job_id)
    if done is None:
        print(f"rsr: no job {args.job_id!r}", file=sys.stderr)
        return 1
    payload: dict[str, Any] = {"job_id": args.job_id, "status": done.status}
    if done.status == CANCEL_REQUESTED:
        payload["owner_pid"] = done.owner_pid
        text = (
            f"job {args.job_id}: cancel requested; its runner (PID {done.owner_pid} on "
            f"{done.owner_host}) stops after the units in flight"
        )
    elif done.was in FINAL:
        text = f"job {args.job_id} is {done.status}"
    else:
        text = f"job {args.job_id} cancelled"
    emit(args, payload, text)
    return 0


def review(args: argparse.Namespace, settings: Settings) -> int:
    """Append a review (refused, with the reason, when the round cannot take it: `pipeline.refusal`)."""
    from rsr_core.models import Review
    from rsr_core.store import pipeline as pipeline_sql

    decision = Review(
        runbook_id=args.runbook_id, decision=args.decision, reviewer=args.by, reason=args.reason
    )
    with open_store(args, settings).transaction() as cur:
        done = pipeline_sql.review_runbook(cur, decision)
    if done is None:
        print(f"rsr: no runbook {printable(args.runbook_id)!r}", file=sys.stderr)
        return 1
    rb, status = done.runbook, done.status
    hint = f"; run `rsr jobs resume {rb.job_id}` to execute it" if status == "approved" and rb.job_id else ""
    emit(
        args,
        {"runbook_id": args.runbook_id, "decision": args.decision, "reviewer": args.by, "job_id": rb.job_id},
        f"{args.runbook_id}: {DECIDED[args.decision]} by {args.by}{hint}",
    )
    return 0


def _refresh_derived(services) -> None:
    """Hook: rescore the similarity pairs of the tasks whose passed rewrites the job changed (and key any
    trajectory stored without its training key)."""
    from rsr_core.jobs.derived import refresh_after_write

    refresh_after_write(services.store)
