"""A team at once: reviewers in their own browser contexts working the review queue of one studio together.

    .venv/bin/python benchmarks/ui_team.py --db /path/paper.duckdb [--reviewers 10] [--decisions 6]
    .venv/bin/python benchmarks/ui_team.py --corpus /path/corpus    # builds the database first

A working copy of the database gets the review queue of benchmarks/ui_fixture.py; `streamlit run app.py` serves
it and headless Debian chromium (Playwright, one browser, a context per reviewer) drives it. Each reviewer opens
the Runbooks page and, --decisions times, clicks "next pending", reads the round for about --read-s seconds,
types their name and a reason of their own, and approves. A decision's latency is from the approve click until
the run it started has finished, nothing is stale and the page has not changed for QUIET_MS (the time of its
last change). One reviewer alone works the queue first, then the team all at once, in the same run. Then the
store is read: every decision clicked must be stored exactly once (one review row per reviewer and reason).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ui_browser import ARGS, CHROMIUM, OBSERVER, QUIET_MS, message_type
from benchmarks.ui_fixture import ROOT, Server, prepare

TIMEOUT_S = 180
_STATE = """() => [window.__rsr.state, window.__rsr.last, performance.now(),
  !!document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')]"""


class Session:
    """A reviewer's page and the runs its server finished (script_finished messages on its websocket, read
    through the DevTools protocol as benchmarks/ui_browser.py reads them)."""

    def __init__(self, page) -> None:
        self.page, self.finished = page, 0

    async def watch(self, context) -> None:
        cdp = await context.new_cdp_session(self.page)
        await cdp.send("Network.enable")
        cdp.on("Network.webSocketFrameReceived", self._frame)

    def _frame(self, event: dict) -> None:
        response = event["response"]
        if (
            response["opcode"] == 2
            and message_type(base64.b64decode(response["payloadData"])) == "script_finished"
        ):
            self.finished += 1

    async def act(self, action) -> float:
        """Run `action`, wait until the run it started has finished, nothing is stale and the page has rested;
        ms from the action to the page's last change."""
        before = self.finished
        since = await self.page.evaluate("() => performance.now()")
        await action()
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            state, last, now, pending = await self.page.evaluate(_STATE)
            ran = self.finished > before and last > since
            if ran and state == "notRunning" and now - last >= QUIET_MS and not pending:
                return float(last - since)
            await asyncio.sleep(0.025)
        raise TimeoutError("the review did not settle")


async def reviewer(
    browser, url: str, name: str, decisions: int, ready: list[str], start: asyncio.Event, read_s: float
) -> list[dict]:
    """One reviewer's session: `decisions` approvals of the next pending round, each timed; a round is read for
    about `read_s` seconds (0.5-1.5 times it, drawn from a generator seeded with the reviewer's name) before it is
    decided."""
    rng = random.Random(name)
    context = await browser.new_context(viewport={"width": 1500, "height": 1100})
    await context.add_init_script(OBSERVER)
    page = await context.new_page()
    me = Session(page)
    await me.watch(context)
    await me.act(lambda: page.goto(f"{url}/runbooks"))
    await page.get_by_text("review history").first.wait_for(timeout=TIMEOUT_S * 1000)
    ready.append(name)
    await start.wait()
    done = []
    for n in range(decisions):
        next_button = page.get_by_role("button", name=re.compile(r"^next pending \(\d+\)"))
        await me.act(next_button.click)
        await asyncio.sleep(read_s * rng.uniform(0.5, 1.5))
        reason = f"{name} decision {n}"
        await page.locator(".st-key-review_focus input[name=reviewer]").fill(name)
        await page.locator(".st-key-review_focus input[name=reason]").fill(reason)
        approve = page.locator(".st-key-review_focus button[name=approve]")
        ms = await me.act(approve.click)
        shown = await page.get_by_text(f"runbook(s) as {name}").count()
        done.append({"reviewer": name, "reason": reason, "ms": ms, "confirmed": shown > 0})
    await context.close()
    return done


async def session(
    url: str, reviewers: int, decisions: int, tag: str, read_s: float
) -> tuple[list[dict], float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        start, ready = asyncio.Event(), list[str]()
        tasks = [
            asyncio.create_task(reviewer(browser, url, f"{tag}-{i}", decisions, ready, start, read_s))
            for i in range(reviewers)
        ]
        # Everyone has the page open before anyone starts: the team works at once.
        while len(ready) < reviewers and not any(t.done() for t in tasks):
            await asyncio.sleep(0.2)
        began = time.monotonic()
        start.set()
        results = [r for t in await asyncio.gather(*tasks) for r in t]
        await browser.close()
    return results, time.monotonic() - began


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stored(db: Path, tag: str) -> dict[tuple[str, str], int]:
    """(reviewer, reason) -> review rows stored, for this run's reviewers."""
    from rsr_core.store import Store

    with Store(db).reading() as cur:
        rows = cur.execute(
            "SELECT reviewer, reason, count(*) FROM reviews WHERE reviewer LIKE ? GROUP BY ALL", [f"{tag}-%"]
        ).fetchall()
    return {(r, why): n for r, why, n in rows}


def summary(label: str, results: list[dict], wall_s: float, server_s: float, db: Path, tag: str) -> dict:
    rows = stored(db, tag)
    clicked = {(r["reviewer"], r["reason"]) for r in results}
    once = sum(1 for key in clicked if rows.get(key) == 1)
    return {
        "who": label,
        "decisions": len(results),
        "stored_once": once,
        "stored_rows": sum(rows.values()),
        "unconfirmed": sum(1 for r in results if not r["confirmed"]),
        "median_ms": round(statistics.median(r["ms"] for r in results)),
        "p90_ms": round(sorted(r["ms"] for r in results)[int(0.9 * (len(results) - 1))]),
        "wall_s": round(wall_s, 1),
        "server_cpu_s_per_decision": round(server_s / len(results), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, help="a paper-scale database to copy (not written)")
    parser.add_argument("--corpus", type=Path, help="build the database from this generated corpus")
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=6, help="approvals per reviewer")
    parser.add_argument("--runbooks", type=int, default=2000)
    parser.add_argument(
        "--read-s", type=float, default=0.0, help="seconds a reviewer reads a round before deciding (0: none)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rsr-ui-team-") as tmp:
        work = Path(tmp)
        db, added = prepare(args.db, args.corpus, work, args.runbooks)
        print(f"database {db}: added {added}", flush=True)
        server = Server(ROOT / "app.py", {"RSR_DB": str(db)}).start()
        try:
            assert server.proc is not None
            # The server's CPU over each session (its pages' first loads included): its share apart from the
            # browser's, which runs on the same cores.
            cpu = [cpu_s(server.proc.pid)]
            alone, alone_s = asyncio.run(session(server.url, 1, args.decisions * 2, "solo", args.read_s))
            cpu.append(cpu_s(server.proc.pid))
            team, team_s = asyncio.run(
                session(server.url, args.reviewers, args.decisions, "team", args.read_s)
            )
            cpu.append(cpu_s(server.proc.pid))
        finally:
            server.stop()
        rows = [summary("one reviewer", alone, alone_s, cpu[1] - cpu[0], db, "solo"),
                summary(f"{args.reviewers} reviewers at once", team, team_s, cpu[2] - cpu[1], db, "team")]  # fmt: skip
    rows[1]["x_single"] = round(rows[1]["median_ms"] / rows[0]["median_ms"], 2)
    if args.json:
        args.json.write_text(json.dumps({"queue": added, "rows": rows}, indent=1))
    print("| who | decisions | stored exactly once | median ms | p90 ms | × one reviewer | wall s | server CPU s / decision |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['who']} | {r['decisions']} | {r['stored_once']} of {r['decisions']} ({r['stored_rows']} rows) "
              f"| {r['median_ms']} | {r['p90_ms']} | {r.get('x_single', 1.0):.2f} | {r['wall_s']} "
              f"| {r['server_cpu_s_per_decision']} |")  # fmt: skip


if __name__ == "__main__":
    main()
