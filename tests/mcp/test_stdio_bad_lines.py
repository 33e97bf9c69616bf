"""Spec: `envscaler serve-mcp` over stdio answers a line it cannot read with JSON-RPC 2.0's Parse error
(-32700, id null) and keeps serving: invalid UTF-8, a lone surrogate escape (JSON text no UTF-8 reader
can carry), and a line that is not JSON. Valid JSON that is no JSON-RPC message gets -32600 Invalid
Request. Such lines used to be dropped without an answer, leaving the client waiting. Both servers: a
synthesized env's and a BFCL task's. Real server processes, raw bytes on their stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.store import Store
from tests.export.records import RUN_ID, populate

ROOT = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "spec", "version": "1"}}}
BAD_LINES = {
    "invalid utf-8": b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"x": "\xff\xfe"}}',
    "lone surrogate": b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "get_book", '
                      b'"arguments": {"book_id": "\\ud800"}}}',
    "not json": b"this is not json {",
}


@pytest.fixture(scope="module")
def env_db(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> str:
    url = f"duckdb:///{tmp_path_factory.mktemp('mcp-bad') / 'store.duckdb'}"
    with Store.from_url(url) as store:
        populate(store, sandbox_pool)
    return url


def _exchange(args: list[str], bad: bytes) -> list[dict[str, Any]]:
    """initialize, initialized, the bad line, then tools/list (id 2); the replies in order."""
    lines = [json.dumps(INIT).encode(), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
             bad, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()]
    proc = subprocess.Popen([sys.executable, "-m", "envscaler.cli", "serve-mcp", *args], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[dict[str, Any]] = []
    try:
        for line in lines:
            proc.stdin.write(line + b"\n")
            proc.stdin.flush()
        while len(replies) < 3:
            raw = proc.stdout.readline()
            assert raw, (replies, proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "")  # type: ignore[union-attr]
            replies.append(json.loads(raw))
            if replies[-1].get("id") == 2:
                break
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    return replies


@pytest.fixture(params=["env", "bfcl"])
def server_args(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    if request.param == "env":
        yield ["env_library_test", "--run", RUN_ID, "--db", request.getfixturevalue("env_db")]
    else:
        yield ["bfcl:multi_turn_base_0"]


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_an_unreadable_line_gets_a_parse_error_with_id_null_and_the_server_goes_on(server_args: list[str], kind: str) -> None:
    init, error, listed = _exchange(server_args, BAD_LINES[kind])
    assert init["id"] == 1 and "result" in init
    assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == -32700, error
    assert error["error"]["message"].startswith("Parse error")
    assert listed["id"] == 2 and listed["result"]["tools"]


def test_json_that_is_no_jsonrpc_message_gets_invalid_request(server_args: list[str]) -> None:
    init, error, listed = _exchange(server_args, b'{"id": 9, "hello": "world"}')
    assert error["error"]["code"] == -32600 and error["id"] == 9, error
    assert listed["id"] == 2 and listed["result"]["tools"]


@pytest.mark.parametrize("rid", [None, {"a": 1}, [3], True], ids=["null", "object", "list", "bool"])
def test_a_request_whose_id_cannot_be_echoed_gets_invalid_request(server_args: list[str], rid: Any) -> None:
    """Read as a notification it got no answer at all (an outside check waited 20 s for one)."""
    bad = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode()
    init, error, listed = _exchange(server_args, bad)
    assert error["error"]["code"] == -32600 and error["id"] is None and "id must be" in error["error"]["message"], error
    assert listed["id"] == 2 and listed["result"]["tools"]
