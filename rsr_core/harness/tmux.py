"""A tmux session inside a sandbox: send keystrokes the Terminus way, read what is new on the terminal.

A turn (all its keystroke batches, the waits after them and the read of the terminal) runs as one script on the
sandbox's long-lived shell, so a turn costs one round trip however many commands it has. Every round trip has
a deadline (its waits plus a slack), so a stopped tmux server or a wedged shell ends in SandboxFailure.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from rsr_core.errors import SandboxFailure
from rsr_core.formats.commands import TMUX_KEY_NAMES
from rsr_core.models import Command
from rsr_core.protocols import Sandbox

WIDTH, HEIGHT = 160, 40
HISTORY_LINES = 100_000
MAX_WAIT_S = 60.0  # the Terminus protocol's cap on a command's duration
SLACK_S = 30.0  # what a round trip may take beyond its waits before the terminal counts as wedged


class TmuxSession:
    """The agent's terminal (160x40)."""

    def __init__(self, sandbox: Sandbox, name: str = "agent"):
        self.sandbox = sandbox
        self.name = name
        self._last: list[str] = []

    def _capture_cmd(self, history: bool = True) -> str:
        start = f"-S -{HISTORY_LINES} " if history else ""
        return f"tmux capture-pane -p -J {start}-t {shlex.quote(self.name)}"

    def start(self, timeout_s: float = 10.0) -> None:
        """Start tmux with bash and wait (inside the sandbox) for the first prompt."""
        name = shlex.quote(self.name)
        script = (
            f"tmux new-session -d -s {name} -x {WIDTH} -y {HEIGHT} bash --login \\; "
            f"set-option -t {name} history-limit {HISTORY_LINES} || exit 3\n"
            f"i=0; while [ $i -lt {int(timeout_s * 20)} ]; do "
            f'[ -n "$({self._capture_cmd(False)} | tr -d "[:space:]")" ] && break; sleep 0.05; i=$((i+1)); done\n'
            f"{self._capture_cmd()}"
        )
        res = self.sandbox.shell(script, timeout_s=timeout_s + SLACK_S)
        if res.exit_code != 0:
            raise SandboxFailure(f"cannot start tmux in the sandbox: {res.output.strip()[:300]}")
        self._last = _lines(res.output)

    def _send_argv(self, keystrokes: str) -> list[str]:
        """tmux arguments for one batch: each line typed literally and followed by Enter when a newline followed
        it; a line that is only a tmux key name (C-c, Escape, …) is sent as that key."""
        argv: list[str] = []
        segments = keystrokes.split("\n")
        for i, segment in enumerate(segments):
            if segment.strip() in TMUX_KEY_NAMES and segment.strip() != "q":
                argv += ["send-keys", "-t", self.name, segment.strip(), ";"]
            elif segment:
                argv += ["send-keys", "-t", self.name, "-l", "--", segment, ";"]
            if i < len(segments) - 1:
                argv += ["send-keys", "-t", self.name, "Enter", ";"]
        return argv[:-1]

    def send(self, keystrokes: str) -> None:
        """Send one keystroke batch without waiting."""
        self.run([Command(keystrokes=keystrokes, duration=0)], read=False)

    def run(
        self, commands: Sequence[Command], read: bool = True, budget_s: float | None = None
    ) -> tuple[str, bool]:
        """Send each batch and wait its duration (capped at 60 s, and all waits together at `budget_s`), then
        read what is new — in one round trip."""
        parts = []
        waited = 0.0
        left = float("inf") if budget_s is None else max(budget_s, 0.0)
        for cmd in commands:
            argv = self._send_argv(cmd.keystrokes)
            if argv:
                parts.append("tmux " + " ".join(shlex.quote(a) for a in argv))
            wait = min(cmd.duration, MAX_WAIT_S, left - waited)
            if wait > 0:
                parts.append(f"sleep {wait:.3f}")
                waited += wait
        if read:
            parts.append(f"echo {_MARK}")
            parts.append(self._capture_cmd())
        if not parts:
            return self.new_output() if read else ("", True)
        res = self.sandbox.shell("\n".join(parts), timeout_s=waited + SLACK_S)
        head, sep, capture = res.output.partition(_MARK + "\n")
        if res.exit_code != 0 and not sep:
            raise SandboxFailure(f"tmux failed: {head.strip()[:300]}")
        return self._diff(_lines(capture)) if read else ("", True)

    @property
    def last_read(self) -> str:
        """What the terminal showed at the last read (the first prompt, right after `start`)."""
        return "\n".join(self._last)

    def screen(self) -> str:
        """The visible screen."""
        return "\n".join(_lines(self.sandbox.shell(self._capture_cmd(False), timeout_s=SLACK_S).output))

    def new_output(self) -> tuple[str, bool]:
        """(text, incremental): what appeared since the last read, or the whole screen when that cannot be told."""
        return self._diff(_lines(self.sandbox.shell(self._capture_cmd(), timeout_s=SLACK_S).output))

    def _diff(self, lines: list[str]) -> tuple[str, bool]:
        prev = self._last
        self._last = lines
        keep = max(len(prev) - 1, 0)  # the last line (the prompt) is usually rewritten by typing
        if len(lines) >= keep and lines[:keep] == prev[:keep]:
            return "\n".join(lines[keep:]), True
        return self.screen(), False


_MARK = "__rsr_capture__"


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines
