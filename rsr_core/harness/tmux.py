"""A tmux session inside a sandbox: send keystrokes the Terminus way, read what is new on the terminal.

A turn (all its keystroke batches, the waits after them and the read of the terminal) runs as one script on the
sandbox's long-lived shell, so a turn costs one round trip however many commands it has. Every round trip has
a deadline (its waits plus a slack), so a stopped tmux server or a wedged shell ends in SandboxFailure.

tmux refuses a command longer than its message size (about 16 KiB) and a refused `send-keys` types nothing, so
long text is typed in pieces: each line in chunks of at most CHUNK_CHARS characters, several `send-keys` per
tmux call up to CALL_BYTES of arguments. A batch longer than MAX_BATCH_CHARS is not typed at all, and the
turn's observation says so, so the model learns why nothing happened.
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
CHUNK_CHARS = 1024  # at most 4 KiB of UTF-8: well inside tmux's 16 KiB message with the rest of the command
CALL_BYTES = 8192  # arguments per tmux call
MAX_BATCH_CHARS = 1_000_000


class TmuxSession:
    """The agent's terminal (160x40)."""

    def __init__(self, sandbox: Sandbox, name: str = "agent", slack_s: float = SLACK_S):
        self.sandbox = sandbox
        self.name = name
        self.slack_s = slack_s
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
        res = self.sandbox.shell(script, timeout_s=timeout_s + self.slack_s)
        if res.exit_code != 0:
            raise SandboxFailure(f"cannot start tmux in the sandbox: {res.output.strip()[:300]}")
        self._last = _lines(res.output)

    def _send_keys(self, keystrokes: str) -> list[list[str]]:
        """The `send-keys` commands of one batch: each line typed literally (in chunks) and followed by Enter when
        a newline followed it; a line that is only a tmux key name (C-c, Escape, …) is sent as that key."""
        keys: list[list[str]] = []
        segments = keystrokes.split("\n")
        for i, segment in enumerate(segments):
            if segment.strip() in TMUX_KEY_NAMES and segment.strip() != "q":
                keys.append(["send-keys", "-t", self.name, segment.strip()])
            else:
                for at in range(0, len(segment), CHUNK_CHARS):
                    keys.append(
                        ["send-keys", "-t", self.name, "-l", "--", _literal(segment[at : at + CHUNK_CHARS])]
                    )
            if i < len(segments) - 1:
                keys.append(["send-keys", "-t", self.name, "Enter"])
        return keys

    def _send_calls(self, keystrokes: str) -> list[str]:
        """Shell lines running tmux for one batch, each call's arguments within CALL_BYTES."""
        calls: list[str] = []
        argv: list[str] = []
        size = 0
        for cmd in self._send_keys(keystrokes):
            n = sum(len(a.encode()) + 1 for a in cmd)
            if argv and size + n > CALL_BYTES:
                calls.append("tmux " + " ".join(shlex.quote(a) for a in argv[:-1]))
                argv, size = [], 0
            argv += [*cmd, ";"]
            size += n + 2
        if argv:
            calls.append("tmux " + " ".join(shlex.quote(a) for a in argv[:-1]))
        return calls

    def send(self, keystrokes: str) -> None:
        """Send one keystroke batch without waiting."""
        self.run([Command(keystrokes=keystrokes, duration=0)], read=False)

    def run(
        self, commands: Sequence[Command], read: bool = True, budget_s: float | None = None
    ) -> tuple[str, bool]:
        """Send each batch and wait its duration (capped at 60 s, and all waits together at `budget_s`), then
        read what is new — in one round trip."""
        parts = []
        refused = []
        waited = 0.0
        left = float("inf") if budget_s is None else max(budget_s, 0.0)
        for n, cmd in enumerate(commands, 1):
            if len(cmd.keystrokes) > MAX_BATCH_CHARS:
                refused.append(
                    f"[keystrokes of command {n} not typed: {len(cmd.keystrokes):,} characters, more than "
                    f"{MAX_BATCH_CHARS:,} in one batch; write long text in several commands]"
                )
                continue
            parts += self._send_calls(cmd.keystrokes)
            wait = min(cmd.duration, MAX_WAIT_S, left - waited)
            if wait > 0:
                parts.append(f"sleep {wait:.3f}")
                waited += wait
        if read:
            parts.append(f"echo {_MARK}")
            parts.append(self._capture_cmd())
        if not parts:
            return self.new_output() if read else ("", True)
        res = self.sandbox.shell("\n".join(parts), timeout_s=waited + self.slack_s)
        head, sep, capture = res.output.partition(_MARK + "\n")
        if res.exit_code != 0 and not sep:
            raise SandboxFailure(f"tmux failed: {head.strip()[:300]}")
        if not read:
            return "", True
        text, incremental = self._diff(_lines(capture))
        return "\n".join([*refused, text]), incremental

    @property
    def last_read(self) -> str:
        """What the terminal showed at the last read (the first prompt, right after `start`)."""
        return "\n".join(self._last)

    def screen(self) -> str:
        """The visible screen."""
        return "\n".join(_lines(self.sandbox.shell(self._capture_cmd(False), timeout_s=self.slack_s).output))

    def new_output(self) -> tuple[str, bool]:
        """(text, incremental): what appeared since the last read, or the whole screen when that cannot be told."""
        return self._diff(_lines(self.sandbox.shell(self._capture_cmd(), timeout_s=self.slack_s).output))

    def _diff(self, lines: list[str]) -> tuple[str, bool]:
        prev = self._last
        self._last = lines
        keep = max(len(prev) - 1, 0)  # the last line (the prompt) is usually rewritten by typing
        if len(lines) >= keep and lines[:keep] == prev[:keep]:
            return "\n".join(lines[keep:]), True
        return self.screen(), False


_MARK = "__rsr_capture__"


def _literal(text: str) -> str:
    """`text` as a tmux argument: tmux takes an argument's trailing `;` for the end of the command (and a
    trailing `\\;` for a `;`), so a trailing `;` is written `\\;` to be typed as it is."""
    return text[:-1] + "\\;" if text.endswith(";") else text


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines
