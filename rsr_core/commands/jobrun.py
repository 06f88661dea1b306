"""Running a job from a command (`rsr rewrite`, `rsr discover`, `rsr jobs resume`): the backend choice, the
driver's signals and its progress line."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING, Any

from rsr_core.commands.common import bounded_int

if TYPE_CHECKING:
    from rsr_core.jobs.runner import JobRunner, UnitDone
    from rsr_core.services import Services
    from rsr_core.settings import Settings

# A job's writer outlasts long reads of others (an export, the similarity scoring) rather than losing a result.
JOB_DB_WAIT_S = 600.0


def add_backend_args(p: argparse.ArgumentParser, workers_help: str = "units run at once") -> None:
    """--backend, --ray-address, --workers."""
    p.add_argument(
        "--backend",
        choices=["threads", "ray"],
        help="where units run: threads of this process, or Ray tasks on a cluster (default: $RSR_BACKEND, else "
        "threads)",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster ('auto', 'host:port', 'ray://…'; default: $RSR_RAY_ADDRESS, else a local instance)",
    )
    p.add_argument(
        "--workers",
        type=bounded_int(1, 10_000),
        default=None,
        help=f"{workers_help} (threads: default 1; ray: default twice the cluster's sandboxes)",
    )


def progress_printer(json_mode: bool) -> Any:
    """Progress of a job on stderr: one rewritten line on a terminal, a line per change otherwise."""
    tty = sys.stderr.isatty()

    def show(job_id: str, counts: dict[str, dict[str, int]]) -> None:
        total = sum(sum(v.values()) for v in counts.values())
        done = sum(v.get("done", 0) for v in counts.values())
        failed = sum(v.get("failed", 0) for v in counts.values())
        bar = "#" * (20 * done // total if total else 0)
        parts = " ".join(f"{k} {v.get('done', 0)}/{sum(v.values())}" for k, v in counts.items() if v)
        line = f"{job_id} [{bar:<20}] {done}/{total} units, {failed} failed  {parts}"
        sys.stderr.write(("\r" + line) if tty else line + "\n")
        sys.stderr.flush()

    return show


def make_runner(
    args: argparse.Namespace, settings: Settings, on_unit: UnitDone | None = None
) -> tuple[Services, JobRunner]:
    """The store, the chosen backend and a runner that stops after the units in flight on SIGINT/SIGTERM."""
    from rsr_core.jobs.backends import ThreadBackend
    from rsr_core.jobs.runner import JobRunner
    from rsr_core.services import Services

    settings = settings.model_copy(update={"db_path": args.db or settings.db_path})
    services = Services(settings, db_wait_s=max(settings.db_wait_s, JOB_DB_WAIT_S))
    backend_name = args.backend or settings.backend
    address = args.ray_address or settings.ray_address
    gc: Any
    if backend_name == "ray":
        from rsr_core.jobs.ray_backend import RayBackend, gc_cluster
        from rsr_core.llm.client import LLMClient

        endpoint = LLMClient.from_settings(settings)  # no endpoint: the error says how to configure one
        backend: Any = RayBackend(address, settings, endpoint.base_url, settings.api_key, args.workers)
        gc = lambda job: gc_cluster(address, job_id=job)  # noqa: E731 - the job's containers on every node
    else:
        from rsr_core.sandbox.gc import gc_containers

        backend = ThreadBackend(
            services.llm, services.sandboxes, args.workers or 1, settings.llm_max_concurrency
        )
        gc = lambda job: gc_containers(services.docker, job_id=job)  # noqa: E731
    runner = JobRunner(
        services.store, backend=backend, on_progress=progress_printer(args.json), gc=gc, on_unit=on_unit
    )

    def cancel(signum: int, frame: Any) -> None:
        sys.stderr.write(f"\nrsr: signal {signum}: cancelling after the units in flight\n")
        runner.cancel_event.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    signal.signal(signal.SIGTERM, cancel)
    signal.signal(signal.SIGINT, cancel)
    return services, runner
