"""Summaries of score distributions for drawing: box statistics and a density per group, computed here so that
a chart sends a few numbers per group instead of every pair (tens of thousands at paper scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd

DENSITY_POINTS = 48  # points of a density curve over [0, 1]
STAT_COLUMNS = (
    "group", "relation", "n", "q1", "median", "q3", "lowerfence", "upperfence", "mean", "grid", "density",
)  # fmt: skip


def box_stats(values: np.ndarray) -> dict[str, float]:
    """Tukey box statistics, as box plots usually draw them: quartiles (linear interpolation), whiskers at the
    most extreme values within 1.5 IQR of the box, and the mean."""
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    iqr = q3 - q1
    inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
    return {
        "q1": float(q1),
        "median": float(median),
        "q3": float(q3),
        "lowerfence": float(inside.min()),
        "upperfence": float(inside.max()),
        "mean": float(values.mean()),
    }


def density(values: np.ndarray, points: int = DENSITY_POINTS) -> tuple[list[float], list[float]]:
    """A Gaussian kernel density over [0, 1] (Scott's bandwidth, at least 0.01), from a fine histogram so that
    its cost does not grow with the number of values beyond one pass."""
    counts, edges = np.histogram(values, bins=400, range=(0.0, 1.0))
    centres = (edges[:-1] + edges[1:]) / 2
    spread = float(values.std()) if len(values) > 1 else 0.0
    bandwidth = max(0.01, 1.06 * spread * len(values) ** -0.2)
    grid = np.linspace(0.0, 1.0, points)
    kernel = np.exp(-0.5 * ((grid[:, None] - centres[None, :]) / bandwidth) ** 2)
    dens = kernel @ counts / (len(values) * bandwidth * np.sqrt(2 * np.pi))
    return grid.round(4).tolist(), dens.round(4).tolist()


def group_stats(long: pd.DataFrame) -> pd.DataFrame:
    """Per (group, relation) of a frame with columns group, relation, value: n, box statistics, density.

    Groups keep their order of first appearance; relations are "same" then "cross"; empty cells are left out.
    """
    rows = []
    groups: list = list(pd.unique(long["group"])) if len(long) else []
    for group in groups:
        part = long[long["group"] == group] if len(groups) > 1 else long
        for relation in ("same", "cross"):
            values = part.loc[part["relation"] == relation, "value"].to_numpy(dtype=np.float64)
            if not len(values):
                continue
            grid, dens = density(values)
            rows.append({"group": group, "relation": relation, "n": len(values), **box_stats(values),
                         "grid": grid, "density": dens})  # fmt: skip
    return pd.DataFrame(rows, columns=list(STAT_COLUMNS))
