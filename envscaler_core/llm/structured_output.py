"""How a structured request asks for JSON (`llm.structured_output`), and the servers that refuse to be asked.

Servers disagree on `response_format`: TGI refuses `json_object` (it wants `json` or `json_schema`), LM
Studio takes only `json_schema` or `text`, some relays refuse the field altogether. Before, every
structured request sent `{"type": "json_object"}` and nothing removed it: such a server stopped the run at
its first request (an outside check). Now the setting picks the form, and a server that refuses the field
anyway is asked again without it (the prompt's own instructions and the tolerant reply parser carry the
contract), once per gateway, for the rest of the run.

The form is no part of the cache key (`STRUCTURED_KEY` is): it does not change the prompt, and every answer,
however it was constrained, is validated against the same output model before it is kept; so a run resumed
with another form (or after the fallback) is answered from the cache.

Some servers refuse a schema they cannot compile without an error: older SGLang answers HTTP 200 with an empty
reply that finished "abort" ("Invalid grammar request"), every time; an outside check saw a whole run emptied
that way, response_format never dropped, its cause never named. Now two empty or aborted replies in a row to a
request sent with response_format are asked once without it: an answer then is learned like a refusal (logged
once, dropped for the rest of the run); no answer either leaves the item failing with response_format named as
the likely cause."""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Literal

import openai
from pydantic import BaseModel

log = logging.getLogger(__name__)

StructuredOutput = Literal["json_object", "json_schema", "none"]
STRUCTURED_KEY: dict[str, Any] = {"response_format": {"type": "json_object"}}
"""What a structured request's cache key holds for its sampling, whatever `llm.structured_output` is."""
_FORMAT_WORDS = re.compile(r"response_format|json_object|json_schema|grammar", re.IGNORECASE)
_NOT_ABOUT_FORM = frozenset({408, 409, 425, 429, 499})  # the moment, not the request


@functools.lru_cache(maxsize=256)
def _json_schema(output_model: type[BaseModel]) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", output_model.__name__)[:64] or "reply"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": output_model.model_json_schema(),
                                                   "strict": False}}


def structured_sampling(mode: StructuredOutput, output_model: type[BaseModel]) -> dict[str, Any]:
    """The request fields that ask for JSON: `json_object` (the OpenAI default), `json_schema` (the reply
    contract's schema in OpenAI's form; not strict, since strict mode refuses optional fields), `none`."""
    if mode == "none":
        return {}
    if mode == "json_schema":
        return {"response_format": _json_schema(output_model)}
    return {"response_format": {"type": "json_object"}}


def refuses_response_format(exc: openai.APIStatusError, text: str) -> bool:
    """An error whose words name the response format, at any status (TGI's 422 "response_format: unknown variant
    `json_object`", LM Studio's 400 "'response_format.type' must be 'json_schema' or 'text'", llama.cpp's 500
    "response_format type must be one of \"text\" or \"json_object\", but got: json_schema": it raises a
    runtime error, sent as HTTP 500, which an outside check saw retried until the run stopped): the server will
    not take the field in this form. Statuses about the moment (429, 408, ...) are not about the form."""
    status = exc.status_code
    return status >= 400 and status not in _NOT_ABOUT_FORM and bool(_FORMAT_WORDS.search(text or ""))


def without_response_format(sampling: dict[str, Any], endpoint: str, detail: str, first: bool) -> dict[str, Any]:
    """`sampling` without the field; the first time in a gateway's life, the log says so (once)."""
    if first:
        log.warning("LLM endpoint %s refused response_format (%s): structured requests are sent without it for the "
                    "rest of this run (set llm.structured_output = \"none\" or \"json_schema\" to choose)",
                    endpoint, detail)
    return {k: v for k, v in sampling.items() if k != "response_format"}


SUSPECT = "asked once without response_format after empty or aborted replies"
LIKELY_CAUSE = ("the likely cause is the server's response_format support (its replies to requests with it were empty "
                "or aborted; asked once without it, it did not answer either): try llm.structured_output = \"none\" "
                "or another form")


def blank_reply(exchange: Any) -> bool:
    """An answer with nothing in it, however it finished (`abort`, `stop`, ...): what a server sends for a
    grammar it could not compile. A reply cut off by the output limit or filtered is not one, and neither is
    one the server stopped after writing part of it (that is a cut-off reply, which gets a repair turn)."""
    if exchange.truncated or exchange.filtered:
        return False
    message = exchange.message or {}
    return not str(message.get("content") or "").strip() and not message.get("tool_calls")
