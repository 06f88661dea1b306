"""A long-lived shell inside a sandbox, fed scripts over one exec's attached socket.

Every `docker exec` costs the engine a runc start (benchmarks/RESULTS.md, "Parallel executions"); a harness
turn would need one, so turns go through this channel instead: one exec per sandbox, then a script and its
output per round trip.

Nothing in the sandbox is trusted to end on its own: every round trip has a deadline (a wedged shell, a
stopped tmux or a frozen container raise `ChannelTimeout` instead of blocking), and another thread can
`abort` the channel (the disk watchdog does) to wake a reader at once.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import time
import uuid
from dataclasses import dataclass

import docker

# Reads a token line, then script lines up to the token's end marker, and runs the script in a subshell with
# stdin closed (so a command waiting for input cannot eat the channel). The script is kept in a variable, not
# a file: nothing the agent planted in /tmp can be truncated or swapped in. After the script it reads the
# cgroup's fork-refusal and OOM-kill counters with builtins only (they still work when no process can be
# forked) and answers with the exit status and both counters (cgroup v1 paths first, then v2).
LOOP = r"""
counter() {
  n=0
  for f in "$@"; do
    if [ -r "$f" ]; then
      while read -r k v; do [ "$k" = "$key" ] && n=$v; done < "$f"
      break
    fi
  done
}
while IFS= read -r token; do
  script=
  while IFS= read -r line; do
    [ "$line" = "__rsr_end_$token" ] && break
    script="$script$line
"
  done
  ( eval "$script" ) < /dev/null 2>&1
  code=$?
  key=max; counter /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; pids=$n
  key=oom_kill; counter /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; oom=$n
  echo "__rsr_done_${token}_${code}_${pids}_${oom}"
done
"""
_DONE = re.compile(rb"_(-?\d+)_(\d+)_(\d+)\n")


class ChannelError(RuntimeError):
    """The channel broke (its shell died, the socket closed, or it was aborted)."""


class ChannelTimeout(ChannelError):
    """A round trip did not finish by its deadline (the shell is wedged or the sandbox frozen)."""


@dataclass(frozen=True)
class Reply:
    """One round trip: the script's exit status and output, and the sandbox's cgroup counters after it."""

    exit_code: int
    output: str
    fork_refusals: int
    """Forks the pids limit refused so far (cgroup `pids.events` max)."""
    oom_kills: int
    """Processes the memory limit killed so far (cgroup `oom_kill`)."""


class ShellChannel:
    """One shell process in the container; `run` sends a script and returns its Reply."""

    def __init__(self, api: docker.APIClient, container_id: str):
        exec_id = api.exec_create(container_id, ["sh", "-c", LOOP], stdin=True, stdout=True, stderr=True)
        self._sock = api.exec_start(exec_id["Id"], socket=True)
        # The SDK hands back a socket.SocketIO wrapper (it does not expose its socket); the raw socket is what
        # select and shutdown need.
        self._raw: socket.socket = getattr(self._sock, "_sock", None) or self._sock  # type: ignore[assignment]
        self._buffer = b""
        self._deadline = 0.0

    def run(self, script: str, timeout_s: float) -> Reply:
        """Run a shell script in the container; raises ChannelTimeout when no answer came within `timeout_s`
        seconds and ChannelError when the channel broke."""
        token = uuid.uuid4().hex
        payload = f"{token}\n{script}\n__rsr_end_{token}\n".encode()
        self._deadline = time.monotonic() + timeout_s
        try:
            self._raw.settimeout(max(timeout_s, 0.1))
            self._raw.sendall(payload)
            done = f"__rsr_done_{token}".encode()
            out = bytearray()
            while True:
                idx = out.find(done)
                if idx >= 0:
                    match = _DONE.match(out, idx + len(done))
                    if match:
                        code, pids, oom = (int(g) for g in match.groups())
                        return Reply(code, out[:idx].decode(errors="replace"), pids, oom)
                out += self._frame()
        except TimeoutError as exc:
            raise ChannelTimeout(f"the sandbox shell gave no answer within {timeout_s:g} s") from exc
        except (OSError, ValueError) as exc:
            raise ChannelError(f"shell channel failed: {exc}") from exc

    def _frame(self) -> bytes:
        header = self._read(8)
        (size,) = struct.unpack(">I", header[4:])
        return self._read(size)

    def _read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self._raw.settimeout(left)
            chunk = self._raw.recv(65536)
            if not chunk:
                raise ChannelError("shell channel closed")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def abort(self) -> None:
        """Wake a reader blocked in `run` from another thread (it raises ChannelError)."""
        with contextlib.suppress(OSError):
            self._raw.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Close the socket (the shell exits with it)."""
        with contextlib.suppress(OSError):
            self._sock.close()
