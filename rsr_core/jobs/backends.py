"""Where a job's units run: threads of the driver process, or Ray tasks on a cluster (rsr_core/jobs/ray_backend.py).

A backend only runs units: it takes (kind, inputs) and hands back each unit's result or the exception it ended
with. It never touches the store; the driver (JobRunner) is the only writer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from rsr_core.protocols import LLM, Completion, ModelLimits, Outcome, SandboxProvider

SANDBOX_KINDS = frozenset({"execute", "discover"})
"""Unit kinds that open a sandbox (placed only where a Docker engine is: Ray's `sandbox` resource)."""


class CappedLLM:
    """An LLM whose calls hold a permit: at most N requests to the endpoint at once (RSR_LLM_MAX_CONCURRENCY)."""

    def __init__(self, llm: LLM, acquire: Callable[[], object], release: Callable[[], object]):
        self.llm = llm
        self._acquire, self._release = acquire, release

    def limits(self, model: str) -> ModelLimits:
        """The wrapped client's limits (asking them is one cached request: it takes no permit)."""
        return self.llm.limits(model)

    def complete(
        self,
        messages: list[dict[str, str]],
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One call, inside a permit."""
        self._acquire()
        try:
            return self.llm.complete(messages, model, temperature, seed, max_tokens)
        finally:
            self._release()


def capped(llm: LLM, limit: int | None) -> LLM:
    """`llm` limited to `limit` concurrent requests in this process (no limit when None)."""
    if not limit:
        return llm
    sem = threading.BoundedSemaphore(limit)
    return CappedLLM(llm, sem.acquire, sem.release)


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
