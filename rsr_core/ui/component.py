"""The studio's own components (st.components.v2, no iframe): registered with the running Streamlit runtime
on first use in it (a test harness starts a runtime per app it runs; each has a registry of its own)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import streamlit as st
from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager

_MOUNTS: dict[str, Callable[..., Any]] = {}


def mount(name: str, asset: str) -> Callable[..., Any]:
    """The mount command of the component `name`, whose code is assets/`asset`.js (after assets/common.js, the
    helpers every component shares) and .css. Not style-isolated:
    what it draws is part of the page (the browser's search, anchors found by id, text-reading tools)."""
    if name not in _MOUNTS or get_bidi_component_manager().get(name) is None:
        assets = resources.files("rsr_core.ui") / "assets"
        _MOUNTS[name] = st.components.v2.component(
            name,
            js=(assets / "common.js").read_text() + (assets / f"{asset}.js").read_text(),
            css=(assets / f"{asset}.css").read_text(),
            isolate_styles=False,
        )
    return _MOUNTS[name]
