"""The script that tells the browser where the server is (rsr_core/ui/base_url.py). Here in front of small ASGI
apps that answer as Streamlit's file handler does; tests/e2e opens the studio itself with it in a browser."""

from __future__ import annotations

import asyncio
import gzip
from concurrent.futures import ThreadPoolExecutor

import pytest

from rsr_core.ui.base_url import BackendBaseUrl, inject, page_path, script_for


@pytest.mark.parametrize(
    ("raw", "base", "seen"),
    [
        (b"/", "", ""),
        (b"/trajectories", "", "/trajectories"),
        (b"/trajectories/?trajectory=a&step=3", "", "/trajectories"),
        (b"/rsr/rewrite", "rsr", "/rewrite"),
        (b"/rsr/", "/rsr/", ""),
        (b"/rsrx/rewrite", "rsr", "/rsrx/rewrite"),  # not below the base path: left as asked
        (b"/r%C3%A9sum%C3%A9", "", "/r%C3%A9sum%C3%A9"),  # percent-encoded, as location.pathname is
    ],
)
def test_page_path_is_the_path_below_the_base_as_the_browser_spells_it(raw, base, seen):
    assert page_path(raw, base) == seen


def test_the_path_cannot_end_the_script_or_run_code():
    script = script_for("/</script><script>alert(1)</script>&").decode()
    assert script.count("</script>") == 1 and script.endswith("</script>")
    assert "<script>alert" not in script and "\\u003c/script\\u003e" in script


def test_inject_puts_the_script_first_in_the_head_and_leaves_a_page_without_one_alone():
    assert inject(b"<html><head><title>x</title></head>", b"<script>s</script>") == (
        b"<html><head><script>s</script><title>x</title></head>"
    )
    assert inject(b"not a page", b"<script>s</script>") == b"not a page"


def _call(app, path: bytes, method: str = "GET", gzip: bool = True) -> tuple[dict, bytes]:
    """One request through the middleware in front of `app`; the answer's headers and body."""
    sent: list[dict] = []
    headers = [(b"host", b"x"), *([(b"accept-encoding", b"gzip")] if gzip else [])]
    scope = {"type": "http", "method": method, "path": path.decode(), "raw_path": path, "headers": headers}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, BackendBaseUrl(app, base_path="")(scope, receive, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    return {k.decode(): v.decode() for k, v in start["headers"]}, b"".join(
        m.get("body", b"") for m in sent if m["type"] == "http.response.body"
    )


def _server(content_type: bytes, parts: list[bytes], seen: list, encoding: bytes | None = None):
    async def app(scope, receive, send):
        seen.append(dict(scope["headers"]))
        length = str(sum(map(len, parts))).encode()
        headers = [(b"content-type", content_type), (b"content-length", length)]
        headers += [(b"content-encoding", encoding)] if encoding else []
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})

    return app


def test_an_html_page_sent_in_parts_gets_the_script_and_a_matching_length():
    asked: list = []
    app = _server(
        b"text/html; charset=utf-8", [b"<html><he", b"ad><title>s</title>", b"</head></html>"], asked
    )
    headers, body = _call(app, b"/rewrite")
    assert body.startswith(b"<html><head><script>") and b'const seen="/rewrite"' in body
    assert int(headers["content-length"]) == len(body)
    assert asked[0].get(b"accept-encoding") == b"gzip"  # the request is passed on as it came


def test_a_gzipped_page_is_sent_plain_with_the_script_and_another_encoding_as_it_came():
    page = b"<html><head><title>s</title></head></html>"
    packed = gzip.compress(page)
    headers, body = _call(_server(b"text/html", [packed[:10], packed[10:]], [], encoding=b"gzip"), b"/diff")
    assert body == inject(page, script_for("/diff")) and "content-encoding" not in headers
    assert int(headers["content-length"]) == len(body)
    headers, body = _call(_server(b"text/html", [b"\x8b\x00brotli"], [], encoding=b"br"), b"/diff")
    assert body == b"\x8b\x00brotli" and headers["content-encoding"] == "br"


def test_other_answers_stream_through_untouched():
    asked: list = []
    js = [b"console.log('<head>')", b";"]
    headers, body = _call(_server(b"text/javascript", js, asked), b"/static/js/x.js")
    assert body == b"".join(js) and headers["content-length"] == str(len(body))
    _, body = _call(_server(b"text/html", [b"<head>"], asked), b"/rewrite", method="POST")
    assert body == b"<head>" and asked[-1].get(b"accept-encoding") == b"gzip"
