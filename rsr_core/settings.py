"""The one place that reads configuration: RSR_* environment variables over an optional `rsr.toml`.

Everything else receives a `Settings` object (or the values it needs) through its constructor. The file is
`rsr.toml` in the working directory, or the one `RSR_CONFIG` names; its keys are the field names below (or the
variable names), e.g. `db_path = "runs.duckdb"`, `[image_map] debian = "rsr-base:bookworm"`,
`[prices] gpt-4o-mini = [0.15, 0.6]`. Environment variables win over the file; an invalid value is refused with
one line naming the variable and what was expected.
"""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from rsr_core.errors import RsrError

DEFAULT_IMAGE_MAP = {
    "debian": "rsr-base:bookworm",
    "ubuntu": "rsr-base:bookworm",
    "python": "rsr-base:bookworm",
    "buildpack-deps": "rsr-base:bookworm",
}
CONFIG_FILE = "rsr.toml"
WEEK_S = 7 * 24 * 3600.0  # the longest wait or timeout a setting may ask for


class SettingsError(RsrError, ValueError):
    """A configuration value is invalid (the message names the variable or key and what was expected)."""


def _parse_image_map(text: str) -> dict[str, str]:
    """Parse `repo=image,repo2=image2` (a repo matches with any tag)."""
    mapping: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"entry {item[:80]!r} is not of the form 'image=local-image'")
        key, value = item.split("=", 1)
        mapping[key.strip()] = value.strip()
    return mapping


def _parse_prices(text: str) -> dict[str, tuple[float, float]]:
    """Parse `model=input/output,…` (USD per million prompt / completion tokens)."""
    prices: dict[str, tuple[float, float]] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        model, sep, pair = item.rpartition("=")
        inp, slash, out = pair.partition("/")
        try:
            if not sep or not slash or not model.strip():
                raise ValueError
            prices[model.strip()] = (float(inp), float(out))
        except ValueError:
            raise ValueError(
                f"entry {item[:80]!r} is not of the form 'model=input/output' (USD per million prompt / completion "
                "tokens)"
            ) from None
    return prices


def _parse_context_lengths(text: str) -> dict[str, int]:
    """Parse `model=tokens,…` (a model name may itself hold '=': the number is after the last one)."""
    lengths: dict[str, int] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        model, sep, tokens = item.rpartition("=")
        if not sep or not model.strip() or not re.fullmatch(r"[0-9]{1,12}", tokens.strip()):
            raise ValueError(
                f"entry {item[:80]!r} is not of the form 'model=tokens' (a positive whole number)"
            )
        lengths[model.strip()] = int(tokens)
    return lengths


def _alias(env: str, field: str) -> Any:
    return AliasChoices(env, field)


class Settings(BaseSettings):
    """Runtime configuration, read once."""

    # Every number is finite (`1e309` reads as infinity: a wait that never ends) and bounded (see the fields).
    model_config = SettingsConfigDict(
        case_sensitive=True, extra="ignore", populate_by_name=True, allow_inf_nan=False
    )

    db_path: str = Field(
        "data/rsr.duckdb",
        validation_alias=_alias("RSR_DB", "db_path"),
        description="DuckDB file of the studio (RSR_DB).",
    )
    db_wait_s: float = Field(
        30.0,
        ge=0,
        le=WEEK_S,
        validation_alias=_alias("RSR_DB_WAIT", "db_wait_s"),
        description="Seconds a command waits for the database while another process uses it (RSR_DB_WAIT).",
    )
    llm_base_url: str | None = Field(
        None,
        validation_alias=_alias("RSR_LLM_BASE_URL", "llm_base_url"),
        description="OpenAI-compatible endpoint (RSR_LLM_BASE_URL).",
    )
    api_key: str | None = Field(
        None,
        validation_alias=_alias("OPENAI_API_KEY", "api_key"),
        description="API key for the endpoint (OPENAI_API_KEY); never displayed, never stored.",
        repr=False,
    )
    model: str = Field(
        "gpt-4o-mini",
        validation_alias=_alias("RSR_MODEL", "model"),
        description="Default model name for every role (RSR_MODEL).",
    )
    planner_model: str | None = Field(
        None,
        validation_alias=_alias("RSR_PLANNER_MODEL", "planner_model"),
        description="Planner model override (RSR_PLANNER_MODEL).",
    )
    critic_model: str | None = Field(
        None,
        validation_alias=_alias("RSR_CRITIC_MODEL", "critic_model"),
        description="Critic model override (RSR_CRITIC_MODEL).",
    )
    executor_model: str | None = Field(
        None,
        validation_alias=_alias("RSR_EXECUTOR_MODEL", "executor_model"),
        description="Executor model override (RSR_EXECUTOR_MODEL).",
    )
    llm_timeout_s: float = Field(
        120.0,
        gt=0,
        le=WEEK_S,
        validation_alias=_alias("RSR_LLM_TIMEOUT", "llm_timeout_s"),
        description="Per-request timeout in seconds (RSR_LLM_TIMEOUT).",
    )
    llm_max_retries: int = Field(
        5,
        ge=0,
        le=1_000,
        validation_alias=_alias("RSR_LLM_MAX_RETRIES", "llm_max_retries"),
        description="Retries on 429/5xx/timeouts and malformed answers (RSR_LLM_MAX_RETRIES).",
    )
    llm_max_answer_bytes: int = Field(
        1_000_000,
        gt=0,
        le=1 << 30,
        validation_alias=_alias("RSR_LLM_MAX_ANSWER_BYTES", "llm_max_answer_bytes"),
        description="Longest model answer kept; longer ones are cut (RSR_LLM_MAX_ANSWER_BYTES).",
    )
    max_tokens: int = Field(
        4096,
        gt=0,
        le=1 << 24,
        validation_alias=_alias("RSR_MAX_TOKENS", "max_tokens"),
        description="Answer budget (`max_tokens`) sent with every model request, every role (RSR_MAX_TOKENS).",
    )
    planner_max_tokens: int | None = Field(
        None,
        gt=0,
        le=1 << 24,
        validation_alias=_alias("RSR_PLANNER_MAX_TOKENS", "planner_max_tokens"),
        description="Planner answer budget override (RSR_PLANNER_MAX_TOKENS).",
    )
    critic_max_tokens: int | None = Field(
        None,
        gt=0,
        le=1 << 24,
        validation_alias=_alias("RSR_CRITIC_MAX_TOKENS", "critic_max_tokens"),
        description="Critic answer budget override (RSR_CRITIC_MAX_TOKENS).",
    )
    executor_max_tokens: int | None = Field(
        None,
        gt=0,
        le=1 << 24,
        validation_alias=_alias("RSR_EXECUTOR_MAX_TOKENS", "executor_max_tokens"),
        description="Executor (and discovery harness) answer budget override (RSR_EXECUTOR_MAX_TOKENS).",
    )
    context_lengths: Annotated[dict[str, int], NoDecode] = Field(
        default_factory=dict,
        validation_alias=_alias("RSR_CONTEXT_LENGTHS", "context_lengths"),
        description="Context length in tokens per model, for endpoints that do not report one in /v1/models "
        "(RSR_CONTEXT_LENGTHS='model=8192,…'); it wins over what the endpoint reports.",
    )
    image_map: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=lambda: dict(DEFAULT_IMAGE_MAP),
        validation_alias=_alias("RSR_IMAGE_MAP", "image_map"),
        description="Base images that cannot be pulled, mapped to local images (RSR_IMAGE_MAP='image=local,…').",
    )
    base_image: str = Field(
        "rsr-base:bookworm",
        validation_alias=_alias("RSR_BASE_IMAGE", "base_image"),
        description="Offline sandbox base image (RSR_BASE_IMAGE).",
    )
    cache_dir: Path = Field(
        Path.home() / ".cache" / "rsr",
        validation_alias=_alias("RSR_CACHE_DIR", "cache_dir"),
        description="Build caches (RSR_CACHE_DIR).",
    )
    debian_mirror: str = Field(
        "http://deb.debian.org/debian",
        validation_alias=_alias("RSR_DEBIAN_MIRROR", "debian_mirror"),
        description="Mirror for debootstrap (RSR_DEBIAN_MIRROR).",
    )
    allow_network: bool = Field(
        False,
        validation_alias=_alias("RSR_ALLOW_NETWORK", "allow_network"),
        description="Opt in to network for tasks that allow it (RSR_ALLOW_NETWORK).",
    )
    prices: Annotated[dict[str, tuple[float, float]], NoDecode] = Field(
        default_factory=dict,
        validation_alias=_alias("RSR_PRICES", "prices"),
        description="USD per million prompt and completion tokens, per model (RSR_PRICES='model=in/out,…'); "
        "cost is unknown for models not listed (unless the run recorded its cost).",
    )
    backend: Literal["threads", "ray"] = Field(
        "threads",
        validation_alias=_alias("RSR_BACKEND", "backend"),
        description="Where job units run: threads of the driver, or Ray tasks on a cluster (RSR_BACKEND).",
    )
    ray_address: str | None = Field(
        None,
        validation_alias=_alias("RSR_RAY_ADDRESS", "ray_address"),
        description="Ray cluster to run units on (RSR_RAY_ADDRESS: 'auto', 'host:port', 'ray://…'); unset: a "
        "local Ray instance.",
    )
    llm_max_concurrency: int | None = Field(
        None,
        gt=0,
        le=1_000_000,
        validation_alias=_alias("RSR_LLM_MAX_CONCURRENCY", "llm_max_concurrency"),
        description="Most requests to the model endpoint at once, across the whole cluster "
        "(RSR_LLM_MAX_CONCURRENCY); unset: no cap.",
    )
    critic_fuzzy_threshold: float = Field(
        88.0,
        ge=0,
        le=100,
        validation_alias=_alias("RSR_CRITIC_FUZZY", "critic_fuzzy_threshold"),
        description="rapidfuzz partial_ratio (0-100) at which runbook text counts as leaked (RSR_CRITIC_FUZZY).",
    )
    critic_min_literal_len: int = Field(
        4,
        ge=1,
        le=1_000_000,
        validation_alias=_alias("RSR_CRITIC_MIN_LITERAL", "critic_min_literal_len"),
        description="Shortest hidden literal the critic and the transfer filter look for (RSR_CRITIC_MIN_LITERAL).",
    )

    @field_validator("image_map", mode="before")
    @classmethod
    def _image_map(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {**DEFAULT_IMAGE_MAP, **_parse_image_map(value)}
        if isinstance(value, dict):
            return {**DEFAULT_IMAGE_MAP, **value}
        return value

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> Any:
        return _parse_prices(value) if isinstance(value, str) else value

    @field_validator("prices")
    @classmethod
    def _prices_not_negative(cls, value: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for model, pair in value.items():
            if min(pair) < 0:
                raise ValueError(
                    f"prices of {model[:80]!r} must not be negative, got {pair[0]:g}/{pair[1]:g}"
                )
        return value

    @field_validator("context_lengths", mode="before")
    @classmethod
    def _context_lengths(cls, value: Any) -> Any:
        return _parse_context_lengths(value) if isinstance(value, str) else value

    @field_validator("context_lengths")
    @classmethod
    def _context_lengths_positive(cls, value: dict[str, int]) -> dict[str, int]:
        for model, tokens in value.items():
            if not 0 < tokens <= 1 << 30:
                raise ValueError(
                    f"context length of {model[:80]!r} must be a positive number of tokens, got {tokens}"
                )
        return value

    @field_validator("allow_network", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        return None if isinstance(value, str) and value == "" else value

    def role_model(self, role: str) -> str:
        """The model name for a role (planner, critic, executor), falling back to `model`."""
        override = {
            "planner": self.planner_model,
            "critic": self.critic_model,
            "executor": self.executor_model,
        }
        return override.get(role) or self.model

    def role_max_tokens(self, role: str) -> int:
        """The answer budget for a role (planner, critic, executor), falling back to `max_tokens`."""
        override = {
            "planner": self.planner_max_tokens,
            "critic": self.critic_max_tokens,
            "executor": self.executor_max_tokens,
        }
        return override.get(role) or self.max_tokens

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit values, then the environment (or the mapping given to `from_env`), then rsr.toml."""
        env = _ENV.get()
        environment = env_settings if env is None else _MappingSource(settings_cls, env)
        source_env = os.environ if env is None else env
        toml = Path(source_env.get("RSR_CONFIG") or CONFIG_FILE)
        sources: list[PydanticBaseSettingsSource] = [init_settings, environment]
        if toml.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from `env` (default: the process environment) over rsr.toml; a bad value is a SettingsError."""
        token = _ENV.set(None if env is None else {k: v for k, v in env.items() if v != ""})
        try:
            return cls()
        except ValidationError as exc:
            raise SettingsError(_explain(exc)) from None
        finally:
            _ENV.reset(token)


_ENV: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("rsr_settings_env", default=None)


class _MappingSource(EnvSettingsSource):
    """The environment source, reading a given mapping instead of os.environ (tests, embedding)."""

    def __init__(self, settings_cls: type[BaseSettings], mapping: Mapping[str, str]):
        self._mapping = dict(mapping)
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return dict(self._mapping)


def _explain(exc: ValidationError) -> str:
    """The first problem as one line: which variable (or rsr.toml key), what was expected, what was given."""
    err = exc.errors()[0]
    where = str(err["loc"][0]) if err["loc"] else "settings"
    env, key = where, where
    for name, info in Settings.model_fields.items():
        choices = info.validation_alias.choices if isinstance(info.validation_alias, AliasChoices) else []
        if where == name or where in choices:
            env, key = str(choices[0]) if choices else name, name
    shown = repr(err.get("input"))[:120]
    return f"configuration {env} (`{key}` in {CONFIG_FILE}): {err['msg']}; got {shown}"
