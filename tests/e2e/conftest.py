"""The studio as a user starts it (`rsr app --db FILE --port N`) on a demo database of its own, and Debian's
chromium driven by Playwright: its headless shell (package chromium-headless-shell), the same browser without
the desktop one's window and GPU code (lighter on a machine the rest of the suite shares). Nothing waits a
fixed time: every step waits for what it needs to see."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium-headless-shell"
SHOTS = ROOT / "test-artifacts" / "screenshots"
START_TIMEOUT_S = 120
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


@dataclass
class Studio:
    """A running studio and the database it serves."""

    url: str
    db: Path
    env: dict[str, str]
    log: Path

    def rsr(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
        """Run `rsr ARGS --db DB` in another process, as a researcher's terminal would."""
        return subprocess.run(
            [sys.executable, "-m", "rsr_core.cli", *args, "--db", str(self.db)],
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    def rsr_json(self, *args: str) -> dict:
        """`rsr ARGS --db DB --json`, parsed."""
        return json.loads(self.rsr(*args, "--json").stdout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_health(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = START_TIMEOUT_S) -> None:
    """Return once the server answers its health check; fail the test (with the server's log) when it exits
    or has not answered within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            pytest.fail(
                f"the studio exited with status {proc.returncode} before answering:\n{log.read_text()}"
            )
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as res:
                if res.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the studio did not answer {url} within {timeout_s:.0f} s:\n{log.read_text()}")
        time.sleep(0.2)  # polling interval of the health check, not a wait for the app


@contextmanager
def serving(studio: Studio, base_path: str = "") -> Iterator[str]:
    """`rsr app` on the studio's database, as a user starts it (below `base_path`, Streamlit's
    server.baseUrlPath, when given); yields its URL once it answers."""
    port = _free_port()
    env = {**studio.env, **({"STREAMLIT_SERVER_BASE_URL_PATH": base_path} if base_path else {})}
    with studio.log.open("a") as log:
        command = [sys.executable, "-m", "rsr_core.cli", "app", "--db", str(studio.db), "--port", str(port)]
        proc = subprocess.Popen(
            [*command, "--address", "127.0.0.1"],
            env=env,
            cwd=studio.db.parent,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}" + (f"/{base_path}" if base_path else "")
    try:
        wait_for_health(url, proc, studio.log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def studio(tmp_path_factory) -> Iterator[Studio]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium-headless-shell is not installed: run `make chromium` (make test does)")
    tmp = tmp_path_factory.mktemp("studio")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RSR_")}
    env.update(RSR_DB_WAIT="60", RSR_LLM_MAX_RETRIES="0", PYTHONUNBUFFERED="1")
    studio = Studio("", tmp / "studio.duckdb", env, tmp / "studio.log")
    studio.rsr("demo", "build")
    with serving(studio) as url:
        studio.url = url
        yield studio


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context (its own Streamlit session) with one page."""
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    yield context.new_page()
    context.close()
