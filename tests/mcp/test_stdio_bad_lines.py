"""Spec: `envscaler serve-mcp` over stdio answers a line it cannot read with JSON-RPC 2.0's Parse error
(-32700, id null) and keeps serving: invalid UTF-8, a lone surrogate escape (JSON text no UTF-8 reader
can carry), and a line that is not JSON. Valid JSON that is no JSON-RPC message gets -32600 Invalid
Request. Such lines used to be dropped without an answer, leaving the client waiting. Both servers: a
synthesized env's and a BFCL task's. Real server processes, raw bytes on their stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.export.records import RUN_ID
from tests.mcp.serving import populated_store

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
    return populated_store(tmp_path_factory, sandbox_pool, "mcp-bad")


NOT_JSONRPC = b'{"id": 9, "hello": "world"}'
UNECHOABLE_IDS = {"null": None, "object": {"a": 1}, "list": [3], "bool": True}


def _unechoable(rid: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode()


def _session(args: list[str], bad_lines: list[bytes]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """One server: initialize, initialized, then each bad line followed by a tools/list (ids 100, 101, ...).
    Returns the initialize reply and, per bad line, (its reply, the tools/list reply after it): a server
    that stopped serving after a line leaves the lines after it unanswered, and their specs fail too."""
    proc = subprocess.Popen([sys.executable, "-m", "envscaler.cli", "serve-mcp", *args], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def read() -> dict[str, Any]:
        raw = proc.stdout.readline()  # type: ignore[union-attr]
        assert raw, proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "no reply"  # type: ignore[union-attr]
        return json.loads(raw)

    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    try:
        send(json.dumps(INIT).encode())
        init = read()
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        for n, bad in enumerate(bad_lines, start=100):
            send(bad)
            send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/list"}).encode())
            before = []
            while (reply := read()).get("id") != n:  # a line left unanswered shows as no reply before the list's
                before.append(reply)
            pairs.append((before[0] if len(before) == 1 else {"replies before the next request": before}, reply))
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    return init, pairs


SESSION_LINES = [*BAD_LINES.values(), NOT_JSONRPC, *(_unechoable(r) for r in UNECHOABLE_IDS.values())]


@pytest.fixture(scope="module", params=["env", "bfcl"])
def session(request: pytest.FixtureRequest) -> tuple[dict[str, Any], dict[bytes, tuple[dict[str, Any], dict[str, Any]]]]:
    """Each server kind is started once and sent every bad line in turn (a server start costs seconds)."""
    if request.param == "env":
        args = ["env_library_test", "--run", RUN_ID, "--db", request.getfixturevalue("env_db")]
    else:
        args = ["bfcl:multi_turn_base_0"]
    init, pairs = _session(args, SESSION_LINES)
    return init, dict(zip(SESSION_LINES, pairs))


def _answered(session: Any, bad: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bad line's reply, after checking the server answered initialize and the tools/list after it."""
    init, replies = session
    assert init["id"] == 1 and "result" in init
    error, listed = replies[bad]
    assert listed["id"] >= 100 and listed["result"]["tools"], listed
    return error, listed


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_an_unreadable_line_gets_a_parse_error_with_id_null_and_the_server_goes_on(session: Any, kind: str) -> None:
    error, _ = _answered(session, BAD_LINES[kind])
    assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == -32700, error
    assert error["error"]["message"].startswith("Parse error")


def test_json_that_is_no_jsonrpc_message_gets_invalid_request(session: Any) -> None:
    error, _ = _answered(session, NOT_JSONRPC)
    assert error["error"]["code"] == -32600 and error["id"] == 9, error


@pytest.mark.parametrize("rid", list(UNECHOABLE_IDS))
def test_a_request_whose_id_cannot_be_echoed_gets_invalid_request(session: Any, rid: str) -> None:
    """Read as a notification it got no answer at all (an outside check waited 20 s for one)."""
    error, _ = _answered(session, _unechoable(UNECHOABLE_IDS[rid]))
    assert error["error"]["code"] == -32600 and error["id"] is None and "id must be" in error["error"]["message"], error
