"""Browser benchmark of the studio at paper scale, against Streamlit's own floor measured in the same run.

    .venv/bin/python benchmarks/ui_bench.py --db /path/paper.duckdb [--reps 5] [--json out.json]
    .venv/bin/python benchmarks/ui_bench.py --corpus /path/corpus          # builds the database first

A working copy of the database gets 2,000 runbook rounds with critic flags and reviews and 26 jobs with 38,542
work units, one of them a rewrite of the whole corpus (benchmarks/ui_fixture.py);
`streamlit run app.py` serves it and headless Debian chromium (Playwright) drives it. Every figure is the median
of --reps repetitions, in ms from the action (or navigation start) until the run it caused has rendered and the
DOM has rested. Each is compared with a floor of its own kind, sampled right after each of its samples: a click
with a one-button app's click, a page load with its page load, a page load that draws a plotly figure with the
floor app loading a page that draws the same figure, a first page after `streamlit run` with the floor app's own
first page after its start, a chart redrawn by a control with the floor app redrawing the same figure, a click
that opens another page with Streamlit's own `st.switch_page` from a button. "× floor" divides by the floor's
median over the whole run, "× floor beside" by the median of the floor samples taken beside that measurement's
own (other work on the machine's shared cores comes and goes over the minutes of a run, and weighs on both sides
of this one alike). Last, the list, a 300-step trajectory, the review queue and the overview are rerun, and the
list's search and filter, the review flow, a Similarity control and the export page are used, while another
process commits small transactions to the same file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ui_browser import QUIET_MS, Probe, Sample, launch
from benchmarks.ui_fixture import ROOT, Server, Writer, floor_script, free_port, prepare
from rsr_core.ui.keys import widget_key

CLICK, LOAD, CHART, CHART_LOAD, COLD, NAV = "click", "load", "chart", "chart load", "cold", "navigation"
FLOORS = {
    CLICK: "floor: click",
    LOAD: "floor: page load",
    CHART: "floor: chart (the same figure)",
    CHART_LOAD: "floor: page load drawing the same figure",
    COLD: "floor: first page after its start",
    NAV: "floor: a click that opens another page",
}


class Results:
    """Samples by measurement name, with the kind of floor each is compared with."""

    def __init__(self) -> None:
        self.samples: dict[str, list[Sample]] = {}
        self.kinds: dict[str, str] = {}
        self.beside: dict[str, list[float]] = {}  # the floor sampled right after each sample of a measurement
        self.floor: Floor | None = None

    def add(self, name: str, kind: str, sample: Sample) -> None:
        if kind == LOAD and sample.figure and not name.startswith("floor:"):
            # A page that draws plotly: compared with Streamlit loading a page that draws that figure.
            kind = CHART_LOAD
        self.samples.setdefault(name, []).append(sample)
        self.kinds[name] = kind
        print(
            f"  {name}: {sample.ms:.0f} ms, {sample.nodes} nodes, {sample.ws_bytes / 1024:.0f} KB", flush=True
        )
        if self.floor is not None and not name.startswith("floor:"):
            # The floor is sampled beside every measurement, so that the machine's load (2 shared cores) weighs
            # on both sides of each ratio alike.
            if kind == COLD:
                floor = self.floor.cold(sample.figure)
            elif kind == CHART_LOAD:
                floor = self.floor.chart_load(sample.figure)
            elif kind == LOAD:
                floor = self.floor.probe.load(self.floor.server.url)
            elif kind == NAV:
                floor = self.floor.navigation()
            elif kind == CHART and sample.figure:
                # Streamlit drawing the same plotly figure (its size and kind) on a click, and nothing else.
                floor = self.floor.chart(sample.figure)
            else:
                kind, floor = CLICK, self.floor.click()
            self.add(FLOORS[kind], kind, floor)
            self.beside.setdefault(name, []).append(floor.ms)

    def median(self, name: str) -> float:
        return statistics.median(s.ms for s in self.samples[name])

    def table(self) -> list[dict]:
        floor = {kind: self.median(name) for kind, name in FLOORS.items() if name in self.samples}
        rows = []
        for name, samples in self.samples.items():
            kind = self.kinds[name]
            charts = max((max(s.charts) for s in samples if s.charts), default=0)
            rows.append(
                {
                    "measurement": name,
                    "kind": kind,
                    "median_ms": round(self.median(name)),
                    "ratio": round(self.median(name) / floor[kind], 2) if kind in floor else None,
                    # Against the floor samples taken beside this measurement's own: the machine's load over
                    # the minutes of a run (other work on 2 shared cores) weighs on both sides alike.
                    "ratio_beside": round(self.median(name) / statistics.median(self.beside[name]), 2)
                    if kind in floor and self.beside.get(name)
                    else None,
                    "dom_nodes": max(s.nodes for s in samples),
                    "ws_kb": round(statistics.median(s.ws_bytes for s in samples) / 1024, 1),
                    "largest_chart_kb": round(charts / 1024, 1) if charts else None,
                    "runs": len(samples),
                }
            )
        return rows


def targets(db: Path) -> dict[str, str]:
    """The trajectories the views open: the two longest of one task, the longest, one of about 300 steps."""
    from rsr_core.store import Store

    store = Store(db)
    with store.reading() as cur:
        longest = cur.execute(
            "SELECT trajectory_id, n_steps FROM trajectories ORDER BY n_steps DESC LIMIT 1"
        ).fetchone()
        pair = cur.execute(
            "SELECT task_id, list(trajectory_id ORDER BY n_steps DESC)[1:2] FROM trajectories "
            "WHERE kind = 'rewrite' GROUP BY task_id ORDER BY max(n_steps) + min_by(n_steps, n_steps) DESC, "
            "sum(n_steps) DESC LIMIT 1"
        ).fetchone()
        near300 = cur.execute(
            "SELECT trajectory_id FROM trajectories ORDER BY abs(n_steps - 300), trajectory_id LIMIT 1"
        ).fetchone()[0]
    return {
        "longest": longest[0],
        "longest_steps": str(longest[1]),
        "a": pair[1][0],
        "b": pair[1][1],
        "t300": near300,
    }


# What a page shows once it is drawn (its last part to arrive), which a page load waits for.
PAGE_CONTENT = {
    "": "Rewrite funnel",
    "trajectories": "trajectories)",
    "diff": "exact overlap",
    "runbooks": "review history",
    "rewrite": "Jobs",
    "similarity": "Same- vs cross-runbook similarity",
    "export": "Export for fine-tuning",
}
# A heatmap cell in the window: the page coordinates of the first cell's centre (plotly's own axes place it).
HEATMAP_CELL = """() => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].find((c) => c._fullData && c._fullData[0].hovertext);
  if (!g) return null;
  g.scrollIntoView();
  const t = g._fullData[0], [xa, ya] = [g._fullLayout.xaxis, g._fullLayout.yaxis], box = g.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(t.x[0]), box.top + ya._offset + ya.l2p(t.y[0])];
}"""


def repeat(results: Results, reps: int, name: str, kind: str, fn: Callable[[], Sample]) -> None:
    for _ in range(reps):
        results.add(name, kind, fn())


def _approve(probe: Probe, reason: str) -> Sample:
    """The round in focus approved as "bench" for `reason`: the approve click timed."""
    focus = probe.page.locator(".st-key-review_focus")
    focus.locator("input[name=reviewer]").fill("bench")
    focus.locator("input[name=reason]").fill(reason)
    return probe.act(focus.locator("button[name=approve]").click)


def _choose_chart(probe: Probe, key: str, option: str, expect: str) -> Sample:
    """`Probe.choose`, done when the chart titled `expect` is drawn."""
    box = probe.key(key).get_by_role("combobox")
    box.scroll_into_view_if_needed()
    box.click()
    probe.page.keyboard.type(option)
    probe.page.get_by_role("option", name=option, exact=True).wait_for(state="attached")
    probe.page.keyboard.press("ArrowDown")
    return probe.act(lambda: probe.page.keyboard.press("Enter"), expect)


class Floor:
    """The minimal one-button app, served for the whole run and sampled beside every measurement."""

    def __init__(self, browser, work: Path):
        self.server = Server(floor_script(work)).start()
        self.nav_server = Server(floor_script(work, nav=True)).start()
        self.probe = Probe(browser)
        self.probe.load(self.server.url)  # the browser caches Streamlit's bundle once, as for the studio
        # Cold starts restart the floor app on one port, its bundle cached there as the studio's is.
        self.cold_port = free_port()
        self.cold(None)

    def _press(self, url: str, key: str, expect: str | None, timeout_s: float) -> Sample:
        """The button `key` clicked on a freshly loaded `url`. A click that starts no run (it happens now and
        then on a page just loaded, before its session answers) is tried again on a new load."""
        for _ in range(3):
            self.probe.load(url)
            button = self.probe.key(key).locator("button")
            try:
                return self.probe.act(button.click, expect, timeout_s=timeout_s)
            except TimeoutError:
                continue
        raise TimeoutError(f"the floor app's button {key!r} started no run")

    def _show(self, figure: str) -> None:
        """The figure the floor app draws on its `?chart=1` page (a plotly figure's JSON)."""
        (self.server.script.parent / "floor_figure.json").write_text(figure)

    def click(self) -> Sample:
        """The button's click on a freshly loaded page."""
        return self._press(self.server.url, "press", None, 10)

    def chart(self, figure: str) -> Sample:
        """The floor app drawing `figure` again on a click, on a page that has drawn it (plotly loaded and
        started, as on the studio's page before its chart changes)."""
        self._show(figure)
        return self._press(f"{self.server.url}/?chart=1", "draw", None, 30)

    def navigation(self) -> Sample:
        """A button's click that switches to another page (`st.switch_page`), until that page is drawn."""
        return self._press(self.nav_server.url, "go", "arrived", 10)

    def chart_load(self, figure: str) -> Sample:
        """The floor app's page load drawing `figure` (plotly's script loaded and started, as on a studio page
        that draws a chart)."""
        self._show(figure)
        return self.probe.load(f"{self.server.url}/?chart=1")

    def cold(self, figure: str | None) -> Sample:
        """The floor app's first page right after `streamlit run` answers its health check, drawing `figure`
        when the studio's first page drew one: Streamlit's own cold start, beside the studio's."""
        if figure:
            self._show(figure)
        server = Server(self.server.script, port=self.cold_port).start()
        try:
            return self.probe.load(f"{server.url}/?chart=1" if figure else server.url)
        finally:
            server.stop()

    def close(self) -> None:
        self.probe.close()
        self.server.stop()
        self.nav_server.stop()


def cold_starts(browser, db: Path, results: Results, reps: int, port: int) -> None:
    """The first page after `streamlit run` returns its health check (nothing imported or cached beyond what the
    server does before it answers), and Similarity's first visit. The browser has Streamlit's bundle cached
    from an earlier start on the same port, as a user's would: the server's cold start is measured, not the
    download of the frontend."""
    probe = Probe(browser)
    server = Server(ROOT / "app.py", {"RSR_DB": str(db)}, port).start()
    probe.load(server.url)
    server.stop()
    for path, name in (
        ("", "overview: first page after start (cold)"),
        ("similarity", "similarity: first visit (cold)"),
    ):
        for _ in range(reps):
            server = Server(ROOT / "app.py", {"RSR_DB": str(db)}, port).start()
            try:
                results.add(name, COLD, probe.load(f"{server.url}/{path}"))
            finally:
                server.stop()
    probe.close()


def studio(browser, url: str, t: dict[str, str], results: Results, reps: int) -> None:
    probe = Probe(browser)
    probe.load(url)
    for page, expect in PAGE_CONTENT.items():
        name = f"page load: {page or 'overview'}" + (" (preview counting)" if page == "export" else "")
        repeat(results, reps, name, LOAD, lambda p=page, e=expect: probe.load(f"{url}/{p}", e))
    # The export preview is counted in the background (tens of seconds at this scale, on both cores): let it
    # finish, so that it does not weigh on what is measured next.
    probe.page.get_by_text("would be exported").first.wait_for(timeout=300_000)
    repeat(results, reps, "page load: export (preview counted)", LOAD, lambda: probe.load(f"{url}/export"))
    # The list.
    for _ in range(reps):
        probe.load(f"{url}/trajectories")
        results.add("list: search", CLICK, probe.type_enter("f_search", "pytest"))
        results.add("list: filter (kind)", CLICK, probe.choose("f_kind", "rewrite", popover="f_kind_pop"))
        results.add("list: next page", CLICK, probe.click("list_page", "[data-testid='stNumberInputStepUp']"))
        results.add("list: sort (steps)", CLICK, probe.choose("list_sort", "steps", popover="list_sort_pop"))
    # One trajectory, two side by side.
    mid = int(t["longest_steps"]) // 2
    repeat(results, reps, f"deep link: step {mid} of the longest ({t['longest_steps']} steps)", LOAD,
           lambda: probe.load(f"{url}/trajectories?trajectory={t['longest']}&step={mid}"))  # fmt: skip
    for _ in range(reps):
        results.add(
            "side by side: open (two longest)",
            LOAD,
            probe.load(f"{url}/trajectories?compare={t['a']},{t['b']}"),
        )
        results.add("side by side: next turns page", CLICK, probe.click(widget_key("turns_page", t['a'], t['b']), "[data-testid='stNumberInputStepUp']"))  # fmt: skip
    # The jobs: the units of the job shown (the review job, waiting for its reviews), a page further.
    for _ in range(reps):
        probe.load(f"{url}/rewrite")
        probe.page.get_by_text("units of bench-review").first.click()  # the expander opens in the browser,
        units_page = widget_key("units_page", "bench-review")
        probe.key(units_page).wait_for(state="visible")  # which then draws what it holds
        probe.page.wait_for_function(f"() => performance.now() - window.__rsr.last >= {QUIET_MS}")
        step_up = "[data-testid='stNumberInputStepUp']"
        results.add("jobs: a job's units, next page", CLICK, probe.click(units_page, step_up))
    # The review queue.
    for _ in range(reps):
        probe.load(f"{url}/runbooks")
        results.add("review: next pending", CLICK, probe.click("rb_next_btn"))
        results.add("review: record a review", CLICK, _approve(probe, "generic"))
    repeat(results, reps, "review: queue load", LOAD, lambda: probe.load(f"{url}/runbooks"))
    # Similarity: every control redraws a plotly figure, compared with Streamlit drawing that same figure.
    for _ in range(reps):
        results.add(
            "similarity: visit (warm)", LOAD, probe.load(f"{url}/similarity", PAGE_CONTENT["similarity"])
        )
        per_task = probe.key("sim_view").get_by_text("per task")
        results.add("similarity: view per task", CHART, probe.act(per_task.click, "per task"))
        results.add(
            "similarity: metric fuzzy",
            CHART,
            _choose_chart(probe, "sim_metric", "fuzzy", "fuzzy (ratio) per task"),
        )
        results.add(
            "similarity: metric multiset",
            CHART,
            _choose_chart(probe, "sim_metric", "multiset", "multiset per task"),
        )
        violin = probe.key("sim_shape").get_by_text("violin")
        results.add("similarity: shape violin", CHART, probe.act(violin.click, "multiset per task"))
        box = probe.key("sim_shape").get_by_text("box")
        results.add("similarity: shape box", CHART, probe.act(box.click, "multiset per task"))
        heatmap = probe.key("sim_view").get_by_text("pairwise heatmap of one task")
        results.add("similarity: view heatmap", CHART, probe.act(heatmap.click, "by runbook"))
        x, y = probe.page.evaluate(HEATMAP_CELL)
        probe.page.mouse.move(x, y)
        opened = probe.act(lambda x=x, y=y: probe.page.mouse.click(x, y), "back to the list")
        results.add("similarity: click a heatmap cell (opens the pair)", NAV, opened)
    probe.close()


def under_writes(
    browser, url: str, db: Path, t: dict[str, str], results: Results, reps: int, pause: float
) -> str:
    """Reruns of four views, first with nothing writing, then while another process commits; and, while it
    commits, the list's search and filter, the review flow, a Similarity control and the export preview. The
    floor is sampled beside each of them with the writer running too."""
    views = {
        "list": f"{url}/trajectories",
        "300-step trajectory": f"{url}/trajectories?trajectory={t['t300']}",
        "review queue": f"{url}/runbooks",
        "overview": f"{url}/",
    }
    probe = Probe(browser)
    for label, view in views.items():
        probe.load(view)
        repeat(results, reps, f"rerun, idle database: {label}", CLICK, probe.rerun)
    with Writer(db, pause) as writer:
        for label, view in views.items():
            probe.load(view)
            repeat(results, reps, f"rerun while a process writes: {label}", CLICK, probe.rerun)
        during = "while a process writes"
        for _ in range(reps):
            probe.load(f"{url}/trajectories")
            results.add(f"{during}: list search", CLICK, probe.type_enter("f_search", "pytest"))
            filtered = probe.choose("f_kind", "rewrite", popover="f_kind_pop")
            results.add(f"{during}: list filter (kind)", CLICK, filtered)
        for n in range(reps):
            probe.load(f"{url}/runbooks")
            results.add(f"{during}: review next pending", CLICK, probe.click("rb_next_btn"))
            results.add(f"{during}: review record", CLICK, _approve(probe, f"under writes {n}"))
        for _ in range(reps):
            probe.load(f"{url}/similarity", PAGE_CONTENT["similarity"])
            probe.act(probe.key("sim_view").get_by_text("per task").click, "per task")
            chart = _choose_chart(probe, "sim_metric", "fuzzy", "fuzzy (ratio) per task")
            results.add(f"{during}: similarity metric fuzzy", CHART, chart)
        repeat(results, reps, f"{during}: export page load (preview counting)", LOAD,
               lambda: probe.load(f"{url}/export", PAGE_CONTENT["export"]))  # fmt: skip
        commits = writer.commits()
    probe.close()
    return commits


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, help="a paper-scale database to copy (not written)")
    parser.add_argument("--corpus", type=Path, help="build the database from this generated corpus")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cold-reps", type=int, default=3)
    parser.add_argument("--runbooks", type=int, default=2000)
    parser.add_argument("--writer-pause", type=float, default=0.25)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = Results()
    with tempfile.TemporaryDirectory(prefix="rsr-ui-bench-") as tmp, sync_playwright() as pw:
        work = Path(tmp)
        db, added = prepare(args.db, args.corpus, work, args.runbooks)
        print(f"database {db}: added {added}", flush=True)
        t = targets(db)
        browser = launch(pw)
        results.floor = Floor(browser, work)
        port = free_port()
        cold_starts(browser, db, results, args.cold_reps, port)
        server = Server(ROOT / "app.py", {"RSR_DB": str(db)}, port).start()
        try:
            studio(browser, server.url, t, results, args.reps)
            commits = under_writes(browser, server.url, db, t, results, args.reps, args.writer_pause)
        finally:
            server.stop()
            results.floor.close()
        browser.close()
    rows = results.table()
    report = {"targets": t, "queue": added, "writer": commits, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(markdown(rows))


def markdown(rows: list[dict]) -> str:
    out = ["| measurement | median ms | × floor | × floor beside | DOM nodes | websocket KB | largest chart KB |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for r in rows:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        beside = "" if r.get("ratio_beside") is None else f"{r['ratio_beside']:.2f}"
        chart = "" if r["largest_chart_kb"] is None else f"{r['largest_chart_kb']:.0f}"
        out.append(
            f"| {r['measurement']} | {r['median_ms']} | {ratio} | {beside} | {r['dom_nodes']:,} | {r['ws_kb']:.0f} "
            f"| {chart} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    main()
