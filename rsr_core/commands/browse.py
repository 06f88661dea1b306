"""`rsr list` and `rsr show`."""

from __future__ import annotations

import argparse
import sys

from rsr_core.commands.common import add_db, add_json, emit, open_store
from rsr_core.models import KINDS
from rsr_core.settings import Settings
from rsr_core.store import TrajectoryFilter


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    p = sub.add_parser("list", help="list trajectories (filtered)", description="List stored trajectories.")
    p.add_argument("--task", help="task id")
    p.add_argument("--harness", help="harness name")
    p.add_argument("--kind", choices=KINDS, help="trajectory kind")
    p.add_argument("--search", help="words that must occur in commands, messages or observations")
    p.add_argument("--limit", type=int, default=100, help="rows to print (default 100)")
    p.add_argument("--offset", type=int, default=0, help="rows to skip")
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
    store = open_store(args, settings, read_only=True)
    f = TrajectoryFilter(task_id=args.task, harness=args.harness, kind=args.kind, search=args.search)
    rows = store.list_trajectories(f, limit=args.limit, offset=args.offset)
    lines = [
        f"{r['trajectory_id']:<40} {r['task_id'] or '-':<28} {r['kind']:<9} {r['harness']:<12} "
        f"reward={_reward(r['reward'])} steps={r['n_steps']}"
        for r in rows
    ]
    emit(args, {"total": store.count_trajectories(f), "rows": rows}, "\n".join(lines) or "no trajectories")
    return 0


def _reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def show(args: argparse.Namespace, settings: Settings) -> int:
    """Print a trajectory."""
    traj = open_store(args, settings, read_only=True).get_trajectory(args.trajectory_id)
    if traj is None:
        print(f"rsr: no trajectory {args.trajectory_id!r}", file=sys.stderr)
        return 1
    if args.json:
        emit(args, traj.model_dump(mode="json"))
        return 0
    print(
        f"{traj.trajectory_id}  task={traj.task_id} kind={traj.kind} harness={traj.harness} "
        f"model={traj.model} reward={traj.reward}" + ("  [scripted model]" if traj.scripted else "")
    )
    for step in traj.steps:
        tag = " (harness control)" if step.harness_control else ""
        print(f"\n--- step {step.index} [{step.source}]{tag}")
        if step.analysis is not None:
            print(f"analysis: {step.analysis}\nplan: {step.plan}")
        elif step.message:
            print(step.message)
        for cmd in step.commands:
            print(f"$ {cmd.keystrokes.rstrip()}  ({cmd.duration:g}s)")
        if step.observation:
            print(step.observation)
    return 0
