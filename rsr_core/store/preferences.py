"""Studio preferences kept per database (the Rewrite form's endpoint, models and job sizes), so they survive
reloads, tabs and restarts. Secrets are refused: an API key is never stored."""

from __future__ import annotations

import json
from typing import Any

import duckdb

SECRET_WORDS = ("key", "token", "secret", "password")


def get_preferences(cur: duckdb.DuckDBPyConnection, prefix: str) -> dict[str, Any]:
    """Every stored preference whose key starts with `prefix` (e.g. "rewrite.")."""
    rows = cur.execute("SELECT key, value FROM app_settings WHERE starts_with(key, ?)", [prefix]).fetchall()
    return {k: json.loads(v) for k, v in rows}


def set_preferences(cur: duckdb.DuckDBPyConnection, values: dict[str, Any]) -> None:
    """Store preferences (replacing earlier values); a key that names a secret is refused."""
    for key, value in values.items():
        if any(word in key.lower() for word in SECRET_WORDS):
            raise ValueError(f"preference {key!r} looks like a secret; secrets are never stored")
        cur.execute(
            "INSERT OR REPLACE INTO app_settings (key, value, updated_at) VALUES (?, ?, current_timestamp)",
            [key, json.dumps(value)],
        )
