"""`rsr similarity` and `rsr passk`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_db, add_json, emit, open_store
from rsr_core.vocabulary import KINDS, SIMILARITY_METRIC_INFO, SIMILARITY_METRICS

# From the vocabulary, not rsr_core.analysis, so that building the parser does not import numpy, pandas and
# rapidfuzz.
METRICS = SIMILARITY_METRICS
DEFAULT_METRIC = "exact"


def _metric_help() -> str:
    """Every metric with what it is, e.g. "exact (set Jaccard, default), multiset, order (Indel), …"."""
    parts = []
    for m in SIMILARITY_METRIC_INFO:
        notes = [n for n in (m.gloss, "default" if m.name == DEFAULT_METRIC else "") if n]
        parts.append(f"{m.name} ({', '.join(notes)})" if notes else m.name)
    return ", ".join(parts)


if TYPE_CHECKING:
    from rsr_core.settings import Settings


def _ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 1,3; got {text!r}"
        ) from None
    if not ks or any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"every k must be a positive integer; got {text!r}")
    return sorted(set(ks))


def register(sub: argparse._SubParsersAction) -> None:
    """Add the commands."""
    s = sub.add_parser(
        "similarity",
        help="same- vs cross-runbook command similarity of passed rewrites",
        description="Score every unordered pair of passed rewrite trajectories (reward >= 1.0) of one task "
        "with a command-similarity metric; a pair is same-runbook when both come from one runbook. Prints "
        "pair counts, means over pairs and 95%% bootstrap intervals, overall and per task.",
    )
    s.add_argument(
        "--metric",
        choices=METRICS,
        default=DEFAULT_METRIC,
        help=_metric_help(),
    )
    s.add_argument("--task", help="only this task id")
    add_db(s)
    add_json(s)
    s.set_defaults(handler=similarity)
    p = sub.add_parser(
        "passk",
        help="unbiased pass@k per model and harness",
        description="pass@k = 1 - C(n-c,k)/C(n,k) per task (n runs, c with reward >= 1.0; unverified runs "
        "fail), averaged over tasks with n >= k; tasks with fewer runs are counted in skipped_tasks.",
    )
    p.add_argument("--k", type=_ks, default=[1], help="comma-separated k values, e.g. 1,3 (default 1)")
    p.add_argument("--kind", choices=KINDS, help="only runs of this kind (default: all kinds)")
    p.add_argument(
        "--by",
        choices=("model", "harness"),
        help="group by model only or harness only (default: by model and harness)",
    )
    add_db(p)
    add_json(p)
    p.set_defaults(handler=passk)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def similarity(args: argparse.Namespace, settings: Settings) -> int:
    """Print same- vs cross-runbook similarity."""
    from rsr_core.analysis.similarity import report_of

    with open_store(args, settings, read_only=True).reading() as cur:
        payload = report_of(cur, args.metric, args.task)
    lines = [f"metric {args.metric}"]
    for side in ("same_runbook", "cross_runbook"):
        d = payload[side]
        ci = d["ci"]
        lines.append(
            f"{side:<14} pairs {d['pairs']:>7}  mean {_fmt(d['mean'])}"
            + (f"  95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        )
    lines.append(f"tasks with pairs: {len(payload['by_task'])}")
    emit(args, payload, "\n".join(lines))
    return 0


def passk(args: argparse.Namespace, settings: Settings) -> int:
    """Print pass@k per group."""
    from rsr_core.analysis.passk import pass_at_k_groups
    from rsr_core.store import analysis_queries

    with open_store(args, settings, read_only=True).reading() as cur:
        runs = analysis_queries.runs_for_pass_at_k(cur, args.kind)
    payload = {"k": args.k, "groups": pass_at_k_groups(runs, args.k, args.by)}
    lines = []
    for g in payload["groups"]:
        figures = "  ".join(f"pass@{k} {_fmt(g['pass_at'][str(k)])}" for k in args.k)
        skipped = "".join(f"  (k={k}: {n} tasks skipped)" for k, n in g["skipped_tasks"].items())
        lines.append(
            f"{g['model'] or '*':<24} {g['harness'] or '*':<12} tasks {g['tasks']:>5}  {figures}{skipped}"
        )
    emit(args, payload, "\n".join(lines) or "no runs")
    return 0
