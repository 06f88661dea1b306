"""The app in a real browser: `streamlit run app.py` on a free port, driven by Playwright in Debian's chromium.
Screenshots of every page go to test-artifacts/screenshots/."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rsr_core.demo import build_demo
from rsr_core.store import Store

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "test-artifacts" / "screenshots"
CHECKS = {
    "": ["Coverage of the discovery harnesses", "Rewrite funnel"],
    "trajectories": ["Trajectories", "search commands, messages and observations"],
    "diff": ["Command diff", "exact overlap"],
    "runbooks": ["Runbooks", "review history"],
    "rewrite": ["Rewrite", "Sources"],
    "similarity": ["Command similarity of rewrites"],
    "export": ["Export for fine-tuning", "would be exported"],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed: run `make chromium` (make test does)")
    db = tmp_path_factory.mktemp("e2e") / "demo.duckdb"
    store = Store(db)
    build_demo(store)
    store.close()
    port = _free_port()
    env = {**os.environ, "RSR_DB": str(db)}
    env.pop("RSR_LLM_BASE_URL", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


def _settle(page, text: str) -> str:
    """Wait until the page shows `text` and has stopped running; returns the main area's text."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(1500)
    return page.inner_text("[data-testid='stMain']")


def test_every_page_in_a_real_browser(app_url, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1500, "height": 2400})
    for path, texts in CHECKS.items():
        page.goto(f"{app_url}/{path}")
        body = _settle(page, texts[0])
        if path in ("trajectories", "runbooks", "export"):  # tables render after the text around them
            page.locator("[data-testid='stDataFrame'], [data-testid='stTable']").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
        for text in texts:
            assert text in body, f"/{path}: {text!r} not shown"
        assert "Traceback" not in body
        page.screenshot(path=str(SHOTS / f"{path or 'overview'}.png"))
    page.close()


def test_deep_link_and_html_safety_in_the_browser(app_url, browser):
    page = browser.new_page(viewport={"width": 1500, "height": 2400})
    page.goto(f"{app_url}/trajectories?trajectory=terminus-2-json-to-env-a116cfa0a1&step=4")
    body = _settle(page, "linked step")
    assert "terminus-2-json-to-env-a116cfa0a1" in body and "step 4 · agent · linked step" in body
    page.goto(
        f"{app_url}/trajectories?compare=terminus-2-json-to-env-a116cfa0a1,statem-json-to-env-1517a023aa"
    )
    body = _settle(page, "statem-json-to-env-1517a023aa")
    assert "terminus-2-json-to-env-a116cfa0a1" in body
    page.screenshot(path=str(SHOTS / "compare.png"))
    page.goto(f"{app_url}/trajectories?trajectory=__nope__")
    assert "no trajectory '__nope__'" in _settle(page, "no trajectory")
    page.close()


def test_scripts_in_content_do_not_run(app_url, browser, tmp_path):
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/trajectories?trajectory=terminus-2-json-to-env-a116cfa0a1")
    body = _settle(page, "harness control")
    page.screenshot(path=str(SHOTS / "trajectory-detail.png"))
    assert "New terminal output" in body
    assert dialogs == []
    shutil.rmtree(tmp_path, ignore_errors=True)
