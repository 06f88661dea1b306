"""Terminus 2 against an endpoint that behaves like vLLM serving a reasoning model with an 8K context: thinking
inline and beside the answer, a context the run outgrows (handed off to a fresh conversation, as Terminal-Bench's
Terminus 2 does), refusals for length, cut answers, a failed call after the first turn. Real sandboxes, the
real `openai` client over HTTP to the project's scripted server."""

from __future__ import annotations

import json

import pytest

from rsr_core.formats.training import training_rows
from rsr_core.harness import Terminus2Harness
from rsr_core.llm.client import LLMClient
from rsr_core.llm.scripted_server import ScriptedServer
from tests.conftest import answer

pytestmark = pytest.mark.docker
WRITE = "printf 'a,1\\n' > /app/out.txt\n"
BIG = "x" * 9000  # a long analysis: some 2,300 tokens an answer, so that three fill the context
THINK = "<think>The file needs {a,1}; braces {like these} must not confuse the reader.}</think>\n\n"


@pytest.fixture
def endpoint():
    servers: list[ScriptedServer] = []

    def start(script: dict, **client) -> tuple[ScriptedServer, LLMClient]:
        srv = ScriptedServer(script).start()
        servers.append(srv)
        return srv, LLMClient(srv.url, max_retries=0, **client)

    yield start
    for srv in servers:
        srv.stop()


def _handoff_rules(model: str) -> list[dict]:
    """Big outputs until the context is full; the summary; then, in the fresh conversation, the fix."""
    return [
        {"model": model, "when": {"last_user": "Write a summary"}, "response": THINK + "Ran seq twice; nothing written."},
        {
            "model": model,
            "when": {"conversation": "Summary of the work so far"},
            "turns": [THINK + json.dumps(answer("write", "p", WRITE)), json.dumps(answer(done=True)), json.dumps(answer(done=True))],
            "reasoning": "fresh start",
        },
        {"model": model, "response": THINK + json.dumps(answer(BIG, "p", "ls /app\n"))},
    ]  # fmt: skip


def _last_request(srv: ScriptedServer, model: str) -> list[dict]:
    return [r for r in srv.requests if r["model"] == model][-1]["messages"]


def test_a_reasoning_model_outgrowing_an_8k_context_hands_off_and_solves(endpoint, sandboxes, csv_task):
    srv, llm = endpoint({"max_model_len": 8192, "rules": _handoff_rules("r1")})
    assert llm.limits("r1").context_length == 8192  # what /v1/models says, as vLLM reports it
    r = Terminus2Harness(llm, sandboxes, "r1", max_turns=20).run(csv_task)
    assert (r.reward, r.stop_reason) == (1.0, "completed")
    steps = r.trajectory.steps
    handoffs = [s for s in steps if s.extra.get("handoff")]
    assert (
        len(handoffs) == 1
        and handoffs[0].harness_control
        and handoffs[0].message == "Ran seq twice; nothing written."
    )
    agent = [s for s in steps if s.source == "agent" and not s.harness_control]
    cut = [
        s for s in agent if s.extra.get("cut_at_tokens")
    ]  # the context filled: the last answer had less room
    assert all(s.analysis is not None for s in agent if s not in cut)  # every answer read past its thinking
    assert agent[0].reasoning.startswith("The file needs {a,1}") and agent[-1].reasoning == "fresh start"
    assert not any("<think>" in s.message or "<think>" in s.extra.get("answer", "") for s in agent)
    for request in srv.requests:  # every request fit and carried an answer budget
        assert request["max_tokens"] and request["max_tokens"] <= 8192
    # A row per conversation; the last is byte for byte the last request and the answer to it.
    rows, why = training_rows(r.trajectory)
    assert why is None and len(rows) == 2
    last = _last_request(srv, "r1")
    assert rows[-1] == [*last, {"role": "assistant", "content": json.dumps(answer(done=True))}]
    assert "Are you sure" in rows[-1][-2]["content"]  # the confirmation question, as the harness sent it


def test_a_refusal_for_length_is_handed_off_too(endpoint, sandboxes, csv_task):
    # The client believes in a larger context than the server has: the server's own refusal (vLLM's wording)
    # is what tells the harness.
    _, llm = endpoint({"max_model_len": 8192, "rules": _handoff_rules("r2")}, context_lengths={"r2": 65536})
    r = Terminus2Harness(llm, sandboxes, "r2", max_turns=20).run(csv_task)
    assert (r.reward, r.stop_reason) == (1.0, "completed")
    assert any(s.extra.get("handoff") for s in r.trajectory.steps)


def test_a_cut_answer_is_said_to_be_cut_and_a_later_failed_call_keeps_the_run(endpoint, sandboxes, csv_task):
    long = json.dumps(answer("x" * 4000, "p", WRITE))  # about 1,000 tokens: cut at the 300 sent
    srv, llm = endpoint(
        {
            "rules": [
                {"model": "cut", "when": {"last_user": "was cut at"}, "response": json.dumps(answer("w", "p", WRITE))},
                {"model": "cut", "turns": [long, json.dumps(answer("w", "p", WRITE))]},
                {"model": "dies", "turns": [json.dumps(answer("w", "p", WRITE))]},
                {"model": "dies", "when": {"last_user": "New terminal output"}, "error": {"status": 500, "times": 99}},
            ]
        },
        model_max_tokens={"cut": 300},
    )  # fmt: skip
    r = Terminus2Harness(llm, sandboxes, "cut", max_turns=2).run(csv_task)
    first = r.trajectory.steps[1]
    assert first.extra.get("cut_at_tokens") == 300 and "cut at 300 tokens" in first.observation
    assert r.turns == 2 and r.reward == 1.0  # the shorter answer ran
    srv.rules.reverse()  # the erring rule first: every call after the first turn fails
    r = Terminus2Harness(llm, sandboxes, "dies", max_turns=5).run(csv_task)
    assert r.stop_reason == "model_error" and r.turns == 1 and r.reward == 1.0
    assert len([s for s in r.trajectory.steps if s.source == "agent"]) == 1
