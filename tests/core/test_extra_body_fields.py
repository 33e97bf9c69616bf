"""Spec: `llm.extra_body` refuses every field the factory writes itself, in any case and under its other
names, and the OpenAI client's own arguments, which it would send as body fields. Before, an outside
check got `MAX_TOKENS`, `functions`, `function_call` and `max_output_tokens` accepted, and `extra_headers`
sent inside the body instead of as headers."""

from __future__ import annotations

import re

import pytest

from envscaler_core.config import ConfigError, load_settings


@pytest.mark.parametrize("field", ["MAX_TOKENS", "Max-Tokens", "tools ", "functions", "function_call",
                                   "max_output_tokens", "max_new_tokens"])
def test_a_field_the_factory_writes_is_refused_in_any_spelling(field: str) -> None:
    with pytest.raises(ConfigError, match=rf"llm.extra_body: .*{re.escape(field)} cannot be set here"):
        load_settings(environ={}, overrides={"llm": {"extra_body": {field: 5}}})


@pytest.mark.parametrize("field", ["extra_headers", "extra_query", "Extra_Body"])
def test_a_client_argument_is_refused_as_no_body_field(field: str) -> None:
    with pytest.raises(ConfigError, match=rf"llm.extra_body: .*{field} is an argument of the OpenAI client, not a body"):
        load_settings(environ={}, overrides={"llm": {"extra_body": {field: {"a": "b"}}}})


@pytest.mark.parametrize("body", [{"stop": ["\n"]}, {"seed": 1}, {"chat_template_kwargs": {"enable_thinking": False}}])
def test_other_fields_pass(body: dict) -> None:
    assert load_settings(environ={}, overrides={"llm": {"extra_body": body}}).llm.extra_body == body
