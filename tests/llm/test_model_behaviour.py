"""Real model behaviour played by the scripted server and met by the client, over real HTTP through the `openai`
SDK: thinking beside or inside the answer, answers cut at `max_tokens`, a finite context reported in
/v1/models and refused in each server's words."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rsr_core.errors import RsrError
from rsr_core.llm.client import ContextLengthExceeded, LLMClient, LLMError, is_context_length_error
from rsr_core.llm.scripted_server import ScriptedServer, ScriptError
from rsr_core.protocols import ModelLimits

RSR = Path(sys.executable).parent / "rsr"
VLLM_REFUSAL = (
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the "
    "messages, 1000 in the completion). Please reduce the length of the messages or completion."
)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def of_tokens(n: int) -> str:
    """A message the server counts as `n` tokens (length // 4 + 1)."""
    return "w" * (4 * (n - 1))


@pytest.fixture
def serve():
    servers: list[ScriptedServer] = []

    def start(script: dict) -> ScriptedServer:
        servers.append(ScriptedServer(script).start())
        return servers[-1]

    yield start
    for srv in servers:
        srv.stop()


# --- recognising a context-length refusal -------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        VLLM_REFUSAL,
        "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens in the messages, "
        "Please reduce the length of the messages.",
        "This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please "
        "reduce the length of the input messages.",
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that "
        "`max_model_len` is no smaller than the number of text tokens.",
        "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
        "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested a total "
        "of 9000 tokens: 8000 tokens from the input messages and 1000 tokens for the completion.",
        "the request exceeds the available context size, try increasing it",
        "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
        "Context size has been exceeded.",
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8000 `inputs` tokens "
        "and 1000 `max_new_tokens`",
    ],
)
def test_each_servers_wording_is_a_context_length_error(message):
    assert is_context_length_error(400, message)
    assert is_context_length_error(400, {"object": "error", "message": message, "code": 400})
    assert is_context_length_error(400, {"error": {"message": message}})
    assert is_context_length_error(None, message)
    assert not is_context_length_error(200, message)  # a success that quotes the words is an answer


@pytest.mark.parametrize(
    "body",
    [
        {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"},
        {"error": {"message": "Input tokens exceed the configured limit", "code": "context_length_exceeded"}},
        {"error": {"code": 400, "message": "?", "type": "exceed_context_size_error", "n_ctx": 8192}},
    ],
)
def test_error_codes_and_types_are_context_length_errors(body):
    assert is_context_length_error(400, body)


@pytest.mark.parametrize(
    "body",
    [
        "Rate limit reached for requests",
        "max_tokens must be at least 1, got 0",
        {
            "error": {
                "message": "model 'x' not found",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        },
        {"object": "error", "message": "context: the sandbox said no", "code": 400},
        None,
        ["maximum context length is 5 tokens"],
    ],
)
def test_other_errors_are_not_context_length_errors(body):
    assert not is_context_length_error(400, body)


# --- the server plays a finite context ------------------------------------------------------------------------


def test_vllm_refusal_has_vllms_exact_body(serve):
    srv = serve({"max_model_len": 8192, "rules": [{"model": "m", "response": "ok"}]})
    request = urllib.request.Request(
        srv.url + "/chat/completions",
        json.dumps({"model": "m", "messages": user(of_tokens(8000)), "max_tokens": 1000}).encode(),
        {"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 400
    assert json.loads(err.value.read()) == {
        "object": "error",
        "message": VLLM_REFUSAL,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    assert srv.requests[-1]["max_tokens"] == 1000


@pytest.mark.parametrize(
    ("server", "prompt", "said"),
    [
        ("vllm", 8000, "maximum context length is 8192 tokens. However, you requested 9000 tokens"),
        ("sglang", 8000, "exceeds the model's maximum context length of 8192 tokens"),
        ("sglang", 8192, "The input (8192 tokens) is longer than the model's context length (8192 tokens)."),
        ("openai", 8000, "This model's maximum context length is 8192 tokens. However, you requested 9000"),
        # llama.cpp counts the prompt alone (it cuts the answer instead)
        ("llamacpp", 8192, "request (8192 tokens) exceeds the available context size (8192 tokens)"),
    ],
)
def test_each_servers_refusal_is_context_length_exceeded_and_not_retried(serve, server, prompt, said):
    srv = serve({"max_model_len": 8192, "context_error": server, "rules": [{"model": "m", "response": "ok"}]})
    llm = LLMClient(srv.url, max_retries=3, backoff_s=0.01)
    with pytest.raises(ContextLengthExceeded) as err:
        llm.complete(user(of_tokens(prompt)), "m", max_tokens=1000)
    assert said in str(err.value)
    assert len(srv.requests) == 1  # a refusal for length is not asked again
    # what fits is answered
    assert llm.complete(user(of_tokens(7000)), "m", max_tokens=1000).text == "ok"


def test_other_refusals_stay_plain_llm_errors(serve):
    srv = serve({"max_model_len": 8192, "rules": [{"model": "m", "response": "ok"}]})
    with pytest.raises(LLMError) as err:
        LLMClient(srv.url, max_retries=0).complete(user("hi"), "unknown-model")
    assert not isinstance(err.value, ContextLengthExceeded)
    assert "no scripted response" in str(err.value)


# --- limits ---------------------------------------------------------------------------------------------------


def test_limits_reads_max_model_len_once(serve):
    srv = serve({"max_model_len": 8192, "rules": [{"model": "m", "response": "ok"}]})
    listed = json.loads(urllib.request.urlopen(srv.url + "/models", timeout=10).read())
    assert [e["max_model_len"] for e in listed["data"]] == [8192]
    llm = LLMClient(srv.url)
    before = srv.model_listings
    assert llm.limits("m") == ModelLimits(8192, 4096)
    assert llm.limits("m") == ModelLimits(8192, 4096)
    assert srv.model_listings == before + 1  # asked once per model
    assert llm.limits("not-served") == ModelLimits(None, 4096)


def test_the_setting_wins_over_the_endpoint_and_fills_in_for_one_that_does_not_say(serve):
    reporting = serve({"max_model_len": 8192, "rules": [{"model": "m", "response": "ok"}]})
    llm = LLMClient(reporting.url, context_lengths={"m": 4000})
    assert llm.limits("m").context_length == 4000
    assert reporting.model_listings == 0
    silent = serve({"rules": [{"model": "m", "response": "ok"}]})
    assert LLMClient(silent.url).limits("m").context_length is None
    assert LLMClient(silent.url, context_lengths={"m": 32768}).limits("m").context_length == 32768


def test_an_endpoint_that_does_not_answer_has_no_known_context_length():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = LLMClient(f"http://127.0.0.1:{port}/v1", max_retries=5, timeout_s=5)
    started = time.monotonic()
    assert llm.limits("m") == ModelLimits(None, 4096)
    assert time.monotonic() - started < 5  # not the chat requests' retries


# --- answer budgets -------------------------------------------------------------------------------------------


def test_every_request_carries_max_tokens(serve):
    srv = serve({"rules": [{"model": "*", "response": "ok"}]})
    LLMClient(srv.url).complete(user("a"), "m")
    LLMClient(srv.url, max_tokens=300, model_max_tokens={"exec": 512}).complete(user("b"), "exec")
    LLMClient(srv.url, max_tokens=300, model_max_tokens={"exec": 512}).complete(user("c"), "other")
    LLMClient(srv.url).complete(user("d"), "m", max_tokens=77)
    assert [r["max_tokens"] for r in srv.requests] == [4096, 512, 300, 77]


def test_a_model_that_refuses_max_tokens_gets_max_completion_tokens(serve):
    srv = serve({"max_tokens_field": "max_completion_tokens", "rules": [{"model": "o", "response": "ok"}]})
    llm = LLMClient(srv.url, max_retries=0, max_tokens=640)
    assert llm.complete(user("a"), "o").text == "ok"
    assert llm.complete(user("b"), "o", max_tokens=50).text == "ok"
    # the first request was refused and sent again; the model is remembered
    sent = [(r["budget_field"], r["max_tokens"]) for r in srv.requests]
    assert sent == [("max_tokens", 640), ("max_completion_tokens", 640), ("max_completion_tokens", 50)]


def test_either_budget_field_is_honoured(serve):
    srv = serve({"rules": [{"model": "m", "response": "x" * 100}]})
    for field in ("max_tokens", "max_completion_tokens"):
        request = urllib.request.Request(
            srv.url + "/chat/completions",
            json.dumps({"model": "m", "messages": user("q"), field: 5}).encode(),
            {"Content-Type": "application/json"},
        )
        choice = json.loads(urllib.request.urlopen(request, timeout=10).read())["choices"][0]
        assert (choice["message"]["content"], choice["finish_reason"]) == ("x" * 19, "length")


def test_an_answer_longer_than_max_tokens_is_cut_with_finish_reason_length(serve):
    srv = serve({"rules": [{"model": "m", "response": "x" * 1000}]})
    llm = LLMClient(srv.url)
    cut = llm.complete(user("go"), "m", max_tokens=10)
    assert (cut.text, cut.finish_reason, cut.completion_tokens) == ("x" * 39, "length", 10)
    whole = llm.complete(user("go"), "m")
    assert (whole.text, whole.finish_reason, whole.completion_tokens) == ("x" * 1000, "stop", 251)


def test_llamacpp_cuts_the_answer_where_the_context_ends(serve):
    script = {
        "max_model_len": 50,
        "context_error": "llamacpp",
        "rules": [{"model": "m", "response": "y" * 400}],
    }
    srv = serve(script)
    done = LLMClient(srv.url).complete(user(of_tokens(10)), "m", max_tokens=1000)
    assert done.finish_reason == "length"
    assert done.prompt_tokens + done.completion_tokens == 50
    assert done.text == "y" * (4 * 40 - 1)


# --- thinking -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_thinking_beside_the_answer_is_the_completions_reasoning(serve, field):
    rule = {
        "model": "m",
        "response": '{"x": 1}',
        "reasoning": "weigh {a} against {b}",
        "reasoning_field": field,
    }
    srv = serve({"rules": [rule]})
    raw = urllib.request.Request(
        srv.url + "/chat/completions",
        json.dumps({"model": "m", "messages": user("q")}).encode(),
        {"Content-Type": "application/json"},
    )
    message = json.loads(urllib.request.urlopen(raw, timeout=10).read())["choices"][0]["message"]
    assert message[field] == "weigh {a} against {b}"
    done = LLMClient(srv.url).complete(user("q"), "m")
    assert (done.text, done.reasoning) == ('{"x": 1}', "weigh {a} against {b}")


def test_thinking_inline_is_taken_out_of_the_answer(serve):
    srv = serve({"rules": [{"model": "m", "response": '<think>try {"y": 2} first</think>\n{"x": 1}'}]})
    done = LLMClient(srv.url).complete(user("q"), "m")
    assert (done.text.strip(), done.reasoning) == ('{"x": 1}', 'try {"y": 2} first')


def test_thinking_by_turn(serve):
    srv = serve({"rules": [{"model": "m", "turns": ["a1", "a2"], "reasoning": ["r1", "r2"]}]})
    llm = LLMClient(srv.url)
    first = llm.complete(user("q"), "m")
    second = llm.complete([*user("q"), {"role": "assistant", "content": "a1"}, *user("more")], "m")
    assert [(first.text, first.reasoning), (second.text, second.reasoning)] == [("a1", "r1"), ("a2", "r2")]


def test_thinking_that_fills_the_budget_leaves_no_answer(serve):
    srv = serve({"rules": [{"model": "m", "response": "the answer", "reasoning": "r" * 100}]})
    done = LLMClient(srv.url).complete(user("q"), "m", max_tokens=10)
    assert (done.text, done.reasoning, done.finish_reason) == ("", "r" * 39, "length")


# --- scripts --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ({"max_model_len": 0, "rules": []}, "script.max_model_len"),
        ({"max_model_len": "8k", "rules": []}, "script.max_model_len"),
        ({"context_error": "tgi", "rules": []}, "script.context_error"),
        ({"max_tokens_field": "n", "rules": []}, "script.max_tokens_field"),
        ({"rules": [{"model": "m", "response": "x", "reasoning": 3}]}, "rules[0].reasoning"),
        (
            {"rules": [{"model": "m", "response": "x", "reasoning_field": "thoughts"}]},
            "rules[0].reasoning_field",
        ),
    ],
)
def test_a_bad_script_names_its_field(script, said):
    with pytest.raises(ScriptError, match=said.replace("[", r"\[")) as err:
        ScriptedServer(script)
    assert isinstance(err.value, RsrError)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"max_model_len": -1, "rules": []}', "script.max_model_len: expected a positive whole number"),
        ('{"rules": [{"model": "m", "response": "x", "error": {"times": "z"}}]}', "not a valid script"),
        ("not json", "cannot read the script"),
    ],
)
def test_serve_scripted_refuses_a_bad_script_in_one_line(tmp_path, text, said):
    script = tmp_path / "script.json"
    script.write_text(text)
    done = subprocess.run(
        [str(RSR), "llm", "serve-scripted", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"rsr: {script}: ") and said in done.stderr


def test_serve_scripted_on_a_taken_port_says_so_in_one_line(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('{"rules": [{"model": "m", "response": "x"}]}')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(RSR), "llm", "serve-scripted", "--script", str(script), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"rsr: 127.0.0.1:{port}: cannot serve there: Address already in use\n"
