"""The studio's table: what a cell shows for each kind of value."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rsr_core.ui.grid import cell


def test_cells_show_missing_values_as_empty_and_numbers_plainly():
    assert [cell(v) for v in (None, float("nan"), pd.NA, pd.NaT)] == ["", "", "", ""]
    assert [cell(v) for v in (np.int64(3), 2.0, 1234567.0, 0.12345678)] == ["3", "2", "1234567", "0.1235"]
    assert [cell(v) for v in (True, "<b>x</b>", [1, 2])] == ["true", "<b>x</b>", "[1, 2]"]
