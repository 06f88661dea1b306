"""Chat completions against any OpenAI-compatible endpoint, with retries and token accounting.

HTTP-level failures (timeouts, connection errors, 408/409/429 and 5xx) are retried by the openai SDK itself,
which backs off exponentially and honours `Retry-After`. What the SDK accepts but a caller cannot use — an
HTTP 200 whose body is not a chat completion, or one with no choices — is retried the same number of times
(tenacity) and then fails with a message saying what came back. An answer longer than the configured cap is
kept cut, with a marker, so a runaway model cannot fill the store.

Every request carries `max_tokens` (the caller's, else the budget of the role whose model it is). A refusal
because the request does not fit the model's context is not retried: it is `ContextLengthExceeded`, so the
caller can make the conversation shorter.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

import openai
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from rsr_core.errors import RsrError
from rsr_core.formats.thinking import joined_thinking, split_thinking
from rsr_core.protocols import Completion, ModelLimits
from rsr_core.settings import Settings

DEFAULT_MAX_ANSWER_BYTES = 1_000_000
DEFAULT_MAX_TOKENS = 4096
# How long asking the endpoint for a model's context length may take: the answer is optional (None), so a slow
# or silent endpoint must not hold up the run the way a chat request may.
LIMITS_TIMEOUT_S = 10.0
# Fields of a /v1/models entry that give the context length: vLLM and SGLang `max_model_len`, OpenRouter
# `context_length`, LM Studio `max_context_length`.
CONTEXT_LENGTH_FIELDS = ("max_model_len", "context_length", "max_context_length")
# Where servers put thinking beside the answer: vLLM, SGLang and DeepSeek `reasoning_content`, newer vLLM and
# OpenRouter `reasoning`.
REASONING_FIELDS = ("reasoning_content", "reasoning")
TRUNCATION_MARKER = "\n[... answer cut at {limit} bytes by rsr: the model sent {size} bytes ...]"


class LLMError(RsrError):
    """The endpoint failed for good (after retries) or answered with a non-retryable error."""


class ContextLengthExceeded(LLMError):
    """The endpoint refused the request as longer than the model's context (vLLM, SGLang, llama.cpp and OpenAI
    each word it their own way; `is_context_length_error` knows them)."""


# How servers word "the request does not fit the context": vLLM (old and new), SGLang (input alone, input and
# completion), llama.cpp (the request; older servers: the context), OpenAI, and Hugging Face TGI.
_CONTEXT_WORDINGS = re.compile(
    "|".join(
        (
            r"maximum context length is \d+ tokens",
            r"is longer than the maximum model length",
            r"is longer than the model's context length",
            r"exceeds the model's maximum context length",
            r"exceeds the available context size",
            r"context size has been exceeded",
            r"inputs` tokens \+ `max_new_tokens` must be <=",
        )
    ),
    re.I,
)
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error")


def is_context_length_error(status: int | None, body: object) -> bool:
    """Whether an HTTP error answer (status, and the parsed body or its message) refuses the request as longer
    than the model's context. The body may be the whole JSON answer, its `error` object, or text."""
    if status is not None and status < 400:
        return False
    if isinstance(body, Mapping):
        inner = body.get("error")
        parts = [body, inner] if isinstance(inner, Mapping) else [body]
        if any(part.get(key) in _CONTEXT_CODES for part in parts for key in ("code", "type")):
            return True
        texts = [part.get("message") for part in parts] + ([inner] if isinstance(inner, str) else [])
        return any(isinstance(t, str) and _CONTEXT_WORDINGS.search(t) is not None for t in texts)
    return isinstance(body, str) and _CONTEXT_WORDINGS.search(body) is not None


def _refuses_max_tokens(exc: openai.APIStatusError) -> bool:
    """OpenAI's refusal of `max_tokens` for models that take `max_completion_tokens` instead."""
    return exc.status_code == 400 and exc.param == "max_tokens" and "max_completion_tokens" in exc.message


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
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_max_tokens: Mapping[str, int] | None = None,
        context_lengths: Mapping[str, int] | None = None,
    ):
        """`max_tokens` is the answer budget of a model `model_max_tokens` does not name; `context_lengths`
        (tokens per model) win over what the endpoint reports."""
        self.base_url = base_url
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=max_retries
        )
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self.max_answer_bytes = max_answer_bytes
        self.max_tokens = max_tokens
        self.model_max_tokens = dict(model_max_tokens or {})
        self.context_lengths = dict(context_lengths or {})
        self._limits: dict[str, ModelLimits] = {}
        self._completion_tokens_models: set[str] = set()
        """Models that take the budget only as `max_completion_tokens` (OpenAI's reasoning models refuse
        `max_tokens`)."""
        self._limits_lock = threading.Lock()
        self._lock = threading.Lock()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.calls = 0

    @classmethod
    def from_settings(
        cls, settings: Settings, base_url: str | None = None, api_key: str | None = None
    ) -> LLMClient:
        """A client for the configured endpoint (or `base_url`), with the settings' answer budgets and context
        lengths."""
        base_url = base_url or settings.llm_base_url
        if not base_url:
            raise LLMError(
                "no model endpoint configured: set RSR_LLM_BASE_URL (and OPENAI_API_KEY if it needs one), "
                "or start the scripted demo model with `rsr llm serve-scripted --script FILE`"
            )
        return cls(
            base_url,
            api_key or settings.api_key,
            settings.llm_timeout_s,
            settings.llm_max_retries,
            max_answer_bytes=settings.llm_max_answer_bytes,
            max_tokens=settings.max_tokens,
            model_max_tokens=role_budgets(settings),
            context_lengths=settings.context_lengths,
        )

    def limits(self, model: str) -> ModelLimits:
        """The model's context length (the setting, else what GET /v1/models reports, else None) and answer
        budget; the endpoint is asked once per model."""
        with self._limits_lock:
            if model not in self._limits:
                length = self.context_lengths.get(model)
                if length is None:
                    length = self._reported_context_length(model)
                self._limits[model] = ModelLimits(length, self._budget(model))
            return self._limits[model]

    def _budget(self, model: str) -> int:
        return self.model_max_tokens.get(model, self.max_tokens)

    def _reported_context_length(self, model: str) -> int | None:
        try:
            listed = self._client.with_options(
                max_retries=1,
                timeout=min(LIMITS_TIMEOUT_S, self.timeout_s),
            ).models.list()
            entries = list(listed.data)
        except Exception:  # noqa: BLE001 - the length is optional: an endpoint that cannot say gives None
            return None
        for entry in entries:
            if getattr(entry, "id", None) != model:
                continue
            extra = getattr(entry, "model_extra", None) or {}
            for name in CONTEXT_LENGTH_FIELDS:
                value = extra.get(name, getattr(entry, name, None))
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
        return None

    def _create(self, kwargs: dict[str, Any]) -> tuple[str, str, int, int, str | None, str | None]:
        try:
            raw = self._client.chat.completions.with_raw_response.create(**kwargs)
        except openai.APIStatusError as exc:  # retried by the SDK already (or not retryable)
            if "max_tokens" in kwargs and _refuses_max_tokens(exc):
                self._completion_tokens_models.add(kwargs["model"])
                kwargs = {**kwargs, "max_completion_tokens": kwargs["max_tokens"]}
                del kwargs["max_tokens"]
                return self._create(kwargs)
            if is_context_length_error(exc.status_code, exc.body) or is_context_length_error(
                exc.status_code, exc.message
            ):
                raise ContextLengthExceeded(f"{self.base_url}: model {kwargs['model']!r}: {exc}") from exc
            raise LLMError(f"{self.base_url}: model {kwargs['model']!r}: {exc}") from exc
        except openai.APIError as exc:
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
        reasoning = next(
            (r for name in REASONING_FIELDS if isinstance(r := getattr(message, name, None), str) and r), None
        )
        finish = getattr(choices[0], "finish_reason", None)
        served = getattr(resp, "model", None) or kwargs["model"]
        return (
            text or "",
            served,
            int(prompt),
            int(completion),
            reasoning,
            finish if isinstance(finish, str) else None,
        )

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
        budget_field = "max_completion_tokens" if model in self._completion_tokens_models else "max_tokens"
        kwargs[budget_field] = max_tokens if max_tokens is not None else self._budget(model)
        retrying = Retrying(
            retry=retry_if_exception_type(MalformedAnswer),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.backoff_s, max=self.backoff_cap_s),
            reraise=False,
        )
        try:
            raw, served, prompt, completion, beside, finish = retrying(self._create, kwargs)
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise LLMError(
                f"{self.base_url}: model {model!r}: {last} (after {self.max_retries + 1} tries)"
            ) from last
        inline, answer = split_thinking(raw)
        text, truncated = _cut(answer, self.max_answer_bytes)
        reasoning = joined_thinking(beside, inline)
        if reasoning is not None:
            reasoning, _ = _cut(reasoning, self.max_answer_bytes)
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.calls += 1
        return Completion(text, served, prompt, completion, truncated, reasoning, finish)

    def list_models(self) -> list[str]:
        """Model names the endpoint offers (also a cheap check that it answers)."""
        try:
            return [m.id for m in self._client.models.list().data]
        except Exception as exc:
            raise LLMError(f"{self.base_url} does not answer: {exc}") from exc


def role_budgets(settings: Settings) -> dict[str, int]:
    """Answer budget per model name, from the roles' models and budgets. Roles sharing a model get the largest
    of their budgets: a budget is a ceiling the model stops well under when it is done, and a smaller one would
    cut the other role's answers."""
    budgets: dict[str, int] = {}
    for role in ("planner", "critic", "executor"):
        model = settings.role_model(role)
        budgets[model] = max(budgets.get(model, 0), settings.role_max_tokens(role))
    return budgets
