"""`rsr discover` and `rsr llm serve-scripted`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsr_core.commands.common import add_db, add_json, bounded_int, finite_float
from rsr_core.commands.jobrun import add_backend_args, make_runner
from rsr_core.errors import printable
from rsr_core.vocabulary import HARNESS_NAMES, spoken_list

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    p = sub.add_parser(
        "discover",
        help="run discovery harnesses on tasks and store the runs (one resumable job)",
        description=f"Run {spoken_list(HARNESS_NAMES)} on tasks in fresh Docker sandboxes against the configured "
        "model endpoint, as one job of tasks x harnesses x runs (resumable with `rsr jobs resume`); every run "
        "is verified with the hidden tests and stored as a discovery trajectory, and written as a harbor job "
        "dir per task and harness under --out.",
    )
    p.add_argument(
        "--task", required=True, action="append", metavar="DIR_OR_ID", help="task directory or stored task id"
    )
    p.add_argument(
        "--harness", required=True, action="append", choices=list(HARNESS_NAMES), help="discovery harness"
    )
    p.add_argument(
        "--runs", type=bounded_int(1, 1_000), default=1, help="runs per task and harness (default 1)"
    )
    p.add_argument("--model", help="model name (default: $RSR_MODEL)")
    p.add_argument(
        "--max-turns", type=bounded_int(1, 10_000), default=30, help="model calls per run (default 30)"
    )
    p.add_argument("--out", default="data/runs", help="where to write harbor job dirs (default data/runs)")
    p.add_argument(
        "--force", action="store_true", help="replace a job dir of the same name (an earlier output)"
    )
    add_backend_args(p, "runs at once")
    add_db(p)
    add_json(p)
    p.set_defaults(handler=discover)

    llm = sub.add_parser(
        "llm",
        help="model endpoints: the scripted OpenAI-compatible server",
        description="Model endpoint tools.",
    )
    ls = llm.add_subparsers(dest="llm_command", metavar="WHAT", required=True)
    s = ls.add_parser(
        "serve-scripted",
        help="serve scripted responses over the OpenAI chat-completions protocol",
        description="Start an OpenAI-compatible HTTP server on 127.0.0.1 that replays a script file "
        "(POST /v1/chat/completions, GET /v1/models). Point RSR_LLM_BASE_URL at the printed URL.",
    )
    s.add_argument("--script", required=True, help="script file (JSON)")
    s.add_argument("--port", type=bounded_int(0, 65_535), default=0, help="port (default: a free one)")
    s.add_argument(
        "--latency-ms", type=finite_float(0, 3_600_000), default=None, help="fixed latency per call"
    )
    s.set_defaults(handler=serve_scripted)


def _show(args: argparse.Namespace, s: Any) -> None:
    if args.json:
        print(json.dumps(s.model_dump()), flush=True)
    elif s.trajectory_id is None:
        print(f"run {s.run}: {s.task_id} {s.harness} failed to run: {s.error}", flush=True)
    else:
        reward = "none" if s.reward is None else f"{s.reward:g}"
        flags = " verifier_tampered" if s.verifier_tampered else ""
        why = f" ({s.error})" if s.error else ""
        print(
            f"run {s.run}: {s.task_id} {s.harness} reward={reward}{flags} turns={s.turns} "
            f"{s.stop_reason}{why} ({s.seconds:.1f}s) {s.trajectory_id}",
            flush=True,
        )


def discover(args: argparse.Namespace, settings: Settings) -> int:
    """Run the job and print one line (or JSON object) per run as it ends; write the harbor job dirs."""
    from rsr_core.commands.common import open_store
    from rsr_core.harness.discover import TaskNotFound, resolve_task, summary_of, write_job_dirs
    from rsr_core.jobs.discovery import DiscoverParams
    from rsr_core.outputs import OutputError, output_path

    try:  # before any run: a job's results are not lost to an output that cannot be written
        out_dir = output_path(args.out, directory=True) if args.out else None
    except OutputError as exc:
        print(f"rsr: {printable(str(exc))}", file=sys.stderr)
        return 1
    store = open_store(args, settings)
    try:
        tasks = [resolve_task(store, ref) for ref in args.task]
    except TaskNotFound as exc:
        print(f"rsr: {printable(str(exc))}", file=sys.stderr)
        return 1
    params = DiscoverParams(
        tasks=list(dict.fromkeys(t.task_id for t in tasks)),
        harnesses=list(dict.fromkeys(args.harness)),
        runs=args.runs,
        model=args.model or settings.model,
        max_turns=args.max_turns,
        statem_state_dir=str(settings.cache_dir / "statem"),
    )
    summaries = []

    def on_unit(unit: dict, result: dict | None, error: str | None) -> None:
        summary = summary_of(unit, result, error, params.model)
        summaries.append(summary)
        _show(args, summary)

    services, runner = make_runner(args, settings, on_unit=on_unit)
    job_id = runner.create_discovery(params)
    sys.stderr.write(f"job {job_id} started (units on {runner.backend.where()})\n")
    status = runner.run(job_id)
    if out_dir is not None:
        for path in write_job_dirs(services.store, job_id, out_dir, force=args.force):
            sys.stderr.write(f"wrote {path}\n")
    failed = sorted(s.run for s in summaries if s.trajectory_id is None)
    if failed or status != "done":
        print(
            f"rsr: job {job_id} {status}; {len(failed)} of {len(summaries)} run(s) failed to run",
            file=sys.stderr,
        )
        return 1
    return 0


def serve_scripted(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until interrupted."""
    from rsr_core.llm.scripted_server import ScriptedServer

    server = ScriptedServer(Path(args.script), port=args.port, latency_ms=args.latency_ms)
    print(f"scripted model server on {server.url} (models: {', '.join(server.models()) or '*'})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
