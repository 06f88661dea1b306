"""Timing Streamlit in a real browser: an action, then the script run it caused, then the page as a person sees
it, drawn and at rest.

An action is done when all of these hold, and its time runs from the action (a page load's from navigation
start) to the last change of the page's DOM:
- the run it started has finished: the server sent its `script_finished` message after the action (read from
  the websocket frames as Streamlit's messages, so that a run of a few ms that never showed "running" counts);
- no element is stale or a skeleton waiting for its data;
- the expected content, when the measurement names one, is visible;
- every chart is drawn: each image decoded, each plotly figure laid out by plotly.js with its SVG in place;
- the page has not changed for QUIET_MS.
A MutationObserver installed before any page script records the time of the last DOM change. Changes to what
a screen reader is told (live regions drawn 1 px wide) are not counted as drawing. Bytes received on the app's
websocket are counted per action, and the charts sent are read from those frames (their size, and the last
plotly figure itself, which the chart floor draws again).
"""

from __future__ import annotations

import base64
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
# Not drawn yet: skeletons of elements not yet received, elements left from the previous run, images not yet
# decoded, plotly figures plotly.js has not laid out and drawn.
_PENDING = """() => {
  if (document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return true;
  for (const img of document.querySelectorAll('[data-testid="stMain"] img')) {
    if (!img.complete || !img.naturalWidth) return true;
  }
  for (const el of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const g = el.querySelector('.js-plotly-plot');
    if (!g || !g._fullLayout || !g.querySelector('.main-svg .trace')) return true;
  }
  return false;
}"""
_VISIBLE = """(text) => [...document.querySelectorAll('[data-testid="stMain"] *')].some((e) =>
  e.childElementCount === 0 && (e.textContent || '').includes(text) && e.getClientRects().length > 0)"""


@dataclass
class Sample:
    """One timed action."""

    ms: float
    nodes: int
    ws_bytes: int
    charts: list[int] = field(default_factory=list)
    figure: str | None = None  # the last plotly figure sent (its JSON), for the chart floor


class Probe:
    """A Playwright page with the observer installed and its websocket traffic counted."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1500, "height": 1100})
        self.context.add_init_script(OBSERVER)
        self.page = self.context.new_page()
        self.frames: list[bytes | str] = []
        self.finished = 0  # script_finished messages received
        # The frames as the browser's DevTools protocol reports them: Playwright's own websocket events report
        # none of the app's frames with Debian's chromium.
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        self.cdp.on("Network.webSocketFrameReceived", self._frame)

    def _frame(self, event: dict) -> None:
        response = event["response"]
        payload: bytes | str = (
            base64.b64decode(response["payloadData"]) if response["opcode"] == 2 else response["payloadData"]
        )
        self.frames.append(payload)
        if isinstance(payload, bytes) and message_type(payload) == "script_finished":
            self.finished += 1

    def close(self) -> None:
        self.context.close()

    def _settle(
        self, finished_before: int, since: float, expect: str | None, timeout_s: float = TIMEOUT_S
    ) -> float:
        """Wait until the action is done as a person sees it (see the module's docstring); ms from `since` (page
        clock) to the last change of the page."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            _, state, last, now = self.page.evaluate(_STATE)
            # A run finished after the action, and the page changed after it (a message of an earlier run can
            # arrive after the action).
            ran = self.finished > finished_before and last > since
            rested = ran and state == "notRunning" and now - last >= QUIET_MS
            if (
                rested
                and not self.page.evaluate(_PENDING)
                and (expect is None or self.page.evaluate(_VISIBLE, expect))
            ):
                return last - since
            self.page.wait_for_timeout(25)
        raise TimeoutError(f"the app did not settle{f' showing {expect!r}' if expect else ''}")

    def _sample(self, ms: float) -> Sample:
        frames, self.frames = self.frames, []
        size = sum(len(f) for f in frames)
        sizes, figure = charts_sent(frames)
        return Sample(ms, self.page.evaluate(_NODES), size, sizes, figure)

    def load(self, url: str, expect: str | None = None) -> Sample:
        """Navigate and time until the page's first run is done as a person sees it (from navigation start)."""
        self.frames, self.finished = [], 0
        self.page.goto(url, wait_until="commit")
        self.page.wait_for_function("() => window.__rsr !== undefined")
        return self._sample(self._settle(0, 0.0, expect))

    def act(
        self, action: Callable[[], None], expect: str | None = None, timeout_s: float = TIMEOUT_S
    ) -> Sample:
        """Run `action` (a click, a key press) and time the rerun it causes until it is done as a person sees
        it, showing `expect` when given."""
        finished = self.finished
        self.frames = []
        since = self.page.evaluate("() => performance.now()")
        action()
        return self._sample(self._settle(finished, since, expect, timeout_s))

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


def message_type(frame: bytes) -> str | None:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    try:
        msg.ParseFromString(frame)
    except Exception:  # noqa: BLE001 - not a message of Streamlit's (cannot happen on its websocket)
        return None
    return msg.WhichOneof("type")


# Plotly figures seen, by the hash of the message that carried them: Streamlit sends a message it sent before
# to the same browser as a reference to its hash (`ref_hash`), and the figure drawn is then the one it named.
_FIGURES: dict[str, str] = {}


def charts_sent(frames: list[bytes | str]) -> tuple[list[int], str | None]:
    """Sizes in bytes of the charts (plotly figures, Vega-Lite specs, or charts as SVG images) in websocket
    frames, read as the messages Streamlit sends (ForwardMsg protobufs), and the last plotly figure's JSON
    (sent, or named by a reference to a message sent before)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    sizes, figure = [], None
    for frame in frames:
        if not isinstance(frame, bytes):
            continue
        msg = ForwardMsg()
        try:
            msg.ParseFromString(frame)
        except Exception:  # noqa: BLE001 - not a message of Streamlit's (cannot happen on its websocket)
            continue
        if msg.WhichOneof("type") == "ref_hash":
            figure = _FIGURES.get(msg.ref_hash, figure)
            continue
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind in ("vega_lite_chart", "plotly_chart"):
            sizes.append(getattr(element, kind).ByteSize())
            if kind == "plotly_chart":
                figure = element.plotly_chart.spec
                if msg.hash:
                    _FIGURES[msg.hash] = figure
        elif kind == "imgs":
            sizes += [len(i.url) for i in element.imgs.imgs if i.url.startswith("data:image/svg+xml")]
    return sizes, figure


def launch(playwright):
    """Debian's chromium, headless (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
