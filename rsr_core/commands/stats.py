"""`rsr stats summary|coverage|funnel|cost`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_db, add_json, emit, open_store

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser(
        "stats", help="corpus figures: summary, coverage, funnel, cost", description="Corpus figures."
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
        description="A task is solved by a harness iff one of its discovery runs there has reward >= 1.0 and did "
        "not tamper with the verifier.",
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
    c = stats_sub.add_parser(
        "cost",
        help="tokens and cost of the planner, critic and executor calls; cost per kept rewrite",
        description="Tokens and cost of the rewrite pipeline's model calls (every finished unit), grouped by job, "
        "model, role or task, and the cost per kept rewrite. Cost is what a call recorded, else its tokens at "
        "the prices in RSR_PRICES (model=input/output USD per million tokens); unknown without a price.",
    )
    c.add_argument(
        "--by", choices=["job", "model", "role", "task"], default="job", help="grouping (default job)"
    )
    add_db(c)
    add_json(c)
    c.set_defaults(handler=cost)


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


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def cost(args: argparse.Namespace, settings: Settings) -> int:
    """Print the cost report."""
    from rsr_core.analysis.cost_report import cost_report
    from rsr_core.store import jobs

    with open_store(args, settings, read_only=True).reading() as cur:
        data = cost_report(jobs.unit_usage(cur), jobs.kept_rewrites(cur), settings.prices, args.by)
    lines = [
        f"{args.by:<36}{'units':>7}{'prompt tok':>12}{'compl. tok':>12}{'cost':>14}{'kept':>6}{'per kept':>14}"
    ]
    for g in data["groups"]:
        lines.append(
            f"{g['key'][:35]:<36}{g['units']:>7}{g['prompt_tokens']:>12,}{g['completion_tokens']:>12,}"
            f"{_money(g['cost_usd']):>14}{g['kept']:>6}{_money(g['cost_per_kept_usd']):>14}"
        )
    t = data["total"]
    lines.append(
        f"{'total':<36}{t['units']:>7}{t['prompt_tokens']:>12,}{t['completion_tokens']:>12,}{_money(t['cost_usd']):>14}"
        f"{t['kept']:>6}{_money(t['cost_per_kept_usd']):>14}"
    )
    if any(g["unpriced_units"] for g in data["groups"]):
        lines.append(
            "cost is unknown where a model has no price: set RSR_PRICES='model=input/output,…' (USD per 1M tokens)"
        )
    emit(args, data, "\n".join(lines))
    return 0
