"""Spec: a run lists the endpoint's `/v1/models` once before it pays for anything and stops in one line when
a stage's model is not among them, naming the stage setting, its environment variable and the names the server
serves; a server without `/v1/models`, or listing none, is not an error. A 404 "model ... does not exist" met
mid-run names the stage's setting too. Real gateway and `openai` client against a scripted endpoint (vLLM's
shapes), and a real small run over a DuckDB store. Before, a run whose CHECK model the server did not serve paid
~170 calls and stopped in stage 4 with "check OPENAI_BASE_URL / llm.base_url and the model name" (an outside
check)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.llm.errors import LLMConfigError, LLMRequestRejected
from envscaler_core.models import Run
from envscaler_core.pipeline import RunContext
from envscaler_core.store import Store
from flows.factory import run_stages
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS



def _gateway(endpoint, **models: str) -> LLMGateway:
    return gateway(endpoint, models={"mine": "qwen3", "scen": "qwen3", **models})


def test_a_stage_model_the_server_does_not_serve_is_named_with_its_setting(endpoint) -> None:
    endpoint.serve_models("qwen3")
    with pytest.raises(LLMConfigError) as caught:
        asyncio.run(_gateway(endpoint).check_models(["mine", "scen", "check"]))
    said = str(caught.value)
    assert "llm.models.check = 'gpt-4.1-mini' (ENVSCALER_LLM__MODELS__CHECK)" in said and "it serves qwen3" in said
    assert "llm.models.mine" not in said and "llm.models.scen" not in said
    assert endpoint.requests == []  # nothing paid


def test_served_names_pass_and_are_asked_once(endpoint) -> None:
    endpoint.serve_models("qwen3", "gpt-4.1-mini")
    llm = _gateway(endpoint)
    asyncio.run(llm.check_models(["mine", "scen", "check"]))
    asyncio.run(llm.check_models(["mine", "scen", "check"]))
    assert endpoint.model_listings == 1


def test_ollamas_implicit_latest_tag_counts_as_served(endpoint) -> None:
    endpoint.serve_models("qwen3:latest", "gpt-4.1-mini")
    asyncio.run(_gateway(endpoint).check_models(["mine", "check"]))


def test_a_server_without_a_model_list_is_not_checked(endpoint) -> None:
    asyncio.run(_gateway(endpoint).check_models(["mine", "check"]))  # /v1/models answers 404
    assert endpoint.model_listings == 1


def test_a_server_listing_no_models_is_not_checked(endpoint) -> None:
    endpoint.serve_models()
    asyncio.run(_gateway(endpoint).check_models(["mine", "check"]))


def test_a_model_404_mid_run_names_the_stages_setting(endpoint) -> None:
    endpoint.script({STATUS: 404, "object": "error", "message": "The model `gpt-4.1-mini` does not exist.",
                     "type": "NotFoundError", "param": None, "code": 404})
    with pytest.raises(LLMRequestRejected) as caught:
        _gateway(endpoint).chat_sync([{"role": "user", "content": "hi"}], stage="check")
    assert "llm.models.check = 'gpt-4.1-mini' (ENVSCALER_LLM__MODELS__CHECK)" in str(caught.value)


def test_a_run_stops_before_its_first_paid_call(tmp_path: Path, endpoint, prefect_api: str) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text(json.dumps({"task": "Book a visit for patient 1 at the clinic."}) + "\n")
    store = Store.from_url(f"duckdb:///{tmp_path / 'run.duckdb'}")
    store.save_run(Run(run_id="r"))
    llm = mock_llm_settings(endpoint.base_url, cache=False, models={"mine": "qwen3", "synth": "qwen3"})
    settings = Settings.model_validate({"llm": llm.model_dump()})
    ctx = RunContext(run_id="r", settings=settings, store=store, gateway=LLMGateway(settings.llm, store=store, run_id="r"),
                     runtime=None)  # type: ignore[arg-type]
    endpoint.serve_models("qwen3")
    try:
        with pytest.raises(LLMConfigError, match="ENVSCALER_LLM__MODELS__CHECK"):
            asyncio.run(run_stages(ctx, [str(source)], ["mine", "synth", "scen"]))
        assert endpoint.requests == []  # neither embeddings nor chat
    finally:
        store.close()
