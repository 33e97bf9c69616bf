"""Spec: serve-mcp bounds the work per message, not only its bytes: a message holding more than
MAX_MESSAGE_VALUES JSON values is refused from a count on its bytes, before json, pydantic or the SDK
parse it (red team 7, F3: a 4 MB line of `[],[],...` cost ~33 s and 600 MB before its refusal); and a
message naming one key twice in an object is refused, not read as the last value (F7), over stdio and HTTP."""

from __future__ import annotations

import json
from typing import Any

import anyio

from envscaler.mcp_stdio import MAX_MESSAGE_VALUES, CheckedPosts, line_problem
from tests.mcp.test_request_caps import _call, _exchange, server_args  # noqa: F401 - the module's server fixture

LISTS = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_book","arguments":{"book_id":"b1","pad":[' + \
    b",".join([b"[]"] * 1_300_000) + b"]}}}"


def test_a_line_of_a_million_empty_lists_is_refused_naming_the_limit_and_the_server_goes_on(server_args: list[str]) -> None:
    answer, listed = _exchange(server_args, LISTS)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert (f"holds 1,300,009 JSON values, over the {MAX_MESSAGE_VALUES:,} this server reads "
            "(envscaler.mcp_stdio.MAX_MESSAGE_VALUES)") in answer["error"]["message"]
    assert listed["result"]["tools"]


def test_a_call_at_the_values_limit_is_still_read() -> None:
    records = [{"a": 1, "b": "x"} for _ in range((MAX_MESSAGE_VALUES - 20) // 3)]
    assert line_problem(_call({"book_id": "b1", "records": records})) is None


def test_a_call_naming_an_argument_twice_gets_invalid_params_naming_it(server_args: list[str]) -> None:
    line = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_book","arguments":{"book_id":"b9","book_id":"b1"}}}'
    answer, listed = _exchange(server_args, line)
    assert answer == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": (
        "Invalid params: an object of the message names the key 'book_id' twice (JSON readers silently keep one)")}}
    assert listed["result"]["tools"]


def test_an_http_body_over_the_values_limit_gets_400_without_reaching_the_server() -> None:
    reached: list[bool] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": LISTS, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(CheckedPosts(app), {"type": "http", "method": "POST"}, receive, send)
    assert not reached and sent[0]["status"] == 400
    assert "MAX_MESSAGE_VALUES" in json.loads(sent[1]["body"])["error"]["message"]
