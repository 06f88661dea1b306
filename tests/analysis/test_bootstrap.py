import numpy as np
import pytest

from rsr_core.analysis.bootstrap import bootstrap_ci, bootstrap_cis


def test_deterministic_and_brackets_the_mean():
    values = np.random.default_rng(7).random(500)
    lo, hi = bootstrap_ci(values)
    assert (lo, hi) == bootstrap_ci(values)
    assert lo < values.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * values.std() / np.sqrt(500), rel=0.25)


def test_degenerate_samples():
    assert bootstrap_ci(np.array([0.3])) == (0.3, 0.3)
    assert bootstrap_ci(np.array([0.1, 0.1, 0.1])) == (0.1, 0.1)
    with pytest.raises(ValueError):
        bootstrap_ci(np.array([]))


def _alone(values: np.ndarray, replicates: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The definition, written out: `replicates` resamples of the indices, in one draw, from a generator seeded
    with `seed`; the 2.5th and 97.5th percentiles of their means."""
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    idx = np.random.default_rng(seed).integers(0, len(values), size=(replicates, len(values)))
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    return float(lo), float(hi)


def test_several_samples_at_once_give_each_its_own_interval():
    rng = np.random.default_rng(3)
    samples = [rng.random(700), np.full(700, 0.25), rng.random(700) ** 3, (rng.random(700) > 0.5) * 1.0]
    together = bootstrap_cis(samples, seed=5)
    assert together == [_alone(s, seed=5) for s in samples]
    assert together == [bootstrap_ci(s, seed=5) for s in samples]
    many = rng.random(9000)  # more values than one chunk of resamples holds at once
    assert bootstrap_cis([many, many[::-1]], seed=2) == [_alone(many, seed=2), _alone(many[::-1], seed=2)]
    with pytest.raises(ValueError, match="different lengths"):
        bootstrap_cis([np.ones(3), np.ones(4)])
