"""Spec: a failed request's one-line error quotes the provider's own words whatever the body's shape (an
outside check: LM Studio's `{"error": "<text>"}` and a proxy's HTML 502 page were reported as "HTTP 400:
Error code: 400" and "HTTP 502: Error code: 502"). Raw bodies from a scripted local endpoint, through the
real gateway and the real `openai` client."""

from __future__ import annotations

import pytest

from envscaler_core.llm import LLMRequestRejected, LLMUnavailableError
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import MEDIA, RAW, STATUS

TASK = TaskInput(task="Cancel order 4.")
USER = [{"role": "user", "content": "cancel order 4"}]



def test_a_string_error_body_is_quoted(endpoint) -> None:
    """LM Studio and Ollama answer `{"error": "<text>"}`. Before: "(HTTP 400: Error code: 400)"."""
    endpoint.script({STATUS: 400, "error": "'response_format.type' must be 'json_schema' or 'text'"})
    with pytest.raises(LLMRequestRejected, match=r"HTTP 400: 'response_format.type' must be 'json_schema' or 'text'"):
        gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)


NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
             "</center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"
             + "<!-- a padding to disable MSIE and Chrome friendly error page -->\n" * 6)


def test_an_html_error_page_is_named_by_its_title(endpoint) -> None:
    endpoint.script({STATUS: 502, RAW: NGINX_502, MEDIA: "text/html"})
    with pytest.raises(LLMUnavailableError) as err:
        gateway(endpoint, max_retries=1).chat_sync(USER, stage="agent")
    assert "(last: HTTP 502: 502 Bad Gateway)" in str(err.value) and "padding" not in str(err.value)


def test_an_html_page_without_a_title_is_named_by_its_first_text(endpoint) -> None:
    endpoint.script({STATUS: 503, RAW: "<html><body><h1>Service Unavailable</h1><p>Back soon.</p></body></html>",
                     MEDIA: "text/html"})
    with pytest.raises(LLMUnavailableError, match=r"HTTP 503: Service Unavailable Back soon\."):
        gateway(endpoint, max_retries=0).chat_sync(USER, stage="agent")


def test_a_top_level_message_and_a_fastapi_detail_are_quoted(endpoint) -> None:
    endpoint.script({STATUS: 422, "detail": "Field required: messages.0.role"})
    with pytest.raises(LLMRequestRejected, match=r"HTTP 422: Field required: messages.0.role"):
        gateway(endpoint).chat_sync(USER, stage="agent")
    endpoint.script({STATUS: 500, "error": "llama runner process has terminated: signal: killed"})
    with pytest.raises(LLMUnavailableError, match=r"HTTP 500: llama runner process has terminated"):
        gateway(endpoint, max_retries=0).chat_sync(USER, stage="agent")
