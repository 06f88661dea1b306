"""`rsr list` and `rsr show`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_db, add_json, bounded_int, emit, open_store
from rsr_core.errors import terminal_safe
from rsr_core.vocabulary import KINDS

if TYPE_CHECKING:
    from rsr_core.models import Step, Trajectory
    from rsr_core.settings import Settings


MAX_ROWS = 10**9  # --limit and --offset: beyond any corpus, within DuckDB's BIGINT


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    p = sub.add_parser("list", help="list trajectories (filtered)", description="List stored trajectories.")
    p.add_argument("--task", help="task id")
    p.add_argument("--harness", help="harness name")
    p.add_argument("--kind", choices=KINDS, help="trajectory kind")
    p.add_argument("--search", help="words that must occur in commands, messages or observations")
    p.add_argument(
        "--tampered",
        action="store_true",
        help="only runs that changed the verifier's own ground (never counted as solved)",
    )
    p.add_argument("--limit", type=bounded_int(0, MAX_ROWS), default=100, help="rows to print (default 100)")
    p.add_argument("--offset", type=bounded_int(0, MAX_ROWS), default=0, help="rows to skip")
    add_db(p)
    add_json(p)
    p.set_defaults(handler=list_cmd)
    s = sub.add_parser(
        "show",
        help="print one trajectory step by step",
        description="Print one stored trajectory with its steps.",
    )
    s.add_argument("trajectory_id", metavar="TRAJECTORY_ID", help="id as printed by `rsr list`")
    add_db(s)
    add_json(s)
    s.set_defaults(handler=show)


def list_cmd(args: argparse.Namespace, settings: Settings) -> int:
    """Print a page of trajectories."""
    from rsr_core.store import TrajectoryFilter

    store = open_store(args, settings, read_only=True)
    f = TrajectoryFilter(
        task_id=args.task,
        harness=args.harness,
        kind=args.kind,
        search=args.search,
        tampered=True if args.tampered else None,
    )
    rows = store.list_trajectories(f, limit=args.limit, offset=args.offset)
    lines = [
        f"{r['trajectory_id']:<40} {r['task_id'] or '-':<28} {r['kind']:<9} {r['harness']:<12} "
        f"reward={_reward(r['reward'])} steps={r['n_steps']}"
        + ("  [verifier tampered]" if r["verifier_tampered"] else "")
        for r in rows
    ]
    emit(args, {"total": store.count_trajectories(f), "rows": rows}, "\n".join(lines) or "no trajectories")
    return 0


def _reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


CHANGED_SHOWN = 40


def _provenance(traj: Trajectory) -> list[str]:
    reward = "not verified" if traj.reward is None else f"{traj.reward:g}"
    lines = [
        traj.trajectory_id,
        f"task {traj.task_id or '-'}  kind {traj.kind}  harness {traj.harness}  model {traj.model or '-'}"
        + ("  [scripted model]" if traj.scripted else ""),
        f"reward {reward}"
        + ("  VERIFIER TAMPERED: never counted as solved" if traj.verifier_tampered else ""),
    ]
    inconsistent = traj.extra.get("verifier_inconsistent")
    if inconsistent:
        lines.append(f"VERIFIER INCONSISTENT: the tests wrote reward 1 but {inconsistent}; scored 0")
    if traj.kind == "rewrite" or traj.source_trajectory_id or traj.runbook_id:
        lines.append(f"source {traj.source_trajectory_id or '-'}  runbook {traj.runbook_id or '-'}")
    if traj.job_id:
        lines.append(f"job {traj.job_id}")
    if traj.started_at or traj.finished_at:
        lines.append(f"started {traj.started_at or '-'}  finished {traj.finished_at or '-'}")
    if traj.exception:
        lines.append(f"ended with: {traj.exception}")
    return lines


def _changed(traj: Trajectory) -> list[str]:
    if not traj.changed_paths:
        return []
    total = traj.extra.get("changed_paths_total", len(traj.changed_paths))
    ground = [c for c in traj.changed_paths if c.verifier_ground]
    shown = (ground + [c for c in traj.changed_paths if not c.verifier_ground])[:CHANGED_SHOWN]
    lines = [f"\n--- files this run changed ({total}; * = the verifier's own ground)"]
    lines += [f"{'*' if c.verifier_ground else ' '} {c.change:<8} {c.path}" for c in shown]
    if total > len(shown):
        lines.append(f"  … {total - len(shown)} more (rsr show --json lists what is stored)")
    return lines


def _step_lines(step: Step) -> list[str]:
    tags = [t for t, on in (("harness control", step.harness_control), ("private guidance", step.private_guidance),
                            ("copied context", step.copied_context)) if on]  # fmt: skip
    when = f" {step.timestamp}" if step.timestamp else ""
    lines = [f"\n--- step {step.index} [{step.source}]{when}" + (f" ({', '.join(tags)})" if tags else "")]
    if step.reasoning:  # the model's thinking, apart from its answer (shortened: --json has it whole)
        short = step.reasoning if len(step.reasoning) <= 300 else step.reasoning[:300] + " …"
        lines.append(f"thinking ({len(step.reasoning):,} characters): {short}")
    if step.extra.get("cut_at_tokens"):
        lines.append(f"(answer cut at {step.extra['cut_at_tokens']} tokens)")
    if step.analysis is not None:
        lines.append(f"analysis: {step.analysis}")
        if step.plan:
            lines.append(f"plan: {step.plan}")
    elif step.message:
        lines.append(step.message)
    lines += [f"$ {cmd.keystrokes.rstrip()}  ({cmd.duration:g}s)" for cmd in step.commands]
    if step.task_complete:
        lines.append("(claims the task is complete)")
    if step.observation:
        lines.append(step.observation)
    return lines


def show(args: argparse.Namespace, settings: Settings) -> int:
    """Print a trajectory: provenance first, the files it changed, then its steps."""
    traj = open_store(args, settings, read_only=True).get_trajectory(args.trajectory_id)
    if traj is None:
        print(f"rsr: no trajectory {args.trajectory_id!r}", file=sys.stderr)
        return 1
    if args.json:
        emit(args, traj.model_dump(mode="json"))
        return 0
    lines = _provenance(traj) + _changed(traj)
    for step in traj.steps:
        lines += _step_lines(step)
    print(terminal_safe("\n".join(lines)))
    return 0
