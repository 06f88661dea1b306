"""`rsr discover` and `rsr llm serve-scripted`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_db, add_json

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    p = sub.add_parser(
        "discover",
        help="run a discovery harness on a task and store the runs",
        description="Run terminus-2, rsrt or statem on a task in fresh Docker sandboxes against "
        "the configured model endpoint; every run is verified with the hidden tests and stored as a "
        "discovery trajectory (and written as a harbor job dir under --out).",
    )
    p.add_argument("--task", required=True, metavar="DIR_OR_ID", help="task directory or stored task id")
    p.add_argument(
        "--harness", required=True, choices=["terminus-2", "rsrt", "statem"], help="discovery harness"
    )
    p.add_argument("--runs", type=int, default=1, help="runs (default 1)")
    p.add_argument("--model", help="model name (default: $RSR_MODEL)")
    p.add_argument("--max-turns", type=int, default=30, help="model calls per run (default 30)")
    p.add_argument("--out", default="data/runs", help="where to write harbor job dirs (default data/runs)")
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
    s.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    s.add_argument("--latency-ms", type=float, default=None, help="fixed latency per call")
    s.set_defaults(handler=serve_scripted)


def discover(args: argparse.Namespace, settings: Settings) -> int:
    """Run and print one line (or JSON object) per run."""
    from rsr_core.harness.discover import TaskNotFound, resolve_task, run_discovery
    from rsr_core.services import Services

    if args.db:
        settings = settings.model_copy(update={"db_path": args.db})
    services = Services(settings)
    try:
        task = resolve_task(services.store, args.task)
    except TaskNotFound as exc:
        print(f"rsr: {exc}", file=sys.stderr)
        return 1
    model = args.model or settings.model

    def show(s):
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

    summaries = run_discovery(
        services.store,
        services.llm,
        services.sandboxes,
        task,
        args.harness,
        model,
        args.runs,
        args.max_turns,
        Path(args.out) if args.out else None,
        on_run=show,
    )
    failed = [s.run for s in summaries if s.trajectory_id is None]
    if failed:
        print(f"rsr: {len(failed)} of {len(summaries)} run(s) failed to run: {failed}", file=sys.stderr)
    return 1 if failed else 0


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
