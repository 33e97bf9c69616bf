"""Spec: a secret in `llm.extra_body` is never stored with a run. The stored settings (`public_config`,
what `runs.data` and flow parameters hold) carry a mask in its place; the process that masked it gets the
real value back, another process takes it from its environment or is refused in one line naming the
variable. Before, an outside check found `provider.api_token` verbatim in `runs.data` (api_key stripped)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envscaler_core.config import ConfigError, load_settings, public_config
from envscaler_core.secret_fields import secret_key

BODY = {"enable_thinking": False, "provider": {"api_token": "SECRET-TOKEN-123", "order": ["a"]},
        "thinking": {"budget_tokens": 1024}, "X-Auth-Token": "tok-2", "accessToken": "tok-3"}


def test_stored_settings_hold_no_secret_of_the_extra_body() -> None:
    stored = public_config(load_settings(overrides={"llm": {"extra_body": BODY}}))
    text = json.dumps(stored)
    assert "SECRET-TOKEN-123" not in text and "tok-2" not in text and "tok-3" not in text
    kept = stored["llm"]["extra_body"]
    assert kept["enable_thinking"] is False and kept["thinking"] == {"budget_tokens": 1024}
    assert kept["provider"]["order"] == ["a"]


def test_the_process_that_stored_them_gets_them_back() -> None:
    stored = public_config(load_settings(overrides={"llm": {"extra_body": BODY}}))
    assert load_settings(environ={}, overrides=stored).llm.extra_body == BODY


@pytest.mark.parametrize("name", ["api_key", "apiKey", "api_token", "Authorization", "client_secret", "password"])
def test_fields_named_like_secrets_are_secrets(name: str) -> None:
    assert secret_key(name)


@pytest.mark.parametrize("name", ["max_tokens", "budget_tokens", "enable_thinking", "top_k", "chat_template_kwargs"])
def test_other_fields_are_not(name: str) -> None:
    assert not secret_key(name)


def _load_elsewhere(stored: dict, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = ("import json, sys; from envscaler_core.config import load_settings, ConfigError\n"
            "try: print(json.dumps(load_settings(environ=json.loads(sys.argv[2]), "
            "overrides=json.loads(sys.argv[1])).llm.extra_body))\n"
            "except ConfigError as e: print('ConfigError:', e)")
    return subprocess.run([sys.executable, "-c", code, json.dumps(stored), json.dumps(env)], capture_output=True,
                          text=True, check=True)


def test_another_process_without_it_is_refused_naming_the_variable() -> None:
    stored = public_config(load_settings(overrides={"llm": {"extra_body": {"provider": {"api_token": "T"}}}}))
    out = _load_elsewhere(stored, {}).stdout
    assert out.startswith("ConfigError: llm.extra_body.provider.api_token is a secret, not stored with the run")
    assert "ENVSCALER_LLM__EXTRA_BODY__PROVIDER__API_TOKEN" in out


def test_another_process_takes_it_from_its_environment() -> None:
    stored = public_config(load_settings(overrides={"llm": {"extra_body": {"provider": {"api_token": "T"}}}}))
    out = _load_elsewhere(stored, {"ENVSCALER_LLM__EXTRA_BODY__PROVIDER__API_TOKEN": "T"}).stdout
    assert json.loads(out) == {"provider": {"api_token": "T"}}
