"""A long-lived shell inside a sandbox, fed scripts over one exec's attached socket.

Every `docker exec` costs the engine a runc start (about 0.1 CPU-second here); a harness turn needs one, so
turns go through this channel instead: one exec per sandbox, then a script and its output per round trip.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import uuid

import docker

# Reads a token line, then script lines up to the token's end marker; runs the script with stdin closed (so a
# command waiting for input cannot eat the channel) and answers with the output and the exit status.
LOOP = r"""
while IFS= read -r token; do
  f=/tmp/.rsr-channel-$$
  : > "$f"
  while IFS= read -r line; do
    [ "$line" = "__rsr_end_$token" ] && break
    printf '%s\n' "$line" >> "$f"
  done
  sh "$f" < /dev/null 2>&1
  echo "__rsr_done_${token}_$?"
done
"""


class ChannelError(RuntimeError):
    """The channel broke (its shell died or the socket closed)."""


class ShellChannel:
    """One shell process in the container; `run` sends a script and returns (exit code, output)."""

    def __init__(self, api: docker.APIClient, container_id: str):
        exec_id = api.exec_create(container_id, ["sh", "-c", LOOP], stdin=True, stdout=True, stderr=True)
        self._sock = api.exec_start(exec_id, socket=True)
        self._raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        self._buffer = b""

    def run(self, script: str) -> tuple[int, str]:
        """Run a shell script in the container (bound its time inside the script, e.g. with `timeout`);
        raises ChannelError when the channel broke."""
        token = uuid.uuid4().hex
        payload = f"{token}\n{script}\n__rsr_end_{token}\n".encode()
        try:
            self._raw.sendall(payload)
            done = f"__rsr_done_{token}_".encode()
            out = bytearray()
            while True:
                idx = out.find(done)
                if idx >= 0:
                    end = out.find(b"\n", idx)
                    if end >= 0:
                        code = int(out[idx + len(done) : end] or b"-1")
                        return code, out[:idx].decode(errors="replace")
                out += self._frame()
        except (OSError, ValueError) as exc:
            raise ChannelError(f"shell channel failed: {exc}") from exc

    def _frame(self) -> bytes:
        header = self._read(8)
        (size,) = struct.unpack(">I", header[4:])
        return self._read(size)

    def _read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self._raw.recv(65536)
            if not chunk:
                raise ChannelError("shell channel closed")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def close(self) -> None:
        """Close the socket (the shell exits with it)."""
        with contextlib.suppress(OSError):
            self._sock.close()
