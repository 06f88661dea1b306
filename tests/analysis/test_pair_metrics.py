"""The five pair metrics on hand-computed pairs (matrices over small groups)."""

from __future__ import annotations

import numpy as np
import pytest
from rapidfuzz import fuzz

from rsr_core.analysis import pair_metrics

# A = [ls, cat a.txt, ls, python3 run.py], B = [ls, cat a.txt, python3 run.py --fast], C = [pwd, ls], D = []
VOCAB = ["ls", "cat a.txt", "python3 run.py", "python3 run.py --fast", "pwd"]
FIRST_WORD = np.array([0, 1, 2, 2, 3])
A, B, C, D = (np.array(s, dtype=np.int64) for s in ([0, 1, 0, 2], [0, 1, 3], [4, 0], []))
SEQS = [A, B, C, D]


def test_exact_set_jaccard():
    m = pair_metrics.exact(SEQS)
    assert m[0, 1] == pytest.approx(2 / 4)  # {ls, cat} / {ls, cat, py, py --fast}
    assert m[0, 2] == pytest.approx(1 / 4)
    assert m[1, 2] == pytest.approx(1 / 4)
    assert m[0, 3] == 0.0 and m[3, 3] == 0.0  # both empty -> 0
    assert np.allclose(m, m.T)


def test_multiset_min_over_max_counts():
    m = pair_metrics.multiset(SEQS)
    assert m[0, 1] == pytest.approx(2 / 5)  # min: ls 1 + cat 1; max: ls 2 + cat + py + py --fast
    assert m[0, 2] == pytest.approx(1 / 5)
    assert m[1, 2] == pytest.approx(1 / 4)
    assert m[2, 3] == 0.0 and m[3, 3] == 0.0
    many = [np.array([0] * 7 + [1] * 2), np.array([0] * 3 + [1] * 5 + [2])]
    assert pair_metrics.multiset(many)[0, 1] == pytest.approx((3 + 2) / (7 + 5 + 1))


def test_order_is_normalised_indel_of_sequences():
    m = pair_metrics.order(SEQS)
    assert m[0, 1] == pytest.approx(1 - 3 / 7)  # LCS 2 of lengths 4 and 3
    assert m[0, 2] == pytest.approx(1 - 4 / 6)
    assert m[1, 2] == pytest.approx(1 - 3 / 5)
    assert m[0, 3] == 0.0
    # order matters, unlike the set metrics
    assert pair_metrics.order([np.array([0, 1]), np.array([1, 0])])[0, 1] == pytest.approx(0.5)


def _fuzzy_reference(a: list[str], b: list[str]) -> float:
    if not a or not b:
        return 0.0
    ab = sum(max(fuzz.ratio(x, y) for y in b) for x in a) / len(a) / 100
    ba = sum(max(fuzz.ratio(y, x) for x in a) for y in b) / len(b) / 100
    return (ab + ba) / 2


def test_fuzzy_best_ratio_both_sides():
    m = pair_metrics.fuzzy(SEQS, VOCAB)
    # ratio("python3 run.py", "python3 run.py --fast") = 2*14/35 = 80; every other command has an exact twin
    assert m[0, 1] == pytest.approx(((1 + 1 + 1 + 0.8) / 4 + (1 + 1 + 0.8) / 3) / 2, abs=1e-12)
    texts = [[VOCAB[c] for c in s] for s in SEQS]
    for i in range(4):
        for j in range(4):
            assert m[i, j] == pytest.approx(_fuzzy_reference(texts[i], texts[j]), abs=1e-12)
    assert m[0, 3] == 0.0 and m[3, 3] == 0.0


def test_fuzzy_large_groups_take_the_bounded_memory_path(monkeypatch):
    square = pair_metrics.fuzzy(SEQS, VOCAB)
    monkeypatch.setattr(pair_metrics, "FUZZY_SQUARE_LIMIT", 1)
    assert np.allclose(pair_metrics.fuzzy(SEQS, VOCAB), square, atol=1e-12)


def test_transition_jaccard_of_first_word_pairs():
    m = pair_metrics.transition(SEQS, FIRST_WORD)
    # A: {(ls,cat), (cat,ls), (ls,python3)}  B: {(ls,cat), (cat,python3)}  C: {(pwd,ls)}
    assert m[0, 1] == pytest.approx(1 / 4)
    assert m[0, 2] == 0.0 and m[1, 2] == 0.0
    single = [np.array([0]), np.array([1])]  # one command each: no transitions on either side
    assert pair_metrics.transition(single, FIRST_WORD)[0, 1] == 0.0


@pytest.mark.parametrize("kernel", ["order", "fuzzy"])
def test_the_threads_a_kernel_uses_change_no_score(kernel: str):
    """One thread (a batch scored in two processes) or a thread a core: the same matrix, bit for bit."""
    rng = np.random.default_rng(7)
    seqs = [rng.integers(0, len(VOCAB), size=rng.integers(0, 12)) for _ in range(30)]
    if kernel == "order":
        one, every = pair_metrics.order(seqs, workers=1), pair_metrics.order(seqs, workers=-1)
    else:
        one, every = pair_metrics.fuzzy(seqs, VOCAB, workers=1), pair_metrics.fuzzy(seqs, VOCAB, workers=-1)
    assert np.array_equal(one, every)
