"""View data for the pages (no Streamlit here): step alignment, command diffs, pair figures, provenance."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import pandas as pd

from rsr_core.analysis.similarity import METRICS, score_pairs


def turn_spans(sources: list[str]) -> list[tuple[int, int]]:
    """Steps (by their sources, in order) grouped into turns: each agent step closes a turn together with the
    non-agent steps before it; returns (first, last) step indexes, 1-based, of every turn."""
    spans: list[tuple[int, int]] = []
    start = 1
    for index, source in enumerate(sources, 1):
        if source == "agent":
            spans.append((start, index))
            start = index + 1
    if start <= len(sources):
        spans.append((start, len(sources)))
    return spans


@dataclass(frozen=True)
class DiffRow:
    """One row of an aligned command diff."""

    op: str  # equal, delete (only in the source), insert (only in the rewrite), replace
    source: str
    rewrite: str


def command_diff(source: list[str], rewrite: list[str]) -> list[DiffRow]:
    """Aligned diff of two command sequences (difflib's longest matching blocks)."""
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=source, b=rewrite, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = source[i1:i2], rewrite[j1:j2]
        for k in range(max(len(left), len(right))):
            lo = left[k] if k < len(left) else ""
            ro = right[k] if k < len(right) else ""
            kind = op
            if op == "replace" and not lo:
                kind = "insert"
            elif op == "replace" and not ro:
                kind = "delete"
            rows.append(DiffRow(kind, lo, ro))
    return rows


def diff_frame(rows: list[DiffRow]) -> pd.DataFrame:
    """The diff as a table (op, source command, rewrite command)."""
    return pd.DataFrame(
        [{"op": r.op, "source": r.source, "rewrite": r.rewrite} for r in rows],
        columns=["op", "source", "rewrite"],
    )


def pair_figures(source: list[str], rewrite: list[str]) -> dict[str, float]:
    """The five pair metrics (the README's Analysis section) for one pair of command sequences."""
    frame = pd.DataFrame({"trajectory_id": ["a", "b"], "task_id": ["t", "t"], "runbook_id": [None, None]})
    cmds = pd.DataFrame(
        {
            "trajectory_id": ["a"] * len(source) + ["b"] * len(rewrite),
            "seq": list(range(len(source))) + list(range(len(rewrite))),
            "command": source + rewrite,
        }
    )
    row = score_pairs(frame, cmds, METRICS).iloc[0]
    return {m: float(row[m]) for m in METRICS}


def diff_counts(rows: list[DiffRow]) -> dict[str, int]:
    """How many rows of each kind."""
    out = {"equal": 0, "delete": 0, "insert": 0, "replace": 0}
    for r in rows:
        out[r.op] += 1
    return out
