"""The studio in a real browser, driven as a research team uses it, while `rsr` commands use the same database.
Screenshots of every view go to test-artifacts/screenshots/."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time

import pytest

from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from tests.e2e.conftest import SHOTS, serving

pytestmark = pytest.mark.browser
TIMEOUT_MS = 90_000
# The app has finished its run and drawn it: no element waiting for data, none left from the previous run.
IDLE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]');
}"""


def shown(page, *texts: str) -> str:
    """Wait until every text is on the page and the run is over; returns the main area's text."""
    for text in texts:
        page.get_by_text(text, exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
    return page.inner_text("[data-testid='stMain']")


def shot(page, name: str, at: str | None = None) -> None:
    """Screenshot of the window (the app scrolls inside it), scrolled to the text `at` when given."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if at is not None:
        page.get_by_text(at, exact=False).first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _query(studio, sql: str, params: list | None = None) -> list[tuple]:
    """Read the studio's database as another process does (waiting, bounded, while the app uses it)."""
    with Store(studio.db, read_only=True, wait_s=60).reading() as cur:
        return cur.execute(sql, params or []).fetchall()


PAGES = {
    "": ["Coverage of the discovery harnesses", "Rewrite funnel"],
    "trajectories": ["Trajectories", "trajectories)"],
    "diff": ["Command diff", "exact overlap"],
    "runbooks": ["Runbooks", "review history"],
    "rewrite": ["Rewrite", "Sources", "Jobs"],
    "similarity": ["Command similarity of rewrites"],
    "export": ["Export for fine-tuning", "would be exported"],
}


def test_every_page_renders_with_the_scripted_data_banner(studio, page):
    for path, texts in PAGES.items():
        page.goto(f"{studio.url}/{path}")
        body = shown(page, *texts)
        assert "Traceback" not in body and "Error" not in body.split("\n")[0], f"/{path}"
        # The demo corpus was made with the scripted model: every data page says so.
        assert "Demo data:" in body and "scripted model" in body, f"/{path}: no scripted-data banner"
        shot(page, path or "overview")


# The start of a page function reading the page's charts: `charts()` gives every plotly figure drawn on the page
# (its graph div: the data as plotly.js resolved it in `_fullData`, its layout in `_fullLayout`).
CHARTS = r"""() => {
  const charts = () => [...document.querySelectorAll('.js-plotly-plot')].filter((g) => g._fullLayout);
  // Streamlit's theme writes a title in bold (<b>...</b>): the text without its tags.
  const title = (g) => ((g._fullLayout.title && g._fullLayout.title.text) || '').replace(/<[^>]*>/g, '');"""


def test_overview_funnel_has_every_stage_with_the_clis_counts(studio, page):
    funnel = studio.rsr_json("stats", "funnel")
    page.goto(studio.url)
    shown(page, "Rewrite funnel")
    # A plotly figure: each bar's label and count as plotly.js drew them, the count axis's tick labels.
    read = (
        CHARTS
        + r"""
      const chart = charts().find((g) => title(g).startsWith('Rewrite funnel'));
      if (!chart || !chart.querySelector('.xtick text')) return null;
      const bars = {};
      for (const trace of chart._fullData) {
        for (let i = 0; i < trace.y.length; i++) bars[trace.y[i]] = Number(trace.x[i]).toLocaleString('en-US');
      }
      const ticks = [...chart.querySelectorAll('.xtick text')].map((e) => e.textContent);
      return Object.keys(bars).length ? {bars, ticks} : null;
    }"""
    )
    page.wait_for_function(read, timeout=TIMEOUT_MS)
    bars = page.evaluate(read)
    stages = {
        "source trajectories": "sources",
        "rejected by the critic": "critic_rejected",
        "waiting for human review": "pending_review",
        "rejected by a reviewer": "human_rejected",
        "approved": "approved",
        "executions": "executions",
        "passed the verifier": "verified",
        "answer transfer": "answer_transfer",
        "kept for training": "kept",
    }
    for label, key in stages.items():
        assert bars["bars"][label] == f"{funnel[key]:,}", label
    assert funnel["human_rejected"] > 0 and funnel["answer_transfer"] > 0  # the demo has both stages
    # The count axis ticks whole numbers only.
    ticks = [t.replace(",", "") for t in bars["ticks"]]
    assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), f"count axis ticks: {ticks}"


def test_deep_link_scrolls_to_the_step_and_a_missing_step_is_an_error(studio, browser):
    tid, n_steps = _query(
        studio, "SELECT trajectory_id, count(*) n FROM steps GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1"
    )[0]
    context = browser.new_context(viewport={"width": 1300, "height": 700})
    page = context.new_page()
    page.goto(f"{studio.url}/trajectories?trajectory={tid}&step={n_steps}")
    shown(page, "linked step")
    # The linked step is scrolled into view (the window is much shorter than the trajectory).
    page.wait_for_function(
        """(id) => { const el = document.getElementById(id); if (!el) return false;
                     const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }""",
        arg=f"step-{n_steps}",
        timeout=TIMEOUT_MS,
    )
    # ... by scrolling: the app's scrolling container moved (the step is not at the top of the document).
    assert page.evaluate(
        """(id) => { let e = document.getElementById(id);
                     while (e && !(e.scrollTop > 0)) e = e.parentElement; return !!e || window.scrollY > 0; }""",
        f"step-{n_steps}",
    )
    shot(page, "deep-link")
    page.goto(f"{studio.url}/trajectories?trajectory={tid}&step={n_steps + 5}")
    body = shown(page, "has no step")
    assert f"{tid} has no step {n_steps + 5}: it has {n_steps} steps" in body
    assert "step 1 · " not in body  # not silently page 1
    context.close()


def test_two_reviewers_in_two_browsers_both_stored_latest_decides(studio, browser):
    pending = studio.rsr_json("runbooks", "list", "--status", "pending_review")
    rows = pending["rows"] if isinstance(pending, dict) else pending
    rid = rows[0]["runbook_id"]
    first, second = (browser.new_context(viewport={"width": 1500, "height": 1400}) for _ in range(2))
    ana, ben = first.new_page(), second.new_page()
    for page in (ana, ben):
        page.goto(f"{studio.url}/runbooks")
        shown(page, "Runbooks", "review history")

    # "next pending" walks to the round waiting for review.
    ana.get_by_role("button", name=re.compile(r"^next pending \(\d+\)")).click()
    shown(ana, f"{rid} · pending_review")
    ana.get_by_label("reviewer").last.fill("ana")
    ana.get_by_label("reason").last.fill("reads well")
    ana.get_by_role("button", name="approve (1)").click()
    body = shown(ana, "approved 1 runbook(s) as ana", f"{rid} · approved")  # the queue moved at once
    assert "ana" in body
    assert ana.get_by_label("reviewer").last.input_value() == "ana"  # remembered for the session
    assert ana.get_by_label("reason").last.input_value() == ""  # the reason was that decision's

    ben.goto(f"{studio.url}/runbooks?runbook={rid}")
    body = shown(ben, f"{rid} · approved")  # ben sees ana's decision
    ben.get_by_label("reviewer").last.fill("ben")
    ben.get_by_label("reason").last.fill("the answer is in step 3")
    ben.get_by_role("button", name="reject (1)").click()
    shown(ben, "rejected 1 runbook(s) as ben", f"{rid} · human_rejected")
    shot(ben, "review-second-reviewer", at="review history")

    ana.reload()
    ana.goto(f"{studio.url}/runbooks?runbook={rid}")
    # After a rerun ana sees ben's decision (the latest decides) and both in the history.
    body = shown(ana, f"{rid} · human_rejected", "the answer is in step 3")
    assert "reads well" in body and "the answer is in step 3" in body
    shot(ana, "review-history-both", at="review history")
    first.close()
    second.close()

    detail = studio.rsr_json("runbooks", "show", rid)
    decisions = [(r["reviewer"], r["decision"]) for r in detail["reviews"]]
    assert decisions[-2:] == [("ana", "approve"), ("ben", "reject")]
    assert detail["status"] == "human_rejected"


def test_a_round_opens_from_its_id_in_the_queue_and_ticked_rounds_are_reviewed_together(studio, page):
    page.goto(f"{studio.url}/runbooks")
    shown(page, "Runbooks", "review history")
    queue = page.locator(".rsr-grid").first
    ids = queue.locator("button.open").all_inner_texts()
    assert len(ids) >= 4, ids
    # The round shown at first is the queue's first; another opens from its id (its checkbox stays unticked).
    assert f"· {ids[0]} ·" in page.get_by_role("heading", level=3).first.inner_text()
    queue.get_by_role("button", name=ids[2], exact=True).click()
    shown(page, f" · {ids[2]} · ")
    page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
    assert queue.locator("tr.chosen").count() == 0
    # Two rounds ticked (a click anywhere else on the row ticks it), then one decision for both.
    page.get_by_role("checkbox", name=f"select {ids[1]}").click()
    shown(page, "bulk review (1 ticked)")
    queue.locator(f"tr[data-key='{ids[3]}'] td").last.click()
    shown(page, "bulk review (2 ticked)")
    page.get_by_role("button", name=re.compile(r"^bulk review \(2 ticked\)")).click()
    page.locator(".st-key-review_bulk input[name=reviewer]").fill("erin")
    page.locator(".st-key-review_bulk").get_by_role("button", name="reject (2)").click()
    shown(page, "rejected 2 runbook(s) as erin", "bulk review (0 ticked)")
    shot(page, "review-opened-and-bulk", at="bulk review")
    for rid in (ids[1], ids[3]):
        reviews = studio.rsr_json("runbooks", "show", rid)["reviews"]
        assert (reviews[-1]["reviewer"], reviews[-1]["decision"]) == ("erin", "reject")
    assert studio.rsr_json("runbooks", "show", ids[2])["reviews"] == [] or all(
        r["reviewer"] != "erin" for r in studio.rsr_json("runbooks", "show", ids[2])["reviews"]
    )


def test_cli_writes_while_the_app_is_open_and_the_app_shows_them(studio, page, data_dir):
    page.goto(f"{studio.url}/trajectories")
    body = shown(page, "trajectories)")
    before = int(re.search(r"([\d,]+) trajectories\)", body).group(1).replace(",", ""))
    # The app is open on this database; the CLI is not refused.
    report = studio.rsr_json("ingest", str(data_dir / "harbor_job"))
    assert report["trajectories_added"] > 0
    page.reload()
    body = shown(page, f"{before + report['trajectories_added']:,} trajectories)")
    shot(page, "list-after-cli-ingest")


def test_rewrite_form_is_kept_per_database_without_the_key(studio, browser):
    endpoint, planner, secret = "http://127.0.0.1:9/v1", "planner-under-test", "sk-never-stored-123"
    context = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = context.new_page()
    page.goto(f"{studio.url}/rewrite")
    shown(page, "Sources", "model endpoint: none set")
    _field(page, "rw_endpoint", "endpoint (OpenAI-compatible base URL)").fill(endpoint)
    _field(page, "rw_endpoint", "endpoint (OpenAI-compatible base URL)").press("Enter")
    shown(page, f"Model endpoint in use: {endpoint}", f"model endpoint: {endpoint}")
    _field(page, "rw_endpoint", "planner model").fill(planner)
    _field(page, "rw_endpoint", "planner model").press("Enter")
    _field(page, "rw_endpoint", "API key (blank: OPENAI_API_KEY; never stored)").fill(secret)
    _field(page, "rw_endpoint", "API key (blank: OPENAI_API_KEY; never stored)").press("Enter")
    shown(page, "Sources", f"planner / critic / executor: {planner} /")
    context.close()

    # A new session (another tab, a reload) gets the same choices from the database, not the key.
    other = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = other.new_page()
    page.goto(f"{studio.url}/rewrite")
    body = shown(page, f"Model endpoint in use: {endpoint}")
    assert "No model endpoint configured" not in body
    assert _field(page, "rw_endpoint", "endpoint (OpenAI-compatible base URL)").input_value() == endpoint
    assert _field(page, "rw_endpoint", "planner model").input_value() == planner
    assert _field(page, "rw_endpoint", "API key (blank: OPENAI_API_KEY; never stored)").input_value() == ""
    shot(page, "rewrite-form-kept")
    other.close()
    stored = " ".join(str(v) for row in _query(studio, "SELECT * FROM app_settings") for v in row)
    assert endpoint in stored and secret not in stored


def test_a_jobs_failed_units_are_shown_grouped_by_error(studio, page, scripted):
    server, _ = scripted([])  # answers no model call: every plan unit fails with the server's error
    source = _query(
        studio,
        "SELECT trajectory_id FROM trajectories WHERE kind = 'discovery' AND reward >= 1 ORDER BY 1 LIMIT 1",
    )[0][0]
    studio.env["RSR_LLM_BASE_URL"] = server.url
    try:
        run = studio.rsr("rewrite", "--source", source, "--k", "2", "--m", "1", "--planner-model", "p",
                         "--critic-model", "c", "--executor-model", "e", "--json", check=False)  # fmt: skip
    finally:
        studio.env.pop("RSR_LLM_BASE_URL")
    assert run.returncode == 1, run.stderr
    job = json.loads(run.stdout)
    assert job["status"] == "failed"
    page.goto(f"{studio.url}/rewrite")
    body = shown(page, "2 failed unit(s) (plan)", f"{job['job_id']}: 0/2 units done, 2 failed")
    assert "first: " in body and job["job_id"] in body
    shot(page, "job-failures", at="2 failed unit(s) (plan)")
    shown_cli = studio.rsr("jobs", "show", job["job_id"]).stdout
    assert "2 failed unit(s)" in shown_cli or "failed" in shown_cli


def test_diff_says_why_a_rewrite_was_not_kept_wraps_and_opens_side_by_side_here(studio, page):
    rid, source = _query(
        studio,
        "SELECT trajectory_id, source_trajectory_id FROM rewrite_status WHERE answer_transfer AND NOT kept "
        "ORDER BY 1 LIMIT 1",
    )[0]
    page.goto(f"{studio.url}/diff")
    shown(page, "Command diff", "exact overlap")
    for popover, label, option in (
        ("diff_source_pop", "source trajectory", source),
        ("diff_rewrite_pop", "rewrite (", rid),
    ):
        box = page.get_by_role("combobox", name=re.compile("^" + re.escape(label)))
        _open(page, popover, box)
        _choose(page, label, option)
        _close(page, box)  # it would cover the next picker
    body = shown(page, "not kept: ")
    assert "answer transfer" in body
    shot(page, "diff-not-kept")
    # Long commands wrap inside the table instead of widening it.
    widths = page.locator(".rsr-grid").evaluate_all(
        "(grids) => grids.map((g) => [g.querySelector('table').scrollWidth, g.clientWidth])"
    )
    assert widths and all(table <= box + 1 for table, box in widths), widths
    # Rows only in the source, only in the rewrite, or changed are coloured.
    assert page.locator(
        ".rsr-grid tr.tone-delete, .rsr-grid tr.tone-insert, .rsr-grid tr.tone-replace"
    ).count()
    pages_before = len(page.context.pages)
    page.get_by_text("open both side by side").click()
    # Both ids are on the Diff page already: wait for the navigation, not for them.
    page.wait_for_url(re.compile(r"/trajectories\?.*compare="), timeout=30_000)
    body = shown(page, rid, source)
    assert len(page.context.pages) == pages_before  # same tab
    assert f"compare={source}" in page.url.replace("%2C", ",")
    shot(page, "side-by-side")


def test_scripts_in_trajectory_content_do_not_run(studio, page, tmp_path):
    hostile = '<script>alert("s")</script><img src=x onerror=alert("i")> **bold** [x](javascript:alert(1))'
    doc = {
        "schema_version": "ATIF-v1.5",
        "session_id": "hostile-html",
        "extra": {"rsr": {"task_id": '<img src=y onerror=alert("t")><b>task'}},
        "agent": {"name": "terminus-2", "version": "1", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "user", "message": hostile},
            {"step_id": 2, "source": "agent", "message": hostile,
             "tool_calls": [{"tool_call_id": "c", "function_name": "bash_command",
                             "arguments": {"keystrokes": f"echo '{hostile}'\n", "duration": 0.1}}],
             "observation": {"results": [{"source_call_id": "c", "content": hostile}]}},
        ],
    }  # fmt: skip
    (tmp_path / "hostile.json").write_text(json.dumps(doc))
    studio.rsr("ingest", str(tmp_path / "hostile.json"))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{studio.url}/trajectories?trajectory=hostile-html")
    body = shown(page, "step 2 · agent")
    assert "<script>" in body  # shown as text
    assert dialogs == []
    assert page.evaluate("() => document.querySelectorAll('[data-testid=stMain] img[src=x]').length") == 0
    shot(page, "hostile-content")
    # The list's table shows the task id as text: no element made of it, no script run.
    page.goto(f"{studio.url}/trajectories")
    shown(page, "trajectories)")
    page.get_by_label("search commands, messages and observations").fill("onerror")
    page.keyboard.press("Enter")
    _, rows = _grid_when(page, lambda h, r: len(r) == 1)
    assert rows[0][:2] == ["hostile-html", '<img src=y onerror=alert("t")><b>task']
    assert page.evaluate("() => document.querySelectorAll('img[src=y], .rsr-grid b').length") == 0
    assert dialogs == []


def test_long_output_is_cut_until_show_all_is_clicked(studio, page, tmp_path):
    long = "".join(f"line {i:05d}\n" for i in range(900)) + "THE-END"
    doc = {
        "schema_version": "ATIF-v1.5",
        "session_id": "long-output",
        "agent": {"name": "terminus-2", "version": "1", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "print a lot"},
            {"step_id": 2, "source": "agent", "message": "ok",
             "tool_calls": [{"tool_call_id": "c", "function_name": "bash_command",
                             "arguments": {"keystrokes": "seq 900\n", "duration": 0.1}}],
             "observation": {"results": [{"source_call_id": "c", "content": long}]}},
        ],
    }  # fmt: skip
    (tmp_path / "long.json").write_text(json.dumps(doc))
    studio.rsr("ingest", str(tmp_path / "long.json"))
    page.goto(f"{studio.url}/trajectories?trajectory=long-output")
    body = shown(page, "characters not shown")
    assert "THE-END" in body and "line 00450" not in body  # head and tail only
    page.get_by_role("button", name=f"show all {len(long):,} characters").click()
    page.get_by_text("line 00450").first.wait_for(timeout=TIMEOUT_MS)
    body = shown(page, "line 00450")
    assert "characters not shown" not in body
    shot(page, "long-output-shown-whole", at="line 00450")


def _open(page, popover: str, inside):
    """Open the popover keyed `popover` unless `inside` (a locator of what it holds) is visible already (a
    popover's widgets are drawn only while it is open); returns `inside`'s first match."""
    if not inside.count() or not inside.first.is_visible():
        page.locator(f".st-key-{popover} button").first.click()
        inside.first.wait_for(state="visible", timeout=TIMEOUT_MS)
    return inside.first


def _close(page, inside) -> None:
    """Close the open popover that holds `inside`: Escape (again if a select box in it took the first one), then
    a click outside it (on the page's title)."""
    for attempt in range(5):
        if not inside.count() or not inside.first.is_visible():
            return
        if attempt < 2:
            page.keyboard.press("Escape")
        else:
            page.locator("h1").first.click()
        page.wait_for_timeout(200)
    raise AssertionError("the popover did not close")


def _field(page, popover: str, label: str):
    """The field `label` in the popover keyed `popover`, opened first when it is closed."""
    return _open(page, popover, page.get_by_label(label, exact=True))


def _choose(page, label_start: str, option: str) -> None:
    """Pick the first option holding `option` in the selectbox whose label starts with `label_start`."""
    box = page.get_by_role("combobox", name=re.compile("^" + re.escape(label_start))).first
    box.click()
    box.fill(option)  # the list filters as one types
    page.get_by_role("option").filter(has_text=option).first.wait_for(state="attached", timeout=TIMEOUT_MS)
    # Chosen with the keyboard: a click on an option can chase it for good when the list is drawn again under
    # the pointer (seen on a loaded machine: "element was detached from the DOM, retrying" for 30 s).
    focused = page.locator("[role='option'][data-focused='true']")
    for _ in range(50):
        if focused.count() and option in focused.first.inner_text():
            break
        page.keyboard.press("ArrowDown")
    else:
        raise AssertionError(f"no option holding {option!r} to choose")
    page.keyboard.press("Enter")
    page.wait_for_function(IDLE, timeout=TIMEOUT_MS)


# Headers and rows of one of the studio's tables (rsr_core/ui/grid.py), the checkbox column left out.
_CELLS = """(table) => {
  const text = (cells) => [...cells].filter((c) => !c.classList.contains('pick')).map((c) => c.innerText.trim());
  return {headers: text(table.querySelectorAll('thead th')),
          rows: [...table.querySelectorAll('tbody tr')].map((tr) => text(tr.cells))};
}"""


def _grid(page, having: str = "trajectory_id") -> tuple[list[str], list[list[str]]]:
    """Column headers and rows of the studio's table with the column `having`, as the browser shows them."""
    tables = page.locator(".rsr-grid table")
    tables.first.wait_for(state="attached", timeout=TIMEOUT_MS)
    for table in tables.all():
        seen = table.evaluate(_CELLS)
        if having in seen["headers"]:
            return seen["headers"], seen["rows"]
    raise AssertionError(f"no table with a column {having!r}")


def _grid_when(page, ready, having: str = "trajectory_id") -> tuple[list[str], list[list[str]]]:
    """The grid once `ready(headers, rows)` holds (the run an action caused has redrawn it)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
        headers, rows = _grid(page, having)
        if ready(headers, rows):
            return headers, rows
        if time.monotonic() > deadline:
            raise AssertionError(f"the grid never showed what was expected: {headers} {rows[:3]}")
        page.wait_for_timeout(100)  # polling interval while the app reruns


def test_trajectory_list_sorts_by_any_column_and_shows_time_tokens_and_cost(studio, browser):
    context = browser.new_context(viewport={"width": 2400, "height": 1200})  # every column drawn
    page = context.new_page()
    page.goto(f"{studio.url}/trajectories")
    shown(page, "trajectories)")
    headers, _ = _grid(page)
    for column in (
        "reward",
        "steps",
        "prompt tokens",
        "completion tokens",
        "cost (USD)",
        "duration (s)",
        "started",
    ):
        assert column in headers, f"default column {column!r} missing: {headers}"

    # Sorted by steps, longest first: the first row is the longest run of the database.
    (longest,) = _query(studio, "SELECT max(n_steps) FROM trajectories")[0]
    _open(page, "list_sort_pop", page.get_by_role("combobox", name=re.compile("^sort by")))
    _choose(page, "sort by", "steps")
    shown(page, "sort by: steps")
    _open(page, "list_sort_pop", page.locator(".st-key-list_desc label")).click()
    shown(page, "sort by: steps (descending)")
    page.keyboard.press("Escape")  # the popover closes
    headers, rows = _grid_when(page, lambda h, r: r and r[0][h.index("steps")] == str(longest))
    steps = [int(r[headers.index("steps")]) for r in rows]
    assert steps[0] == longest and steps == sorted(steps, reverse=True), steps
    (tokens,) = _query(
        studio, "SELECT prompt_tokens FROM trajectories WHERE trajectory_id = ?", [rows[0][0]]
    )[0]
    assert rows[0][headers.index("prompt tokens")] == f"{tokens}"
    # The demo's scripted model has no price and its runs recorded none: the cost says so.
    assert rows[0][headers.index("cost (USD)")] == "unknown"

    # A chosen column appears.
    page.get_by_role("button", name="columns", exact=True).click()
    chooser = page.get_by_role("combobox", name=re.compile("^columns")).first
    chooser.click()
    chooser.fill("model")
    page.get_by_role("option").filter(has_text=re.compile("^model$")).first.click()
    page.keyboard.press("Escape")
    headers, rows = _grid_when(page, lambda h, r: "model" in h)
    (model,) = _query(studio, "SELECT model FROM trajectories WHERE trajectory_id = ?", [rows[0][0]])[0]
    assert rows[0][headers.index("model")] == model
    shot(page, "list-sorted-chosen-columns")

    # One run: when it started, how long it took, its tokens and cost.
    page.goto(f"{studio.url}/trajectories?trajectory={rows[0][0]}")
    body = shown(page, "completion tokens")
    started, prompt, completion = _query(
        studio,
        "SELECT started_at, prompt_tokens, completion_tokens FROM trajectories WHERE trajectory_id = ?",
        [rows[0][0]],
    )[0]
    assert f"{prompt:,} prompt + {completion:,} completion tokens" in body
    assert re.search(r"started \S+ · \d+\.\d s · ", body), "no start time and duration"
    assert "cost unknown" in body or re.search(r"\$\d+\.\d{4}", body)
    assert started is not None
    shot(page, "trajectory-time-tokens-cost")
    context.close()


def test_rows_clicked_on_two_pages_of_the_list_open_side_by_side(studio, page):
    page.goto(f"{studio.url}/trajectories")
    shown(page, "trajectories)")
    _, rows = _grid(page)
    first = rows[2][0]
    page.locator(".rsr-grid tbody tr").nth(2).click()  # a click anywhere on the row ticks it
    shown(page, "1 selected")
    pager = page.get_by_label(re.compile(r"^page \(of"))
    pager.fill("2")
    pager.press("Enter")
    _, rows = _grid_when(page, lambda h, r: r and first not in {x[0] for x in r})
    second = rows[0][0]
    page.get_by_role("checkbox", name=f"select {second}").click()
    shown(page, "2 selected")
    ticked = page.locator(".rsr-grid tbody tr.chosen")
    assert ticked.count() == 1 and ticked.first.get_attribute("data-key") == second
    shot(page, "list-chosen-on-two-pages")
    page.get_by_role("button", name="compare side by side").click()
    body = shown(page, "back to the list", first, second)
    assert body.index(first) < body.index(second)
    assert f"compare={first}&compare={second}" in page.url  # one value per id: ids may hold commas
    shot(page, "side-by-side-from-the-list")


STALE_MARKS = """() => { window.__marks = 0; new MutationObserver((records) => {
  window.__marks += records.filter((m) => m.attributeName === 'data-stale').length;
}).observe(document, {subtree: true, attributes: true}); }"""


def test_with_no_job_running_the_jobs_are_not_drawn_again_every_refresh(studio, page):
    """While no job runs, the page reads only whether a job started (every 5 s); the jobs' tables, progress and
    failures are not redrawn (each redraw marks every element of theirs stale and fresh again)."""
    with Store(studio.db, wait_s=60).transaction() as cur:
        jobs_sql.create_job(cur, "idle-job", {}, scripted=False)
        jobs_sql.add_units(cur, "idle-job", [(f"idle-job-u{i}", "plan", {}) for i in range(60)])
        jobs_sql.set_status(cur, "idle-job", "done")
    assert _query(studio, "SELECT count(*) FROM jobs WHERE status = 'running'") == [(0,)]
    page.goto(f"{studio.url}/rewrite")
    shown(page, "Jobs", "units of ")
    page.evaluate(STALE_MARKS)
    page.wait_for_timeout(4_000)  # more than two refreshes of the jobs at the pace of a running job
    marks = page.evaluate("() => window.__marks")
    assert marks < 10, f"{marks} elements marked stale and fresh again in 4 s on a page where nothing changed"


def test_a_running_jobs_progress_updates_live_in_the_open_page(studio, browser, scripted):
    # Every model call answers late (longer than the page takes to notice a job started while none ran), with
    # an error.
    server, _ = scripted([], latency_ms=6000)
    source = _query(
        studio,
        "SELECT trajectory_id FROM trajectories WHERE kind = 'discovery' AND reward >= 1 ORDER BY 1 DESC LIMIT 1",
    )[0][0]
    context = browser.new_context(viewport={"width": 2400, "height": 1400})
    page = context.new_page()
    page.goto(f"{studio.url}/rewrite")
    shown(page, "Jobs")
    env = {**studio.env, "RSR_LLM_BASE_URL": server.url}
    job = subprocess.Popen(
        [sys.executable, "-m", "rsr_core.cli", "rewrite", "--source", source, "--k", "3", "--m", "1",
         "--planner-model", "p", "--critic-model", "c", "--executor-model", "e", "--db", str(studio.db), "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Without a reload, the open page follows the job from a terminal: running, then its failures counted.
        page.get_by_text(re.compile(r": 0/3 units done, 0 failed")).first.wait_for(timeout=TIMEOUT_MS)
        page.get_by_text(re.compile(r": 0/3 units done, 3 failed")).first.wait_for(timeout=TIMEOUT_MS)
        out, err = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
    report = json.loads(out)
    assert report["status"] == "failed", err
    page.get_by_text(f"{report['job_id']}: 0/3 units done, 3 failed").first.wait_for(timeout=TIMEOUT_MS)
    job_id = report["job_id"]
    headers, rows = _grid_when(  # the table refreshes itself too: the job's row ends failed
        page,
        lambda h, r: any(x[0] == job_id and x[h.index("status")] == "failed" for x in r),
        having="job_id",
    )
    for column in (
        "started_at",
        "finished_at",
        "seconds",
        "prompt_tokens",
        "completion_tokens",
        "cost (USD)",
    ):
        assert column in headers, f"jobs table lacks {column!r}: {headers}"
    row = next(r for r in rows if r[0] == job_id)
    assert row[headers.index("started_at")] and row[headers.index("finished_at")]
    shot(page, "job-live-progress", at=f"{report['job_id']}: 0/3 units done")
    context.close()


def test_a_deep_link_as_the_first_visit_after_a_start_gets_the_studio_itself(studio, page):
    """A teammate's link opened first after `rsr app` starts: the studio's navigation and layout, not
    Streamlit's listing of the page files run on their own."""
    (tid,) = _query(studio, "SELECT trajectory_id FROM trajectories ORDER BY 1 LIMIT 1")[0]
    with serving(studio) as url:  # a fresh server: this is its first visit
        page.goto(f"{url}/trajectories?trajectory={tid}")
        shown(page, "step 1 · ")
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text().split()
        assert nav == ["Overview", "Trajectories", "Diff", "Runbooks", "Rewrite", "Similarity", "Export"]
        wide = page.evaluate("() => document.querySelector('[data-testid=stMainBlockContainer]').offsetWidth")
        assert wide > 1000, f"the page is not laid out wide ({wide} px)"
        shot(page, "first-visit-deep-link")


@pytest.mark.parametrize("base_path", ["", "lab/rsr"])
def test_a_page_opened_by_its_address_connects_to_the_server_at_once(studio, page, base_path):
    """Streamlit's frontend, opened at /<page>, first looks for the server at /<page>/_stcore and only then one
    level up: the studio tells it where the server is, so no request goes astray (also below a base path)."""
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(serving(studio, base_path)) if base_path else studio.url
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        page.goto(f"{url}/runbooks")
        page.locator("[data-testid='stMain'] h1", has_text="Runbooks").wait_for(timeout=TIMEOUT_MS)
        shown(page)
        stray = [u for u in asked if "/runbooks/" in u]
        assert stray == [], f"requests sent below the page's own path: {stray}"
        assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == f"{url}/"
        assert any(u.startswith(f"{url}/_stcore/") for u in asked)  # where the server is, was asked


HEATMAP = (
    CHARTS
    + r"""
  const chart = charts().find((g) => title(g).endsWith('by runbook'));
  if (!chart || !chart.querySelector('.point')) return null;
  const trace = chart._fullData[0];
  const [xa, ya] = [chart._fullLayout.xaxis, chart._fullLayout.yaxis];
  const box = chart.getBoundingClientRect();
  const cells = trace.hovertext.map((text, i) => {
    const [row, column] = text.replace(/^row /, '').split('<br>column ');
    return {row, column, value: trace.marker.color[i], size: trace.marker.size,
            px: box.left + xa._offset + xa.l2p(trace.x[i]), py: box.top + ya._offset + ya.l2p(trace.y[i])};
  });
  return {title: title(chart), cells, drawn: chart.querySelectorAll('.point').length};
}"""
)


def _heatmap(page) -> dict:
    shown(page, "pairwise heatmap of one task")
    page.get_by_text("pairwise heatmap of one task").click()
    page.wait_for_function(HEATMAP, timeout=TIMEOUT_MS)
    # Scrolled from the page's own script: a rerun may have replaced the chart's element since it was found.
    page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')].pop().scrollIntoView({block: 'center'})"
    )
    page.wait_for_timeout(200)  # the scroll settles before the cells' positions are read
    return page.wait_for_function(HEATMAP, timeout=TIMEOUT_MS).json_value()


def _hover(page, key: tuple[str, str], text: str) -> dict:
    """Hover the cell `key` (row, column) until the hover label shows `text`; the cell as drawn then. The
    pointer leaves and comes back on each try: a chart drawn again under a resting pointer shows no label."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        cells = page.wait_for_function(HEATMAP, timeout=TIMEOUT_MS).json_value()["cells"]
        cell = next(c for c in cells if (c["row"], c["column"]) == key)
        page.mouse.move(0, 0)
        page.mouse.move(cell["px"], cell["py"])
        try:
            page.wait_for_function(
                "(t) => (document.querySelector('.hoverlayer') || {textContent: ''}).textContent.includes(t)",
                arg=text,
                timeout=3000,
            )
            return cell
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise


def test_similarity_heatmap_draws_every_stored_pair_of_the_task_in_both_halves(studio, page):
    """The heatmap (a plotly figure: a square marker per cell, hover naming its row and column) draws one cell per
    stored pair and its mirror, each of a visible size, with the stored score."""
    page.goto(f"{studio.url}/similarity")
    drawn = _heatmap(page)
    task = drawn["title"].split(": ", 1)[1].removesuffix(" by runbook")
    stored = _query(
        studio, "SELECT trajectory_a, trajectory_b, exact FROM similarity_pairs WHERE task_id = ?", [task]
    )
    assert stored, f"no stored pairs for {task!r}"
    cells = {(c["row"].split(" · ")[-1], c["column"].split(" · ")[-1]): c for c in drawn["cells"]}
    assert len(cells) == len(drawn["cells"]) == drawn["drawn"] == 2 * len(stored)  # every pair, both halves
    for a, b, score in stored:
        for key in ((a, b), (b, a)):
            assert float(cells[key]["value"]) == pytest.approx(score, abs=1e-3), key
            assert cells[key]["size"] >= 4, "a cell drawn without a size"


def test_clicking_a_heatmap_cell_opens_that_pair_side_by_side(studio, page):
    """A real click on a cell of the heatmap opens the Trajectories page with that pair side by side."""
    page.goto(f"{studio.url}/similarity")
    drawn = _heatmap(page)
    first = min(drawn["cells"], key=lambda c: c["px"] + c["py"])  # in the window after the scroll
    row, column = first["row"].split(" · ")[-1], first["column"].split(" · ")[-1]
    cell = _hover(page, (first["row"], first["column"]), column)  # hover names the pair
    page.mouse.click(cell["px"], cell["py"])
    page.wait_for_url("**/trajectories?compare=*", timeout=TIMEOUT_MS)
    body = shown(page, "back to the list")
    assert row in body and column in body
    shot(page, "heatmap_click")
