"""Spec: a 400/413 about this one prompt (over the model's context, a prompt/content filter, a string over
a provider's maximum length) fails that item (`LLMPromptRefused`, an `LLMOutputInvalid` like
`LLMNoAnswer`: an `error` row, no retry, the run goes on); a 400 about the request's form (an unsupported
parameter, a bad model, a malformed response_format) still stops the run, naming the server's words; the
batch stages and the rollout agree. An outside check (`/tmp/rt-replies`, modes `ctx400` and
`azure_filter400`): the whole run stopped on the first such prompt and every resume stopped again. The
shapes are those real servers send, from a scripted local endpoint through the real gateway and `openai`
client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway, LLMOutputInvalid, LLMRequestRejected
from envscaler_core.llm.errors import LLMPromptRefused
from envscaler_core.models import Run, SourceTask, StageFailure
from envscaler_core.pipeline import RunContext
from envscaler_core.pipeline import stages as S
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TASK = TaskInput(task="Cancel order 4.")
GOOD = json.dumps({"analysis": "It changes an order.", "stateful": True})
USER = [{"role": "user", "content": "cancel order 4"}]




PROMPT_REFUSALS = {
    "openai-context": {STATUS: 400, "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. "
                   "Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}},
    "vllm-context": {STATUS: 400, "object": "error", "message": "This model's maximum context length is 8192 tokens. "
                     "However, you requested 9120 tokens (8120 in the messages, 1000 in the completion). Please reduce "
                     "the length of the messages or completion.", "type": "BadRequestError", "param": None, "code": 400},
    "llamacpp-context": {STATUS: 400, "error": {"code": 400, "message": "the request exceeds the available context size, "
                         "try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 9120, "n_ctx": 8192}},
    "string-above-max-length": {STATUS: 400, "error": {"message": "Please reduce the length of the messages or completion.",
                                "type": "invalid_request_error", "param": "messages", "code": "string_above_max_length"}},
    "azure-prompt-filter": {STATUS: 400, "error": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
                   "Please modify your prompt and retry.", "type": None, "param": "prompt", "code": "content_filter",
        "status": 400, "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
            "violence": {"filtered": True, "severity": "medium"}}}}},
    "payload-too-large": {STATUS: 413, "error": {"message": "Request Entity Too Large"}},
    # a second outside check: wordings the first list missed (each stopped the run on every resume)
    "gemini-context": {STATUS: 400, "error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "The input token "
                       "count (1200000) exceeds the maximum number of tokens allowed (1048576)."}},
    "tgi-inputs": {STATUS: 422, "error": "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000",
                   "error_type": "validation"},
    "together-inputs": {STATUS: 422, "error": {"message": "Input validation error: `inputs` tokens + `max_new_tokens` "
                        "must be <= 32769. Given: 40000 `inputs` tokens and 512 `max_new_tokens`"}},
    "openai-flagged": {STATUS: 400, "error": {"message": "Invalid prompt: your prompt was flagged as potentially "
                       "violating our usage policy.", "type": "invalid_request_error", "code": "invalid_prompt"}},
    "openrouter-moderation": {STATUS: 403, "error": {"code": 403, "message": "openai/gpt-4.1 requires moderation on "
                              "OpenRouter. Your input was flagged for \"harassment\". No credits were charged."}},
}
PROMPT_WORDS = {"openai-context": "maximum context length is 8192", "vllm-context": "maximum context length is 8192",
                "llamacpp-context": "exceeds the available context size", "string-above-max-length": "reduce the length",
                "azure-prompt-filter": "content management policy", "payload-too-large": "Request Entity Too Large",
                "gemini-context": "exceeds the maximum number of tokens", "tgi-inputs": "must have less than 4096",
                "together-inputs": "must be <= 32769", "openai-flagged": "flagged as potentially violating",
                "openrouter-moderation": "Your input was flagged"}


@pytest.mark.parametrize("name", PROMPT_REFUSALS)
def test_a_prompt_refused_for_itself_fails_that_structured_call_once_with_an_error_row(endpoint, store, name) -> None:
    """Before: `LLMRequestRejected`, which every batch stage counts as an outage: the run stopped on the
    first such prompt, and every resume stopped on it again (an outside check's run never finished)."""
    endpoint.script(PROMPT_REFUSALS[name])
    with pytest.raises(LLMPromptRefused) as err:
        gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    assert isinstance(err.value, LLMOutputInvalid), "an unusable answer for this item, like LLMNoAnswer"
    assert PROMPT_WORDS[name] in err.value.reason and "the run goes on" in str(err.value)
    assert len(endpoint.requests) == 1, "the same prompt meets the same limit: neither retried nor repaired"
    [row] = call_rows(store, "r1")
    assert row["status"] == "error" and PROMPT_WORDS[name] in row["error"]


@pytest.mark.parametrize("name", ["openai-context", "azure-prompt-filter"])
def test_a_prompt_refused_for_itself_fails_that_chat_turn(endpoint, name) -> None:
    endpoint.script(PROMPT_REFUSALS[name])
    with pytest.raises(LLMPromptRefused, match=PROMPT_WORDS[name]):
        gateway(endpoint).chat_sync(USER, stage="agent")
    assert len(endpoint.requests) == 1


def test_a_200_carrying_a_context_length_error_is_that_prompts_refusal(endpoint) -> None:
    endpoint.script({"error": {"message": "This model's maximum context length is 8192 tokens", "code": 400}})
    with pytest.raises(LLMPromptRefused, match="maximum context length is 8192"):
        gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)
    assert len(endpoint.requests) == 1


REQUEST_REFUSALS = {
    "unsupported-parameter": ({STATUS: 400, "error": {"message": "Unsupported parameter: 'temperature' is not supported "
                               "with this model.", "type": "invalid_request_error", "param": "temperature",
                               "code": "unsupported_parameter"}}, "'temperature' is not supported"),
    "bad-response-format": ({STATUS: 400, "object": "error", "message": "response_format json_object is not supported for "
                             "this model", "type": "BadRequestError", "param": None, "code": 400}, "json_object is not"),
    "model-not-found": ({STATUS: 404, "error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}},
                        "does not exist"),
}


@pytest.mark.parametrize("name", REQUEST_REFUSALS)
def test_a_request_refused_for_its_form_still_stops_the_run_naming_the_servers_words(endpoint, store, name) -> None:
    body, words = REQUEST_REFUSALS[name]
    endpoint.script(body)
    with pytest.raises(LLMRequestRejected, match=words) as err:
        gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    # a refused response_format is asked once more without it (tests/llm/test_structured_output_setting.py);
    # refused again for the same words, the request's form is what the server refuses: the run stops
    asked = 2 if name == "bad-response-format" else 1
    assert not isinstance(err.value, LLMOutputInvalid) and len(endpoint.requests) == asked
    if asked == 2:
        assert "response_format" not in endpoint.requests[1]


def _judge_context(tmp_path: Path, endpoint) -> RunContext:
    store = Store.from_url(f"duckdb:///{tmp_path / 'stage.duckdb'}")
    store.save_run(Run(run_id="r"))
    settings = Settings.model_validate({"llm": mock_llm_settings(endpoint.base_url, cache=False).model_dump()})
    gw = LLMGateway(settings.llm, store=store, run_id="r")
    return RunContext(run_id="r", settings=settings, store=store, gateway=gw, runtime=None)  # type: ignore[arg-type]


def test_a_stage_fails_only_the_items_whose_prompt_was_refused_and_a_resume_asks_them_again(tmp_path, endpoint) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text("\n".join(json.dumps({"task": f"Book a visit for patient {i} at the clinic on day {i}."})
                                for i in range(2)) + "\n")
    ctx = _judge_context(tmp_path, endpoint)
    try:
        S.ingest(ctx, [source])
        endpoint.script(PROMPT_REFUSALS["llamacpp-context"])
        report = asyncio.run(S.judge(ctx, S.pending_judge(ctx)))  # before: LLMRequestRejected, the run stopped
        assert (report.done, report.failed) == (0, 2)
        assert all("exceeds the available context size" in f for f in report.failures)
        failures = ctx.store.query(StageFailure, run_id="r")
        assert {f.attempts for f in failures} == {1} and len(failures) == 2
        endpoint.script(completion(GOOD))  # the resume asks only those items again, and they go through
        again = S.pending_judge(ctx)
        assert len(again) == 2
        assert asyncio.run(S.judge(ctx, again)).done == 2
        assert all(t.stateful for t in ctx.store.query(SourceTask, run_id="r"))
    finally:
        ctx.store.close()


def test_the_batch_stages_and_the_rollout_agree_on_what_a_refusal_ends(endpoint) -> None:
    """One prompt refused: the stage charges it to the item, the rollout ends that episode as 'error'. A
    request refused for its form: both stop (the stage re-raises, the rollout propagates)."""
    from envscaler_core.rollout.loop import _ends_episode

    endpoint.script(PROMPT_REFUSALS["openai-context"])
    with pytest.raises(LLMPromptRefused) as prompt:
        gateway(endpoint).chat_sync(USER, stage="agent")
    endpoint.script(REQUEST_REFUSALS["unsupported-parameter"][0])
    with pytest.raises(LLMRequestRejected) as form:
        gateway(endpoint).chat_sync(USER, stage="agent")
    assert (S._is_infra(prompt.value), _ends_episode(prompt.value)) == (False, True)
    assert (S._is_infra(form.value), _ends_episode(form.value)) == (True, False)


def test_an_embeddings_batch_refused_for_its_size_stops_the_run(endpoint) -> None:
    """A batch of the run's topic texts is no one item: a refusal stops the run, quoting the server."""
    endpoint.script(PROMPT_REFUSALS["openai-context"])
    with pytest.raises(LLMRequestRejected) as err:
        gateway(endpoint).embed_sync(["a topic", "another topic"])
    assert not isinstance(err.value, LLMOutputInvalid) and err.value.status_code == 400
    message = str(err.value)
    assert "refused embeddings (2 texts)" in message and "maximum context length is 8192" in message
    assert "the run stops" in message and "this item fails" not in message
