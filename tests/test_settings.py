"""Settings: environment over an optional rsr.toml, one object, a bad value refused in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rsr_core.settings import Settings, SettingsError


def test_environment_wins_over_the_file_and_defaults_fill_the_rest(tmp_path, monkeypatch):
    (tmp_path / "rsr.toml").write_text(
        'db_path = "from-file.duckdb"\nRSR_MODEL = "file-model"\n[prices]\n"m1" = [1.5, 3.0]\n'
        '[image_map]\nalpine = "rsr-base:bookworm"\n'
    )
    monkeypatch.chdir(tmp_path)
    s = Settings.from_env({})
    assert (s.db_path, s.model, s.prices) == ("from-file.duckdb", "file-model", {"m1": (1.5, 3.0)})
    assert s.image_map["alpine"] == "rsr-base:bookworm" and s.image_map["debian"] == "rsr-base:bookworm"
    s = Settings.from_env({"RSR_DB": "env.duckdb", "RSR_PRICES": "m2=0.1/0.2"})
    assert (s.db_path, s.model, s.prices) == ("env.duckdb", "file-model", {"m2": (0.1, 0.2)})
    other = tmp_path / "elsewhere.toml"
    other.write_text('db_path = "named.duckdb"\n')
    assert Settings.from_env({"RSR_CONFIG": str(other)}).db_path == "named.duckdb"


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"RSR_DB_WAIT": "soon"}, "RSR_DB_WAIT (`db_wait_s` in rsr.toml)"),
        ({"RSR_CRITIC_FUZZY": "101"}, "RSR_CRITIC_FUZZY"),
        ({"RSR_PRICES": "gpt=cheap"}, "model=input/output"),
        ({"RSR_IMAGE_MAP": "debian"}, "image=local-image"),
    ],
)
def test_a_bad_value_is_one_clear_line(env, said):
    with pytest.raises(SettingsError, match=r".*") as err:
        Settings.from_env(env)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_the_cli_reports_a_bad_setting_without_a_traceback(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "stats", "summary", "--db", str(tmp_path / "x.duckdb")],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "RSR_DB_WAIT": "-1"},
    )
    assert res.returncode == 2 and res.stderr.startswith("rsr: configuration RSR_DB_WAIT")
    assert "Traceback" not in res.stderr
