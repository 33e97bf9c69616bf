"""Spec: `envscaler serve-mcp` reads a request only up to `sandbox.limits.MAX_REQUEST_BYTES` and a message
only down to `MAX_MESSAGE_DEPTH` levels, answering past either with a JSON-RPC error naming the limit, and
goes on serving (red team round 6: F6, a 50 MB argument cost the host 450 MB and reached the tool; F5, a
well-formed call nested 300 deep was called "not a JSON-RPC 2.0 message"). Real server processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from envscaler.mcp_stdio import MAX_MESSAGE_DEPTH, CheckedPosts
from envscaler_core.store import Store
from sandbox.limits import MAX_REQUEST_BYTES
from tests.export.records import RUN_ID, populate

ROOT = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "spec", "version": "1"}}}


@pytest.fixture(scope="module")
def server_args(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> list[str]:
    url = f"duckdb:///{tmp_path_factory.mktemp('mcp-caps') / 'store.duckdb'}"
    with Store.from_url(url) as store:
        populate(store, sandbox_pool)
    return ["env_library_test", "--run", RUN_ID, "--db", url]


def _call(arguments: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "get_book", "arguments": arguments}}).encode()


def _exchange(args: list[str], line: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """initialize, initialized, `line`, tools/list (id 2): the answer to `line` and to tools/list."""
    lines = [json.dumps(INIT).encode(), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
             line, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()]
    proc = subprocess.Popen([sys.executable, "-m", "envscaler.cli", "serve-mcp", *args], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[dict[str, Any]] = []
    try:
        proc.stdin.write(b"\n".join(lines) + b"\n")
        proc.stdin.flush()
        while not replies or replies[-1].get("id") != 2:
            raw = proc.stdout.readline()
            assert raw, replies
            replies.append(json.loads(raw))
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert replies[0]["id"] == 1 and len(replies) == 3, replies
    return replies[1], replies[2]


def test_a_line_over_the_request_cap_is_refused_naming_it_and_the_server_goes_on(server_args: list[str]) -> None:
    answer, listed = _exchange(server_args, _call({"book_id": "b" * MAX_REQUEST_BYTES}))
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert f"over {MAX_REQUEST_BYTES:,} bytes" in answer["error"]["message"]
    assert "MAX_REQUEST_BYTES" in answer["error"]["message"]
    assert listed["result"]["tools"]


def test_a_call_nested_past_the_depth_limit_gets_invalid_params_naming_it(server_args: list[str]) -> None:
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    answer, listed = _exchange(server_args, _call({"book_id": deep}))
    assert answer["id"] == 3 and answer["error"]["code"] == -32602
    assert f"nested {3 + 300} levels deep, past the {MAX_MESSAGE_DEPTH}" in answer["error"]["message"]
    assert listed["result"]["tools"]


def test_an_http_body_over_the_request_cap_gets_413_without_reaching_the_server() -> None:
    reached: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    sent: list[dict[str, Any]] = []
    pieces = [_call({"book_id": "b" * (MAX_REQUEST_BYTES // 2)})[:MAX_REQUEST_BYTES // 2 + 60]] * 3

    async def receive() -> dict[str, Any]:
        body = pieces.pop()
        return {"type": "http.request", "body": body, "more_body": bool(pieces)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(CheckedPosts(app), {"type": "http", "method": "POST"}, receive, send)
    assert not reached and sent[0]["status"] == 413
    assert "MAX_REQUEST_BYTES" in json.loads(sent[1]["body"])["error"]["message"]
