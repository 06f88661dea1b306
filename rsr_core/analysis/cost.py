"""Cost of model calls: what a run recorded, else its tokens at the configured prices, else unknown."""

from __future__ import annotations

import math

Prices = dict[str, tuple[float, float]]


def _known(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def cost_usd(
    model: str | None,
    prompt_tokens: float | None,
    completion_tokens: float | None,
    recorded: float | None,
    prices: Prices,
) -> float | None:
    """The recorded cost when there is one; else tokens x the model's price (USD per million tokens);
    None (unknown) when the model has no price or the tokens are unknown."""
    if _known(recorded):
        return float(recorded)  # type: ignore[arg-type]
    if model is None or model not in prices or not (_known(prompt_tokens) or _known(completion_tokens)):
        return None
    inp, out = prices[model]
    p = float(prompt_tokens) if _known(prompt_tokens) else 0.0  # type: ignore[arg-type]
    c = float(completion_tokens) if _known(completion_tokens) else 0.0  # type: ignore[arg-type]
    return (p * inp + c * out) / 1_000_000


def job_costs(usage: list[dict], prices: Prices) -> dict[str, float | None]:
    """Each job's cost from its finished units' usage summed per model and by whether the unit recorded its
    cost (`store.jobs.usage_by_job`): the recorded costs plus the tokens at the model's price, as `cost_usd`
    gives unit by unit and summed; None for a job with a unit that used tokens but has neither a recorded cost
    nor a price. Jobs without a finished unit are not in it (their cost is 0)."""
    out: dict[str, float | None] = {}
    for g in usage:
        job = g["job_id"]
        if job in out and out[job] is None:
            continue
        if g["recorded"]:
            add = float(g["cost_usd"])
        elif not g["with_tokens"]:
            add = 0.0
        else:
            priced = cost_usd(g["model"], g["prompt_tokens"], g["completion_tokens"], None, prices)
            if priced is None:
                out[job] = None
                continue
            add = priced
        out[job] = out.get(job, 0.0) + add  # type: ignore[operator]
    return {job: None if cost is None else round(cost, 6) for job, cost in out.items()}
