"""Rewrite jobs started from the app: each runs in a background thread of the app process (opening the store
per scheduling round and per result, like a CLI job), so pages stay usable and poll the progress."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from rsr_core.jobs.control import CancelOutcome, cancel_job
from rsr_core.jobs.runner import JobRunner
from rsr_core.protocols import LLM, Backend, SandboxProvider
from rsr_core.rewrite.units import RewriteParams
from rsr_core.store import Store


@dataclass
class RunningJob:
    """A job this app process runs."""

    job_id: str
    runner: JobRunner
    thread: threading.Thread
    status: str = "running"
    error: str | None = None
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        """Still running."""
        return self.thread.is_alive()


class JobManager:
    """Starts, resumes and cancels jobs in background threads."""

    def __init__(self, store: Store, sandboxes_factory):
        self.store = store
        self._sandboxes_factory = sandboxes_factory
        self.jobs: dict[str, RunningJob] = {}
        self._lock = threading.Lock()

    def _launch(self, job_id: str, runner: JobRunner, resume: bool) -> RunningJob:
        def work() -> None:
            try:
                job.status = runner.resume(job_id) if resume else runner.run(job_id)
            except Exception as exc:  # noqa: BLE001 - shown on the Rewrite page
                job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"
            from rsr_core.jobs.derived import refresh_after_write

            refresh_after_write(self.store)  # the pairs of the tasks whose passed rewrites changed

        def progress(_job: str, counts: dict[str, dict[str, int]]) -> None:
            job.counts = counts

        runner.on_progress = progress
        thread = threading.Thread(target=work, name=f"rsr-job-{job_id}", daemon=True)
        job = RunningJob(job_id, runner, thread)
        with self._lock:
            self.jobs[job_id] = job
        thread.start()
        return job

    def _runner(self, llm: LLM, workers: int, backend: Backend | None) -> JobRunner:
        if backend is not None:  # a Ray cluster: the units' services are built on its nodes
            return JobRunner(self.store, backend=backend)
        return JobRunner(self.store, llm, self._sandboxes(), workers=workers)

    def start(
        self, params: RewriteParams, llm: LLM, workers: int = 1, backend: Backend | None = None
    ) -> RunningJob:
        """Create a job and run it in the background (in threads here, or on `backend`)."""
        runner = self._runner(llm, workers, backend)
        return self._launch(runner.create(params), runner, resume=False)

    def resume(self, job_id: str, llm: LLM, workers: int = 1, backend: Backend | None = None) -> RunningJob:
        """Resume a job (e.g. after approving runbooks of a human-gated job)."""
        runner = self._runner(llm, workers, backend)
        return self._launch(job_id, runner, resume=True)

    def cancel(self, job_id: str) -> CancelOutcome | None:
        """Cancel a job as `rsr jobs cancel` does (`cancel_job`: a running one stops after its units in flight,
        wherever it runs; one nobody runs is cancelled at once); one of this process is told at once too."""
        job = self.jobs.get(job_id)
        if job is not None:
            job.runner.cancel_event.set()
        with self.store.transaction() as cur:
            return cancel_job(cur, job_id)

    def active(self) -> list[RunningJob]:
        """Jobs still running in this process."""
        return [j for j in self.jobs.values() if j.alive]

    def _sandboxes(self) -> SandboxProvider:
        return self._sandboxes_factory()
