"""Answer budgets and context lengths from the settings, down to what the endpoint receives."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.llm.client import LLMClient, role_budgets
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.protocols import ModelLimits
from rsr_core.settings import Settings, SettingsError

README = Path(__file__).resolve().parents[2] / "README.md"


def test_role_budgets_fall_back_to_max_tokens():
    settings = Settings.from_env({"RSR_MAX_TOKENS": "2048", "RSR_CRITIC_MAX_TOKENS": "256"})
    assert [settings.role_max_tokens(r) for r in ("planner", "critic", "executor")] == [2048, 256, 2048]
    assert Settings.from_env({}).role_max_tokens("executor") == 4096


def test_roles_sharing_a_model_get_the_largest_budget():
    env = {
        "RSR_MODEL": "m",
        "RSR_EXECUTOR_MODEL": "e",
        "RSR_PLANNER_MAX_TOKENS": "8000",
        "RSR_EXECUTOR_MAX_TOKENS": "512",
    }
    assert role_budgets(Settings.from_env(env)) == {"m": 8000, "e": 512}


def test_context_lengths_parse_like_the_image_map():
    settings = Settings.from_env({"RSR_CONTEXT_LENGTHS": " small=8192, org/big:v2=131072 ,"})
    assert settings.context_lengths == {"small": 8192, "org/big:v2": 131072}
    assert Settings.from_env({}).context_lengths == {}


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"RSR_CONTEXT_LENGTHS": "m=0"}, "context length of 'm' must be a positive number of tokens"),
        ({"RSR_CONTEXT_LENGTHS": "m=8k"}, "is not of the form 'model=tokens'"),
        ({"RSR_CONTEXT_LENGTHS": "m"}, "is not of the form 'model=tokens'"),
        ({"RSR_CONTEXT_LENGTHS": "=8192"}, "is not of the form 'model=tokens'"),
        ({"RSR_CONTEXT_LENGTHS": "m=-5"}, "is not of the form 'model=tokens'"),
        ({"RSR_MAX_TOKENS": "0"}, "greater than 0"),
        ({"RSR_EXECUTOR_MAX_TOKENS": "many"}, "valid integer"),
        ({"RSR_PLANNER_MAX_TOKENS": "1e309"}, "valid integer"),
    ],
)
def test_bad_budgets_and_lengths_are_one_line_naming_the_variable(env, said):
    with pytest.raises(SettingsError) as err:
        Settings.from_env(env)
    message = str(err.value)
    assert message.startswith(f"configuration {next(iter(env))} ") and said in message and "\n" not in message


def test_every_new_variable_is_in_the_readme():
    text = README.read_text()
    for name in (
        "RSR_MAX_TOKENS",
        "RSR_PLANNER_MAX_TOKENS",
        "RSR_CRITIC_MAX_TOKENS",
        "RSR_EXECUTOR_MAX_TOKENS",
        "RSR_CONTEXT_LENGTHS",
    ):
        assert f"`{name}`" in text, name


def test_a_client_from_settings_sends_each_roles_budget_and_knows_each_models_context():
    srv = ScriptedServer({"max_model_len": 8192, "rules": [{"model": "*", "response": "ok"}]}).start()
    try:
        env = {
            "RSR_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # replaced below: the app passes the endpoint chosen
            "RSR_MODEL": "m",
            "RSR_EXECUTOR_MODEL": "e",
            "RSR_MAX_TOKENS": "2048",
            "RSR_EXECUTOR_MAX_TOKENS": "512",
            "RSR_CONTEXT_LENGTHS": "e=32768",
        }
        llm = LLMClient.from_settings(Settings.from_env(env), base_url=srv.url)
        assert llm.limits("e") == ModelLimits(32768, 512)
        assert llm.limits("m") == ModelLimits(None, 2048)  # the server lists no model `m` (only '*' rules)
        llm.complete([{"role": "user", "content": "x"}], "e")
        llm.complete([{"role": "user", "content": "x"}], "m")
        llm.complete([{"role": "user", "content": "x"}], "m", max_tokens=99)
        assert [(r["model"], r["max_tokens"]) for r in srv.requests] == [("e", 512), ("m", 2048), ("m", 99)]
    finally:
        srv.stop()
