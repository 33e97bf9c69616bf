"""Spec: the history an evaluation sends back holds each assistant message as the endpoint sent it, as
BFCL's handler sends it (the SDK re-sends the fields that were set): `tool_calls: []` or `null`,
`content: null` and arguments sent as a JSON object go back as they came. Before, they went back as
the gateway normalises them ({"content": "All done."}, {"content": ""}, arguments as a string). A real
gateway over HTTP to a scripted endpoint, a real sandbox episode; the next request's body is read."""

from __future__ import annotations

from typing import Any

from sandbox import SandboxPool
from tests.bfcl.scripted_endpoint import endpoint_for, evaluate_over  # noqa: F401 (a fixture)


def _sent_back(endpoint: Any) -> list[dict[str, Any]]:
    """The assistant messages of the last request (the whole history but the last reply)."""
    return [m for m in endpoint.bodies[-1]["messages"] if m["role"] == "assistant"]


def test_an_empty_tool_calls_list_goes_back_as_it_came(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    closing = {"role": "assistant", "content": "All done.", "tool_calls": []}
    endpoint = endpoint_for(lambda turn: (closing, "stop"))
    assert evaluate_over(endpoint, bfcl_pool).valid
    assert _sent_back(endpoint)[1] == closing


def test_null_content_and_null_tool_calls_go_back_as_they_came(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    closing = {"role": "assistant", "content": None, "tool_calls": None}
    endpoint = endpoint_for(lambda turn: (closing, "stop"))
    assert evaluate_over(endpoint, bfcl_pool).valid
    assert _sent_back(endpoint)[1] == closing


def test_arguments_sent_as_an_object_go_back_as_an_object(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "stop"), arguments=dict)
    assert evaluate_over(endpoint, bfcl_pool).valid
    arguments = [c["function"]["arguments"] for c in _sent_back(endpoint)[0]["tool_calls"]]
    assert arguments and all(isinstance(a, dict) for a in arguments)
