"""Where a job's units run: threads of the driver process, or Ray tasks on a cluster (rsr_core/jobs/ray_backend.py).

A backend only runs units: it takes (kind, inputs) and hands back each unit's result or the exception it ended
with. It never touches the store; the driver (JobRunner) is the only writer.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from rsr_core.jobs.capped import capped
from rsr_core.protocols import LLM, Outcome, SandboxProvider


class ThreadBackend:
    """Units in a thread pool of the driver process, with the injected model client and sandboxes."""

    def __init__(self, llm: LLM, sandboxes: SandboxProvider, workers: int = 1, llm_limit: int | None = None):
        from rsr_core.jobs.worker import run_any_unit

        self._run = run_any_unit
        self.llm = capped(llm, llm_limit)
        self.sandboxes = sandboxes
        self.slots = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, kind: str, inputs: dict[str, Any]) -> Future:
        """Run the unit in a pool thread (the pool starts with the first unit of a run)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.slots, thread_name_prefix="rsr-unit")
        return self._pool.submit(self._run, kind, inputs, self.llm, self.sandboxes)

    def wait(self, handles: list[Any], timeout: float) -> list[Outcome]:
        """Finished futures with their results or errors."""
        done, _ = wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        out: list[Outcome] = []
        for fut in done:
            error = fut.exception()
            out.append((fut, None if error else fut.result(), error))
        return out

    def where(self) -> str:
        """Threads of this process."""
        return f"{self.slots} thread(s)"

    def close(self) -> None:
        """Shut the pool down once running units are done."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
