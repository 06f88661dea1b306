"""The scripted server is a real OpenAI-protocol server: the real `openai` client talks to it over HTTP."""

from __future__ import annotations

import itertools
import json
import re
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


def test_retries_on_429_then_succeeds_honouring_retry_after():
    script = {
        "rules": [
            {"model": "m-flaky", "error": {"status": 429, "times": 2, "retry_after_ms": 400}},
            {"model": "m-flaky", "response": "finally"},
        ]
    }
    srv = ScriptedServer(script).start()
    try:
        llm = LLMClient(srv.url, max_retries=3, backoff_s=0.01)
        assert llm.complete([{"role": "user", "content": "x"}], "m-flaky").text == "finally"
        times = [r["at"] for r in srv.requests]
        assert len(times) == 3
        # the server asked for 400 ms between tries (retry-after-ms); the SDK's own backoff would be shorter
        assert all(b - a >= 0.35 for a, b in itertools.pairwise(times))
    finally:
        srv.stop()


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            {"status": 200, "body": "<html>bad gateway</html>"},
            "not a chat completion: '<html>bad gateway</html>'",
        ),
        ({"status": 200, "body": '{"unexpected": true}'}, "not a chat completion"),
        ({"status": 200, "choices": []}, "empty `choices` list"),
    ],
)
def test_malformed_success_is_retried_then_fails_saying_what_came_back(error, said):
    srv = ScriptedServer({"rules": [{"model": "m", "error": {**error, "times": 2}}, {"model": "m", "response": "ok"},
                                    {"model": "never", "error": {**error, "times": 99}}]}).start()  # fmt: skip
    try:
        llm = LLMClient(srv.url, max_retries=2, backoff_s=0.01)
        assert llm.complete([{"role": "user", "content": "x"}], "m").text == "ok"
        with pytest.raises(LLMError, match=re.escape(said)) as err:
            llm.complete([{"role": "user", "content": "x"}], "never")
        assert "after 3 tries" in str(err.value)
        assert sum(1 for r in srv.requests if r["model"] == "never") == 3
    finally:
        srv.stop()


def test_an_oversized_answer_is_cut_with_a_marker():
    srv = ScriptedServer({"rules": [{"model": "m", "response": "é" * 5000}]}).start()
    try:
        c = LLMClient(srv.url, max_answer_bytes=1001).complete([{"role": "user", "content": "x"}], "m")
        assert c.truncated and c.text.startswith("é" * 500) and "answer cut at 1001 bytes" in c.text
        assert len(c.text.split("\n")[0].encode()) <= 1001
    finally:
        srv.stop()


def test_gives_up_after_retries_and_on_unscripted_requests(server):
    llm = LLMClient(
        server.url, max_retries=2, backoff_s=0.01
    )  # the scripted errors ask for 10 ms between tries
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
