"""A real OpenAI-compatible HTTP server that replays scripted responses (tests and the offline demo).

Script file (JSON):

    {"latency_ms": 0,
     "max_model_len": 8192,                           # optional: the context length of every model
     "context_error": "vllm",                         # whose refusal is played: vllm, sglang, llamacpp, openai
     "max_tokens_field": "max_tokens",                # "max_completion_tokens": refuse `max_tokens` as OpenAI's
                                                      # reasoning models do
     "rules": [
       {"model": "scripted-terminus",                 # exact model name, or "*"
        "when": {"conversation": "regex", "last_user": "regex", "system": "regex", "seed": 1},
        "turns": ["...", {...}],                      # picked by the number of assistant messages so far
        "response": "...",                            # or one answer for every call
        "reasoning": "...",                           # optional thinking beside the answer (or a list, per turn)
        "reasoning_field": "reasoning_content",       # or "reasoning" (the message field it is sent in)
        "error": {"status": 429, "times": 1}}         # answer with an HTTP error the first `times` calls
     ]}

An error may also be a broken HTTP 200: `{"status": 200, "body": "not json", "times": 1}` sends that raw body,
`{"status": 200, "choices": [], "times": 1}` a completion without choices. Error answers carry
`retry-after-ms` (`"retry_after_ms"`, default 10), which OpenAI clients honour.

The first rule whose model and conditions match answers. Object answers are sent as JSON text; thinking
written inline is just the start of a turn's text (`"<think>…</think>{…}"`).

Tokens are counted the same way everywhere: a text's length in characters // 4 + 1 (`count_tokens`). With
`max_model_len`, GET /v1/models reports it on every model (as vLLM does) and a request whose prompt and
`max_tokens` together exceed it is refused with HTTP 400 in the chosen server's words and body shape. A
request's `max_tokens` is honoured: a longer answer (thinking beside it first, then the text) is cut to that
many tokens and sent with `finish_reason: "length"`. Every well-formed chat request, refused or not, is
recorded in `ScriptedServer.requests` (model, messages, seed, `max_tokens` and the field it came in).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from rsr_core.errors import RsrError

ContextServer = Literal["vllm", "sglang", "llamacpp", "openai"]
CONTEXT_SERVERS: tuple[ContextServer, ...] = ("vllm", "sglang", "llamacpp", "openai")
REASONING_FIELDS = ("reasoning_content", "reasoning")
# OpenAI's answer to `max_tokens` for a model that takes only `max_completion_tokens` (its reasoning models).
MAX_TOKENS_REFUSAL = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}


class ServeError(RsrError):
    """The server cannot listen where it was asked to."""


class ScriptError(RsrError, ValueError):
    """The script file is not valid (the message names the file and field)."""


@dataclass
class Rule:
    """One scripted rule."""

    model: str
    conversation: re.Pattern | None = None
    last_user: re.Pattern | None = None
    system: re.Pattern | None = None
    seed: int | None = None
    turns: list[str] = field(default_factory=list)
    error_status: int | None = None
    error_times: int = 0
    error_body: str | None = None
    error_empty: bool = False
    retry_after_ms: float = 10.0
    reasoning: list[str] = field(default_factory=list)
    """Thinking sent beside the answer, by turn like `turns` (the last one past the end)."""
    reasoning_field: str = "reasoning_content"
    hits: int = 0

    def matches(self, model: str, messages: list[dict], seed: int | None) -> bool:
        if self.model not in ("*", model):
            return False
        if self.seed is not None and seed != self.seed:
            return False
        texts = {
            "conversation": "\n".join(_content(m) for m in messages),
            "last_user": next((_content(m) for m in reversed(messages) if m.get("role") == "user"), ""),
            "system": "\n".join(_content(m) for m in messages if m.get("role") == "system"),
        }
        return all(
            p is None or p.search(texts[name])
            for name, p in (
                ("conversation", self.conversation),
                ("last_user", self.last_user),
                ("system", self.system),
            )
        )


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _answer(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def count_tokens(text: str) -> int:
    """The server's token count of a text (about 4 characters a token, at least 1)."""
    return len(text) // 4 + 1


def prompt_tokens(messages: list[dict]) -> int:
    """The server's token count of a request's messages."""
    return count_tokens("".join(_content(m) for m in messages))


def cut_to_tokens(text: str, tokens: int) -> str:
    """The longest start of `text` that counts as at most `tokens` tokens."""
    return text[: max(0, 4 * tokens - 1)]


def context_refusal(server: ContextServer, limit: int, prompt: int, max_tokens: int | None) -> dict | None:
    """The HTTP 400 body `server` answers a request of `prompt` tokens asking for `max_tokens` with, when the
    model's context is `limit` tokens; None when it fits. vLLM and SGLang count the answer budget in; llama.cpp
    only refuses a prompt that fills its context (it cuts the answer instead)."""
    asked = prompt + (max_tokens or 0)
    if server == "llamacpp":
        if prompt < limit:
            return None
        message = f"request ({prompt} tokens) exceeds the available context size ({limit} tokens), try increasing it"
        return {"error": {"code": 400, "message": message, "type": "exceed_context_size_error",
                          "n_prompt_tokens": prompt, "n_ctx": limit}}  # fmt: skip
    if (prompt < limit) if max_tokens is None else (asked <= limit):
        return None
    if server == "sglang":
        if max_tokens is None or prompt >= limit:
            message = (
                f"The input ({prompt} tokens) is longer than the model's context length ({limit} tokens)."
            )
        else:
            message = (
                f"Requested token count exceeds the model's maximum context length of {limit} tokens. You "
                f"requested a total of {asked} tokens: {prompt} tokens from the input messages and {max_tokens} "
                "tokens for the completion. Please reduce the number of tokens in the input messages or the "
                "completion to fit within the limit."
            )
        return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
    if max_tokens is None:
        message = (
            f"This model's maximum context length is {limit} tokens. However, you requested {prompt} tokens in "
            "the messages, Please reduce the length of the messages."
        )
    else:
        message = (
            f"This model's maximum context length is {limit} tokens. However, you requested {asked} tokens "
            f"({prompt} in the messages, {max_tokens} in the completion). Please reduce the length of the "
            "messages or completion."
        )
    if server == "openai":
        return {"error": {"message": message, "type": "invalid_request_error", "param": "messages",
                          "code": "context_length_exceeded"}}  # fmt: skip
    return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}


def _positive_int(data: dict, key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ScriptError(f"{where}.{key}: expected a positive whole number of tokens, got {value!r}")
    return value


@dataclass(frozen=True)
class Script:
    """A parsed script: its rules and the server's behaviour."""

    rules: list[Rule]
    latency_s: float = 0.0
    max_model_len: int | None = None
    context_error: ContextServer = "vllm"
    max_tokens_field: str = "max_tokens"


def parse_script(data: dict) -> Script:
    """A parsed script file (ScriptError names the first bad field)."""
    rules, latency = load_script(data)
    server = data.get("context_error", "vllm")
    if server not in CONTEXT_SERVERS:
        raise ScriptError(
            f"script.context_error: expected one of {', '.join(CONTEXT_SERVERS)}, got {server!r}"
        )
    field = data.get("max_tokens_field", "max_tokens")
    if field not in ("max_tokens", "max_completion_tokens"):
        raise ScriptError(
            f"script.max_tokens_field: expected max_tokens or max_completion_tokens, got {field!r}"
        )
    return Script(rules, latency, _positive_int(data, "max_model_len", "script"), server, field)


def load_script(data: dict) -> tuple[list[Rule], float]:
    """Rules and latency (seconds) from a parsed script."""
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ScriptError("script: expected an object with a 'rules' list")
    rules = []
    for i, raw in enumerate(data["rules"]):
        where = f"rules[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("model"), str):
            raise ScriptError(f"{where}: expected an object with a string 'model'")
        when = raw.get("when") or {}
        try:
            pats = {
                k: re.compile(when[k], re.S) if when.get(k) else None
                for k in ("conversation", "last_user", "system")
            }
        except re.error as exc:
            raise ScriptError(f"{where}.when: bad regular expression: {exc}") from None
        turns = [_answer(t) for t in raw.get("turns", [])]
        if "response" in raw:
            turns = [_answer(raw["response"])]
        error = raw.get("error") or {}
        if not turns and not error:
            raise ScriptError(f"{where}: needs 'turns', 'response' or 'error'")
        reasoning = raw.get("reasoning", [])
        reasoning = [reasoning] if isinstance(reasoning, str) else reasoning
        if not isinstance(reasoning, list) or not all(isinstance(r, str) for r in reasoning):
            raise ScriptError(f"{where}.reasoning: expected a string or a list of strings")
        reasoning_field = raw.get("reasoning_field", "reasoning_content")
        if reasoning_field not in REASONING_FIELDS:
            raise ScriptError(f"{where}.reasoning_field: expected one of {', '.join(REASONING_FIELDS)}")
        rules.append(
            Rule(
                raw["model"],
                pats["conversation"],
                pats["last_user"],
                pats["system"],
                when.get("seed"),
                turns,
                error.get("status"),
                int(error.get("times", 0)),
                error.get("body") if isinstance(error.get("body"), str) else None,
                error.get("choices") == [],
                float(error.get("retry_after_ms", 10)),
                reasoning=reasoning,
                reasoning_field=reasoning_field,
            )
        )
    return rules, float(data.get("latency_ms", 0)) / 1000.0


def _read_script(script: dict | str | Path) -> Script:
    if isinstance(script, dict):
        return parse_script(script)
    try:
        data = json.loads(Path(script).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScriptError(f"{script}: cannot read the script: {exc}") from None
    try:
        return parse_script(data)
    except ScriptError as exc:
        raise ScriptError(f"{script}: {exc}") from None
    except (TypeError, ValueError) as exc:  # a number field that is not a number (`int("x")`)
        raise ScriptError(f"{script}: not a valid script: {exc}") from None


@dataclass(frozen=True)
class Reply:
    """What the server answers one chat request with."""

    status: int
    text: str
    """The answer (HTTP 200), else the error message."""
    error_rule: Rule | None = None
    """The rule whose scripted error this is (its retry-after; a 200 from it is a broken success)."""
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"
    body: dict | None = None
    """An error body sent as it is (a context refusal in a real server's shape)."""


class ScriptedServer(ThreadingHTTPServer):
    """Serves POST /v1/chat/completions and GET /v1/models from a script, on 127.0.0.1."""

    daemon_threads = True

    def __init__(self, script: dict | str | Path, port: int = 0, latency_ms: float | None = None):
        parsed = _read_script(script)
        self.rules = parsed.rules
        self.latency = parsed.latency_s if latency_ms is None else latency_ms / 1000.0
        self.max_model_len = parsed.max_model_len
        self.context_error = parsed.context_error
        self.max_tokens_field = parsed.max_tokens_field
        self.requests: list[dict] = []
        self.model_listings = 0
        """GET /v1/models requests answered."""
        self.in_flight = 0
        """Chat requests being answered right now."""
        self.max_in_flight = 0
        """The most chat requests it answered at once (what a client-side concurrency cap must bound)."""
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError as exc:  # the port is taken, or not ours to take
            raise ServeError(f"127.0.0.1:{port}: cannot serve there: {exc.strerror or exc}") from None

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients (ends in /v1)."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def models(self) -> list[str]:
        """Model names the script answers for."""
        return sorted({r.model for r in self.rules if r.model != "*"})

    def pick(
        self,
        model: str,
        messages: list[dict],
        seed: int | None,
        max_tokens: int | None = None,
        budget_field: str = "max_tokens",
    ) -> Reply:
        """What to answer a request with (the request is recorded first, refused or not; `budget_field` is the
        name `max_tokens` came under)."""
        with self._lock:
            self.requests.append(
                {"model": model, "messages": messages, "seed": seed, "max_tokens": max_tokens,
                 "budget_field": budget_field, "at": time.monotonic()}
            )  # fmt: skip
            if max_tokens is not None and (budget_field, self.max_tokens_field) == (
                "max_tokens",
                "max_completion_tokens",
            ):
                return Reply(400, "", body=MAX_TOKENS_REFUSAL)
            if self.max_model_len is not None:
                refusal = context_refusal(
                    self.context_error, self.max_model_len, prompt_tokens(messages), max_tokens
                )
                if refusal is not None:
                    return Reply(400, "", body=refusal)
            for rule in self.rules:
                if not rule.matches(model, messages, seed):
                    continue
                rule.hits += 1
                if rule.error_status and rule.hits <= rule.error_times:
                    return Reply(rule.error_status, f"scripted error {rule.error_status}", rule)
                if not rule.turns:
                    continue
                n_assistant = sum(1 for m in messages if m.get("role") == "assistant")
                thinking = (
                    rule.reasoning[min(n_assistant, len(rule.reasoning) - 1)] if rule.reasoning else None
                )
                return Reply(
                    200,
                    rule.turns[min(n_assistant, len(rule.turns) - 1)],
                    None,
                    thinking,
                    rule.reasoning_field,
                )
        last = next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")
        return Reply(
            400, f"no scripted response for model {model!r}; last user message starts: {last[:200]!r}"
        )

    def listed(self) -> None:
        """GET /v1/models was asked (counted in `model_listings`)."""
        with self._lock:
            self.model_listings += 1

    def entered(self) -> None:
        """A chat request started (counted for `max_in_flight`)."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def left(self) -> None:
        """A chat request was answered."""
        with self._lock:
            self.in_flight -= 1

    def start(self) -> ScriptedServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict | bytes, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, rule: Rule | None = None) -> None:
        headers = {"retry-after-ms": f"{rule.retry_after_ms:g}"} if rule is not None else None
        self._send(
            status, {"error": {"message": message, "type": "scripted_server_error", "code": status}}, headers
        )

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self.server.listed()
            extra = {} if self.server.max_model_len is None else {"max_model_len": self.server.max_model_len}
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "scripted", **extra}
                        for m in self.server.models()
                    ],
                },
            )
        else:
            self._error(404, f"unknown path {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"unknown path {self.path}")
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        except ValueError:
            self._error(400, "request body is not JSON")
            return
        model, messages = body.get("model"), body.get("messages")
        if not isinstance(model, str) or not isinstance(messages, list):
            self._error(400, "expected 'model' (string) and 'messages' (list)")
            return
        budget_field = "max_tokens" if "max_tokens" in body else "max_completion_tokens"
        max_tokens = body.get(budget_field)
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
        ):
            self._error(400, f"max_tokens must be at least 1, got {max_tokens!r}")
            return
        self.server.entered()
        try:
            if self.server.latency:
                time.sleep(self.server.latency)
            reply = self.server.pick(model, messages, body.get("seed"), max_tokens, budget_field)
        finally:
            self.server.left()
        rule = reply.error_rule
        if rule is not None and reply.status == 200:  # a broken success: raw body, or no choices
            if rule.error_body is not None:
                self._send(200, rule.error_body.encode(), {"retry-after-ms": f"{rule.retry_after_ms:g}"})
            else:
                self._send(200, {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0,
                                 "model": model, "choices": []})  # fmt: skip
            return
        if reply.body is not None:
            self._send(reply.status, reply.body)
            return
        if reply.status != 200:
            self._error(reply.status, reply.text, rule)
            return
        self._send(200, _completion(model, messages, reply, max_tokens, self.server.max_model_len))


def _completion(
    model: str, messages: list[dict], reply: Reply, max_tokens: int | None, max_model_len: int | None
) -> dict:
    """A chat completion of the reply, cut at the answer budget: `max_tokens`, and what is left of the context
    (a server without `max_tokens` generates until the context is full)."""
    prompt = prompt_tokens(messages)
    budgets = [
        b for b in (max_tokens, None if max_model_len is None else max_model_len - prompt) if b is not None
    ]
    budget = min(budgets) if budgets else None
    # Thinking is generated first: a model that thinks past its budget never starts the answer.
    thinking, text = reply.reasoning or "", reply.text
    finish = "stop"
    if budget is not None and count_tokens(thinking + text) > budget:
        generated = cut_to_tokens(thinking + text, budget)
        thinking, text = generated[: len(thinking)], generated[len(thinking) :]
        finish = "length"
    completion_tokens = count_tokens(thinking + text)
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not thinking else None}
    if reply.reasoning is not None:
        message[reply.reasoning_field] = thinking
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        },
    }
