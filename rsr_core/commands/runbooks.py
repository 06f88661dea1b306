"""`rsr runbooks list|show`: review from a terminal (the Runbooks page's queue and detail)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rsr_core.commands.common import add_db, add_json, emit, open_store
from rsr_core.vocabulary import RUNBOOK_STATUSES

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser(
        "runbooks",
        help="runbooks: the review queue and one runbook in full",
        description="Runbook rounds with their status (critic_pending, critic_rejected, pending_review, "
        "approved, human_rejected), and one runbook with its critic rounds, reviews and executions.",
    )
    s = p.add_subparsers(dest="runbooks_command", metavar="WHAT", required=True)
    ls = s.add_parser("list", help="runbook rounds with status, flags, reviews and executions",
                      description="List runbook rounds by task, source, variant and round.")  # fmt: skip
    ls.add_argument("--status", choices=RUNBOOK_STATUSES, help="only rounds with this status")
    ls.add_argument("--task", metavar="ID", help="only this task's runbooks")
    add_db(ls)
    add_json(ls)
    ls.set_defaults(handler=list_runbooks)
    sh = s.add_parser(
        "show",
        help="one runbook: five parts, every critic round with flags and evidence, reviews, executions",
        description="Print one runbook round in full.",
    )
    sh.add_argument("runbook_id", metavar="RUNBOOK_ID", help="id as printed by `rsr runbooks list`")
    add_db(sh)
    add_json(sh)
    sh.set_defaults(handler=show_runbook)


def list_runbooks(args: argparse.Namespace, settings: Settings) -> int:
    """Print the queue."""
    from rsr_core.store.pipeline import runbook_rows

    with open_store(args, settings, read_only=True).reading() as cur:
        rows = runbook_rows(cur, args.status, args.task)
    lines = [
        f"{r['runbook_id']:<28} {r['status']:<16} {r['task_id']:<24} v{r['variant'] + 1} round {r['round']} "
        f"flags {r['flags']} reviews {r['reviews']}"
        + (f" (latest: {r['review']} by {r['last_reviewer']})" if r["review"] else "")
        + f" executions {r['executions']}"
        for r in rows
    ]
    emit(args, rows, "\n".join(lines) or "no runbooks")
    return 0


def _dossier_text(d: dict[str, Any]) -> str:
    rb = d["runbook"]
    out = [
        f"{rb['runbook_id']}  status={d['status']}  task={rb['task_id']}  variant={rb['variant'] + 1} "
        f"round={rb['round']}",
        f"source {rb['source_trajectory_id']}  job {rb['job_id']}  model {rb['model']}  "
        f"prompt {rb['prompt_version']}",
        "",
        d["text"].rstrip(),
        "",
    ]
    for r in d["rounds"]:
        out.append(
            f"critic round {r['round']} ({r['runbook_id']}): {r['critic_verdict']}, {len(r['flags'])} flag(s)"
        )
        for f in r["flags"]:
            span = "" if f["span_start"] is None else f" [{f['span_start']}:{f['span_end']}]"
            out.append(f"  - {f['stage']} {f['kind']} score {f['score']:.2f}{span}: {f['evidence'][:160]!r}")
            if f["matched_text"]:
                out.append(f"    matches {f['matched_path']}: {f['matched_text'][:160]!r}")
            if f["reason"]:
                out.append(f"    why: {f['reason']}")
    out.append("reviews (the latest decides):" if d["reviews"] else "reviews: none")
    out += [f"  {r['created_at']} {r['decision']} by {r['reviewer']}: {r['reason']}" for r in d["reviews"]]
    out.append("executions:" if d["executions"] else "executions: none")
    out += [
        f"  {e['trajectory_id']} reward={e['reward']} verified={e['verified']} "
        f"answer_transfer={e['answer_transfer']} human_rejected={e['human_rejected']} kept={e['kept']}"
        for e in d["executions"]
    ]
    return "\n".join(out)


def show_runbook(args: argparse.Namespace, settings: Settings) -> int:
    """Print one runbook."""
    from rsr_core.store.pipeline import runbook_dossier

    with open_store(args, settings, read_only=True).reading() as cur:
        dossier = runbook_dossier(cur, args.runbook_id)
    if dossier is None:
        print(f"rsr: no runbook {args.runbook_id!r}", file=sys.stderr)
        return 1
    emit(args, dossier, _dossier_text(dossier))
    return 0
