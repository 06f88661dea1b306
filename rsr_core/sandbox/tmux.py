"""A tmux session inside a sandbox: send keystrokes the Terminus way, read what is new on the terminal."""

from __future__ import annotations

import time

from rsr_core.analysis.commands import TMUX_KEY_NAMES
from rsr_core.sandbox.docker_sandbox import DockerSandbox

WIDTH, HEIGHT = 160, 40
HISTORY_LINES = 100_000


class TmuxSession:
    """The agent's terminal (160x40)."""

    def __init__(self, sandbox: DockerSandbox, name: str = "agent"):
        self.sandbox = sandbox
        self.name = name
        self._last: list[str] = []

    def start(self, timeout_s: float = 10.0) -> None:
        """Start tmux with bash and wait for the first prompt."""
        res = self.sandbox.exec(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                str(WIDTH),
                "-y",
                str(HEIGHT),
                "bash",
                "--login",
                ";",
                "set-option",
                "-t",
                self.name,
                "history-limit",
                str(HISTORY_LINES),
            ]
        )
        if res.exit_code != 0:
            raise RuntimeError(f"cannot start tmux in the sandbox: {res.output.strip()}")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.screen().strip():
                break
            time.sleep(0.05)
        self._last = self._capture_lines()

    def send(self, keystrokes: str) -> None:
        """Send keystrokes: each line is typed literally and followed by Enter when a newline followed it;
        a line that is only a tmux key name (C-c, Escape, …) is sent as that key."""
        argv: list[str] = ["tmux"]
        segments = keystrokes.split("\n")
        for i, segment in enumerate(segments):
            last = i == len(segments) - 1
            if segment.strip() in TMUX_KEY_NAMES and segment.strip() != "q":
                argv += ["send-keys", "-t", self.name, segment.strip(), ";"]
            elif segment:
                argv += ["send-keys", "-t", self.name, "-l", "--", segment, ";"]
            if not last:
                argv += ["send-keys", "-t", self.name, "Enter", ";"]
        if len(argv) > 1:
            res = self.sandbox.exec(argv[:-1])
            if res.exit_code != 0:
                raise RuntimeError(f"tmux send-keys failed: {res.output.strip()}")

    def _capture_lines(self, history: bool = True) -> list[str]:
        argv = ["tmux", "capture-pane", "-p", "-J", "-t", self.name]
        if history:
            argv[3:3] = ["-S", f"-{HISTORY_LINES}"]
        out = self.sandbox.exec(argv).output
        lines = [line.rstrip() for line in out.split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def screen(self) -> str:
        """The visible screen."""
        return "\n".join(self._capture_lines(history=False))

    def new_output(self) -> tuple[str, bool]:
        """(text, incremental): what appeared since the last read, or the whole screen when that cannot be told."""
        lines = self._capture_lines()
        prev = self._last
        self._last = lines
        keep = max(len(prev) - 1, 0)  # the last line (the prompt) is usually rewritten by typing
        if len(lines) >= keep and lines[:keep] == prev[:keep]:
            return "\n".join(lines[keep:]), True
        return self.screen(), False
