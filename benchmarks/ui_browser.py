"""Timing Streamlit in a real browser: an action, then the script run it caused, then the DOM at rest.

A MutationObserver (installed before any page script) records the time of the last DOM change and counts the
app's script runs (`data-test-script-state` of `stApp` going from running to notRunning). An action's time is
from the action until the last DOM change once the run it caused has finished and nothing changed for QUIET_MS;
a page load's is from navigation start. Changes to what a screen reader is told (live regions drawn 1 px wide)
are not counted as drawing. Bytes received on the app's websocket are counted per action, and the
charts sent are measured by reading those frames as Streamlit's messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

QUIET_MS = 400
TIMEOUT_S = 120
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
OBSERVER = """
(() => {
  const r = window.__rsr = {last: performance.now(), runs: 0, state: null};
  // What a screen reader is told (a select box's "5 options available", cleared on a timer of its own seconds
  // later) lives in a live region drawn 1 px wide: changes there are not drawing.
  const spoken = (m) => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    const live = el && el.closest('[aria-live]');
    if (!live) return false;
    const box = live.getBoundingClientRect();
    return box.width <= 1 || box.height <= 1;
  };
  new MutationObserver((records) => {
    if (records.every(spoken)) return;
    r.last = performance.now();
    for (const m of records) {
      // Each record keeps the value it replaced: a run that starts and ends between two callbacks still counts.
      if (m.attributeName === 'data-test-script-state' && m.oldValue === 'running') r.runs++;
    }
    const app = document.querySelector('[data-testid="stApp"]');
    r.state = app ? app.getAttribute('data-test-script-state') : null;
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true,
                        attributeOldValue: true});
})();
"""
_STATE = "() => [window.__rsr.runs, window.__rsr.state, window.__rsr.last, performance.now()]"
_NODES = "() => document.getElementsByTagName('*').length"
# Still drawing: skeletons of elements not yet received, elements left from the previous run.
_PENDING = '() => !!document.querySelector(\'[data-testid="stSkeleton"], [data-stale="true"]\')'


@dataclass
class Sample:
    """One timed action."""

    ms: float
    nodes: int
    ws_bytes: int
    charts: list[int] = field(default_factory=list)


class Probe:
    """A Playwright page with the observer installed and its websocket traffic counted."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1500, "height": 1100})
        self.context.add_init_script(OBSERVER)
        self.page = self.context.new_page()
        self.frames: list[bytes | str] = []
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: bytes | str) -> None:
        self.frames.append(payload)

    def close(self) -> None:
        self.context.close()

    def _settle(self, runs_before: int, since: float, timeout_s: float = TIMEOUT_S) -> float:
        """Wait for a run to finish after `runs_before` and the DOM to rest; ms from `since` (page clock)."""
        started = time.monotonic()
        deadline = started + timeout_s
        while time.monotonic() < deadline:
            runs, state, last, now = self.page.evaluate(_STATE)
            # A run of a few ms can start and end within one render, so that the attribute never reads
            # "running": then the server's answer on the websocket (and a second's grace) says it ran.
            answered = bool(self.frames) and time.monotonic() - started > 1.0
            ran = runs > runs_before or answered
            rested = ran and state == "notRunning" and now - last >= QUIET_MS
            if rested and not self.page.evaluate(_PENDING):
                return last - since
            self.page.wait_for_timeout(25)
        raise TimeoutError("the app did not settle")

    def _sample(self, ms: float) -> Sample:
        frames, self.frames = self.frames, []
        size = sum(len(f) for f in frames)
        return Sample(ms, self.page.evaluate(_NODES), size, chart_sizes(frames))

    def load(self, url: str, wait_text: str | None = None) -> Sample:
        """Navigate and time until the page's first run has rendered and rested (from navigation start)."""
        self.frames = []
        self.page.goto(url, wait_until="commit")
        self.page.wait_for_function("() => window.__rsr !== undefined")
        ms = self._settle(0, 0.0)
        if wait_text:
            self.page.get_by_text(wait_text, exact=False).first.wait_for(timeout=TIMEOUT_S * 1000)
        return self._sample(ms)

    def act(self, action: Callable[[], None], timeout_s: float = TIMEOUT_S) -> Sample:
        """Run `action` (a click, a key press) and time the rerun it causes."""
        runs, _, _, _ = self.page.evaluate(_STATE)
        self.frames = []
        since = self.page.evaluate("() => performance.now()")
        action()
        return self._sample(self._settle(runs, since, timeout_s))

    # -- widgets by their Streamlit key --------------------------------------------------------------
    def key(self, key: str):
        return self.page.locator(f".st-key-{key}")

    def choose(self, key: str, option: str, popover: str | None = None) -> Sample:
        """Pick `option` in the selectbox `key` by typing it (the time starts at the Enter that selects it),
        after opening the popover keyed `popover` that holds it."""
        if popover is not None:
            self.key(popover).locator("button").first.click()
            self.key(key).get_by_role("combobox").wait_for(state="visible")
        box = self.key(key).get_by_role("combobox")
        box.scroll_into_view_if_needed()
        box.click()
        self.page.keyboard.type(option)
        self.page.get_by_role("option", name=option, exact=True).wait_for(state="attached")
        self.page.keyboard.press("ArrowDown")
        return self.act(lambda: self.page.keyboard.press("Enter"))

    def type_enter(self, key: str, text: str) -> Sample:
        box = self.key(key).locator("input")
        box.fill(text)
        return self.act(lambda: box.press("Enter"))

    def click(self, key: str, selector: str = "button") -> Sample:
        return self.act(self.key(key).locator(selector).first.click)

    def rerun(self) -> Sample:
        """Rerun the page as the R key does (nothing changed on the page; the data may have)."""
        self.page.locator("h1").first.click()
        return self.act(lambda: self.page.keyboard.press("r"))


def chart_sizes(frames: list[bytes | str]) -> list[int]:
    """Sizes in bytes of the charts (Vega-Lite specs with their data, plotly figures, or the studio's charts as
    SVG images) in websocket frames, read as the messages Streamlit sends (ForwardMsg protobufs)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    sizes = []
    for frame in frames:
        if not isinstance(frame, bytes):
            continue
        msg = ForwardMsg()
        try:
            msg.ParseFromString(frame)
        except Exception:  # noqa: BLE001 - not a message of Streamlit's (cannot happen on its websocket)
            continue
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind in ("vega_lite_chart", "plotly_chart"):
            sizes.append(getattr(element, kind).ByteSize())
        elif kind == "imgs":
            sizes += [len(i.url) for i in element.imgs.imgs if i.url.startswith("data:image/svg+xml")]
    return sizes


def launch(playwright):
    """Debian's chromium, headless (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
