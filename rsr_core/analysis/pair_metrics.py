"""The pair metrics of the README's Analysis section, as all-pairs matrices over one group of trajectories.

Each trajectory is a sequence of integer command codes (equal codes = equal command strings). Every function
returns the m x m matrix of a metric for m trajectories; nothing loops over pairs of commands in Python:
set and multiset overlaps are matrix products of incidence matrices, the order-aware and fuzzy metrics are
rapidfuzz `process.cdist` calls (workers=-1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel

from rsr_core.vocabulary import SIMILARITY_METRICS

METRICS: tuple[str, ...] = SIMILARITY_METRICS
# Above this many distinct commands in one group, fuzzy scores are computed per trajectory instead of as
# one square matrix, so memory stays bounded (the results are identical).
FUZZY_SQUARE_LIMIT = 4096


def _counts(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Count matrix (m x V, local codes) and the group's distinct global codes (sorted)."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    flat = np.concatenate(seqs) if len(seqs) else np.empty(0, dtype=np.int64)
    vocab, local = np.unique(flat, return_inverse=True)
    owner = np.repeat(np.arange(len(seqs)), lengths)
    counts = np.bincount(owner * len(vocab) + local, minlength=len(seqs) * len(vocab))
    return counts.reshape(len(seqs), len(vocab)), vocab


def _jaccard_of_sets(presence: np.ndarray) -> np.ndarray:
    """|A ∩ B| / |A ∪ B| for every pair of rows of a 0/1 matrix; 0 when both sets are empty."""
    sizes = presence.sum(axis=1).astype(np.float64)
    shared = presence[:, presence.sum(axis=0) >= 2].astype(np.float64)  # only these can intersect
    inter = shared @ shared.T
    union = sizes[:, None] + sizes[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def exact(seqs: Sequence[np.ndarray]) -> np.ndarray:
    """Exact command overlap: Jaccard of the command sets."""
    counts, _ = _counts(seqs)
    return _jaccard_of_sets(counts > 0)


def multiset(seqs: Sequence[np.ndarray]) -> np.ndarray:
    """Σ min counts / Σ max counts over commands; 0 when both are empty.

    Σ_v min(a_v, b_v) = Σ_t |{v: a_v >= t} ∩ {v: b_v >= t}|, one matrix product per count level t.
    """
    counts, _ = _counts(seqs)
    totals = counts.sum(axis=1).astype(np.float64)
    level = counts[:, (counts > 0).sum(axis=0) >= 2]
    mins = np.zeros((len(seqs), len(seqs)))
    t = 1
    while level.shape[1]:
        at_least = (level >= t).astype(np.float64)
        mins += at_least @ at_least.T
        t += 1
        level = level[:, (level >= t).sum(axis=0) >= 2]
    maxs = totals[:, None] + totals[None, :] - mins
    return np.divide(mins, maxs, out=np.zeros_like(mins), where=maxs > 0)


def order(seqs: Sequence[np.ndarray], workers: int = -1) -> np.ndarray:
    """Order-aware: rapidfuzz Indel normalized_similarity of the command-code sequences.

    rapidfuzz's value as is: 1 - indel distance / (len A + len B), so 1.0 for two empty sequences. `workers` as
    rapidfuzz takes it (-1: a thread a core); the values do not depend on it.
    """
    lists = [s.tolist() for s in seqs]
    return process.cdist(
        lists, lists, scorer=Indel.normalized_similarity, dtype=np.float64, workers=workers
    ).astype(np.float64)


def fuzzy(seqs: Sequence[np.ndarray], vocabulary: Sequence[str], workers: int = -1) -> np.ndarray:
    """Mean over A's commands of the best fuzz.ratio/100 against B's, averaged with B's side; 0 if one is empty.

    `vocabulary[code]` is the command string of a global code. Every distinct command of the group is scored
    once against every other (cdist), then "best against B" is a max over B's columns and the mean over A's
    commands (duplicates counted) is a product with A's count row. `workers` as for `order`.
    """
    counts, codes = _counts(seqs)
    m, v = counts.shape
    texts = [vocabulary[c] for c in codes.tolist()]
    # Columns in the order of the command strings, not of their codes: the sums below then add up in the same
    # order however the commands were coded (one task alone or with all others), so stored and fresh scores
    # are equal to the last bit.
    by_text = sorted(range(v), key=texts.__getitem__)
    counts, texts = counts[:, by_text], [texts[i] for i in by_text]
    present = [np.flatnonzero(row) for row in counts]
    best = np.zeros((m, v))
    if v <= FUZZY_SQUARE_LIMIT:
        scores = process.cdist(texts, texts, scorer=fuzz.ratio, dtype=np.float64, workers=workers)
        for j, cols in enumerate(present):
            if len(cols):
                best[j] = scores[:, cols].max(axis=1)
    else:
        for j, cols in enumerate(present):
            if len(cols):
                part = [texts[c] for c in cols.tolist()]
                best[j] = process.cdist(
                    texts, part, scorer=fuzz.ratio, dtype=np.float64, workers=workers
                ).max(axis=1)
    lengths = counts.sum(axis=1).astype(np.float64)
    one_side = np.divide(
        counts.astype(np.float64) @ best.T,
        lengths[:, None],
        out=np.zeros((m, m)),
        where=lengths[:, None] > 0,
    )
    both = (one_side + one_side.T) / 200.0
    both[(lengths == 0)[:, None] | (lengths == 0)[None, :]] = 0.0
    return both


def transition(seqs: Sequence[np.ndarray], first_word: np.ndarray) -> np.ndarray:
    """Jaccard of the sets of (first word, next first word) pairs of consecutive commands; 0 when both empty.

    `first_word[code]` is the integer code of the first word of command `code`.
    """
    n_words = int(first_word.max()) + 1 if len(first_word) else 1
    pairs = []
    for s in seqs:
        words = first_word[s]
        pairs.append(words[:-1] * n_words + words[1:] if len(words) > 1 else np.empty(0, dtype=np.int64))
    counts, _ = _counts(pairs)
    return _jaccard_of_sets(counts > 0)


class GroupCommands(Protocol):
    """What a kernel may read of a group's commands beyond their codes (`similarity.EncodedCommands`; both are
    built on first use)."""

    @property
    def vocabulary(self) -> Sequence[str]:
        """Command string of every code."""
        ...

    @property
    def first_word(self) -> np.ndarray:
        """Code of the first word of every command code."""
        ...


KERNELS: dict[str, Callable[[Sequence[np.ndarray], GroupCommands, int], np.ndarray]] = {
    "exact": lambda seqs, enc, workers: exact(seqs),
    "multiset": lambda seqs, enc, workers: multiset(seqs),
    "order": lambda seqs, enc, workers: order(seqs, workers),
    "fuzzy": lambda seqs, enc, workers: fuzzy(seqs, enc.vocabulary, workers),
    "transition": lambda seqs, enc, workers: transition(seqs, enc.first_word),
}
"""The all-pairs matrix of every metric (rsr_core/vocabulary.py's SIMILARITY_METRICS) over one task's rewrites;
the third argument is the threads the rapidfuzz kernels may use (-1: a thread a core)."""
