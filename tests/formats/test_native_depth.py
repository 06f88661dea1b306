"""The C build of `reading.too_deep` (rsr_core/formats/_depth.c) against the Python walk: the same answer for
values nested around the limit, through objects and arrays, past values that are neither."""

from __future__ import annotations

import shutil
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsr_core.formats.reading import MAX_JSON_DEPTH, _native_depth, too_deep


def test_the_native_depth_check_is_built_wherever_a_c_compiler_is():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the package installs without the C build")
    assert _native_depth() is not None, (
        "a C compiler is here but rsr_core.formats._depth is not built: make venv"
    )


leaves = st.sampled_from([None, 1, "x", 1.5, True, (), ("t", [1]), OrderedDict(a=[[1]])])
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=40,
)


def _nest(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for n in range(depth):
        value = [value] if n % 2 else {"k": value}
    return value


@settings(max_examples=400, deadline=None)
@given(values, st.integers(-1, 8))
def test_generated_values_get_the_same_answer(value: Any, limit: int):
    if _native_depth() is None:
        pytest.skip("rsr_core.formats._depth is not built (no C compiler)")
    assert too_deep(value, limit) == too_deep(value, limit, native=False)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500])
def test_values_nested_at_the_limit_get_the_same_answer(depth: int):
    if _native_depth() is None:
        pytest.skip("rsr_core.formats._depth is not built (no C compiler)")
    for leaf in (1, [], {}, [1], ()):
        value = [1, 2, _nest(depth, leaf)]
        assert too_deep(value) == too_deep(value, native=False), (depth, leaf)
    assert too_deep(_nest(depth), 2_000) == too_deep(
        _nest(depth), 2_000, native=False
    )  # Python walks past 1,000
