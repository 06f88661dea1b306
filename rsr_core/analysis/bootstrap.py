"""Percentile bootstrap confidence intervals with a fixed seed, so reports are reproducible."""

from __future__ import annotations

from collections.abc import Sequence

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
    return bootstrap_cis([values], level, replicates, seed)[0]


def bootstrap_cis(
    samples: Sequence[np.ndarray], level: float = LEVEL, replicates: int = REPLICATES, seed: int = 0
) -> list[tuple[float, float]]:
    """`bootstrap_ci` of each of several samples of one length (the metrics of the same pairs), each the
    interval it gives that sample alone: one generator seeded alike draws the same resamples for all, so they
    are drawn once."""
    arrays = [np.asarray(v, dtype=np.float64) for v in samples]
    n = len(arrays[0]) if arrays else 0
    if n == 0:
        raise ValueError("bootstrap of an empty sample")
    if any(len(a) != n for a in arrays):
        raise ValueError("one bootstrap of samples of different lengths")
    out: list[tuple[float, float]] = [(float(a[0]), float(a[0])) for a in arrays]
    varying = [i for i, a in enumerate(arrays) if n > 1 and not np.all(a == a[0])]
    if not varying:
        return out
    rng = np.random.default_rng(seed)
    means = np.empty((len(varying), replicates))
    rows = max(1, _CHUNK_VALUES // n)
    for start in range(0, replicates, rows):
        stop = min(replicates, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        for row, i in enumerate(varying):
            means[row, start:stop] = arrays[i][idx].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    for row, i in enumerate(varying):
        lo, hi = np.percentile(means[row], [tail, 100.0 - tail])
        out[i] = (float(lo), float(hi))
    return out
