"""`rsr worker start|stop|status`: a node of a Ray cluster that runs job units (sandboxes where Docker is)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_json, bounded_int, emit

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser(
        "worker",
        help="Ray cluster nodes for jobs: start, stop, status",
        description="Run job units on a Ray cluster (`--backend ray`). Each node advertises how many sandboxes it "
        "can hold as the custom resource `sandbox`; sandbox units (executions, discovery runs) land only on "
        "such nodes, model-only units anywhere.",
    )
    s = p.add_subparsers(dest="worker_command", metavar="WHAT", required=True)
    start = s.add_parser(
        "start",
        help="start a Ray node here (head, or joining --address) advertising N sandboxes",
        description="Start a Ray node on this machine: `ray start --resources '{\"sandbox\": N}'` (with "
        "--head unless --address names a cluster to join). A node that holds sandboxes needs a Docker engine.",
    )
    start.add_argument(
        "--sandboxes",
        type=bounded_int(0, 100_000),
        default=0,
        help="sandboxes this node can hold (default 0)",
    )
    start.add_argument("--address", help="cluster to join (host:port); without it this node starts a cluster")
    start.add_argument(
        "--num-cpus", type=bounded_int(0, 100_000), help="CPUs to advertise (default: Ray's count)"
    )
    start.set_defaults(handler=start_node)
    stop = s.add_parser("stop", help="stop the Ray node on this machine", description="`ray stop`.")
    stop.set_defaults(handler=stop_node)
    status = s.add_parser(
        "status", help="nodes of the cluster and their sandboxes", description="Alive nodes and resources."
    )
    status.add_argument(
        "--ray-address", metavar="ADDR", help="cluster (default: $RSR_RAY_ADDRESS, else auto)"
    )
    add_json(status)
    status.set_defaults(handler=show_status)


def _ray(*args: str) -> None:
    """Replace this process with Ray's own CLI (from this environment)."""
    argv = [sys.executable, "-m", "ray.scripts.scripts", *args]
    sys.stdout.flush()
    os.execv(sys.executable, argv)


def start_node(args: argparse.Namespace, settings: Settings) -> int:
    """`ray start` with the sandbox resource."""
    argv = ["start", f"--resources={json.dumps({'sandbox': args.sandboxes})}"]
    argv += [f"--address={args.address}"] if args.address else ["--head", "--include-dashboard=false"]
    if args.num_cpus is not None:
        argv.append(f"--num-cpus={args.num_cpus}")
    _ray(*argv)
    return 0  # not reached


def stop_node(args: argparse.Namespace, settings: Settings) -> int:
    """`ray stop`."""
    _ray("stop")
    return 0  # not reached


def show_status(args: argparse.Namespace, settings: Settings) -> int:
    """Print the cluster's nodes."""
    from rsr_core.jobs.ray_backend import describe

    data = describe(args.ray_address or settings.ray_address or "auto")
    lines = [f"{n['node']}  {n['host']}  sandboxes {n['sandboxes']:g}" for n in data["nodes"]]
    emit(args, data, "\n".join(lines) or "no nodes")
    return 0
