"""How many sessions `serve-mcp --transport http` keeps, for how long, and what a client is told.

Every `initialize` POST opens a session, and the SDK's defaults let 10,000 live for 30 minutes each: about
41 KB of host memory per 161-byte request, so a local client could hold ~400 MB (red team rt17-B, F2:
3,000 POSTs kept +122 MB). serve-mcp is for playing with one env by hand, so it keeps few: at most
`max_sessions` at once (an opening request past that is answered 503), each closed once no request has
been in flight for `idle_s` seconds (an open GET stream counts as one), and a DELETE carrying the
`mcp-session-id` (the streamable-HTTP way to end a session) frees its place at once. Sessions hold no
episode of their own (all clients share the server's one), so ending one closes only its streams.

The SDK answers those cases with bare texts ("Too many open sessions", "Session not found") that name no
limit; `NamedSessionErrors` rewrites them to say which bound was met and how to go on.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

MAX_SESSIONS = 100
"""Default bound on live HTTP sessions (`--max-sessions`): a few MB of host memory at most."""

SESSION_IDLE_S = 600
"""Default seconds a session may go without a request in flight before it is closed (`--session-idle-s`)."""

GONE = "no open session has this mcp-session-id"


class SessionBounds(BaseModel):
    """The bounds serve-mcp gives the SDK's session manager (validated once, at the command line)."""

    max_sessions: int = Field(MAX_SESSIONS, ge=1)
    idle_s: int = Field(SESSION_IDLE_S, ge=1)

    def full(self) -> str:
        return (f"Too many open sessions: {self.max_sessions} sessions are open, the most this server keeps "
                f"(serve-mcp --max-sessions {self.max_sessions}); end one with an HTTP DELETE carrying its "
                f"mcp-session-id, or wait until one has had no request for {self.idle_s} s")

    def gone(self) -> str:
        return (f"Session not found: {GONE} (ended by a DELETE, closed after {self.idle_s} s idle "
                f"(serve-mcp --session-idle-s {self.idle_s}) or never opened); send initialize without the "
                "header to open a new session")


class NamedSessionErrors:
    """ASGI middleware around the streamable HTTP app: the SDK's 503 for a full server and 404 for an unknown
    session id keep their status and JSON-RPC code, with a message naming the bound (`SessionBounds`)."""

    def __init__(self, app: Any, bounds: SessionBounds) -> None:
        self.app = app
        self.bounds = bounds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] | None = None

        async def named(message: dict[str, Any]) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and message["status"] in (404, 503):
                held = message  # wait for the body: only the SDK's own JSON-RPC errors are renamed
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            start, held = held, None
            body = _renamed(message.get("body", b""), start["status"], self.bounds)
            if body is None or message.get("more_body"):
                await send(start)
                await send(message)
                return
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({**message, "body": body})

        await self.app(scope, receive, named)


def _renamed(body: bytes, status: int, bounds: SessionBounds) -> bytes | None:
    """The SDK's error body with the message naming the bound, or None when it is no such error."""
    try:
        reply = json.loads(body)
        text = reply["error"]["message"]
    except (ValueError, TypeError, KeyError):
        return None
    wanted = {503: ("Too many open sessions", bounds.full), 404: ("Session not found", bounds.gone)}[status]
    if text != wanted[0]:
        return None
    reply["error"]["message"] = wanted[1]()
    return json.dumps(reply).encode()
