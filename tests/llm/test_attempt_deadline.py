"""Spec: `llm.timeout_s` bounds each attempt as a whole, whatever the server trickles: a body sent a blank
line at a time (DeepSeek and OpenRouter keep a queued request's connection alive this way) resets the
SDK's per-read timeout forever (an outside check's run froze for minutes). Past the deadline the attempt is
abandoned and retried as a timeout. Scripted local endpoint, real gateway and `openai` client."""

from __future__ import annotations

import time

import pytest

from envscaler_core.llm import LLMUnavailableError
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import TRICKLE, completion

USER = [{"role": "user", "content": "cancel order 4"}]




def test_a_body_trickled_past_the_timeout_is_abandoned_and_asked_again(endpoint, store) -> None:
    """Before: each blank line reset the SDK's per-read timeout, so the attempt took as long as the server
    liked (an outside check's run froze for minutes). Now the whole attempt is bounded by `timeout_s`."""
    endpoint.script({TRICKLE: (0.1, 80), **completion("the slow answer")}, completion("Order 4 is cancelled."))
    started = time.monotonic()
    reply = gateway(endpoint, store, timeout_s=1.0).chat_sync(USER, stage="agent")
    assert reply.message["content"] == "Order 4 is cancelled."
    assert time.monotonic() - started < 5.0
    [row] = call_rows(store, "r1")
    assert (row["status"], row["attempts"]) == ("ok", 2)


def test_a_body_trickled_on_every_attempt_ends_as_a_timeout_after_the_retries(endpoint) -> None:
    endpoint.script({TRICKLE: (0.1, 80), **completion("the slow answer")})
    started = time.monotonic()
    with pytest.raises(LLMUnavailableError, match=r"after 2 attempt\(s\) \(last: request timed out .*timeout_s = 0.5"):
        gateway(endpoint, timeout_s=0.5, max_retries=1).chat_sync(USER, stage="agent")
    assert time.monotonic() - started < 4.0
