"""Spec: `llm.extra_body` is part of the cache key (its fields change the answers), its secrets are not.
Real gateway, `openai` client and DuckDB store against a scripted endpoint. Before, an outside check's
re-run with `enable_thinking` true on the same store got all 210 answers made with it false from the
cache (0 requests sent)."""

from __future__ import annotations

import json

from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

USER = [{"role": "user", "content": "Hi"}]
OFF = {"enable_thinking": False}
ON = {"enable_thinking": True}


def _ask(endpoint, store, extra_body) -> None:  # type: ignore[no-untyped-def]
    gw = gateway(endpoint, store=store, cache=True, extra_body=extra_body)
    gw.chat_sync(USER)
    gw.structured_sync(JUDGE_STATEFUL, TaskInput(task="Cancel order 4."))


def _script(endpoint) -> None:  # type: ignore[no-untyped-def]
    endpoint.script(completion("Hello."), completion(json.dumps({"analysis": "It changes an order.", "stateful": True})))


def test_other_extra_body_fields_are_asked_again(endpoint, store) -> None:
    _script(endpoint)
    _ask(endpoint, store, OFF)
    _script(endpoint)
    _ask(endpoint, store, ON)
    assert len(endpoint.requests) == 2 and all(r["enable_thinking"] is True for r in endpoint.requests)


def test_the_same_extra_body_is_answered_from_the_cache(endpoint, store) -> None:
    _script(endpoint)
    _ask(endpoint, store, OFF)
    _script(endpoint)
    _ask(endpoint, store, dict(OFF))
    assert endpoint.requests == []


def test_a_new_secret_in_it_is_answered_from_the_cache(endpoint, store) -> None:
    """A rotated token does not change the answers: secrets are not in the key."""
    _script(endpoint)
    _ask(endpoint, store, {**OFF, "provider": {"api_token": "old-token"}})
    _script(endpoint)
    _ask(endpoint, store, {**OFF, "provider": {"api_token": "new-token"}})
    assert endpoint.requests == []
