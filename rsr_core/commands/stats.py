"""`rsr stats summary|coverage`."""

from __future__ import annotations

import argparse

from rsr_core.commands.common import add_db, add_json, emit, open_store
from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser(
        "stats", help="corpus figures: summary, coverage, funnel", description="Corpus figures."
    )
    stats_sub = p.add_subparsers(dest="stats_command", metavar="WHAT", required=True)
    s = stats_sub.add_parser(
        "summary",
        help="tasks, trajectories by kind, steps, commands",
        description="Counts of tasks, trajectories by kind, steps and commands.",
    )
    add_db(s)
    add_json(s)
    s.set_defaults(handler=summary)
    c = stats_sub.add_parser(
        "coverage",
        help="tasks solved per harness, union, gain over the best single",
        description="A task is solved by a harness iff one of its discovery runs there has reward >= 1.0.",
    )
    add_db(c)
    add_json(c)
    c.set_defaults(handler=coverage)
    f = stats_sub.add_parser(
        "funnel",
        help="the rewrite funnel: sources, runbooks, verdicts, executions, kept",
        description="Sources -> runbooks (every critic round) -> critic-rejected / approved / "
        "pending review -> executions -> verified -> answer transfer -> kept, and the expansion "
        "ratio (kept rewrites / distinct sources that produced them).",
    )
    add_db(f)
    add_json(f)
    f.set_defaults(handler=funnel)


def summary(args: argparse.Namespace, settings: Settings) -> int:
    """Print the summary."""
    data = open_store(args, settings, read_only=True).summary()
    t = data["trajectories"]
    emit(
        args,
        data,
        f"tasks {data['tasks']}  trajectories: discovery {t['discovery']}, rewrite {t['rewrite']}, "
        f"eval {t['eval']}  steps {data['steps']}  commands {data['commands']}",
    )
    return 0


def funnel(args: argparse.Namespace, settings: Settings) -> int:
    """Print the funnel."""
    from rsr_core.store import pipeline

    with open_store(args, settings, read_only=True).reading() as cur:
        data = pipeline.funnel(cur)
    text = "\n".join(f"{k:<16}{v:.3f}" if isinstance(v, float) else f"{k:<16}{v}" for k, v in data.items())
    emit(args, data, text)
    return 0


def coverage(args: argparse.Namespace, settings: Settings) -> int:
    """Print coverage per harness."""
    data = open_store(args, settings, read_only=True).coverage()
    lines = [f"{'harness':<16}{'attempted':>10}{'solved':>8}{'unique':>8}"]
    for name, h in data["harnesses"].items():
        lines.append(f"{name:<16}{h['attempted_tasks']:>10}{h['solved_tasks']:>8}{h['unique_solved']:>8}")
    gain = data["gain_over_best"]
    lines.append(
        f"union solved {data['union_solved']}; gain over best single "
        f"{'n/a' if gain is None else f'{gain:+.1%}'}"
    )
    emit(args, data, "\n".join(lines))
    return 0
