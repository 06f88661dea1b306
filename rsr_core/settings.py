"""The one place that reads RSR_* environment variables.

Everything else receives a `Settings` object (or the values it needs) through its constructor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

DEFAULT_IMAGE_MAP = {
    "debian": "rsr-base:bookworm",
    "ubuntu": "rsr-base:bookworm",
    "python": "rsr-base:bookworm",
    "buildpack-deps": "rsr-base:bookworm",
}


def _parse_image_map(text: str) -> dict[str, str]:
    """Parse `repo=image,repo2=image2` (a repo matches with any tag)."""
    mapping: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"RSR_IMAGE_MAP: entry {item!r} is not of the form 'image=local-image'")
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
                f"RSR_PRICES: entry {item[:80]!r} is not of the form 'model=input/output' "
                "(USD per million prompt / completion tokens)"
            ) from None
    return prices


class Settings(BaseModel):
    """Runtime configuration, read once from the environment."""

    db_path: str = Field("data/rsr.duckdb", description="DuckDB file of the studio (RSR_DB).")
    db_wait_s: float = Field(
        30.0,
        ge=0,
        description="Seconds a command waits for the database while another process uses it (RSR_DB_WAIT).",
    )
    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint (RSR_LLM_BASE_URL).")
    api_key: str | None = Field(
        None, description="API key for the endpoint (OPENAI_API_KEY); never displayed."
    )
    model: str = Field("gpt-4o-mini", description="Default model name for every role (RSR_MODEL).")
    planner_model: str | None = Field(None, description="Planner model override (RSR_PLANNER_MODEL).")
    critic_model: str | None = Field(None, description="Critic model override (RSR_CRITIC_MODEL).")
    executor_model: str | None = Field(None, description="Executor model override (RSR_EXECUTOR_MODEL).")
    llm_timeout_s: float = Field(120.0, description="Per-request timeout in seconds (RSR_LLM_TIMEOUT).")
    llm_max_retries: int = Field(
        5, description="Retries on 429/5xx/timeouts and malformed answers (RSR_LLM_MAX_RETRIES)."
    )
    llm_max_answer_bytes: int = Field(
        1_000_000,
        gt=0,
        description="Longest model answer kept; longer ones are cut (RSR_LLM_MAX_ANSWER_BYTES).",
    )
    image_map: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_IMAGE_MAP),
        description="Base images that cannot be pulled, mapped to local images (RSR_IMAGE_MAP).",
    )
    base_image: str = Field("rsr-base:bookworm", description="Offline sandbox base image (RSR_BASE_IMAGE).")
    cache_dir: Path = Field(Path.home() / ".cache" / "rsr", description="Build caches (RSR_CACHE_DIR).")
    debian_mirror: str = Field(
        "http://deb.debian.org/debian", description="Mirror for debootstrap (RSR_DEBIAN_MIRROR)."
    )
    allow_network: bool = Field(
        False, description="Opt in to network for tasks that allow it (RSR_ALLOW_NETWORK)."
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="USD per million prompt and completion tokens, per model (RSR_PRICES='model=in/out,…'); "
        "cost is unknown for models not listed (unless the run recorded its cost).",
    )
    critic_fuzzy_threshold: float = Field(
        88.0,
        description="rapidfuzz partial_ratio (0-100) at which runbook text counts as leaked (RSR_CRITIC_FUZZY).",
    )
    critic_min_literal_len: int = Field(
        4, description="Shortest hidden literal the critic looks for (RSR_CRITIC_MIN_LITERAL)."
    )

    def role_model(self, role: str) -> str:
        """The model name for a role (planner, critic, executor), falling back to `model`."""
        override = {
            "planner": self.planner_model,
            "critic": self.critic_model,
            "executor": self.executor_model,
        }
        return override.get(role) or self.model

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `env` (default: the process environment)."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        simple = {
            "RSR_DB": "db_path",
            "RSR_DB_WAIT": "db_wait_s",
            "RSR_LLM_BASE_URL": "llm_base_url",
            "OPENAI_API_KEY": "api_key",
            "RSR_MODEL": "model",
            "RSR_PLANNER_MODEL": "planner_model",
            "RSR_CRITIC_MODEL": "critic_model",
            "RSR_EXECUTOR_MODEL": "executor_model",
            "RSR_LLM_TIMEOUT": "llm_timeout_s",
            "RSR_LLM_MAX_RETRIES": "llm_max_retries",
            "RSR_LLM_MAX_ANSWER_BYTES": "llm_max_answer_bytes",
            "RSR_BASE_IMAGE": "base_image",
            "RSR_CACHE_DIR": "cache_dir",
            "RSR_DEBIAN_MIRROR": "debian_mirror",
            "RSR_CRITIC_FUZZY": "critic_fuzzy_threshold",
            "RSR_CRITIC_MIN_LITERAL": "critic_min_literal_len",
        }
        for var, field in simple.items():
            if env.get(var):
                values[field] = env[var]
        if env.get("RSR_ALLOW_NETWORK"):
            values["allow_network"] = env["RSR_ALLOW_NETWORK"].lower() in ("1", "true", "yes")
        if env.get("RSR_PRICES"):
            values["prices"] = _parse_prices(env["RSR_PRICES"])
        if env.get("RSR_IMAGE_MAP"):
            values["image_map"] = {**DEFAULT_IMAGE_MAP, **_parse_image_map(env["RSR_IMAGE_MAP"])}
        return cls(**values)
