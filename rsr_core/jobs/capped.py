"""Model clients that take a permit for every call: at most N requests to the endpoint at once, in one process
(a semaphore) or across a Ray cluster (a limiter actor)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rsr_core.protocols import LLM, Completion, ModelLimits


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


def cluster_limited(llm: LLM, actor: Any) -> LLM:
    """`llm` whose calls hold a permit of the limiter actor."""
    import ray

    return CappedLLM(llm, lambda: ray.get(actor.acquire.remote()), lambda: actor.release.remote())
