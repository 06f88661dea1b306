import numpy as np
import pytest

from rsr_core.analysis.bootstrap import bootstrap_ci


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
