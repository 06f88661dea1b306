"""The scripted server is a real OpenAI-protocol server: the real `openai` client talks to it over HTTP."""

from __future__ import annotations

import json
import time

import openai
import pytest

from rsr_core.llm.client import LLMClient, LLMError
from rsr_core.llm.scripted_server import ScriptedServer, ScriptError


@pytest.fixture
def server():
    script = {
        "rules": [
            {"model": "m-flaky", "error": {"status": 429, "times": 2}},
            {"model": "m-flaky", "response": "finally"},
            {"model": "m-broken", "error": {"status": 503, "times": 99}},
            {"model": "m", "when": {"seed": 7}, "response": "seven"},
            {"model": "m", "when": {"last_user": "^hello"}, "response": {"greeting": True}},
            {"model": "m", "when": {"conversation": "task A"}, "turns": ["a1", "a2", "a3"]},
            {"model": "*", "when": {"system": "catch-all"}, "response": "star"},
        ]
    }
    srv = ScriptedServer(script).start()
    yield srv
    srv.stop()


def test_models_and_rules_through_the_openai_client(server):
    client = openai.OpenAI(base_url=server.url, api_key="x")
    assert {m.id for m in client.models.list().data} == {"m", "m-flaky", "m-broken"}
    llm = LLMClient(server.url)
    user = lambda text: [{"role": "user", "content": text}]  # noqa: E731
    assert json.loads(llm.complete(user("hello there"), "m").text) == {"greeting": True}
    assert llm.complete(user("anything"), "m", seed=7).text == "seven"
    convo = [{"role": "user", "content": "task A"}]
    assert llm.complete(convo, "m").text == "a1"
    convo += [{"role": "assistant", "content": "a1"}, {"role": "user", "content": "next"}]
    assert llm.complete(convo, "m").text == "a2"
    convo += [{"role": "assistant", "content": "x"}] * 5
    assert llm.complete(convo, "m").text == "a3"  # past the end: the last turn again
    sys_msg = [{"role": "system", "content": "catch-all"}, *user("q")]
    assert llm.complete(sys_msg, "whatever").text == "star"
    assert llm.calls == 6 and llm.prompt_tokens > 0 and llm.completion_tokens > 0


def test_retries_on_429_then_succeeds(server):
    llm = LLMClient(server.url, max_retries=3, backoff_s=0.01)
    assert llm.complete([{"role": "user", "content": "x"}], "m-flaky").text == "finally"
    assert sum(1 for r in server.requests if r["model"] == "m-flaky") == 3


def test_gives_up_after_retries_and_on_unscripted_requests(server):
    llm = LLMClient(server.url, max_retries=2, backoff_s=0.01)
    with pytest.raises(LLMError, match="503"):
        llm.complete([{"role": "user", "content": "x"}], "m-broken")
    assert sum(1 for r in server.requests if r["model"] == "m-broken") == 3
    with pytest.raises(LLMError, match="no scripted response"):
        llm.complete([{"role": "user", "content": "unknown"}], "m")


def test_fixed_latency():
    srv = ScriptedServer({"rules": [{"model": "m", "response": "ok"}]}, latency_ms=200).start()
    try:
        llm = LLMClient(srv.url)
        t0 = time.monotonic()
        llm.complete([{"role": "user", "content": "x"}], "m")
        assert time.monotonic() - t0 >= 0.2
    finally:
        srv.stop()


def test_bad_scripts_are_refused():
    with pytest.raises(ScriptError, match="rules"):
        ScriptedServer({"nope": []})
    with pytest.raises(ScriptError, match=r"rules\[0\]"):
        ScriptedServer({"rules": [{"model": "m"}]})
    with pytest.raises(ScriptError, match="regular expression"):
        ScriptedServer({"rules": [{"model": "m", "when": {"last_user": "("}, "response": "x"}]})


def test_missing_endpoint_is_explained():
    from rsr_core.settings import Settings

    with pytest.raises(LLMError, match="RSR_LLM_BASE_URL"):
        LLMClient.from_settings(Settings.from_env({}))
