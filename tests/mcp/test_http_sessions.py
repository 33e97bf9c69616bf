"""Spec: `envscaler serve-mcp --transport http` keeps a bounded number of sessions. Past
`--max-sessions` an opening request is refused naming the limit; a DELETE ends a session at once; a
session idle for `--session-idle-s` is closed; the id of an ended or expired session gets one
documented error; and memory stays within the bound and is given back (red team rt17-B, F2: 3,000
`initialize` POSTs kept 3,000 sessions and +122 MB for the server's whole life). Real server processes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from envscaler.mcp_sessions import MAX_SESSIONS
from tests.mcp.serving import http_serving, populated_store

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "spec", "version": "1"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
GONE = "no open session has this mcp-session-id"


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> str:
    return populated_store(tmp_path_factory, sandbox_pool, "mcp-sessions")


def _open(client: httpx.Client, url: str) -> httpx.Response:
    return client.post(url, json=INIT, headers=HEADERS)


def _end(client: httpx.Client, url: str, session: str) -> httpx.Response:
    return client.delete(url, headers={**HEADERS, "mcp-session-id": session})


def _list_tools(client: httpx.Client, url: str, session: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    return client.post(url, json=body, headers={**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-03-26"})


def _rss_kb(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1])


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as c:
        yield c


def test_an_opening_request_past_the_bound_is_refused_naming_the_limit(db_url: str, client: httpx.Client) -> None:
    with http_serving(db_url, "--max-sessions", "3") as (url, _):
        opened = [_open(client, url) for _ in range(3)]
        refused = _open(client, url)
    assert [r.status_code for r in opened] == [200, 200, 200]
    assert len({r.headers["mcp-session-id"] for r in opened}) == 3
    assert refused.status_code == 503 and "mcp-session-id" not in refused.headers
    error = refused.json()["error"]
    assert "3 sessions are open" in error["message"] and "--max-sessions 3" in error["message"], error


def test_a_deleted_session_frees_its_place_at_once(db_url: str, client: httpx.Client) -> None:
    with http_serving(db_url, "--max-sessions", "2") as (url, _):
        first, _second = (_open(client, url).headers["mcp-session-id"] for _ in range(2))
        ended = _end(client, url, first)
        reopened = _open(client, url)
    assert ended.status_code == 200
    assert reopened.status_code == 200 and reopened.headers["mcp-session-id"] != first


def test_the_id_of_a_deleted_session_gets_the_documented_error(db_url: str, client: httpx.Client) -> None:
    with http_serving(db_url) as (url, _):
        session = _open(client, url).headers["mcp-session-id"]
        _end(client, url, session)
        after = _list_tools(client, url, session)
    assert after.status_code == 404 and GONE in after.json()["error"]["message"], after.text


def test_an_idle_session_expires_its_id_gets_the_documented_error_and_its_place_is_free(
        db_url: str, client: httpx.Client) -> None:
    with http_serving(db_url, "--max-sessions", "1", "--session-idle-s", "1") as (url, _):
        session = _open(client, url).headers["mcp-session-id"]
        assert _list_tools(client, url, session).status_code == 200
        time.sleep(3)
        expired = _list_tools(client, url, session)
        reopened = _open(client, url)
    assert expired.status_code == 404, expired.text
    message = expired.json()["error"]["message"]
    assert GONE in message and "idle" in message and "--session-idle-s 1" in message
    assert reopened.status_code == 200


def test_many_opening_requests_stay_within_the_default_bound_and_its_memory(db_url: str, client: httpx.Client) -> None:
    """The bound's sessions cost a few MB; every request past it is refused and keeps nothing (rt17-B F2
    kept each of 3,000 sessions, ~40 KB apiece: a refusal that kept even a tenth of that shows here)."""
    refusals = 300
    with http_serving(db_url) as (url, proc):
        before = _rss_kb(proc.pid)
        opened = [_open(client, url).status_code for _ in range(MAX_SESSIONS)]
        full = _rss_kb(proc.pid)
        refused = [_open(client, url).status_code for _ in range(refusals)]
        after = _rss_kb(proc.pid)
    assert opened == [200] * MAX_SESSIONS and refused == [503] * refusals
    assert full - before < 20_000, f"server RSS grew {full - before:,} KB for {MAX_SESSIONS} sessions"
    assert after - full < 1_200, f"server RSS grew {after - full:,} KB over {refusals} refused requests"


def test_the_memory_of_ended_sessions_is_given_back(db_url: str, client: httpx.Client) -> None:
    """Sessions opened and DELETEd in rounds: after the first round the server's RSS stays flat."""
    with http_serving(db_url) as (url, proc):
        after_round = []
        for _ in range(5):
            sessions = [_open(client, url).headers["mcp-session-id"] for _ in range(MAX_SESSIONS)]
            assert all(_end(client, url, s).status_code == 200 for s in sessions)
            after_round.append(_rss_kb(proc.pid))
    assert after_round[-1] - after_round[0] < 4_000, after_round
