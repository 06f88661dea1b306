"""`rsr stats cost`: tokens and cost of the pipeline's model calls by job, model, role or task, and the cost per
kept rewrite (pure functions of the store's rows; prices from the settings)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

from rsr_core.analysis.cost import Prices, cost_usd

GroupBy = Literal["job", "model", "role", "task"]
ROLES = {"plan": "planner", "critic": "critic", "execute": "executor", "filter": "transfer check"}


def _key(row: dict[str, Any], by: GroupBy) -> str:
    if by == "role":
        return ROLES.get(row["role"], row["role"])
    value = row.get({"job": "job_id", "model": "model", "task": "task_id"}[by])
    return value if value is not None else "(unknown)"


def cost_report(
    units: list[dict[str, Any]], kept: list[dict[str, Any]], prices: Prices, by: GroupBy = "job"
) -> dict[str, Any]:
    """Groups with calls' tokens and cost (known part, and how many units had no price), kept rewrites and the
    cost per kept rewrite (only when every unit of the group has a known cost)."""
    groups: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"units": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "unpriced_units": 0}
    )
    for u in units:
        g = groups[_key(u, by)]
        g["units"] += 1
        g["prompt_tokens"] += u["prompt_tokens"] or 0
        g["completion_tokens"] += u["completion_tokens"] or 0
        cost = cost_usd(u["model"], u["prompt_tokens"], u["completion_tokens"], u["cost_usd"], prices)
        if cost is None:
            g["unpriced_units"] += 1
        else:
            g["cost_usd"] += cost
    kept_by: dict[str, int] = defaultdict(int)
    for k in kept:
        key = "executor" if by == "role" else _key({**k, "role": "execute"}, by)
        kept_by[key] += 1
    total_kept = len(kept)
    out = []
    for key in sorted(groups):
        g = groups[key]
        n_kept = total_kept if by == "role" else kept_by.get(key, 0)
        known = g["unpriced_units"] == 0
        out.append(
            {
                "key": key,
                **g,
                "cost_usd": round(g["cost_usd"], 6) if known else None,
                "priced_cost_usd": round(g["cost_usd"], 6),
                "kept": n_kept,
                "cost_per_kept_usd": round(g["cost_usd"] / n_kept, 6) if known and n_kept else None,
            }
        )
    total_cost = sum(g["priced_cost_usd"] for g in out)
    all_known = all(g["unpriced_units"] == 0 for g in out)
    return {
        "by": by,
        "groups": out,
        "total": {
            "units": sum(g["units"] for g in out),
            "prompt_tokens": sum(g["prompt_tokens"] for g in out),
            "completion_tokens": sum(g["completion_tokens"] for g in out),
            "cost_usd": round(total_cost, 6) if all_known else None,
            "kept": total_kept,
            "cost_per_kept_usd": round(total_cost / total_kept, 6) if all_known and total_kept else None,
        },
    }
