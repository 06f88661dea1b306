"""`rsr sandbox build-base|gc`."""

from __future__ import annotations

import argparse
import sys

from rsr_core.commands.common import add_json, emit
from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser(
        "sandbox",
        help="Docker sandboxes: base image, clean-up",
        description="Manage the Docker sandboxes tasks run in.",
    )
    s = p.add_subparsers(dest="sandbox_command", metavar="WHAT", required=True)
    b = s.add_parser(
        "build-base",
        help="build the offline base image rsr-base:bookworm",
        description="Build rsr-base:bookworm with debootstrap --variant=minbase (python3, "
        "python3-pytest, tmux, procps) and docker import; the rootfs tarball is cached in RSR_CACHE_DIR.",
    )
    b.add_argument("--force", action="store_true", help="rebuild even when the image or tarball exists")
    b.set_defaults(handler=build_base)
    g = s.add_parser(
        "gc",
        help="remove orphaned sandbox containers",
        description="Remove sandbox containers whose owning process is gone.",
    )
    g.add_argument("--all", action="store_true", help="remove every sandbox container, running or not")
    add_json(g)
    g.set_defaults(handler=gc)


def build_base(args: argparse.Namespace, settings: Settings) -> int:
    """Build the base image."""
    from rsr_core.sandbox.engine import docker_client
    from rsr_core.sandbox.images import build_base_image

    build_base_image(docker_client(), settings, force=args.force, log=lambda m: print(m, file=sys.stderr))
    print(settings.base_image)
    return 0


def gc(args: argparse.Namespace, settings: Settings) -> int:
    """Remove orphans."""
    from rsr_core.sandbox.docker_sandbox import gc_containers
    from rsr_core.sandbox.engine import docker_client

    removed = gc_containers(docker_client(), everything=args.all)
    emit(args, {"removed": removed}, f"removed {len(removed)} sandbox container(s)")
    return 0
