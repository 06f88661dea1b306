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
