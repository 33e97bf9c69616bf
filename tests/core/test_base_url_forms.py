"""Spec: a base URL the OpenAI client would mangle is refused in one line naming the form to use (an
outside check: Azure's classic URL `.../openai/deployments/gpt-4.1?api-version=2024-10-21` was sent to
`.../gpt-4.1/?api-version=2024-10-21chat/completions`, and the run said only "HTTP 404")."""

from __future__ import annotations

import pytest

from envscaler_core.config import ConfigError, load_settings

CLASSIC = "https://my-res.openai.azure.com/openai/deployments/gpt-4.1?api-version=2024-10-21"


@pytest.mark.parametrize("url", [CLASSIC, "https://my-res.openai.azure.com/openai/deployments/gpt-4.1",
                                 "https://my-res.openai.azure.com/openai/deployments/gpt-4.1/chat/completions"])
def test_azure_classic_url_is_refused_naming_the_v1_form(url) -> None:
    with pytest.raises(ConfigError, match=r"llm.base_url: .*Azure OpenAI's classic per-deployment URL .* is not "
                                          r"supported: use the v1 form https://<resource>.openai.azure.com/openai/v1 "
                                          r".*OPENAI_BASE_URL") as err:
        load_settings(environ={"OPENAI_BASE_URL": url})
    assert "\n" not in str(err.value)


def test_a_base_url_with_a_query_string_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"llm.base_url: .*a query string or fragment cannot be part of it"):
        load_settings(environ={}, overrides={"llm": {"base_url": "https://llm.example/v1?team=a"}})


def test_the_embedding_endpoint_is_held_to_the_same_forms() -> None:
    with pytest.raises(ConfigError, match=r"llm.embedding_base_url: .*Azure OpenAI's classic"):
        load_settings(environ={"ENVSCALER_LLM__EMBEDDING_BASE_URL": CLASSIC})


def test_azure_v1_form_is_accepted() -> None:
    url = "https://my-res.openai.azure.com/openai/v1"
    assert load_settings(environ={"OPENAI_BASE_URL": url}).llm.base_url == url


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1?", "http://127.0.0.1:8000/v1#"])
@pytest.mark.parametrize("setting", ["base_url", "embedding_base_url"])
def test_an_empty_query_or_fragment_mark_is_refused(url: str, setting: str) -> None:
    """Before, `...v1?` was accepted and the request went to `/v1/` with the query `chat/completions`."""
    with pytest.raises(ConfigError, match=rf"llm.{setting}: .*a query string or fragment cannot be part of it"):
        load_settings(environ={}, overrides={"llm": {setting: url}})


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000", "ftp://host/v1", "http:///v1"])
@pytest.mark.parametrize("setting", ["base_url", "embedding_base_url"])
def test_a_url_without_http_scheme_or_host_is_refused(url: str, setting: str) -> None:
    """Before, `127.0.0.1:8000/v1` was accepted, then blamed on a missing key or retried as unreachable."""
    with pytest.raises(ConfigError, match=rf"llm.{setting}: .*(http:// or https:// in front|names no host)"):
        load_settings(environ={}, overrides={"llm": {setting: url}})
