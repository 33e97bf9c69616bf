"""MCP's stdio and HTTP transports with JSON-RPC 2.0's answer to messages they cannot read.

The SDK's `stdio_server` decodes stdin with `errors="replace"` (invalid UTF-8 becomes U+FFFD and the
request runs on altered text) and hands every line that fails to parse to the server as an exception,
which the server drops: the client waits forever for an answer (outside check: a lone surrogate
escape, invalid UTF-8 bytes, a non-JSON line). JSON-RPC 2.0 says: an unreadable message gets a Parse
error (-32700) with id null; JSON that is no valid request gets Invalid Request (-32600, its id when it
has a usable one). So stdin is read here, as bytes, one line at a time: each line is checked before the
SDK sees it, a bad one is answered on the SDK's own write stream (so replies never interleave) and
skipped, and the server goes on. The SDK's transport still owns stdout. Over HTTP the SDK answers a
request whose id is null or an object as a notification (an empty 202), so POST bodies get the same
check (`CheckedPosts`).

A line or body over `sandbox.limits.MAX_REQUEST_BYTES` is answered Invalid Request after reading,
before any parsing (red team round 6, F6: a 50 MB argument cost 450 MB of host memory before the tool
ran). A message nested deeper than MAX_MESSAGE_DEPTH is answered Invalid params naming that limit:
the SDK's parser stops near 200 levels and called such a well-formed call "not a JSON-RPC 2.0 message"
(F5). A message holding more than MAX_MESSAGE_VALUES JSON values is answered Invalid Request from a count
on its bytes, before anything parses it, and one naming a key twice in an object Invalid params (red
team 7, F3/F7). Over HTTP the bodies being read at once hold at most MAX_READING_BYTES between them; a
body that would pass that is answered 503 naming the limit (outside check rt22-R12 F2: 150 unfinished
4 MB POSTs held 600 MB, most of it kept after they closed)."""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

from envscaler_core.wire_values import MAX_MESSAGE_VALUES, count_values
from sandbox.limits import MAX_REQUEST_BYTES

Reply = Callable[[SessionMessage], Awaitable[None]]

MAX_MESSAGE_DEPTH = 128
"""Deepest nesting of a message (its arguments are 3 levels in) this server reads; the SDK's own parser
gives up near 200 levels."""


MAX_READING_BYTES = 8 * MAX_REQUEST_BYTES
"""Bytes of POST bodies the HTTP server holds at once while reading them, over all connections: each body
may take up to MAX_REQUEST_BYTES, but without a total, N connections sending bodies they never finish held
N x 4 MiB (and glibc kept most of it after they closed)."""

TRIM_AFTER_BYTES = 1 << 20
"""A body at least this large, once dropped, hands freed heap back to the system (`_give_back`)."""


TOO_LARGE = (types.INVALID_REQUEST, f"Invalid Request: the message is over {MAX_REQUEST_BYTES:,} bytes, the "
             "largest request this server reads (sandbox.limits.MAX_REQUEST_BYTES); send less", None)


def _depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value: iterative, one plain loop step per node (no generator per
    node), and only containers are pushed."""
    deepest, work = 0, [(value, 1)]
    while work:
        item, level = work.pop()
        if level > deepest:
            deepest = level
        for child in item.values() if type(item) is dict else item:
            if type(child) is dict or type(child) is list:
                work.append((child, level + 1))
    return deepest if isinstance(value, (dict, list)) else 0


class _Keys:
    """`object_pairs_hook` that remembers the first key an object names twice (and keeps parsing, so
    the answer can carry the request's id)."""

    def __init__(self) -> None:
        self.repeated: str | None = None

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs) and self.repeated is None:
            seen: set[str] = set()
            self.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        return out


def line_problem(raw: bytes) -> tuple[int, str, Any] | None:
    """(JSON-RPC error code, message, id to answer with) for a line that is no readable JSON-RPC message;
    None when the SDK can take it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return types.PARSE_ERROR, f"Parse error: the line is not valid UTF-8 ({exc.reason} at byte {exc.start})", None
    values = count_values(raw)
    if values > MAX_MESSAGE_VALUES:
        return (types.INVALID_REQUEST, f"Invalid Request: the message holds {values:,} JSON values, over the "
                f"{MAX_MESSAGE_VALUES:,} this server reads (envscaler.mcp_stdio.MAX_MESSAGE_VALUES); send less", None)
    keys = _Keys()
    try:
        value = json.loads(text, object_pairs_hook=keys)
    except ValueError as exc:
        where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return types.PARSE_ERROR, f"Parse error: the line is not JSON ({getattr(exc, 'msg', exc)}{where})", None
    except RecursionError:
        return types.PARSE_ERROR, "Parse error: JSON nested too deeply to read", None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end].encode("utf-8", "backslashreplace").decode()
        return types.PARSE_ERROR, f"Parse error: the line holds a lone surrogate ({bad}), which is not Unicode text", None
    except (ValueError, RecursionError):
        return types.PARSE_ERROR, "Parse error: JSON that cannot be read back (nested too deeply)", None
    depth = _depth(value)
    if depth > MAX_MESSAGE_DEPTH:
        rid = value.get("id") if isinstance(value, dict) else None
        return (types.INVALID_PARAMS, f"Invalid params: the message is nested {depth} levels deep, past the "
                f"{MAX_MESSAGE_DEPTH} this server reads (envscaler.mcp_stdio.MAX_MESSAGE_DEPTH)",
                rid if _usable_id(rid) else None)
    if keys.repeated is not None:  # JSON readers keep one of the two silently (F7); import and the wire refuse it
        rid = value.get("id") if isinstance(value, dict) else None
        return (types.INVALID_PARAMS, f"Invalid params: an object of the message names the key "
                f"{keys.repeated[:60]!r} twice (JSON readers silently keep one)", rid if _usable_id(rid) else None)
    if isinstance(value, dict) and "method" in value and "id" in value and not _usable_id(value["id"]):
        # read as a notification, it would get no answer at all: a request whose id we cannot echo is
        # an Invalid Request, answered with id null (JSON-RPC 2.0, section 5)
        return (types.INVALID_REQUEST, f"Invalid Request: the id must be a string or an integer, not "
                f"{json.dumps(value['id'])[:40]}", None)
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError and anything it raises
        rid = value.get("id") if isinstance(value, dict) else None
        usable = rid if _usable_id(rid) else None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return types.INVALID_REQUEST, f"Invalid Request: not a JSON-RPC 2.0 message ({first})", usable
    return None


def _usable_id(rid: Any) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def error_message(code: int, message: str, rid: Any) -> SessionMessage:
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message)))


class CheckedStdin:
    """An async line source for `stdio_server(stdin=...)`: yields the lines the SDK can read, answers
    the others through `reply` (set once the write stream exists)."""

    def __init__(self, fd: int) -> None:
        self.stream = os.fdopen(fd, "rb", closefd=False)
        self.reply: Reply | None = None

    def _read_line(self) -> bytes | None:
        """The next line (b"" at end of input), or None for one over MAX_REQUEST_BYTES, which is read
        to its end in bounded pieces and dropped."""
        raw = self.stream.readline(MAX_REQUEST_BYTES + 1)
        if len(raw) <= MAX_REQUEST_BYTES or raw.endswith(b"\n"):
            return raw
        while raw and not raw.endswith(b"\n"):
            raw = self.stream.readline(1 << 20)
        return None

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            raw = await anyio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
            if raw is None:
                problem: tuple[int, str, Any] | None = TOO_LARGE
            elif not raw:
                return
            elif not raw.strip():
                continue
            else:
                problem = line_problem(raw.rstrip(b"\r\n"))
            if problem is None and raw is not None:
                yield raw.decode("utf-8")
                continue
            while self.reply is None:  # a bad first line can arrive before the write stream is handed over
                await anyio.sleep(0.01)
            await self.reply(error_message(*problem))


def claim_stdin() -> tuple[int, Callable[[], None]]:
    """A private duplicate of fd 0 to read the wire from, fd 0 pointed at /dev/null meanwhile (as the
    SDK's own transport does: code run by a tool must not read the protocol); and how to undo it."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    def release() -> None:
        with suppress(OSError):
            os.dup2(private, 0)
            os.close(private)

    return private, release


BUSY = (-32000, f"Server busy: the request bodies being read hold {MAX_READING_BYTES:,} bytes, the most this "
        "server holds at once (envscaler.mcp_stdio.MAX_READING_BYTES); send again once earlier requests finish", None)
"""JSON-RPC's implementation-defined server error (-32000), answered with HTTP 503 and Retry-After."""


def _give_back() -> None:
    """Hand the heap's free pages back to the system (glibc's `malloc_trim`; elsewhere nothing): the
    64 KiB pieces a large body arrives in are freed in the middle of the heap, where glibc keeps them
    (500 of 600 MB were still held after the connections closed)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


async def _answer(send: Any, status: int, problem: tuple[int, str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    code, text, rid = problem
    payload = json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})


class CheckedPosts:
    """ASGI middleware for the streamable HTTP app: a POST body that `line_problem` refuses is answered
    with HTTP 400 and the JSON-RPC error; any other request reaches the app with its body replayed. The
    bodies being read share one budget (`MAX_READING_BYTES`; one event loop, so a plain counter): a piece
    that would pass it gets 503 at once, and what that body held is dropped (the server reads and
    discards the rest of it)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.reading = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more, size, held = [], True, 0, 0
        try:
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                piece = message.get("body", b"")
                size += len(piece)
                if size <= MAX_REQUEST_BYTES:  # past it the rest is read and dropped
                    if self.reading + len(piece) > MAX_READING_BYTES:
                        chunks.clear()
                        await _answer(send, 503, BUSY, ((b"retry-after", b"1"),))
                        return
                    chunks.append(piece)
                    held += len(piece)
                    self.reading += len(piece)
                more = message.get("more_body", False)
            body = b"".join(chunks)
        finally:
            self.reading -= held
            chunks.clear()
            if held >= TRIM_AFTER_BYTES:
                _give_back()
        if size > MAX_REQUEST_BYTES:
            problem: tuple[int, str, Any] | None = TOO_LARGE
        else:
            problem = line_problem(body.strip()) if body.strip() else None
        if problem is not None:
            await _answer(send, 413 if size > MAX_REQUEST_BYTES else 400, problem)
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
