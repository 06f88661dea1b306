"""`rsr sandbox build-base|gc`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_json, emit

if TYPE_CHECKING:
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
        description="Build rsr-base:bookworm with debootstrap --variant=minbase (python3, python3-pytest, tmux, "
        "procps and text tools: bc, dc, ed, jq, openssl, xxd, xz-utils, bzip2, bsdextrautils) and docker import; "
        "the rootfs tarball is cached in RSR_CACHE_DIR.",
    )
    b.add_argument("--force", action="store_true", help="rebuild even when the image or tarball exists")
    b.set_defaults(handler=build_base)
    g = s.add_parser(
        "gc",
        help="remove orphaned sandbox containers and snapshot images",
        description="Remove sandbox containers, and snapshot images (rsr-snapshot, left by an interrupted "
        "RSRT claim or verification), whose owning process is gone.",
    )
    g.add_argument(
        "--all", action="store_true", help="remove every sandbox container and snapshot image, in use or not"
    )
    g.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="run the clean-up on every node of this Ray cluster ('auto' for the one this machine is in)",
    )
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
    """Remove orphans: containers first, so their snapshot images are no longer in use."""
    from rsr_core.sandbox.engine import docker_client
    from rsr_core.sandbox.gc import gc_containers, gc_snapshot_images

    if args.ray_address:
        from rsr_core.jobs.ray_backend import gc_cluster

        nodes = gc_cluster(args.ray_address, everything=args.all)
        lines = [
            f"{n['host']}/{n['node']}: removed {len(n['removed'])} container(s), {len(n['removed_images'])} "
            "snapshot image(s)" + ("" if n["docker"] else " (no Docker engine)")
            for n in nodes
        ]
        emit(args, {"nodes": nodes}, "\n".join(lines))
        return 0
    client = docker_client()
    removed = gc_containers(client, everything=args.all)
    images = gc_snapshot_images(client, everything=args.all)
    emit(
        args,
        {"removed": removed, "removed_images": images},
        f"removed {len(removed)} sandbox container(s) and {len(images)} snapshot image(s)",
    )
    return 0
