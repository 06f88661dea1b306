"""Did the run take a library name of the image over? Checked in the verifier's container before the tests run.

Three caches are compared (loader_cache.py): the image's own, the one the agent left in /etc/ld.so.cache, and
one `ldconfig` rebuilds from the agent's filesystem into a scratch file (what the cache becomes once anything,
the tests' own package install included, runs `ldconfig`). Every library name of the image that either of the
last two resolves to another file is ground. The check runs only when the run added or changed something that
can hold a library or the cache; it runs the image's `ldconfig` (a changed `ldconfig` is ground by itself and
is never run). Nothing of the agent's runs in the verifier's container at that point.
"""

from __future__ import annotations

import contextlib
import posixpath
import threading
import uuid
from collections.abc import Collection

import docker.errors

from rsr_core.errors import SandboxFailure
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.fs import ContainerFS
from rsr_core.sandbox.loader_cache import MAX_CACHE_BYTES, CacheFormatError, parse_cache, taken_over

CACHE = "/etc/ld.so.cache"
LDCONFIG = ("/sbin/ldconfig", "/usr/sbin/ldconfig")
CHECK_TIMEOUT_S = 60.0
KEPT_IMAGES = 64
_IMAGE_CACHES: dict[str, bytes] = {}
_READ_LOCK = threading.Lock()


def needs_check(changed: dict[str, str]) -> bool:
    """The run added or changed a file that could be a shared library, the cache or the loader's config
    (`changed`: the run's diff, path → kind)."""
    return any(
        kind != "deleted" and (".so" in posixpath.basename(path) or path.startswith("/etc/ld.so"))
        for path, kind in changed.items()
    )


def image_cache(sandbox: DockerSandbox) -> bytes:
    """The loader cache of the sandbox's image, read through the engine from a container that never starts;
    read once per image and process (an image's files never change; a job verifies many runs of one)."""
    with _READ_LOCK:
        if sandbox.image not in _IMAGE_CACHES:
            if len(_IMAGE_CACHES) >= KEPT_IMAGES:
                del _IMAGE_CACHES[next(iter(_IMAGE_CACHES))]  # the oldest: a job works through its tasks
            _IMAGE_CACHES[sandbox.image] = _read_image_cache(sandbox)
        return _IMAGE_CACHES[sandbox.image]


def _read_image_cache(sandbox: DockerSandbox) -> bytes:
    api = sandbox.client.api
    try:
        created = api.create_container(
            sandbox.image, command=["/bin/true"], labels=sandbox.labels, network_disabled=True
        )
    except (docker.errors.DockerException, OSError) as exc:
        raise SandboxFailure(f"cannot read the image's loader cache: {exc}") from None
    try:
        content, problem = ContainerFS(api, created["Id"]).read_regular(CACHE, MAX_CACHE_BYTES)
    finally:
        with contextlib.suppress(docker.errors.DockerException, OSError):
            api.remove_container(created["Id"], force=True)
    return content if content is not None else b"" if problem == "missing" else _refuse(problem)


def _refuse(problem: str | None) -> bytes:
    raise SandboxFailure(f"the image's {CACHE} cannot be read: {problem}")


def _names(content: bytes | None, where: str) -> dict[str, frozenset[str]] | str:
    if content is None:
        return {}
    try:
        return parse_cache(content)
    except CacheFormatError as exc:
        return f"{where} is not a loader cache this verifier can read ({exc})"


def loader_ground(image: bytes, verifier: DockerSandbox, changed: Collection[str]) -> list[str]:
    """What the run's filesystem makes the loader give instead of the image's libraries: the files that take
    a name over (or the cache itself, when it cannot be read). `changed` is every path of the run's diff."""
    if not image:
        return []  # no glibc loader cache in the image (musl, or none made): no name to take over
    before = _names(image, f"the image's {CACHE}")
    if isinstance(before, str):
        raise SandboxFailure(before)
    if any(tool in changed for tool in LDCONFIG):
        return []  # ldconfig itself is ground; it is never run
    scratch = f"/tmp/rsr-ld-{uuid.uuid4().hex}.cache"
    fs = verifier.fs
    left, problem = fs.read_regular(CACHE, MAX_CACHE_BYTES) if CACHE in changed else (None, None)
    if problem is not None and problem != "missing":
        return [CACHE]
    done = verifier.exec(["/sbin/ldconfig", "-X", "-C", scratch], timeout_s=CHECK_TIMEOUT_S)
    rebuilt, rebuilt_problem = fs.read_regular(scratch, MAX_CACHE_BYTES)
    with contextlib.suppress(SandboxFailure):
        verifier.exec(["rm", "-f", scratch], timeout_s=CHECK_TIMEOUT_S)
    if done.exit_code in (126, 127):
        rebuilt = b""  # an image without ldconfig: nothing in the tests can rebuild the cache either
    elif done.exit_code != 0 or rebuilt is None:
        raise SandboxFailure(
            f"ldconfig could not rebuild the loader cache (exit {done.exit_code}, {rebuilt_problem}): "
            f"{done.output[-300:]}"
        )
    ground: set[str] = set()
    for content, where in ((left, CACHE), (rebuilt, "a rebuilt cache")):
        if not content:
            continue
        now = _names(content, where)
        if isinstance(now, str):
            ground.add(CACHE)
            continue
        for files in taken_over(before, now).values():
            ground.update(_behind(f, changed) for f in files)
            if content is left:
                ground.add(CACHE)
    return sorted(ground)


def _behind(resolved: str, changed: Collection[str]) -> str:
    """The run's file behind a name the loader resolves: the path itself when the run made it, else the
    library the run added in that directory under another file name (ldconfig names a library by the SONAME
    inside it; rebuilt without links, the path is only the name)."""
    if resolved in changed:
        return resolved
    folder = posixpath.dirname(resolved) + "/"
    added = sorted(p for p in changed if p.startswith(folder) and "/" not in p[len(folder) :] and ".so" in p)
    return added[0] if len(added) == 1 else resolved
