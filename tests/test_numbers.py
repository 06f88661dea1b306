"""Numbers from flags and the environment: finite, in range, refused in one line (never a traceback, never a
wait without end)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import pytest

from rsr_core.cli import build_parser
from rsr_core.commands.common import bounded_int, finite_float
from rsr_core.settings import Settings, SettingsError

RSR = [sys.executable, "-m", "rsr_core.cli"]


def _rsr(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RSR_")} | (env or {})
    return subprocess.run([*RSR, *args], capture_output=True, text=True, timeout=60, env=environment)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("RSR_DB_WAIT", "1e309", "Input should be a finite number"),  # Seen: waited forever
        ("RSR_DB_WAIT", "inf", "Input should be a finite number"),
        ("RSR_DB_WAIT", "nan", "Input should be a finite number"),
        ("RSR_DB_WAIT", "1e9", "less than or equal to 604800"),
        ("RSR_LLM_TIMEOUT", "inf", "Input should be a finite number"),
        ("RSR_LLM_TIMEOUT", "0", "greater than 0"),
        ("RSR_LLM_MAX_RETRIES", "1" + "0" * 30, "less than or equal to 1000"),
        ("RSR_LLM_MAX_RETRIES", "-1", "greater than or equal to 0"),
        ("RSR_LLM_MAX_ANSWER_BYTES", "1e30", "valid integer"),
        ("RSR_LLM_MAX_ANSWER_BYTES", str(1 << 40), "less than or equal to 1073741824"),
        ("RSR_LLM_MAX_CONCURRENCY", "0", "greater than 0"),
        ("RSR_LLM_MAX_CONCURRENCY", "1" + "0" * 20, "less than or equal to 1000000"),
        ("RSR_CRITIC_FUZZY", "nan", "Input should be a finite number"),
        ("RSR_CRITIC_MIN_LITERAL", "99999999999", "less than or equal to 1000000"),
        ("RSR_PRICES", "m=inf/1", "Input should be a finite number"),
        ("RSR_PRICES", "m=1/nan", "Input should be a finite number"),
        ("RSR_PRICES", "m=-1/1", "prices of 'm' must not be negative"),
    ],
)
def test_every_numeric_setting_is_finite_and_bounded(variable, value, said):
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({variable: value})
    message = str(caught.value)
    assert message.startswith(f"configuration {variable} (`") and said in message and "\n" not in message


def test_the_bounds_themselves_are_accepted():
    s = Settings.from_env(
        {
            "RSR_DB_WAIT": "604800",
            "RSR_LLM_TIMEOUT": "0.5",
            "RSR_LLM_MAX_RETRIES": "0",
            "RSR_LLM_MAX_ANSWER_BYTES": str(1 << 30),
            "RSR_CRITIC_FUZZY": "100",
            "RSR_PRICES": "m=0/2.5",
        }
    )
    assert (s.db_wait_s, s.llm_timeout_s, s.llm_max_retries) == (604800, 0.5, 0)
    assert s.llm_max_answer_bytes == 1 << 30
    assert s.prices == {"m": (0.0, 2.5)}


def test_an_infinite_wait_is_refused_at_once_by_the_cli(tmp_path):
    started = time.monotonic()
    done = _rsr("list", "--db", str(tmp_path / "x.duckdb"), env={"RSR_DB_WAIT": "1e309"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "rsr: configuration RSR_DB_WAIT (`db_wait_s` in rsr.toml): Input should be a finite number; got '1e309'"
    ]
    assert time.monotonic() - started < 30
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize(
    ("flags", "flag", "expected"),
    [
        (["--limit", "-1"], "--limit", "expected a whole number from 0 to 1,000,000,000, got '-1'"),
        (["--offset", "-5"], "--offset", "expected a whole number from 0 to 1,000,000,000, got '-5'"),
        (["--limit", "1" + "0" * 30], "--limit", "expected a whole number from 0 to 1,000,000,000, got '1"),
        (["--offset", "1e3"], "--offset", "expected a whole number from 0 to 1,000,000,000, got '1e3'"),
        (["--limit", "ten"], "--limit", "expected a whole number from 0 to 1,000,000,000, got 'ten'"),
    ],
)
def test_list_refuses_a_bad_limit_or_offset_in_one_line(tmp_path, flags, flag, expected):
    # Seen: `rsr list --limit -1`, `--offset -5` and a limit of 10^30 ended in DuckDB tracebacks.
    done = _rsr("list", "--db", str(tmp_path / "x.duckdb"), *flags)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"rsr list: error: argument {flag}: {expected}")
    assert not (tmp_path / "x.duckdb").exists()  # refused before the database is opened


def test_list_pages_with_the_largest_limit_and_offset(tmp_path):
    db = str(tmp_path / "x.duckdb")
    done = _rsr("list", "--db", db, "--limit", "1000000000", "--offset", "1000000000", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"total": 0, "rows": []}'


NUMERIC_FLAGS = [
    (["ingest", "x", "--workers"], "-1"),
    (["ingest", "x", "--workers"], "100000"),
    (["discover", "--task", "t", "--harness", "terminus-2", "--runs"], "0"),
    (["discover", "--task", "t", "--harness", "terminus-2", "--max-turns"], "-3"),
    (["discover", "--task", "t", "--harness", "terminus-2", "--workers"], "0"),
    (["llm", "serve-scripted", "--script", "s.json", "--port"], "70000"),
    (["llm", "serve-scripted", "--script", "s.json", "--latency-ms"], "nan"),
    (["rewrite", "--task", "t", "--k"], "0"),
    (["rewrite", "--task", "t", "--m"], "1" + "0" * 30),
    (["rewrite", "--task", "t", "--rounds"], "-1"),
    (["rewrite", "--task", "t", "--temperature"], "inf"),
    (["rewrite", "--task", "t", "--max-turns"], "0"),
    (["app", "--port"], "0"),
    (["worker", "start", "--sandboxes"], "-2"),
    (["worker", "start", "--num-cpus"], "1e309"),
]


@pytest.mark.parametrize(("argv", "value"), NUMERIC_FLAGS, ids=[" ".join(a[-2:]) for a, _ in NUMERIC_FLAGS])
def test_every_numeric_flag_is_checked_by_the_parser(argv, value, capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([*argv, value])
    assert stopped.value.code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "error:" in x]
    assert f"argument {argv[-1]}: expected a " in line and f"got {value[:40]!r}" in line


def test_the_shared_types_accept_their_bounds_and_refuse_the_rest():
    whole = bounded_int(1, 10)
    assert (whole("1"), whole(" 10 "), whole("1_0")) == (1, 10, 10)
    for bad in ("0", "11", "1.0", "", "one", "9" * 5000):
        with pytest.raises(argparse.ArgumentTypeError):
            whole(bad)
    number = finite_float(0, 2)
    assert (number("0"), number("2"), number("0.7")) == (0.0, 2.0, 0.7)
    for bad in ("-0.01", "2.01", "inf", "-inf", "nan", "1e309", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            number(bad)
