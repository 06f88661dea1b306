"""Percentile bootstrap confidence intervals with a fixed seed, so reports are reproducible."""

from __future__ import annotations

import numpy as np

REPLICATES = 1000
LEVEL = 0.95
# Resampled values drawn per chunk: bounds memory at paper scale (~10^5 pairs x 1000 replicates).
_CHUNK_VALUES = 4_000_000


def bootstrap_ci(
    values: np.ndarray, level: float = LEVEL, replicates: int = REPLICATES, seed: int = 0
) -> tuple[float, float]:
    """95% (by default) percentile bootstrap interval of the mean of `values`.

    Resamples `values` with replacement `replicates` times from `numpy.random.default_rng(seed)` and returns
    the (1-level)/2 and (1+level)/2 percentiles of the resampled means. One value gives [v, v]; the caller
    decides what no values means (the similarity report uses null).
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        raise ValueError("bootstrap of an empty sample")
    if n == 1 or np.all(values == values[0]):
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    means = np.empty(replicates)
    rows = max(1, _CHUNK_VALUES // n)
    for start in range(0, replicates, rows):
        stop = min(replicates, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = values[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return float(lo), float(hi)
