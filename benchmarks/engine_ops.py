"""What each Docker engine call a verification makes costs the engine: wall time per call and the CPU of dockerd
and containerd with the helpers they ran (read from /proc/PID/stat before and after a batch of calls).

    .venv/bin/python benchmarks/engine_ops.py [--image rsr-base:bookworm] [--calls 20]

Run it on a quiet machine: other containers' work counts too.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import tarfile
import time
from collections.abc import Callable

import docker

from rsr_core.sandbox.fs import ContainerFS


def engine_cpu_s() -> float:
    """CPU seconds of dockerd and containerd, with their waited-for children."""
    total = 0
    for name in ("dockerd", "containerd"):
        pids = subprocess.run(
            ["pgrep", "-x", name], capture_output=True, text=True, check=False
        ).stdout.split()
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return total / os.sysconf("SC_CLK_TCK")


def measure(name: str, call: Callable[[], object], calls: int) -> None:
    cpu0, t0 = engine_cpu_s(), time.perf_counter()
    for _ in range(calls):
        call()
    wall_ms = (time.perf_counter() - t0) / calls * 1000
    cpu_ms = (engine_cpu_s() - cpu0) / calls * 1000
    print(f"| {name} | {wall_ms:.1f} | {cpu_ms:.1f} |")


def one_file_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("tmp/probe.txt")
        info.size = 1000
        tar.addfile(info, io.BytesIO(b"x" * 1000))
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="rsr-base:bookworm")
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    client = docker.from_env()
    started: list = []

    def run() -> None:
        started.append(
            client.containers.run(
                args.image, ["sleep", "600"], detach=True, network_mode="none", auto_remove=True
            )
        )

    print("| call | wall ms | engine CPU ms |\n| --- | ---: | ---: |")
    measure("run (create and start)", run, max(2, args.calls // 2))
    box = started[0]
    fs = ContainerFS(client.api, box.id)
    archive = one_file_tar()
    measure("exec `true`", lambda: box.exec_run(["true"]), args.calls)
    measure("archive HEAD (stat)", lambda: fs.stat("/usr/bin/bash"), args.calls * 10)
    measure("archive PUT (one small file)", lambda: box.put_archive("/", archive), args.calls)
    measure("archive GET (a symlink's target)", lambda: fs.readlink("/usr/bin/python3"), args.calls)
    measure("diff", box.diff, args.calls)
    measure("pause and unpause", lambda: (box.pause(), box.unpause()), args.calls)
    images: list = []
    measure("commit", lambda: images.append(box.commit(repository="rsr-engine-ops")), max(2, args.calls // 4))
    for image in images:
        client.images.remove(image.id, force=True)
    pending = iter(started)
    measure("remove", lambda: next(pending).remove(force=True), len(started))


if __name__ == "__main__":
    main()
