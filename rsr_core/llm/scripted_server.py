"""A real OpenAI-compatible HTTP server that replays scripted responses (tests and the offline demo).

Script file (JSON):

    {"latency_ms": 0,
     "rules": [
       {"model": "scripted-terminus",                 # exact model name, or "*"
        "when": {"conversation": "regex", "last_user": "regex", "system": "regex", "seed": 1},
        "turns": ["...", {...}],                      # picked by the number of assistant messages so far
        "response": "...",                            # or one answer for every call
        "error": {"status": 429, "times": 1}}         # answer with an HTTP error the first `times` calls
     ]}

An error may also be a broken HTTP 200: `{"status": 200, "body": "not json", "times": 1}` sends that raw body,
`{"status": 200, "choices": [], "times": 1}` a completion without choices. Error answers carry
`retry-after-ms` (`"retry_after_ms"`, default 10), which OpenAI clients honour.

The first rule whose model and conditions match answers. Object answers are sent as JSON text.
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
from typing import Any


class ScriptError(ValueError):
    """The script file is not valid."""


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
            )
        )
    return rules, float(data.get("latency_ms", 0)) / 1000.0


class ScriptedServer(ThreadingHTTPServer):
    """Serves POST /v1/chat/completions and GET /v1/models from a script, on 127.0.0.1."""

    daemon_threads = True

    def __init__(self, script: dict | str | Path, port: int = 0, latency_ms: float | None = None):
        data = script if isinstance(script, dict) else json.loads(Path(script).read_text())
        self.rules, latency = load_script(data)
        self.latency = latency if latency_ms is None else latency_ms / 1000.0
        self.requests: list[dict] = []
        self.in_flight = 0
        """Chat requests being answered right now."""
        self.max_in_flight = 0
        """The most chat requests it answered at once (what a client-side concurrency cap must bound)."""
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients (ends in /v1)."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def models(self) -> list[str]:
        """Model names the script answers for."""
        return sorted({r.model for r in self.rules if r.model != "*"})

    def pick(self, model: str, messages: list[dict], seed: int | None) -> tuple[int, str, Rule | None]:
        """(HTTP status, answer or error message, the erring rule) for a request."""
        with self._lock:
            self.requests.append({"model": model, "messages": messages, "seed": seed, "at": time.monotonic()})
            for rule in self.rules:
                if not rule.matches(model, messages, seed):
                    continue
                rule.hits += 1
                if rule.error_status and rule.hits <= rule.error_times:
                    return rule.error_status, f"scripted error {rule.error_status}", rule
                if not rule.turns:
                    continue
                n_assistant = sum(1 for m in messages if m.get("role") == "assistant")
                return 200, rule.turns[min(n_assistant, len(rule.turns) - 1)], None
        last = next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")
        return (
            400,
            f"no scripted response for model {model!r}; last user message starts: {last[:200]!r}",
            None,
        )

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
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
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
        self.server.entered()
        try:
            if self.server.latency:
                time.sleep(self.server.latency)
            status, text, rule = self.server.pick(model, messages, body.get("seed"))
        finally:
            self.server.left()
        if rule is not None and status == 200:  # a broken success: raw body, or no choices
            if rule.error_body is not None:
                self._send(200, rule.error_body.encode(), {"retry-after-ms": f"{rule.retry_after_ms:g}"})
            else:
                self._send(200, {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0,
                                 "model": model, "choices": []})  # fmt: skip
            return
        if status != 200:
            self._error(status, text, rule)
            return
        prompt_tokens = sum(len(_content(m)) for m in messages) // 4 + 1
        completion_tokens = len(text) // 4 + 1
        self._send(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )
