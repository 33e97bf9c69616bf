"""Retry policy over real HTTP: what is retried, what fails fast, how long the gateway waits."""

from __future__ import annotations

import asyncio
import socket
import time
from email.utils import format_datetime
from datetime import UTC, datetime, timedelta

import pytest

from envscaler_core.config import LLMSettings
from envscaler_core.llm import LLMConfigError, LLMGateway, LLMRequestRejected, LLMUnavailableError
from envscaler_core.llm.retry import backoff_delay, parse_retry_after
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from tests.fixtures.llm import mock_llm_settings

HELLO = [{"role": "user", "content": "hello"}]


def test_429_is_retried_after_the_advertised_retry_after(mock, settings) -> None:
    mock.set_faults(script=["429", "ok"], retry_after_s=0.4)
    gw = LLMGateway(settings)
    started = time.perf_counter()
    reply = gw.chat_sync(HELLO)
    elapsed = time.perf_counter() - started
    assert reply.message["content"] == "echo: hello"
    assert elapsed >= 0.4
    assert mock.stats()["by_status"] == {"429": 1, "200": 1}
    assert gw.usage_by_stage()["agent"]["retries"] == 1


def test_retry_after_ms_header_is_honoured(mock, settings) -> None:
    mock.set_faults(script=["429", "ok"], retry_after_s=0.3, retry_after_ms_header=True)
    started = time.perf_counter()
    LLMGateway(settings).chat_sync(HELLO)
    assert time.perf_counter() - started >= 0.3


def test_500_is_retried_until_success(mock, settings) -> None:
    mock.set_faults(script=["500", "500", "ok"])
    reply = LLMGateway(settings).chat_sync(HELLO)
    assert reply.message["content"] == "echo: hello"
    assert mock.stats()["by_status"] == {"500": 2, "200": 1}


def test_a_stalled_request_times_out_and_is_retried(mock) -> None:
    mock.set_faults(script=["timeout", "ok"], timeout_s=3.0)
    reply = LLMGateway(mock_llm_settings(mock.base_url, timeout_s=0.5)).chat_sync(HELLO)
    assert reply.message["content"] == "echo: hello"
    assert mock.stats()["faults_injected"] == {"timeout": 1}


def test_persistent_500s_end_in_one_line_unavailable_error_after_max_retries(mock) -> None:
    mock.set_faults(p_500=1.0)
    gw = LLMGateway(mock_llm_settings(mock.base_url, max_retries=2))
    with pytest.raises(LLMUnavailableError) as err:
        gw.chat_sync(HELLO)
    assert mock.stats()["requests_total"] == 3
    message = str(err.value)
    assert "\n" not in message and mock.base_url in message and "HTTP 500" in message and "3 attempt" in message


def test_401_fails_fast_with_exactly_one_request(mock) -> None:
    gw = LLMGateway(mock_llm_settings(mock.base_url, api_key="bad-key"))
    with pytest.raises(LLMRequestRejected) as err:
        gw.chat_sync(HELLO)
    assert err.value.status_code == 401
    assert "OPENAI_API_KEY" in str(err.value) and "\n" not in str(err.value)
    assert mock.stats()["requests_total"] == 1


def test_400_is_not_retried(mock, settings) -> None:
    from envscaler_core.prompts.mine import INFER_TOPIC

    with pytest.raises(LLMRequestRejected) as err:  # the tiny handler cannot answer this prompt: HTTP 400
        LLMGateway(settings).structured_sync(INFER_TOPIC, TaskInput(task="cancel order 4"))
    assert err.value.status_code == 400 and "mine.infer_topic" in str(err.value)
    assert mock.stats()["requests_total"] == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_endpoint_is_a_one_line_unavailable_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    gw = LLMGateway(mock_llm_settings(url, max_retries=1, backoff_base_s=0.01))
    with pytest.raises(LLMUnavailableError) as err:
        gw.chat_sync(HELLO)
    message = str(err.value)
    assert message.startswith(f"cannot reach LLM endpoint {url}") and "\n" not in message
    assert "OPENAI_BASE_URL" in message


def test_missing_key_for_a_remote_endpoint_is_a_config_error_before_any_request() -> None:
    gw = LLMGateway(LLMSettings(base_url="https://llm.example.invalid/v1"))
    with pytest.raises(LLMConfigError) as err:
        gw.structured_sync(JUDGE_STATEFUL, TaskInput(task="cancel order 4"))
    assert "https://llm.example.invalid/v1" in str(err.value) and "OPENAI_API_KEY" in str(err.value)


def test_loopback_endpoint_needs_no_key(mock) -> None:
    gw = LLMGateway(LLMSettings(base_url=mock.base_url))
    assert gw.api_key() == "mock"
    assert gw.chat_sync(HELLO).message["content"] == "echo: hello"


def test_unknown_stage_is_a_config_error() -> None:
    with pytest.raises(LLMConfigError, match="unknown LLM stage 'mining'"):
        LLMGateway(LLMSettings(base_url="http://127.0.0.1:9/v1")).chat_sync(HELLO, stage="mining")


def test_sync_wrappers_refuse_to_run_inside_an_event_loop(settings) -> None:
    async def inside() -> None:
        LLMGateway(settings).chat_sync(HELLO)

    with pytest.raises(RuntimeError, match="await the async method"):
        asyncio.run(inside())


def test_retry_after_parses_seconds_milliseconds_and_http_dates() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": date}, now=now.timestamp()) == 7.0
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None


def test_backoff_is_capped_and_prefers_the_server_hint() -> None:
    assert backoff_delay(10, base_s=1.0, max_s=3.0, retry_after_s=None) <= 3.0
    assert backoff_delay(0, base_s=1.0, max_s=3.0, retry_after_s=60.0) == 3.0
    assert backoff_delay(0, base_s=1.0, max_s=3.0, retry_after_s=0.25) == 0.25
