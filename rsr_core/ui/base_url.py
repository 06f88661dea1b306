"""Telling the browser where the studio's server is, so that a page opened by its own address connects at once.

Streamlit's frontend does not know the server's base path. Opened at `/<page>` it first asks
`/<page>/_stcore/health` and `/<page>/_stcore/host-config`, waits for both to fail, and only then tries `/`:
every deep link, bookmark and reload of a page other than the first would pay a round of failing requests
before its websocket opens. The frontend reads the server's address from `window.__streamlit`
(`BACKEND_BASE_URL`) when a page sets it before the bundle runs: this ASGI middleware sets it in every HTML page
the server sends. The address is worked out in the browser from what it shows and the path the server was asked
for (so a proxy that strips a prefix is followed); when the two do not match, nothing is set and the frontend
makes its own guesses.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]

_SCRIPT = (
    "<script>(()=>{{const seen={seen};const p=location.pathname.replace(/\\/+$/,'');"
    "if(!p.endsWith(seen))return;const s=window.__streamlit||{{}};if(s.BACKEND_BASE_URL)return;"
    "window.__streamlit=Object.assign({{}},s,{{BACKEND_BASE_URL:location.origin+p.slice(0,p.length-seen.length)+'/'}});"
    "}})();</script>"
)


def page_path(raw_path: bytes, base_path: str) -> str:
    """The path of the page asked for below the server's own base path (`server.baseUrlPath`), as the browser
    spells it (percent-encoded), without trailing slashes: "" for the first page, "/rewrite" for a page."""
    path = raw_path.split(b"?", 1)[0].decode("latin-1").rstrip("/")
    base = "/" + base_path.strip("/") if base_path.strip("/") else ""
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base) :]
    return path


def script_for(seen: str) -> bytes:
    """The inline script for a page the server was asked for at `seen` (see page_path)."""
    literal = json.dumps(seen).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _SCRIPT.format(seen=literal).encode()


def inject(html: bytes, script: bytes) -> bytes:
    """The page with `script` first in its head (unchanged when it has no head)."""
    at = html.find(b"<head>")
    if at < 0:
        return html
    at += len(b"<head>")
    return html[:at] + script + html[at:]


class BackendBaseUrl:
    """Pure ASGI middleware: HTML answers to GET requests get the script; everything else streams through."""

    def __init__(self, app: Any, base_path: str | None = None) -> None:
        self.app = app
        self.base_path = base_path  # None: Streamlit's `server.baseUrlPath`, read when a page is asked for

    def _base_path(self) -> str:
        if self.base_path is not None:
            return self.base_path
        from streamlit import config

        return str(config.get_option("server.baseUrlPath") or "")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body: list[bytes] = []

        async def edit(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                kind = _header(message, b"content-type")
                if kind.startswith(b"text/html") and message["status"] == 200:
                    start = message  # held until the whole page is here
                    return
                await send(message)
            elif message["type"] == "http.response.body" and start is not None:
                body.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                seen = page_path(scope.get("raw_path") or scope["path"].encode(), self._base_path())
                head, page = _edited(start, b"".join(body), script_for(seen))
                await send(head)
                await send({"type": "http.response.body", "body": page})
            else:
                await send(message)

        await self.app(scope, receive, edit)


def _header(message: Message, name: bytes) -> bytes:
    return next((v for k, v in message.get("headers", []) if k.lower() == name), b"")


def _edited(start: Message, page: bytes, script: bytes) -> tuple[Message, bytes]:
    """The page's answer with the script in it: a gzipped page (the page is ~8 KB) is sent plain; one in another
    encoding is sent as it came."""
    encoding = _header(start, b"content-encoding").strip().lower()
    if encoding == b"gzip":
        try:
            page = gzip.decompress(page)
        except (OSError, EOFError):
            return start, page
    elif encoding not in (b"", b"identity"):
        return start, page
    page = inject(page, script)
    dropped = (b"content-length", b"content-encoding")
    kept = [(k, v) for k, v in start.get("headers", []) if k.lower() not in dropped]
    return {**start, "headers": [*kept, (b"content-length", str(len(page)).encode())]}, page
