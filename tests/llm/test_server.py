"""The mock server as an OpenAI endpoint: what the real SDK sees, counters, faults API, the CLI verb."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from mock_llm.http_state import FaultConfig
from mock_llm.protocol import MockReply
from mock_llm.server import MockServer
from tests.llm.conftest import tiny_embedding

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "description": "Cancel an order.",
          "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]
ENVSCALER = Path(sys.executable).with_name("envscaler")


def _client(mock: MockServer, key: str = "mock") -> openai.OpenAI:
    return openai.OpenAI(base_url=mock.base_url, api_key=key, max_retries=0)


def test_tool_calls_parse_in_the_openai_sdk_with_json_string_arguments(mock) -> None:
    resp = _client(mock).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "cancel o1"}], tools=TOOLS, tool_choice="auto")
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls" and resp.system_fingerprint == "envscaler-mock"
    [call] = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "cancel_order" and call.id
    assert json.loads(call.function.arguments) == {"order_id": "o1"}
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0 and resp.model == "gpt-4.1-mini"


def test_every_response_labels_itself_a_mock(mock) -> None:
    raw = _client(mock).chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}])
    assert raw.headers["x-envscaler-mock"] == "1"
    models = httpx.get(f"{mock.base_url}/models").json()
    assert models["data"] and all(m["owned_by"] == "envscaler-mock" for m in models["data"])


def test_embeddings_in_float_and_the_sdk_default_base64(mock) -> None:
    client = _client(mock)
    floats = client.embeddings.create(model="text-embedding-3-large", input=["a", "bb"], encoding_format="float")
    default = client.embeddings.create(model="text-embedding-3-large", input=["a", "bb"])
    assert [d.embedding for d in floats.data] == [tiny_embedding("a"), tiny_embedding("bb")]
    for got, text in zip(default.data, ["a", "bb"], strict=True):  # base64 float32 on the wire
        assert got.embedding == pytest.approx(tiny_embedding(text), rel=1e-6)
    stats = mock.stats()
    assert (stats["embedding_requests"], stats["embeddings"]) == (2, 4)


def test_stats_count_requests_by_prompt_and_status_and_reset_zeroes_them(mock) -> None:
    client = _client(mock)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="tiny handler does not know prompt agent.act"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                       extra_headers={"X-EnvScaler-Prompt": "agent.act@1"})
    stats = mock.stats()
    assert stats["requests_total"] == 2 and stats["by_prompt"] == {"untagged": 1, "agent.act": 1}
    assert stats["by_status"] == {"200": 1, "400": 1}
    mock.reset()
    assert mock.stats()["requests_total"] == 0


def test_rejected_key_gets_401(mock) -> None:
    with pytest.raises(openai.AuthenticationError):
        _client(mock, key="bad-key").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_fault_script_is_consumed_in_order_then_probabilities_apply(mock) -> None:
    mock.set_faults(script=["500", "429", "malformed"], retry_after_s=2)
    client = _client(mock)
    hi = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=hi)
    with pytest.raises(openai.RateLimitError) as err:
        client.chat.completions.create(model="m", messages=hi)
    assert err.value.response.headers["retry-after"] == "2"
    truncated = client.chat.completions.create(model="m", messages=hi).choices[0].message.content
    assert truncated != "echo: hi" and "echo: hi".startswith(truncated)
    assert client.chat.completions.create(model="m", messages=hi).choices[0].message.content == "echo: hi"
    assert mock.stats()["faults_injected"] == {"500": 1, "429": 1, "malformed": 1}


def test_bad_fault_config_is_a_400_naming_the_field(mock) -> None:
    resp = httpx.post(f"{mock.root_url}/mock/faults", json={"p_429": 2})
    assert resp.status_code == 400 and "p_429" in resp.json()["error"]["message"]
    resp = httpx.post(f"{mock.root_url}/mock/faults", json={"script": ["explode"]})
    assert resp.status_code == 400


def test_seeded_fault_probabilities_are_reproducible() -> None:
    def draw() -> list[str]:
        with MockServer(lambda req: MockReply(content="{}"), faults=FaultConfig(p_500=0.5, seed=7)) as m:
            client = openai.OpenAI(base_url=m.base_url, api_key="mock", max_retries=0)
            out = []
            for _ in range(12):
                try:
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
                    out.append("ok")
                except openai.InternalServerError:
                    out.append("500")
            return out

    first = draw()
    assert first == draw() and "ok" in first and "500" in first


def test_64_concurrent_requests_with_latency_are_all_in_flight_together(mock) -> None:
    # long enough that the last of the 64 connections opens before the first answer leaves, even on a
    # loaded CI machine (at 300 ms a busy machine saw 63)
    mock.set_faults(latency_ms=5000)

    async def fire() -> None:
        client = openai.AsyncOpenAI(base_url=mock.base_url, api_key="mock", max_retries=0)
        await asyncio.gather(*(client.chat.completions.create(model="m", messages=[{"role": "user", "content": str(i)}])
                               for i in range(64)))
        await client.close()

    asyncio.run(fire())
    assert mock.stats()["max_in_flight"] == 64


def test_cli_help_says_it_is_a_mock() -> None:
    out = subprocess.run([str(ENVSCALER), "mock-llm", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "MOCK" in out.stdout and "--fault-429" in out.stdout


def test_cli_serves_models_on_the_requested_port() -> None:
    proc = subprocess.Popen([str(ENVSCALER), "mock-llm", "--port", "0", "--latency-ms", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        banner = proc.stdout.readline()
        assert "MOCK" in banner, banner
        base = re.search(r"(http://127\.0\.0\.1:\d+/v1)", banner).group(1)
        for _ in range(100):
            try:
                resp = httpx.get(f"{base}/models", timeout=2)
                break
            except httpx.ConnectError:
                if proc.poll() is not None:
                    pytest.fail(proc.stderr.read())
                time.sleep(0.05)
        assert resp.status_code == 200 and resp.headers["x-envscaler-mock"] == "1"
        assert "gpt-4.1" in {m["id"] for m in resp.json()["data"]}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_realism_is_set_over_http_and_reset_restores_the_startup_setting(mock) -> None:
    assert mock.set_realism("think,no_usage") == {"mode": "exact", "names": ["think", "no_usage"]}
    resp = _client(mock).chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}])
    assert resp.choices[0].message.content.startswith("<think>") and resp.usage is None
    assert mock.stats()["forms_used"] == {"think": 1, "no_usage": 1}
    mock.reset()
    assert mock.stats()["realism"] == {"mode": "off", "names": []}


def test_an_unknown_realism_form_is_a_400_listing_the_known_ones(mock) -> None:
    resp = httpx.post(f"{mock.root_url}/mock/realism", json="think,sarcasm")
    assert resp.status_code == 400 and "sarcasm" in resp.text and "reasoning_field" in resp.text


def test_an_output_limit_below_the_answer_cuts_it_off_as_a_server_would(mock) -> None:
    resp = _client(mock).chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * 400}],
                                                 max_tokens=20)
    assert resp.choices[0].finish_reason == "length" and len(resp.choices[0].message.content) < 100


def test_cli_realism_comes_from_the_flag_or_the_environment() -> None:
    bad = subprocess.run([str(ENVSCALER), "mock-llm", "--port", "0"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "ENVSCALER_MOCK_REALISM": "think,sarcasm"})
    assert bad.returncode != 0 and "unknown realism form(s) sarcasm" in bad.stderr
