"""The replay stage of the answer-transfer check: run an execution's keystrokes again, in order, in a sandbox
on the base image that holds none of the task's files, and collect what comes out of them — what they print,
what the shell traces as it expands them (`set -x` on its own descriptor, exported so child bash scripts
trace too) and the files they write. A value computed from the task's data cannot come out without the data;
one the commands carry does.

Bounds: CPU seconds per process (`ulimit -t`), the size of every file written (`ulimit -f`), a wall clock for the
whole replay, and the bytes read back; the sandbox has no network and the usual limits.
"""

from __future__ import annotations

import re
import secrets
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rsr_core.formats.commands import TMUX_KEY_NAMES
from rsr_core.models import Trajectory
from rsr_core.protocols import Sandbox, SandboxProvider

# Lines of the error stream that are the tools' own complaints about what is missing (no task files here).
_ERROR_LINE = re.compile(
    r"no such file|not found|cannot|can't|permission denied|traceback|error|errno|^\s+file \"|^bash: ",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ReplayLimits:
    """How far a replay may go."""

    cpu_s: int = 10
    """CPU seconds any one process of the replay may use."""
    total_s: int = 60
    """Wall clock of the whole replay."""
    file_kb: int = 4096
    """Largest file the replayed commands may write."""
    read_bytes: int = 262_144
    """Bytes read back from the output, the trace and the error stream each."""
    file_bytes: int = 65_536
    """Bytes read back from each written file."""
    files: int = 200
    """Written files read back."""


@dataclass(frozen=True)
class Emission:
    """Text that came out of the replay while a step's keystrokes ran."""

    step: int
    how: str
    """'printed', 'traced' or 'written in <path>'."""
    text: str


@dataclass(frozen=True)
class ReplayResult:
    """What came out of one replay."""

    emissions: tuple[Emission, ...]
    seconds: float
    timed_out: bool


def typed_keys(keystrokes: str) -> str:
    """A batch as the terminal receives it: a batch that is only a tmux key name is a key press (Enter and
    the interrupts end the line), anything else is text."""
    name = keystrokes.strip()
    if name in TMUX_KEY_NAMES:
        return {"Enter": "\n", "C-c": "\n", "C-d": "\n", "C-z": "\n", "BSpace": "\x7f"}.get(name, "")
    return keystrokes


def agent_batches(rewrite: Trajectory) -> list[tuple[int, str]]:
    """(step index, keystrokes typed) for the agent's steps, in order."""
    return [
        (s.index, "".join(typed_keys(c.keystrokes) for c in s.commands))
        for s in rewrite.steps
        if s.source == "agent" and not s.private_guidance and s.commands
    ]


def _input(batches: list[tuple[int, str]], root: str, tag: str) -> str:
    # Each step begins with a mark that puts the output, the error stream and the trace back where the replay
    # reads them (a command may have redirected them or turned tracing off) and notes the time, so files are
    # attributed to the step that wrote them. A mark only goes where a line ends, never into a typed line.
    r = shlex.quote(root)
    pre = (
        f"__rsr_mark() {{ {{ set +x; }} 2>/dev/null; exec 1>&60 2>&61 7>&62; BASH_XTRACEFD=7; "
        f"printf '\\n{tag} %s\\n' \"$1\"; printf '{tag} %s\\n' \"$1\" >&7; "
        # the file system's clock, not date's: files are attributed by their change time
        f': >{r}/tick; printf \'%s %s\\n\' "$1" "$(stat -c %.9Z {r}/tick)" >>{r}/marks; set -x; }}\n'
        "exit() { :; }; logout() { :; }\n"
        "PS4='+ '; export BASH_XTRACEFD SHELLOPTS\n"
    )
    parts, at_line_end = [pre], True
    for step, keys in batches:
        if at_line_end:
            parts.append(f"__rsr_mark {step}\n")
        parts.append(keys)
        at_line_end = keys.endswith("\n") or (at_line_end and not keys)
    return "".join(parts) + ("\n" if not at_line_end else "")


def _driver(root: str, tag: str, limits: ReplayLimits) -> str:
    # The output, error and trace streams go through pipes to readers that keep `read_bytes` and drain the rest,
    # so a command printing without end neither fills the disk nor stops the replay (the file-size limit is for
    # the files the commands write). The replay runs in its own process group, killed when it ends.
    r = shlex.quote(root)
    keep = limits.read_bytes
    readers = "".join(
        f"exec {fd}> >(exec 50>&- 51>&- 52>&-; head -c {keep} >{r}/{name}; cat >/dev/null); p{fd}=$!\n"
        for fd, name in ((50, "out"), (51, "err"), (52, "trace"))
    )
    return (
        f"mkdir -p {r} /app && cd /app && : >{r}/marks && touch {r}/start && sleep 0.01\n"
        + readers
        + f"( ulimit -t {limits.cpu_s}; ulimit -f {limits.file_kb}; "
        f"timeout -k 2 {limits.total_s} bash --norc --noprofile -s <{r}/input 60>&50 61>&51 62>&52"
        " >&50 2>&51 7>&52 50>&- 51>&- 52>&- & t=$!; wait $t; s=$?; kill -9 -- -$t 2>/dev/null; exit $s )"
        " 50>&50 51>&51 52>&52\n"
        f'printf "\\n{tag}-status %s\\n" $?\nexec 50>&- 51>&- 52>&-\n'
        # a reader ends when no process of the replay holds its pipe any more; wait for that, three seconds at most
        # for each reader
        "for p in $p50 $p51 $p52; do n=0; while kill -0 $p 2>/dev/null && [ $n -lt 300 ]; do sleep 0.01;"
        " n=$((n + 1)); done; done\n"
        f'for part in out err trace marks; do printf "\\n{tag}-part %s\\n" $part; cat {r}/$part; done\n'
        f"find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /etc/hosts -o -path /etc/hostname -o -path /etc/resolv.conf -o -path {r} \\) -prune -o -type f"
        f" -cnewer {r}/start -printf '%C@ %p\\n' 2>/dev/null | head -n {limits.files} |"
        " while read -r when path; do"
        f' printf "\\n{tag}-file %s %s\\n" "$when" "$path"; head -c {limits.file_bytes} "$path"; rm -f "$path"; done\n'
        f"rm -rf {r}\n"
    )


def _step_at(marks: list[tuple[float, int]], when: float) -> int:
    step = marks[0][1] if marks else 0
    for at, s in marks:
        if at <= when:
            step = s
    return step


def _by_step(text: str, tag: str, first: int) -> Iterator[tuple[int, str]]:
    step, lines = first, list[str]()
    for line in text.split("\n"):
        m = re.fullmatch(rf"{tag} (\d+)", line)
        if m:
            yield step, "\n".join(lines)
            step, lines = int(m.group(1)), []
        else:
            lines.append(line)
    yield step, "\n".join(lines)


def _parse(output: str, tag: str, first: int) -> tuple[list[Emission], bool]:
    sections = re.split(rf"\n{tag}-(status|part|file) ?(.*)\n", output)
    parts: dict[str, str] = {}
    files: list[tuple[float, str, str]] = []
    timed_out = False
    for i in range(1, len(sections) - 2, 3):
        kind, head, body = sections[i], sections[i + 1], sections[i + 2]
        if kind == "status":
            timed_out = head.strip() in ("124", "137")
        elif kind == "part":
            parts[head.strip()] = body
        else:
            when, _, path = head.partition(" ")
            files.append((float(when or 0), path, body))
    marks: list[tuple[float, int]] = []
    for line in parts.get("marks", "").splitlines():
        index, _, at = line.partition(" ")
        if index.isdigit() and at:
            marks.append((float(at), int(index)))
    out: list[Emission] = []
    for step, text in _by_step(parts.get("out", ""), tag, first):
        if text.strip():
            out.append(Emission(step, "printed", text))
    for step, text in _by_step(parts.get("err", ""), tag, first):
        kept = "\n".join(line for line in text.split("\n") if not _ERROR_LINE.search(line))
        if kept.strip():
            out.append(Emission(step, "printed", kept))
    for step, text in _by_step(parts.get("trace", ""), tag, first):
        if text.strip():
            out.append(Emission(step, "traced", text))
    for changed, path, body in files:
        out.append(Emission(_step_at(marks, changed), f"written in {path}", body))
    return out, timed_out


def replay_in(sandbox: Sandbox, batches: list[tuple[int, str]], limits: ReplayLimits) -> ReplayResult:
    """Replay the batches in an open sandbox (its working directory /app) and collect what came out; the
    replay's own files, every file it wrote and every process it left are removed afterwards."""
    started = time.monotonic()
    if not batches:
        return ReplayResult((), 0.0, False)
    tag = "@@rsr-" + secrets.token_hex(6)
    root = f"/var/tmp/rsr-replay-{secrets.token_hex(4)}"
    sandbox.put_files({"input": _input(batches, root, tag)}, dest=root)
    res = sandbox.exec(_driver(root, tag, limits), timeout_s=limits.total_s + 30)
    emissions, timed_out = _parse(res.output, tag, batches[0][0])
    return ReplayResult(tuple(emissions), time.monotonic() - started, timed_out or res.timed_out)


class Replayer:
    """Opens a sandbox on the base image for each replay."""

    def __init__(self, open_base: SandboxOpener, limits: ReplayLimits | None = None):
        self._open = open_base
        self.limits = limits or ReplayLimits()

    def replay(self, rewrite: Trajectory) -> ReplayResult:
        """Replay the agent's keystrokes of an execution."""
        with self._open() as sandbox:
            return replay_in(sandbox, agent_batches(rewrite), self.limits)


class SandboxOpener:
    """A sandbox on the base image (none of a task's files), no network, small limits."""

    def __init__(self, provider: SandboxProvider, limits: ReplayLimits):
        self.provider = provider
        self.limits = limits

    @contextmanager
    def __call__(self) -> Iterator[Sandbox]:
        from rsr_core.sandbox.docker_sandbox import DockerSandbox, Limits
        from rsr_core.sandbox.provider import DockerSandboxProvider

        assert isinstance(self.provider, DockerSandboxProvider)
        budget = float(self.limits.total_s + 120)
        limits = Limits(cpus=1.0, memory_mb=512, pids=128, network=False, budget_s=budget, storage_mb=512)
        sandbox = DockerSandbox(
            self.provider.client, self.provider.settings.base_image, limits, {"rsr.replay": "1"}
        )
        try:
            sandbox.start()
            yield sandbox
        finally:
            sandbox.remove()


def replayer_for(provider: SandboxProvider, limits: ReplayLimits | None = None) -> Replayer | None:
    """A replayer on the provider's engine, or None when the provider is not a Docker one (no engine to
    replay on)."""
    from rsr_core.sandbox.provider import DockerSandboxProvider

    if not isinstance(provider, DockerSandboxProvider):
        return None
    lim = limits or ReplayLimits()
    return Replayer(SandboxOpener(provider, lim), lim)
