"""Spec: a run lists the endpoint's `/v1/models` once before it pays for anything and stops in one line when
a stage's model is not among them, naming the stage setting, its environment variable and the names the server
serves; a server without `/v1/models`, or listing none, is not an error. A 404 "model ... does not exist" met
mid-run names the stage's setting too. Real gateway and `openai` client against a scripted endpoint (vLLM's
shapes), and a real small run over a DuckDB store. A name missing from the listing is asked once by a one-token
chat request: only a 404 stops the run (llama.cpp lists its GGUF path and answers any name; LiteLLM lists
wildcards; TGI ignores the name: an outside check found all three stopped by the listing alone). Before, a run whose CHECK model the server did not serve paid
~170 calls and stopped in stage 4 with "check OPENAI_BASE_URL / llm.base_url and the model name" (an outside
check)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.llm.errors import LLMConfigError, LLMModelNotServed, LLMRequestRejected
from envscaler_core.models import Run
from envscaler_core.pipeline import RunContext
from envscaler_core.store import Store
from flows.factory import run_stages
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion



def _gateway(endpoint, **models: str) -> LLMGateway:
    return gateway(endpoint, models={"mine": "qwen3", "scen": "qwen3", **models})


NOT_SERVED = {STATUS: 404, "object": "error", "message": "The model `gpt-4.1-mini` does not exist.",
              "type": "NotFoundError", "param": None, "code": 404}
"""vLLM's answer to a chat request naming a model it does not serve."""


def test_a_stage_model_the_server_does_not_serve_is_named_with_its_setting(endpoint) -> None:
    endpoint.script(NOT_SERVED).serve_models("qwen3")
    with pytest.raises(LLMModelNotServed) as caught:
        asyncio.run(_gateway(endpoint).check_models(["mine", "scen", "check"]))
    said = str(caught.value)
    assert "llm.models.check = 'gpt-4.1-mini' (ENVSCALER_LLM__MODELS__CHECK)" in said and "it lists qwen3" in said
    assert "does not exist" in said  # the server's own words
    assert "llm.models.mine" not in said and "llm.models.scen" not in said
    assert [(r["model"], r.get("max_tokens")) for r in endpoint.requests] == [("gpt-4.1-mini", 1)]  # one tiny probe


def test_the_advice_is_a_new_run_id_never_a_resume(endpoint) -> None:
    endpoint.script(NOT_SERVED).serve_models("qwen3")
    with pytest.raises(LLMModelNotServed) as caught:
        asyncio.run(_gateway(endpoint).check_models(["check"]))
    said = str(caught.value)
    assert "envscaler run --run-id <new>" in said and "ENVSCALER_LLM__MODELS__CHECK=qwen3" in said
    assert "then resume" not in said and "`resume` keeps" in said


@pytest.mark.parametrize("listed", [["/models/Qwen3-8B-Q4_K_M.gguf"], ["openai/*", "text-embedding-3-large"], ["tgi"]],
                         ids=["llamacpp-gguf-path", "litellm-wildcard", "tgi"])
def test_a_server_that_answers_an_unlisted_name_is_not_stopped(endpoint, listed) -> None:
    endpoint.script(completion("h", finish="length", usage={"prompt_tokens": 9, "completion_tokens": 1,
                                                             "total_tokens": 10})).serve_models(*listed)
    llm = _gateway(endpoint, check="qwen3", synth="gpt-4.1")
    asyncio.run(llm.check_models(["mine", "synth", "scen", "check"]))
    assert sorted(r["model"] for r in endpoint.requests) == ["gpt-4.1", "qwen3"]  # once per distinct name
    assert llm.usage_by_stage()["preflight"]["prompt_tokens"] == 18  # paid, and accounted like any call


def test_any_other_refusal_of_the_probe_is_no_verdict(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"message": "max_tokens must be at least 16",
                                            "type": "invalid_request_error"}}).serve_models("other")
    asyncio.run(_gateway(endpoint).check_models(["mine"]))  # qwen3 is unlisted, but the 400 is no 404: go on
    assert len(endpoint.requests) == 1


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
    endpoint.script(NOT_SERVED).serve_models("qwen3")
    try:
        with pytest.raises(LLMConfigError, match="ENVSCALER_LLM__MODELS__CHECK"):
            asyncio.run(run_stages(ctx, [str(source)], ["mine", "synth", "scen"]))
        # only one one-token probe per unlisted name: neither embeddings nor any stage's chat
        assert sorted((r["model"], r.get("max_tokens")) for r in endpoint.requests) == [("gpt-4.1", 1),
                                                                                       ("gpt-4.1-mini", 1)]
    finally:
        store.close()


def _eval_request(model: str):  # type: ignore[no-untyped-def]
    from envscaler_core.bfcl.evaluate import EvalRequest

    return EvalRequest(subsets=["base"], agent="llm", model=model)


def test_an_evaluation_checks_its_model_and_names_the_flag_it_came_from(endpoint) -> None:
    from flows.eval import _check_model

    endpoint.script({**NOT_SERVED, "message": "The model `qwen3` does not exist."}).serve_models("Qwen/Qwen3-8B")
    llm = _gateway(endpoint)
    settings = Settings.model_validate({"llm": llm.settings.model_dump()})
    with pytest.raises(LLMModelNotServed) as caught:
        asyncio.run(_check_model(llm, _eval_request("qwen3"), settings))
    said = str(caught.value)
    assert "--model 'qwen3'" in said and "Give --model a served name" in said and "it lists Qwen/Qwen3-8B" in said
    assert "llm.models.agent" not in said and "resume" not in said.replace("`resume` keeps", "")
    assert [r.get("max_tokens") for r in endpoint.requests] == [1]  # nothing but the probe


def test_a_404_met_later_in_an_evaluation_names_the_flag(endpoint) -> None:
    from flows.eval import _check_model

    endpoint.script(completion("h")).serve_models("qwen3")
    llm = _gateway(endpoint)
    settings = Settings.model_validate({"llm": llm.settings.model_dump()})
    asyncio.run(_check_model(llm, _eval_request("qwen3"), settings))  # listed: passes, nothing asked
    endpoint.script({**NOT_SERVED, "message": "The model `qwen3` does not exist."})
    with pytest.raises(LLMRequestRejected) as caught:
        llm.chat_sync([{"role": "user", "content": "hi"}], stage="agent", model="qwen3")
    assert "--model 'qwen3'" in str(caught.value) and "llm.models.agent" not in str(caught.value)
