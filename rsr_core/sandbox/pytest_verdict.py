"""A second verdict for pytest: the verifier's own plugin records what the tests really did.

The plugin is put into the verifier's container by the engine after the agent's filesystem was committed, in a
directory named with a nonce made for this run (`/rsr-verdict-<nonce>`), and loaded through PYTEST_PLUGINS and
PYTHONPATH: the agent's committed filesystem never held it and its name cannot be known in advance. It appends
JSON lines to a record in that directory: the session's start (pytest_configure, before any conftest or test
module of the task is imported), each test phase's outcome (from the call's own exception info, which a
conftest rewriting the reports does not change) and the session's end (pytest_sessionfinish, with its exit
status). Every line carries the nonce. The record is read through the engine once nothing the tests started
is left running. A missing record (pytest not used, or the plugin not loaded) leaves the reward as the tests
wrote it; a record that says the session did not end normally, ran no test or had a test fail contradicts a
reward of 1 (`inconsistent`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

MAX_RECORD_BYTES = 4 * 1024 * 1024

# The plugin's source; {nonce} and {record} are filled in per run. Errors writing the record are swallowed:
# a missing line is read as the session not ending normally, never as a pass.
_PLUGIN = """\
import json, os
import pytest

_NONCE = {nonce!r}
_RECORD = {record!r}


def _write(event, **fields):
    try:
        line = json.dumps(dict(nonce=_NONCE, event=event, pid=os.getpid(), **fields))
        fd = os.open(_RECORD, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, (line + "\\n").encode())
        finally:
            os.close(fd)
    except Exception:
        pass


def pytest_configure(config):
    _write("start")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    excinfo = call.excinfo
    if excinfo is None:
        result = "passed"
    elif excinfo.errisinstance(pytest.skip.Exception) or hasattr(report, "wasxfail"):
        result = "skipped"
    else:
        result = "failed"
    _write("test", nodeid=item.nodeid, when=call.when, outcome=result)


def pytest_sessionfinish(session, exitstatus):
    _write("finish", exitstatus=int(exitstatus))
"""


@dataclass(frozen=True)
class VerdictPlugin:
    """One run's plugin: where it goes in the container and what the tests' environment needs to load it."""

    nonce: str

    @property
    def directory(self) -> str:
        """The fresh directory the engine unpacks the plugin into."""
        return f"/rsr-verdict-{self.nonce}"

    @property
    def module(self) -> str:
        """The plugin's module name (PYTEST_PLUGINS)."""
        return f"rsr_verdict_{self.nonce}"

    @property
    def record(self) -> str:
        """The JSON-lines record the plugin appends to."""
        return f"{self.directory}/record.jsonl"

    def files(self) -> dict[str, str]:
        """The plugin's file, relative to `directory`."""
        return {f"{self.module}.py": _PLUGIN.format(nonce=self.nonce, record=self.record)}

    def env(self, image_env: dict[str, str]) -> dict[str, str]:
        """PYTHONPATH and PYTEST_PLUGINS for the tests, keeping what the image already names."""
        path = image_env.get("PYTHONPATH")
        plugins = image_env.get("PYTEST_PLUGINS")
        return {
            "PYTHONPATH": f"{self.directory}:{path}" if path else self.directory,
            "PYTEST_PLUGINS": f"{self.module},{plugins}" if plugins else self.module,
        }


def new_plugin() -> VerdictPlugin:
    """A plugin with a nonce made for this run."""
    return VerdictPlugin(secrets.token_hex(16))


@dataclass(frozen=True)
class PytestVerdict:
    """What the plugin recorded: sessions started and ended normally, tests run, tests failed."""

    sessions: int
    finished: int
    bad_exit: list[int]
    ran: int
    failed: list[str]

    def contradiction(self) -> str | None:
        """Why a reward of 1 cannot stand with this record, or None when it can."""
        if self.finished < self.sessions:
            unfinished = self.sessions - self.finished
            return f"{unfinished} of {self.sessions} pytest session(s) did not end normally"
        if self.bad_exit:
            return f"pytest ended with exit status {', '.join(str(s) for s in self.bad_exit)}"
        if self.ran == 0:
            return "pytest ran no test"
        if self.failed:
            shown = ", ".join(self.failed[:5]) + (
                f" (+{len(self.failed) - 5})" if len(self.failed) > 5 else ""
            )
            return f"pytest recorded {len(self.failed)} failed test(s): {shown}"
        return None

    def summary(self) -> dict:
        """What the trajectory's `extra` keeps of the record."""
        return {
            "sessions": self.sessions,
            "finished": self.finished,
            "tests_run": self.ran,
            "tests_failed": len(self.failed),
        }


def parse_record(content: bytes, nonce: str) -> PytestVerdict | None:
    """The verdict in a record's text; None when no line carries this run's nonce (the plugin never ran)."""
    started: set[int] = set()
    finished: dict[int, int] = {}
    outcomes: dict[str, str] = {}
    for raw in content.decode(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or line.get("nonce") != nonce:
            continue
        pid, event = line.get("pid"), line.get("event")
        if not isinstance(pid, int):
            continue
        if event == "start":
            started.add(pid)
        elif event == "finish" and isinstance(line.get("exitstatus"), int):
            finished[pid] = line["exitstatus"]
        elif event == "test" and isinstance(line.get("nodeid"), str):
            key, outcome = f"{pid}:{line['nodeid']}", line.get("outcome")
            if outcome == "failed" or outcomes.get(key) == "failed":
                outcomes[key] = "failed"
            elif line.get("when") == "call":
                outcomes[key] = str(outcome)
    if not started:
        return None
    ran = sum(1 for outcome in outcomes.values() if outcome in ("passed", "failed"))
    failed = sorted(key.split(":", 1)[1] for key, outcome in outcomes.items() if outcome == "failed")
    return PytestVerdict(
        sessions=len(started),
        finished=sum(1 for pid in started if pid in finished),
        bad_exit=sorted({status for pid, status in finished.items() if pid in started and status != 0}),
        ran=ran,
        failed=failed,
    )
