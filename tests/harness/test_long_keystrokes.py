"""Keystroke batches longer than one tmux command can carry arrive whole, or are refused where the model sees it.

tmux refuses a command over its message size and then types nothing; the session types long text in pieces.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from rsr_core.harness.tmux import MAX_BATCH_CHARS, TmuxSession
from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.models import Command

pytestmark = pytest.mark.docker
TASK = Path(__file__).parents[1] / "sandbox" / "data" / "tasks" / "tight-sandbox"


@pytest.fixture()
def terminal(sandboxes):
    with sandboxes.open(read_harbor_task(TASK), labels={"rsr.test": "long-keys"}) as sandbox:
        tmux = TmuxSession(sandbox)
        tmux.start()
        yield sandbox, tmux


def _sha_when_written(sandbox, path: str, size: int, timeout_s: float = 90.0) -> str:
    """The file's sha256 once it has `size` bytes (typing 300 KB into bash takes a while)."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = sandbox.exec(f"stat -c %s {path} 2>/dev/null || echo 0").output.strip()
        if out == str(size) or time.monotonic() > deadline:
            return sandbox.exec(f"sha256sum {path} 2>/dev/null").output.split(" ")[0]
        time.sleep(1)


def test_a_300000_character_heredoc_arrives_whole(terminal):
    sandbox, tmux = terminal
    # Lines of C-like text ending in `;` (tmux takes an argument's trailing `;` for its command separator), one
    # with a literal `\;`, and lines longer than one typed piece.
    lines = [f"int v{i:05d} = {i};" + "x" * (i % 7) for i in range(9000)]
    lines[10] = "find . -exec true {} \\;"
    lines[20] = "y" * 5000 + ";"
    body = "\n".join(lines) + "\n"
    body += "z" * (300_000 - len(body) - 1) + "\n"
    assert len(body) == 300_000
    keys = f"cat > /app/big.txt <<'EOF'\n{body}EOF\n"
    tmux.run([Command(keystrokes=keys, duration=5)])
    got = _sha_when_written(sandbox, "/app/big.txt", len(body.encode()))
    assert got == hashlib.sha256(body.encode()).hexdigest()


def test_a_batch_over_the_cap_is_refused_in_the_observation(terminal):
    sandbox, tmux = terminal
    keys = "echo typed > /app/refused.txt # " + "a" * MAX_BATCH_CHARS + "\n"
    text, _ = tmux.run(
        [Command(keystrokes="echo before\n", duration=0.5), Command(keystrokes=keys, duration=1)]
    )
    assert "keystrokes of command 2 not typed" in text and f"{MAX_BATCH_CHARS:,}" in text, text[:500]
    assert "before" in text
    assert sandbox.exec("test -e /app/refused.txt").exit_code == 1
