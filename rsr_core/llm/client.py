"""Chat completions against any OpenAI-compatible endpoint, with retries and token accounting.

HTTP-level failures (timeouts, connection errors, 408/409/429 and 5xx) are retried by the openai SDK itself,
which backs off exponentially and honours `Retry-After`. What the SDK accepts but a caller cannot use — an
HTTP 200 whose body is not a chat completion, or one with no choices — is retried the same number of times
(tenacity) and then fails with a message saying what came back. An answer longer than the configured cap is
kept cut, with a marker, so a runaway model cannot fill the store.
"""

from __future__ import annotations

import threading
from typing import Any

import openai
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from rsr_core.errors import RsrError
from rsr_core.protocols import Completion
from rsr_core.settings import Settings

DEFAULT_MAX_ANSWER_BYTES = 1_000_000
TRUNCATION_MARKER = "\n[... answer cut at {limit} bytes by rsr: the model sent {size} bytes ...]"


class LLMError(RsrError):
    """The endpoint failed for good (after retries) or answered with a non-retryable error."""


class MalformedAnswer(RuntimeError):
    """An HTTP 200 that is not a usable chat completion (retried like a server error)."""


def _cut(text: str, limit: int) -> tuple[str, bool]:
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text, False
    head = raw[:limit].decode("utf-8", "ignore")
    return head + TRUNCATION_MARKER.format(limit=limit, size=len(raw)), True


def _describe(resp: Any) -> str:
    shown = repr(resp)
    return shown if len(shown) <= 300 else shown[:300] + "…"


class LLMClient:
    """Thin wrapper over `openai.OpenAI` (implements the `LLM` protocol)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 8.0,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ):
        self.base_url = base_url
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=max_retries
        )
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self.max_answer_bytes = max_answer_bytes
        self._lock = threading.Lock()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.calls = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient:
        """A client for the configured endpoint."""
        if not settings.llm_base_url:
            raise LLMError(
                "no model endpoint configured: set RSR_LLM_BASE_URL (and OPENAI_API_KEY if it needs one), "
                "or start the scripted demo model with `rsr llm serve-scripted --script FILE`"
            )
        return cls(
            settings.llm_base_url,
            settings.api_key,
            settings.llm_timeout_s,
            settings.llm_max_retries,
            max_answer_bytes=settings.llm_max_answer_bytes,
        )

    def _create(self, kwargs: dict[str, Any]) -> tuple[str, str, int, int]:
        try:
            raw = self._client.chat.completions.with_raw_response.create(**kwargs)
        except openai.APIError as exc:  # retried by the SDK already (or not retryable)
            raise LLMError(f"{self.base_url}: model {kwargs['model']!r}: {exc}") from exc
        try:
            resp = raw.parse()
        except (ValueError, openai.APIResponseValidationError):
            body = raw.text
            shown = repr(body[:200]) + ("…" if len(body) > 200 else "")
            raise MalformedAnswer(
                f"HTTP {raw.status_code} with a body that is not a chat completion: {shown}"
            ) from None
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list):
            raise MalformedAnswer(f"HTTP 200 with a body that is not a chat completion: {_describe(resp)}")
        if not choices:
            raise MalformedAnswer("HTTP 200 with an empty `choices` list")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None) if message is not None else None
        if text is not None and not isinstance(text, str):
            raise MalformedAnswer(f"HTTP 200 whose message content is not text: {_describe(text)}")
        usage = getattr(resp, "usage", None)
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        return text or "", getattr(resp, "model", None) or kwargs["model"], int(prompt), int(completion)

    def complete(
        self,
        messages: list[dict[str, str]],
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion (see the module docstring for what is retried)."""
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if seed is not None:
            kwargs["seed"] = seed
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        retrying = Retrying(
            retry=retry_if_exception_type(MalformedAnswer),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.backoff_s, max=self.backoff_cap_s),
            reraise=False,
        )
        try:
            text, served, prompt, completion = retrying(self._create, kwargs)
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise LLMError(
                f"{self.base_url}: model {model!r}: {last} (after {self.max_retries + 1} tries)"
            ) from last
        text, truncated = _cut(text, self.max_answer_bytes)
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.calls += 1
        return Completion(text, served, prompt, completion, truncated)

    def list_models(self) -> list[str]:
        """Model names the endpoint offers (also a cheap check that it answers)."""
        try:
            return [m.id for m in self._client.models.list().data]
        except Exception as exc:
            raise LLMError(f"{self.base_url} does not answer: {exc}") from exc
