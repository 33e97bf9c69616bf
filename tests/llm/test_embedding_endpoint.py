"""Spec: embeddings can be asked of another endpoint than the chat one (`llm.embedding_base_url`,
`llm.embedding_api_key`), and a chat endpoint without embeddings is found before Stage 1 pays for its
chat requests, in one error naming the setting (an outside check, DeepSeek and Anthropic, which serve no
/v1/embeddings: every run stopped at mine.select, after the mining calls were paid, on "HTTP 404: Not
Found; check OPENAI_BASE_URL / llm.base_url"). Scripted local endpoint and the tiny mock over HTTP, a
real gateway and DuckDB store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings, load_settings, public_config
from envscaler_core.llm import LLMGateway
from envscaler_core.llm.errors import LLMRequestRejected
from envscaler_core.models import Run
from envscaler_core.pipeline import RunContext
from envscaler_core.store import Store
from flows.factory import run_stages
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS

NOT_FOUND = {STATUS: 404, "error": {"message": "Not Found", "type": "invalid_request_error"}}


def test_embeddings_go_to_the_embedding_endpoint_when_one_is_set(endpoint, mock) -> None:
    """Before: no such setting; every embeddings request went to llm.base_url."""
    endpoint.script(NOT_FOUND)
    vectors = gateway(endpoint, embedding_base_url=mock.base_url).embed_sync(["a clinic", "a library"])
    assert len(vectors) == 2 and endpoint.requests == []
    assert mock.stats()["embedding_requests"] == 1


def test_a_chat_endpoint_without_embeddings_is_named_with_the_setting_that_fixes_it(endpoint) -> None:
    endpoint.script(NOT_FOUND)
    with pytest.raises(LLMRequestRejected, match=r"has no embeddings for model 'text-embedding-3-large'.*"
                                                 r"ENVSCALER_LLM__EMBEDDING_BASE_URL") as err:
        gateway(endpoint).embed_sync(["a clinic"])
    assert err.value.status_code == 404 and "HTTP 404: Not Found" in str(err.value)


def test_the_embedding_endpoint_and_key_are_settings_with_environment_forms() -> None:
    settings = load_settings(environ={"ENVSCALER_LLM__EMBEDDING_BASE_URL": "https://emb.example/v1",
                                      "ENVSCALER_LLM__EMBEDDING_API_KEY": "sk-emb"})
    assert (settings.llm.embedding_base_url, settings.llm.embedding_api_key) == ("https://emb.example/v1", "sk-emb")
    assert "sk-emb" not in json.dumps(public_config(settings))  # never stored with a run


def test_a_run_on_an_endpoint_without_embeddings_stops_before_mining_asks_anything(tmp_path: Path, endpoint,
                                                                                  prefect_api: str) -> None:
    """Before: the judge and topic requests were all paid, then mine.select stopped the run."""
    source = tmp_path / "tasks.jsonl"
    source.write_text("\n".join(json.dumps({"task": f"Book a visit for patient {i} at the clinic on day {i}."})
                                for i in range(3)) + "\n")
    store = Store.from_url(f"duckdb:///{tmp_path / 'run.duckdb'}")
    store.save_run(Run(run_id="r"))
    settings = Settings.model_validate({"llm": mock_llm_settings(endpoint.base_url, cache=False).model_dump()})
    ctx = RunContext(run_id="r", settings=settings, store=store, gateway=LLMGateway(settings.llm, store=store, run_id="r"),
                     runtime=None)  # type: ignore[arg-type]
    endpoint.script(NOT_FOUND)
    try:
        with pytest.raises(LLMRequestRejected, match="EMBEDDING_BASE_URL"):
            asyncio.run(run_stages(ctx, [str(source)], ["mine"]))
        assert [list(r) for r in endpoint.requests] == [["model", "input", "encoding_format"]]  # no chat request
    finally:
        store.close()
